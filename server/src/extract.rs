//! Our wrappers of axum's extractors, shared by the HTTP API and the
//! WebSocket: a bad body, query or game id is answered in our error shape
//! (`{"error": {"code", "message"}}`), never axum's plain text.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::error::ApiError;

/// A game id from the path. Something that is not a UUID names no game.
pub fn game_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::game_not_found())
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
