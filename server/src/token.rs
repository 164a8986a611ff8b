//! Tokens: seat tokens (move for one colour in one game) and player tokens
//! (attribute seats to a registered name): minting and hashing. Reading
//! them from a request is the HTTP edge's job (`http::auth`).
//!
//! A token is 256 bits from the operating system's CSPRNG, sent as 64 hex
//! digits. The server stores only its SHA-256: the token has full entropy, so
//! a plain fast hash is enough (a slow password hash buys nothing against
//! guessing 2^256 values) and lets us look a token up by its hash in an index.

use sha2::{Digest, Sha256};

/// A freshly minted secret and the hash we keep of it.
#[derive(Debug, Clone)]
pub struct MintedToken {
    pub secret: String,
    pub hash: TokenHash,
}

/// The hex SHA-256 of a token: what the database and the live games hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TokenHash(pub String);

impl TokenHash {
    pub fn of(secret: &str) -> TokenHash {
        TokenHash(hex(&Sha256::digest(secret.as_bytes())))
    }
}

/// The operating system's random source failed (never seen in practice).
#[derive(Debug, thiserror::Error)]
#[error("CSPRNG: {0}")]
pub struct RandomUnavailable(pub String);

pub fn mint() -> Result<MintedToken, RandomUnavailable> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| RandomUnavailable(err.to_string()))?;
    let secret = hex(&bytes);
    let hash = TokenHash::of(&secret);
    Ok(MintedToken { secret, hash })
}

/// A player's seat token in the rematch `game` of the game where their seat
/// token is `secret`: SHA-256 over a domain label, the old token and the
/// new game id. The server stores neither token, only hashes; a player who
/// presents the old token (HTTP or their seat's WebSocket) can always be
/// given the new one again, and nobody without it can compute it.
pub fn rematch_token(secret: &str, game: uuid::Uuid) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"rookery rematch seat\0");
    hasher.update(secret.as_bytes());
    hasher.update(b"\0");
    hasher.update(game.to_string().as_bytes());
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = mint().unwrap();
        let b = mint().unwrap();
        assert_eq!(a.secret.len(), 64);
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.hash, TokenHash::of(&a.secret));
        assert_ne!(a.hash.0, a.secret);
        assert_eq!(a.hash.0.len(), 64);
    }
}
