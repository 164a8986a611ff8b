//! Credentials in a request's headers: the Bearer token.

use axum::http::header::AUTHORIZATION;
use axum::http::HeaderMap;

use super::IdentityError;

/// The Bearer token of a request: `None` without an Authorization header, an
/// `unauthorized` error for a header that is not a Bearer token.
pub fn bearer(headers: &HeaderMap) -> Result<Option<String>, IdentityError> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| IdentityError::Unauthorized)?;
    let (scheme, token) = value.split_once(' ').ok_or(IdentityError::Unauthorized)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(IdentityError::Unauthorized);
    }
    Ok(Some(token.to_string()))
}

/// The Bearer token a move or action must carry.
pub fn required_bearer(headers: &HeaderMap) -> Result<String, IdentityError> {
    bearer(headers)?.ok_or(IdentityError::Unauthorized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parsing() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers).unwrap(), None);
        headers.insert(AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&headers).unwrap().as_deref(), Some("abc"));
        headers.insert(AUTHORIZATION, "Basic abc".parse().unwrap());
        assert!(bearer(&headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer ".parse().unwrap());
        assert!(bearer(&headers).is_err());
    }
}
