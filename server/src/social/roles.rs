//! Roles granted by the operator from the command line (`rookery-server
//! admin grant NAME moderator`): the one place this room writes, since
//! there is no request to answer, only a line to print.

use anyhow::Context;

use crate::store::social::Effect;
use crate::store::Store;

/// Grants (or revokes) the moderator role of the account called `name`,
/// and writes it in the audit log as the operator's; returns what to
/// print.
pub async fn set_moderator(store: &Store, name: &str, grant: bool) -> anyhow::Result<String> {
    let standing = store
        .standing_by_name(name)
        .await
        .context("reading the account")?
        .with_context(|| format!("no account is called {name:?}"))?;
    if standing.closed_at.is_some() {
        anyhow::bail!("{}'s account is closed", standing.name);
    }
    if standing.moderator == grant {
        let already = if grant { "already" } else { "not" };
        return Ok(format!("{} is {already} a moderator", standing.name));
    }
    let action = if grant { "grant" } else { "revoke" };
    store
        .record_mod_action(
            None,
            action,
            &standing.id,
            "moderator",
            None,
            Effect::Moderator(grant),
        )
        .await
        .context("writing the role")?;
    Ok(if grant {
        format!("{} is now a moderator", standing.name)
    } else {
        format!("{} is no longer a moderator", standing.name)
    })
}
