//! Who is asking: accounts (a name and a password), their sessions (the
//! web client's cookie) and personal API tokens (scoped), beside the
//! original player tokens (issue 21).
//!
//! - [`credentials`]: the Bearer token of a request's headers.
//! - [`error`]: [`IdentityError`], this floor's error.
//! - [`password`]: Argon2id hashing and the rules of a new password.
//! - [`throttle`]: failed logins slow down per name and per address.
//!
//! A request names its person by one of:
//! - `Authorization: Bearer rky_…`: a personal API token (its scopes);
//! - `Authorization: Bearer TOKEN`: a player token from `POST /api/players`,
//!   or a session token (every scope);
//! - the `rookery_session` cookie: a session (every scope).
//!
//! Seat tokens are not identities: they stay what they were, the secret of
//! one seat in one game.

pub mod credentials;
pub mod error;
pub mod password;
mod reset;
pub mod throttle;

pub use error::IdentityError;
pub use reset::reset_password;

use axum::http::header::COOKIE;
use axum::http::HeaderMap;

use crate::domain::PlayerRef;
use crate::store::Store;
use crate::token::TokenHash;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "rookery_session";
/// Personal API tokens start with this, so the server knows where to look.
pub const API_TOKEN_PREFIX: &str = "rky_";

/// What a personal API token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Create, join and play games (moves, offers) in one's own seats.
    Play,
    /// Create, accept, decline and cancel challenges; read the event stream.
    Challenge,
    /// Play as a bot account (the lichess-compatible Bot API).
    Bot,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Play, Scope::Challenge, Scope::Bot];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Play => "play",
            Scope::Challenge => "challenge",
            Scope::Bot => "bot",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == text)
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    pub fn all() -> Scopes {
        Scope::ALL.into_iter().collect()
    }

    pub fn has(self, scope: Scope) -> bool {
        self.0 & (1 << scope as u8) != 0
    }

    pub fn list(self) -> Vec<&'static str> {
        Scope::ALL
            .into_iter()
            .filter(|scope| self.has(*scope))
            .map(Scope::as_str)
            .collect()
    }

    /// Space-separated, as stored.
    pub fn text(self) -> String {
        self.list().join(" ")
    }

    /// Reads stored scopes (unknown words are ignored).
    pub fn of_text(text: &str) -> Scopes {
        text.split_whitespace().filter_map(Scope::parse).collect()
    }
}

impl FromIterator<Scope> for Scopes {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Scopes {
        Scopes(
            iter.into_iter()
                .fold(0, |bits, scope| bits | 1 << scope as u8),
        )
    }
}

/// How the person proved who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A session (cookie or Bearer), by its id.
    Session(String),
    /// A personal API token, by its id.
    ApiToken(String),
    /// An original player token.
    PlayerToken,
}

/// The person behind a request.
#[derive(Debug, Clone)]
pub struct Identity {
    pub player: PlayerRef,
    pub scopes: Scopes,
    pub credential: Credential,
}

impl Identity {
    /// 403 `missing_scope` unless the credential allows `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), IdentityError> {
        if self.scopes.has(scope) {
            Ok(())
        } else {
            Err(IdentityError::MissingScope(scope.as_str()))
        }
    }

    pub fn session_id(&self) -> Option<&str> {
        match &self.credential {
            Credential::Session(id) => Some(id),
            _ => None,
        }
    }
}

/// The session cookie's value, if the request has one.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim().to_string())
        .filter(|value| !value.is_empty())
}

/// The person a Bearer token names, if it names one.
pub async fn of_token(store: &Store, token: &str) -> Result<Option<Identity>, IdentityError> {
    let hash = TokenHash::of(token);
    if token.starts_with(API_TOKEN_PREFIX) {
        return Ok(store.api_token(&hash).await?.map(|grant| Identity {
            scopes: Scopes::of_text(grant.scopes.as_deref().unwrap_or_default()),
            player: grant.player,
            credential: Credential::ApiToken(grant.id),
        }));
    }
    if let Some(player) = store.player_by_token(&hash).await? {
        return Ok(Some(Identity {
            player,
            scopes: Scopes::all(),
            credential: Credential::PlayerToken,
        }));
    }
    Ok(store.session(&hash).await?.map(|grant| Identity {
        player: grant.player,
        scopes: Scopes::all(),
        credential: Credential::Session(grant.id),
    }))
}

/// The person behind a request: its Bearer token (which must then name
/// someone: 401 otherwise), else its session cookie (an unknown or expired
/// cookie is nobody, as if absent).
pub async fn identify(
    store: &Store,
    headers: &HeaderMap,
) -> Result<Option<Identity>, IdentityError> {
    if let Some(token) = credentials::bearer(headers)? {
        return match of_token(store, &token).await? {
            Some(identity) => Ok(Some(identity)),
            None => Err(IdentityError::Unauthorized),
        };
    }
    let Some(cookie) = session_cookie(headers) else {
        return Ok(None);
    };
    Ok(store
        .session(&TokenHash::of(&cookie))
        .await?
        .map(|grant| Identity {
            player: grant.player,
            scopes: Scopes::all(),
            credential: Credential::Session(grant.id),
        }))
}

/// [`identify`], with 401 when nobody is named.
pub async fn required(store: &Store, headers: &HeaderMap) -> Result<Identity, IdentityError> {
    identify(store, headers)
        .await?
        .ok_or(IdentityError::Unauthorized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_and_cookies_parse() {
        let scopes: Scopes = [Scope::Play, Scope::Bot].into_iter().collect();
        assert!(scopes.has(Scope::Play) && !scopes.has(Scope::Challenge));
        assert_eq!(scopes.text(), "play bot");
        assert_eq!(Scopes::of_text("bot nonsense play"), scopes);
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, "a=b; rookery_session=abc ; c=d".parse().unwrap());
        assert_eq!(session_cookie(&headers).as_deref(), Some("abc"));
        headers.insert(COOKIE, "rookery_session=".parse().unwrap());
        assert_eq!(session_cookie(&headers), None);
    }
}
