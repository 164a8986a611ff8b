//! Passwords: Argon2id hashes (OWASP's parameters), checked on a blocking
//! thread behind a small semaphore, and the rules a new password must meet.
//!
//! A hash costs about 19 MiB and tens of milliseconds of one core: it never
//! runs on the async workers, and at most [`MAX_HASHING`] run at once, so a
//! flood of logins queues instead of taking every core (and the throttle
//! in [`super::throttle`] refuses most of such a flood before it gets here).

use super::IdentityError;
use std::sync::{Arc, OnceLock};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

/// The shortest password accepted.
pub const MIN_LENGTH: usize = 8;
/// The longest (in bytes): hashing is linear in it, and no person types more.
pub const MAX_LENGTH: usize = 256;
/// Different characters a password has at least (`aaaaaaaa`, eight spaces
/// and `abababab` are refused).
pub const MIN_DISTINCT: usize = 4;
/// Hashes computed at once at most.
const MAX_HASHING: usize = 2;

/// Passwords that are among the most used (and so the first guessed):
/// refused whatever their length.
const COMMON: &[&str] = &[
    "password",
    "password1",
    "password123",
    "12345678",
    "123456789",
    "1234567890",
    "qwertyuiop",
    "qwerty123",
    "11111111",
    "00000000",
    "iloveyou",
    "sunshine",
    "princess",
    "football",
    "baseball",
    "welcome1",
    "abc12345",
    "letmein1",
    "trustno1",
    "superman",
    "starwars",
    "dragon12",
    "monkey123",
    "chess123",
    "chessmaster",
    "checkmate",
    "passw0rd",
    "p@ssw0rd",
    "1q2w3e4r",
    "1qaz2wsx",
    "zaq12wsx",
    "qwertyui",
    "asdfghjk",
    "asdf1234",
    "admin123",
    "administrator",
    "changeme",
    "whatever",
    "master12",
    "computer",
    "internet",
    "michael1",
    "jennifer",
    "shadow12",
    "11223344",
    "12341234",
    "87654321",
    "88888888",
    "rookery1",
    "rookery123",
];

/// Why a new password is refused, if it is.
pub fn check_new(password: &str, name: &str) -> Result<(), IdentityError> {
    let weak = |why: &str| Err(IdentityError::WeakPassword(why.to_string()));
    if password.chars().count() < MIN_LENGTH {
        return weak(&format!("a password has at least {MIN_LENGTH} characters"));
    }
    if password.len() > MAX_LENGTH {
        return weak(&format!("a password has at most {MAX_LENGTH} bytes"));
    }
    let lower = password.to_lowercase();
    if COMMON.contains(&lower.as_str()) {
        return weak("this password is one of the most common ones: choose another");
    }
    if lower == name.to_lowercase() {
        return weak("a password must not be the name");
    }
    let mut distinct: Vec<char> = password.chars().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < MIN_DISTINCT {
        return weak(&format!(
            "a password has at least {MIN_DISTINCT} different characters"
        ));
    }
    if runs(&lower) <= 2 {
        return weak("a password is not a run of letters or digits (abcd1234): choose another");
    }
    Ok(())
}

/// How many runs `text` is made of, a run being characters that each
/// follow the last by one code point, in one direction (`abcd1234` is two
/// runs, `87654321` one, a random password about as many as characters).
fn runs(text: &str) -> usize {
    let codes: Vec<i64> = text.chars().map(|c| i64::from(u32::from(c))).collect();
    let mut runs = usize::from(!codes.is_empty());
    let mut step = 0;
    for pair in codes.windows(2) {
        let next = pair[1] - pair[0];
        if (next == 1 || next == -1) && (step == 0 || step == next) {
            step = next;
        } else {
            runs += 1;
            step = 0;
        }
    }
    runs
}

fn argon2() -> Argon2<'static> {
    // OWASP's first recommendation for Argon2id: 19 MiB, 2 passes, 1 lane.
    let params = Params::new(19 * 1024, 2, 1, None).expect("constant Argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

fn permits() -> Arc<Semaphore> {
    static PERMITS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    PERMITS
        .get_or_init(|| Arc::new(Semaphore::new(MAX_HASHING)))
        .clone()
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, IdentityError> {
    let _permit = permits()
        .acquire_owned()
        .await
        .map_err(|_| IdentityError::ShuttingDown)?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(IdentityError::internal)
}

/// The PHC string of `password`'s hash with a fresh salt.
pub async fn hash(password: String) -> Result<String, IdentityError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|err| IdentityError::internal(format!("CSPRNG: {err}")))?;
    blocking(move || {
        let salt = SaltString::encode_b64(&salt).map_err(IdentityError::internal)?;
        argon2()
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(IdentityError::internal)
    })
    .await?
}

/// A hash of no real password: checked when a login names nobody (or a
/// player without a password), so that such a login costs the same time
/// as a wrong password and its timing tells nothing.
fn decoy() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let salt = SaltString::encode_b64(b"rookery decoy 16").expect("16 bytes encode");
        argon2()
            .hash_password(b"no password is this one", &salt)
            .map(|hash| hash.to_string())
            .unwrap_or_default()
    })
}

/// Whether `password` matches the stored PHC string `stored`; with no
/// stored hash, a decoy is checked (same cost) and the answer is `false`.
pub async fn verify(stored: Option<String>, password: String) -> Result<bool, IdentityError> {
    blocking(move || {
        let real = stored.is_some();
        let phc = stored.unwrap_or_else(|| decoy().to_string());
        let matches = PasswordHash::new(&phc)
            .map(|parsed| {
                argon2()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false);
        real && matches
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let phc = hash("correct horse battery".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(verify(Some(phc.clone()), "correct horse battery".into())
            .await
            .unwrap());
        assert!(!verify(Some(phc), "correct horse battery!".into())
            .await
            .unwrap());
        assert!(!verify(None, "no password is this one".into())
            .await
            .unwrap());
    }

    #[test]
    fn weak_passwords_are_refused() {
        assert!(check_new("short", "alice").is_err());
        assert!(check_new("Password123", "alice").is_err());
        assert!(check_new("alice_the_great", "alice_the_great").is_err());
        assert!(check_new(&"x".repeat(MAX_LENGTH + 1), "alice").is_err());
        assert!(check_new("a long and rare phrase", "alice").is_ok());
        // Issue 35's three that got through.
        for weak in ["aaaaaaaa", "        ", "abcd1234", "87654321", "abababab"] {
            assert!(check_new(weak, "alice").is_err(), "{weak:?}");
        }
        assert!(check_new("k9#mQ2vx", "alice").is_ok());
        assert_eq!(runs("abcd1234"), 2);
        assert_eq!(runs("xyz"), 1);
        assert_eq!(runs("k9#m"), 4);
    }
}
