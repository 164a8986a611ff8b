//! Teams (clubs, issue 39): who may join, who leads, and what a leader
//! may do. The rules live here; the tables in `store/teams.rs`; the HTTP
//! surface (lichess's team API and Rookery's creation route) in
//! `http/api/teams.rs`.
//!
//! - A team is open (anyone joins at once) or joined by request: the asker
//!   writes a message, a leader accepts or refuses it. Either kind may also
//!   have an entry password, checked before anything else.
//! - The founder is the first leader; leaders appoint other leaders,
//!   accept and refuse requests, remove members who are not leaders, and
//!   create the team's tournaments. A team always keeps a leader: the last
//!   one can neither step down nor leave while others remain.

use crate::domain::PlayerRef;
use crate::store::teams::{NewTeam, TeamRow, TeamWrite};
use crate::store::{now_ms, Store, StoreError};
use crate::token::TokenHash;

/// Limits of what a team is given.
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=60;
pub const MAX_DESCRIPTION_CHARS: usize = 4000;
pub const MAX_MESSAGE_CHARS: usize = 2000;
pub const MAX_PASSWORD_CHARS: usize = 200;

/// Why a team action was refused, in the floor's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TeamError {
    /// No such team, or no such member or request in it.
    #[error("{0}")]
    NotFound(String),
    /// Not a leader, a wrong password, a missing request message.
    #[error("{0}")]
    Forbidden(String),
    /// A name, description or message the rules refuse.
    #[error("{0}")]
    Invalid(String),
    /// The change contradicts the team as it is (the last leader leaving).
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The id a team name gets: lower-case letters and digits, words joined
/// by single dashes (as lichess's team ids).
pub fn slug(name: &str) -> String {
    let mut id = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            id.push(ch.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    id.trim_end_matches('-').to_string()
}

/// What a new team is given.
#[derive(Debug, Clone, Default)]
pub struct TeamTerms {
    pub name: String,
    pub description: String,
    pub open: bool,
    pub password: Option<String>,
}

fn password_hash(password: &str) -> String {
    TokenHash::of(password).0
}

/// The team `id`, or `NotFound`.
pub async fn team(store: &Store, id: &str) -> Result<TeamRow, TeamError> {
    store
        .team(id)
        .await?
        .ok_or_else(|| TeamError::NotFound(format!("no such team: {id}")))
}

/// Creates a team led by `founder`.
pub async fn create(
    store: &Store,
    founder: &PlayerRef,
    terms: TeamTerms,
) -> Result<TeamRow, TeamError> {
    let name = terms.name.trim().to_string();
    if !NAME_CHARS.contains(&name.chars().count()) {
        return Err(TeamError::Invalid(format!(
            "a team's name has {} to {} characters",
            NAME_CHARS.start(),
            NAME_CHARS.end()
        )));
    }
    let id = slug(&name);
    if id.len() < 2 {
        return Err(TeamError::Invalid(
            "a team's name needs at least two letters or digits".into(),
        ));
    }
    if terms.description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(TeamError::Invalid(format!(
            "a team's description has at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    let password = terms.password.filter(|p| !p.is_empty());
    if password
        .as_ref()
        .is_some_and(|p| p.chars().count() > MAX_PASSWORD_CHARS)
    {
        return Err(TeamError::Invalid(format!(
            "a team's password has at most {MAX_PASSWORD_CHARS} characters"
        )));
    }
    store
        .write_team(TeamWrite::Create(NewTeam {
            id: id.clone(),
            name,
            description: terms.description.trim().to_string(),
            open: terms.open,
            password_hash: password.as_deref().map(password_hash),
            created_by: founder.id.clone(),
            created_at: now_ms(),
        }))
        .await?;
    team(store, &id).await
}

/// What joining did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// A member now (or already).
    Member,
    /// A request waits for a leader.
    Requested,
}

/// `person` joins `team_id`: at once when the team is open, else by a
/// request with `message`. A team's password is checked first.
pub async fn join(
    store: &Store,
    person: &PlayerRef,
    team_id: &str,
    message: Option<String>,
    password: Option<String>,
) -> Result<Joined, TeamError> {
    let row = team(store, team_id).await?;
    if store.membership(&row.id, &person.id).await?.is_some() {
        return Ok(Joined::Member);
    }
    if let Some(expected) = &row.password_hash {
        let given = password.unwrap_or_default();
        if password_hash(&given) != *expected {
            return Err(TeamError::Forbidden(
                "this team needs its password to join".into(),
            ));
        }
    }
    let at = now_ms();
    if row.open {
        store
            .write_team(TeamWrite::Join {
                team_id: row.id,
                player_id: person.id.clone(),
                at,
            })
            .await?;
        return Ok(Joined::Member);
    }
    let message = message.map(|m| m.trim().to_string()).unwrap_or_default();
    if message.is_empty() {
        return Err(TeamError::Forbidden(
            "this team accepts members by request: send a message to its leaders".into(),
        ));
    }
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(TeamError::Invalid(format!(
            "a request's message has at most {MAX_MESSAGE_CHARS} characters"
        )));
    }
    store
        .write_team(TeamWrite::Request {
            team_id: row.id,
            player_id: person.id.clone(),
            message,
            at,
        })
        .await?;
    Ok(Joined::Requested)
}

/// The team, if `person` leads it; `Forbidden` otherwise.
pub async fn led_by(
    store: &Store,
    team_id: &str,
    person: &PlayerRef,
) -> Result<TeamRow, TeamError> {
    let row = team(store, team_id).await?;
    match store.membership(&row.id, &person.id).await? {
        Some(true) => Ok(row),
        _ => Err(TeamError::Forbidden(format!(
            "only the leaders of {} may do this",
            row.name
        ))),
    }
}

/// The player called `name` (lichess's user id is the lower-cased name).
pub async fn user(store: &Store, name: &str) -> Result<PlayerRef, TeamError> {
    store
        .credentials(name)
        .await?
        .map(|found| found.player)
        .ok_or_else(|| TeamError::NotFound(format!("no such user: {name}")))
}

/// Whether the team would be left with no leader if `leaving` stopped
/// leading it.
async fn last_leader(store: &Store, team_id: &str, leaving: &PlayerRef) -> Result<bool, TeamError> {
    let leaders = store.team_members(team_id, true).await?;
    Ok(leaders.iter().all(|m| m.player.id == leaving.id))
}

/// `person` leaves the team. The last leader may leave only as its last
/// member.
pub async fn quit(store: &Store, person: &PlayerRef, team_id: &str) -> Result<(), TeamError> {
    let row = team(store, team_id).await?;
    let Some(leader) = store.membership(&row.id, &person.id).await? else {
        return Err(TeamError::NotFound(
            "you are not a member of this team".into(),
        ));
    };
    if leader && row.members > 1 && last_leader(store, &row.id, person).await? {
        return Err(TeamError::Conflict(
            "the last leader cannot leave: appoint another leader first".into(),
        ));
    }
    store
        .write_team(TeamWrite::Remove {
            team_id: row.id,
            player_id: person.id.clone(),
        })
        .await?;
    Ok(())
}

/// A leader accepts (`accept`) or refuses a request to join.
pub async fn answer_request(
    store: &Store,
    leader: &PlayerRef,
    team_id: &str,
    user_name: &str,
    accept: bool,
) -> Result<(), TeamError> {
    let row = led_by(store, team_id, leader).await?;
    let asker = user(store, user_name).await?;
    let write = if accept {
        TeamWrite::Accept {
            team_id: row.id,
            player_id: asker.id,
            at: now_ms(),
        }
    } else {
        TeamWrite::Decline {
            team_id: row.id,
            player_id: asker.id,
        }
    };
    if store.write_team(write).await? {
        Ok(())
    } else {
        Err(TeamError::NotFound(format!(
            "no request from {user_name} to answer"
        )))
    }
}

/// A leader removes a member who is not a leader.
pub async fn kick(
    store: &Store,
    leader: &PlayerRef,
    team_id: &str,
    user_name: &str,
) -> Result<(), TeamError> {
    let row = led_by(store, team_id, leader).await?;
    let member = user(store, user_name).await?;
    match store.membership(&row.id, &member.id).await? {
        None => Err(TeamError::NotFound(format!(
            "{user_name} is not a member of this team"
        ))),
        Some(true) => Err(TeamError::Forbidden(
            "a leader cannot be removed: take away their leadership first".into(),
        )),
        Some(false) => {
            store
                .write_team(TeamWrite::Remove {
                    team_id: row.id,
                    player_id: member.id,
                })
                .await?;
            Ok(())
        }
    }
}

/// A leader appoints a member as leader, or takes leadership away (their
/// own too, unless they are the last leader).
pub async fn set_leader(
    store: &Store,
    leader: &PlayerRef,
    team_id: &str,
    user_name: &str,
    lead: bool,
) -> Result<(), TeamError> {
    let row = led_by(store, team_id, leader).await?;
    let member = user(store, user_name).await?;
    if store.membership(&row.id, &member.id).await?.is_none() {
        return Err(TeamError::NotFound(format!(
            "{user_name} is not a member of this team"
        )));
    }
    if !lead && last_leader(store, &row.id, &member).await? {
        return Err(TeamError::Conflict(
            "a team keeps at least one leader".into(),
        ));
    }
    store
        .write_team(TeamWrite::SetLeader {
            team_id: row.id,
            player_id: member.id,
            leader: lead,
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_lichess_like() {
        assert_eq!(slug("Rookery Chess Club"), "rookery-chess-club");
        assert_eq!(slug("  --Knights & Rooks!! "), "knights-rooks");
        assert_eq!(slug("Échecs 42"), "checs-42");
        assert_eq!(slug("!!!"), "");
    }
}
