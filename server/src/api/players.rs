//! `POST /api/players`: register a name, get a player token (shown once).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use uuid::Uuid;

use crate::auth;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::protocol::{CreatePlayer, PlayerCreated};
use crate::AppState;

/// Names are 1–20 characters of `A-Z a-z 0-9 _ -`: they are shown to other
/// people, so they are data that can never carry markup or look like
/// someone else's name through look-alike characters.
pub fn validate_name(name: &str) -> Result<(), ApiError> {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if (1..=20).contains(&name.len()) && name.chars().all(valid_char) {
        Ok(())
    } else {
        Err(ApiError::BadRequest(
            "a name is 1 to 20 characters of A-Z a-z 0-9 _ -".into(),
        ))
    }
}

pub async fn create(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<CreatePlayer>,
) -> Result<(StatusCode, Json<PlayerCreated>), ApiError> {
    validate_name(&request.name)?;
    let token = auth::mint()?;
    let id = Uuid::new_v4();
    state
        .store()
        .create_player(id, &request.name, &token.hash)
        .await?;
    tracing::info!(player = %id, name = %request.name, "player registered");
    Ok((
        StatusCode::CREATED,
        Json(PlayerCreated {
            id: id.to_string(),
            name: request.name,
            token: token.secret,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "alice", "Bob_2", "x-y", "abcdefghijklmnopqrst"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "abcdefghijklmnopqrstu",
            "<b>bob</b>",
            "al ice",
            "élodie",
            "a\"b",
            "a\nb",
        ] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
