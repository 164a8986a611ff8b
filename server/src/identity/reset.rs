//! The operator's password reset (`rookery-server admin reset-password
//! NAME`, issue 36), for a server that sends no mail: a new random password,
//! printed once, and every session of the account ended. Like `admin
//! grant`, it runs beside a serving server on the same database; open
//! sockets and event streams see their session gone at their next check.

use anyhow::Context;

use super::password;
use crate::store::Store;

/// Characters of a generated password: letters and digits without the
/// look-alikes (0 O 1 l I), easy to read out over the phone.
const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// 20 characters of 56: about 116 bits.
const LENGTH: usize = 20;

/// Resets the password of the account called `name`; returns what to
/// print (the new password).
pub async fn reset_password(store: &Store, name: &str) -> anyhow::Result<String> {
    let standing = store
        .standing_by_name(name)
        .await
        .context("reading the account")?
        .with_context(|| format!("no account is called {name:?}"))?;
    if standing.closed_at.is_some() {
        anyhow::bail!("{}'s account is closed", standing.name);
    }
    let new_password = generate()?;
    let hash = password::hash(new_password.clone())
        .await
        .map_err(|err| anyhow::anyhow!("hashing the password: {err}"))?;
    store
        .set_password(&standing.id, hash)
        .await
        .context("writing the password")?;
    store
        .end_sessions(&standing.id, None, None)
        .await
        .context("ending the sessions")?;
    Ok(format!(
        "new password for {}: {new_password}\nevery session of {} has ended; tell them to log in with it and change it at /account",
        standing.name, standing.name
    ))
}

fn generate() -> anyhow::Result<String> {
    let mut out = String::with_capacity(LENGTH);
    while out.len() < LENGTH {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|err| anyhow::anyhow!("CSPRNG: {err}"))?;
        // Rejection sampling: bytes past the last whole multiple of the
        // alphabet's size would favour its first letters.
        let limit = 256 - 256 % ALPHABET.len();
        for byte in bytes.into_iter().filter(|&b| usize::from(b) < limit) {
            if out.len() < LENGTH {
                out.push(char::from(ALPHABET[usize::from(byte) % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_passwords_are_long_and_readable() {
        let one = super::generate().unwrap();
        assert_eq!(one.len(), super::LENGTH);
        assert!(one.bytes().all(|b| super::ALPHABET.contains(&b)));
        assert_ne!(one, super::generate().unwrap());
    }
}
