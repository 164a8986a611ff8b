//! Our wrappers of axum's extractors, shared by the HTTP API and the
//! WebSocket: a bad body, query or game id is answered in our error shape
//! (`{"error": {"code", "message"}}`), never axum's plain text.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::http::error::ApiError;

/// A game id from the path. Something that is not a UUID names no game.
pub fn game_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::game_not_found())
}

/// Middleware: a path whose percent-escapes do not decode to UTF-8 (say
/// `/api/games/%FF`) names nothing we serve: 404 `not_found` in our shape.
/// Without it axum's path extractor would answer such a request in plain
/// text.
pub async fn require_decodable_path(request: Request, next: Next) -> Response {
    if decodes_to_utf8(request.uri().path()) {
        next.run(request).await
    } else {
        ApiError::NotFound("no such resource: the path is not UTF-8 once decoded".into())
            .into_response()
    }
}

/// Whether `path`, its `%XX` escapes decoded, is UTF-8. A `%` not followed
/// by two hex digits stays as it is (the router then finds no such path).
fn decodes_to_utf8(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes.get(i + 1..i + 3).and_then(|hex| {
            std::str::from_utf8(hex)
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        });
        match (bytes[i], escape) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    std::str::from_utf8(&decoded).is_ok()
}

/// `axum::Json`, except that a bad body is answered with our error shape,
/// and that the body is read as JSON whatever its `Content-Type` (so `curl
/// -d '{...}'` works): the contract says every body is JSON.
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match MaybeJson::from_request(req, state).await? {
            MaybeJson(Some(value)) => Ok(ApiJson(value)),
            MaybeJson(None) => Err(ApiError::BadRequest("expected a JSON body".into())),
        }
    }
}

/// An optional JSON body: `None` when the body is empty (or only
/// whitespace), otherwise parsed like [`ApiJson`]. For endpoints whose body
/// the original contract did not have (`join`).
pub struct MaybeJson<T>(pub Option<T>);

impl<T, S> FromRequest<S> for MaybeJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|rejection: BytesRejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::TooLarge("request body too large".into())
                } else {
                    ApiError::BadRequest(rejection.body_text())
                }
            })?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(MaybeJson(None));
        }
        let mut deserializer = serde_json::Deserializer::from_slice(&body);
        let value = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|err| ApiError::BadRequest(format!("bad JSON body: {err}")))?;
        deserializer
            .end()
            .map_err(|err| ApiError::BadRequest(format!("bad JSON body: {err}")))?;
        Ok(MaybeJson(Some(value)))
    }
}

/// `axum::extract::Query`, except that a bad query string is a `bad_request`
/// in our shape.
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) =
            axum::extract::Query::<T>::from_request_parts(parts, state)
                .await
                .map_err(|rejection: QueryRejection| ApiError::BadRequest(rejection.body_text()))?;
        Ok(ApiQuery(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_decode_to_utf8() {
        for good in [
            "/api/games/abc",
            "/api/%C3%A9",
            "/api/100%",
            "/api/%zz",
            "/api/%4",
        ] {
            assert!(decodes_to_utf8(good), "{good}");
        }
        for bad in ["/api/games/%FF", "/api/%C3", "/api/%c3%28"] {
            assert!(!decodes_to_utf8(bad), "{bad}");
        }
    }
}
