//! The dialect of lichess's API (issue 24), beside Rookery's own: its JSON
//! shapes (`protocol::lichess`), its flat error (`{"error": "..."}`) and its
//! bodies (form-encoded or JSON). Rookery's own API stays as it is.

pub mod account;
pub mod arena;
pub mod board;
pub mod export;
pub mod seek;

use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::http::error::ApiError;

/// An error in lichess's shape: the same status as Rookery's, with the
/// body `{"error": MESSAGE}`.
#[derive(Debug)]
pub struct LichessError(pub ApiError);

impl From<ApiError> for LichessError {
    fn from(err: ApiError) -> LichessError {
        LichessError(err)
    }
}

impl From<crate::live::game::GameError> for LichessError {
    fn from(err: crate::live::game::GameError) -> LichessError {
        LichessError(err.into())
    }
}

impl IntoResponse for LichessError {
    fn into_response(self) -> Response {
        let err = self.0;
        err.log();
        let mut response = (
            err.status(),
            axum::Json(serde_json::json!({ "error": err.message() })),
        )
            .into_response();
        if let ApiError::LoginThrottled { retry_after } = err {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after.max(1)),
            );
        }
        response
    }
}

pub type LichessResult<T> = Result<T, LichessError>;

/// A body as lichess takes it: form-encoded (what its clients send) or
/// JSON; an empty body reads as an empty form. A body that cannot be read
/// is 400 in lichess's shape.
pub struct Form<T>(pub T);

impl<T, S> FromRequest<S> for Form<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = LichessError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|_| LichessError(ApiError::BadRequest("unreadable body".into())))?;
        let bad = |err: String| LichessError(ApiError::BadRequest(err));
        if json && !bytes.is_empty() {
            serde_json::from_slice(&bytes)
                .map(Form)
                .map_err(|err| bad(format!("bad JSON: {err}")))
        } else {
            serde_urlencoded::from_bytes(&bytes)
                .map(Form)
                .map_err(|err| bad(format!("bad form: {err}")))
        }
    }
}

impl From<crate::token::RandomUnavailable> for LichessError {
    fn from(err: crate::token::RandomUnavailable) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}

impl From<crate::identity::IdentityError> for LichessError {
    fn from(err: crate::identity::IdentityError) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}

impl From<crate::store::StoreError> for LichessError {
    fn from(err: crate::store::StoreError) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}

impl From<crate::live::error::LiveError> for LichessError {
    fn from(err: crate::live::error::LiveError) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}

impl From<crate::teams::TeamError> for LichessError {
    fn from(err: crate::teams::TeamError) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}

impl From<crate::tournaments::swiss::SwissError> for LichessError {
    fn from(err: crate::tournaments::swiss::SwissError) -> LichessError {
        LichessError::from(ApiError::from(err))
    }
}
