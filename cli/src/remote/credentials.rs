//! Logins kept between runs: `rookery login` stores a personal API token
//! per server in `$XDG_CONFIG_HOME/rookery/credentials.json` (or
//! `~/.config/rookery/credentials.json`), and `play`, `watch`, `games` and
//! the challenge commands send it to that server as `Authorization: Bearer`.
//!
//! The file holds secrets, so it is the user's alone: the directory is made
//! mode 0700 and the file 0600, written whole to a new file (created 0600,
//! never wider for a moment) that then replaces the old one, so a crash
//! leaves either the old file or the new, never half of one. The password
//! itself is never stored: the token can be revoked on its own
//! (`rookery logout`, or the account's tokens on the web), and it cannot
//! change the password or mint more tokens.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One server's login.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Login {
    /// The server's origin, `https://host:port`, as `Server::base` spells
    /// it.
    pub server: String,
    /// The personal API token (`rky_…`).
    pub token: String,
    /// The token's id, to revoke it.
    pub token_id: String,
    /// The account's name, as the server spells it.
    pub name: String,
}

/// Every stored login, one per server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default)]
    pub logins: Vec<Login>,
}

/// Where the logins are kept: `$XDG_CONFIG_HOME/rookery/credentials.json`,
/// else `$HOME/.config/rookery/credentials.json`.
pub fn path() -> Result<PathBuf, String> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        // The XDG rules: a relative value is invalid and ignored.
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".config"))
        })
        .ok_or("no configuration directory: set HOME or XDG_CONFIG_HOME")?;
    Ok(config.join("rookery").join("credentials.json"))
}

impl Credentials {
    /// The stored logins; none when the file does not exist.
    pub fn load(path: &Path) -> Result<Credentials, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("{} is not a rookery credentials file: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// The login for the server at `base`, if any.
    pub fn for_server(&self, base: &str) -> Option<&Login> {
        self.logins.iter().find(|login| login.server == base)
    }

    /// The one stored login, when there is exactly one: the server to use
    /// when none is named.
    pub fn only(&self) -> Option<&Login> {
        match self.logins.as_slice() {
            [login] => Some(login),
            _ => None,
        }
    }

    /// Stores `login`, replacing the same server's; returns the replaced one.
    pub fn set(&mut self, login: Login) -> Option<Login> {
        let old = self.remove(&login.server);
        self.logins.push(login);
        old
    }

    /// Forgets the server's login; returns it.
    pub fn remove(&mut self, base: &str) -> Option<Login> {
        let index = self.logins.iter().position(|login| login.server == base)?;
        Some(self.logins.remove(index))
    }

    /// Writes the logins to `path` (mode 0600 in a 0700 directory), or
    /// deletes the file when none is left.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        if self.logins.is_empty() {
            return match std::fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("cannot delete {}: {e}", path.display())),
            };
        }
        let dir = path
            .parent()
            .ok_or("the credentials file has no directory")?;
        private_dir(dir)?;
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| format!("cannot write the credentials: {e}"))?;
        text.push('\n');
        let fresh = dir.join(".credentials.json.new");
        // A leftover from a run that died mid-write may have any mode.
        let _ = std::fs::remove_file(&fresh);
        let written = private_file(&fresh)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&fresh, path));
        written.map_err(|e| {
            // Nothing half-written stays behind.
            let _ = std::fs::remove_file(&fresh);
            format!("cannot write {}: {e}", path.display())
        })
    }
}

/// Creates `dir` (and its parents) if needed; the last level is the
/// user's alone (0700), even if it existed with a wider mode.
fn private_dir(dir: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("cannot create {}: {e}", dir.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(failed)?;
            }
            Err(e) => return Err(failed(e)),
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).map_err(failed)
}

/// A new file, readable and writable by the user alone from its creation.
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(server: &str, token: &str) -> Login {
        Login {
            server: server.into(),
            token: token.into(),
            token_id: "id".into(),
            name: "carol".into(),
        }
    }

    #[test]
    fn saved_private_replaced_and_deleted_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("config")
            .join("rookery")
            .join("credentials.json");
        let mut credentials = Credentials::load(&path).unwrap();
        assert!(credentials.logins.is_empty());

        credentials.set(login("https://a.example", "rky_1"));
        credentials.set(login("http://127.0.0.1:8080", "rky_2"));
        let old = credentials.set(login("https://a.example", "rky_3"));
        assert_eq!(old.map(|l| l.token).as_deref(), Some("rky_1"));
        credentials.save(&path).unwrap();
        let loaded = Credentials::load(&path).unwrap();
        assert_eq!(loaded, credentials);
        assert_eq!(
            loaded
                .for_server("https://a.example")
                .map(|l| l.token.as_str()),
            Some("rky_3")
        );
        assert_eq!(loaded.only(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }

        credentials.remove("https://a.example");
        credentials.save(&path).unwrap();
        assert_eq!(
            Credentials::load(&path)
                .unwrap()
                .only()
                .map(|l| l.token.as_str()),
            Some("rky_2")
        );
        credentials.remove("http://127.0.0.1:8080");
        credentials.save(&path).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_damaged_file_is_an_error_not_an_empty_login() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.json");
        std::fs::write(&path, "{not json").unwrap();
        let error = Credentials::load(&path).err().unwrap();
        assert!(error.contains("not a rookery credentials file"), "{error}");
    }
}
