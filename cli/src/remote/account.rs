//! `rookery login`, `logout` and `whoami`: an account's personal API token
//! kept on this machine ([`super::credentials`]).
//!
//! Logging in trades the name and password, once, for a token: a session
//! is opened (`POST /api/session`), a token with the `play` and
//! `challenge` scopes is made in it (`POST /api/account/tokens`, described
//! as "rookery terminal client on HOSTNAME" so the account's token list
//! says where it lives), and the session is closed again (`DELETE
//! /api/session`). The password is never stored, and the token cannot
//! change it.
//!
//! Logging out revokes the token (`DELETE /api/account/tokens/{id}` with
//! the token itself as Bearer) and forgets it. A server that lets only a
//! session manage tokens answers 403: then the password is asked again, to
//! revoke it in a short session.

use super::client::{RemoteError, Server};
use super::credentials::{self, Credentials, Login};
use crate::console::Questions;

/// `rookery login`: asks the name (unless given) and the password, stores
/// the new token. Returns what to print.
pub async fn login(
    server: &Server,
    name: Option<String>,
    questions: &mut Questions,
) -> Result<String, String> {
    let path = credentials::path()?;
    // A damaged file is replaced by a good one: logging in is how to
    // repair it.
    let mut stored = Credentials::load(&path).unwrap_or_else(|why| {
        eprintln!("rookery: {why}: replacing it");
        Credentials::default()
    });
    if !server.is_tls() && !is_loopback(&server.base) {
        eprintln!(
            "rookery: warning: {} is not https://: the password crosses the network unencrypted",
            server.base
        );
    }
    let name = match name {
        Some(name) => name,
        None => questions.ask("name: ")?,
    };
    if name.is_empty() {
        return Err("no name given".into());
    }
    let password = questions.ask_secret(&format!("password for {name}: "))?;

    let (session, account) = server.log_in(&name, &password).await.map_err(message)?;
    let made = async {
        let token = server
            .create_token(&session, &description())
            .await
            .map_err(message)?;
        let login = Login {
            server: server.base.clone(),
            token: token.token,
            token_id: token.id,
            name: account.username,
        };
        // The token of an earlier login here is revoked, not left behind
        // (it may be gone already, or another account's: no matter).
        if let Some(old) = stored.set(login.clone()) {
            if let Err(why) = server
                .revoke_token(&old.token_id, &old.token, Some(&session))
                .await
            {
                if !is_gone(&why) {
                    eprintln!("rookery: the earlier login's token was not revoked: {why}");
                }
            }
        }
        stored.save(&path)?;
        Ok::<Login, String>(login)
    }
    .await;
    // The session was only the way to the token: ended either way. A
    // failure here leaves a session that expires on its own.
    if let Err(why) = server.log_out(&session).await {
        eprintln!("rookery: the login session was not closed: {why}");
    }
    let login = made?;
    Ok(format!(
        "logged in to {} as {} (token stored in {})",
        login.server,
        login.name,
        path.display()
    ))
}

/// `rookery logout`: revokes the server's stored token and forgets it;
/// with `forget`, forgets it without asking the server.
pub async fn logout(
    server: &Server,
    forget: bool,
    questions: &mut Questions,
) -> Result<String, String> {
    let path = credentials::path()?;
    let mut stored = Credentials::load(&path)?;
    let login = stored
        .for_server(&server.base)
        .cloned()
        .ok_or_else(|| format!("not logged in to {}", server.base))?;
    let said = if forget {
        format!(
            "forgot the login to {} (its token still works until revoked on the server)",
            server.base
        )
    } else {
        match server
            .revoke_token(&login.token_id, &login.token, None)
            .await
        {
            Ok(()) => format!("logged out of {} (token revoked)", server.base),
            Err(why) if is_gone(&why) => format!(
                "logged out of {} (the token was already revoked)",
                server.base
            ),
            Err(why) if why.code.as_deref() == Some("forbidden") => {
                revoke_in_session(server, &login, questions).await?;
                format!("logged out of {} (token revoked)", server.base)
            }
            Err(why) => {
                return Err(format!(
                    "{why}; the login is kept: try again, or forget it with rookery logout --forget"
                ))
            }
        }
    };
    stored.remove(&server.base);
    stored.save(&path)?;
    Ok(said)
}

/// Revokes `login`'s token in a session opened with the password.
async fn revoke_in_session(
    server: &Server,
    login: &Login,
    questions: &mut Questions,
) -> Result<(), String> {
    let password = questions.ask_secret(&format!(
        "{} revokes tokens only for a session: password for {}: ",
        server.base, login.name
    ))?;
    let (session, _) = server
        .log_in(&login.name, &password)
        .await
        .map_err(message)?;
    let revoked = server
        .revoke_token(&login.token_id, &login.token, Some(&session))
        .await;
    if let Err(why) = server.log_out(&session).await {
        eprintln!("rookery: the session was not closed: {why}");
    }
    match revoked {
        Ok(()) => Ok(()),
        Err(why) if is_gone(&why) => Ok(()),
        Err(why) => Err(message(why)),
    }
}

/// `rookery whoami`: the stored login's account name, as the server says.
pub async fn whoami(server: &Server) -> Result<String, String> {
    let account = server.account().await.map_err(message)?;
    Ok(account.username)
}

/// The stored login for the server at `base`, if any (a damaged file is
/// reported and ignored: playing anonymously still works).
pub fn stored_login(base: &str) -> Option<Login> {
    let path = credentials::path().ok()?;
    match Credentials::load(&path) {
        Ok(stored) => stored.for_server(base).cloned(),
        Err(why) => {
            eprintln!("rookery: {why}: ignored (rookery login repairs it)");
            None
        }
    }
}

/// The server of the one stored login, for commands given no server.
pub fn only_login_server() -> Option<String> {
    let path = credentials::path().ok()?;
    Credentials::load(&path)
        .ok()?
        .only()
        .map(|login| login.server.clone())
}

/// The server's words, without the code in brackets: what a person reads.
fn message(error: RemoteError) -> String {
    error.message
}

/// The token is no longer there: revoked already (401 for the token
/// itself, 404 for its id in a session).
fn is_gone(error: &RemoteError) -> bool {
    matches!(error.code.as_deref(), Some("unauthorized" | "not_found"))
}

fn is_loopback(base: &str) -> bool {
    let authority = base.split_once("://").map_or(base, |(_, rest)| rest);
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// "rookery terminal client on HOSTNAME", for the account's token list.
fn description() -> String {
    let host = hostname().unwrap_or_else(|| "this computer".into());
    let host: String = host.chars().take(60).collect();
    format!("rookery terminal client on {host}")
}

#[cfg(unix)]
fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    (!name.is_empty()).then_some(name)
}

#[cfg(not(unix))]
fn hostname() -> Option<String> {
    std::env::var("COMPUTERNAME").ok().filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_servers_and_descriptions() {
        assert!(is_loopback("http://127.0.0.1:8080"));
        assert!(is_loopback("http://localhost"));
        assert!(is_loopback("http://[::1]:8080"));
        assert!(!is_loopback("http://chess.example:8080"));
        let description = description();
        assert!(description.starts_with("rookery terminal client on "));
        assert!(description.chars().count() <= 100, "{description}");
    }
}
