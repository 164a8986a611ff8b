//! The server's floors, checked from its sources (docs/architecture.md,
//! "The floors"): every `crate::…` path a file names must point at its own
//! floor or one below. A floor that reaches up (the store naming a live
//! game, anything under the edge naming `ApiError`) fails here, with the
//! file, the line and the rule.
//!
//! Unit tests may use floors above as fixtures (a store test builds a live
//! game to write): `tests.rs`/`testing.rs` files and whatever follows a
//! `#[cfg(test)]` are not checked.

use std::path::{Path, PathBuf};

/// The floors from the bottom, and what each may name of the crate besides
/// itself. A top-level module or file of `server/src` is one entry.
const FLOORS: &[(&str, &[&str])] = &[
    ("util", &[]),
    ("token", &["util"]),
    ("domain", &["util", "token"]),
    ("protocol", &["util", "token", "domain"]),
    ("metrics", &["util"]),
    ("mail", &[]),
    ("store", &["util", "token", "domain", "protocol", "metrics"]),
    (
        "identity",
        &["util", "token", "domain", "protocol", "store", "metrics"],
    ),
    (
        "social",
        &["util", "token", "domain", "protocol", "store", "metrics"],
    ),
    ("events", &["util", "token", "domain", "protocol"]),
    (
        "ai",
        &["util", "token", "domain", "protocol", "store", "metrics"],
    ),
    (
        "live",
        &[
            "util", "token", "domain", "protocol", "store", "metrics", "ai", "events", "cluster",
        ],
    ),
    (
        "cluster",
        &[
            "util", "token", "domain", "protocol", "store", "metrics", "ai", "events", "live",
        ],
    ),
    (
        "teams",
        &["util", "token", "domain", "protocol", "store", "metrics"],
    ),
    (
        "pools",
        &[
            "util", "token", "domain", "protocol", "store", "metrics", "ai", "events", "live",
            "cluster",
        ],
    ),
    (
        "tournaments",
        &[
            "util", "token", "domain", "protocol", "store", "metrics", "ai", "events", "live",
            "cluster", "identity", "teams", "pools",
        ],
    ),
    (
        "config",
        &[
            "util",
            "token",
            "domain",
            "protocol",
            "store",
            "metrics",
            "ai",
            "events",
            "live",
            "cluster",
            "identity",
            "pools",
            "tournaments",
            "mail",
        ],
    ),
];

/// Every floor named here may be named by `http/`, `lib.rs` and `main.rs`,
/// the edge and the assembly on top; no other may name the edge or its
/// error.
const EDGE: &[&str] = &["http", "lib", "main"];

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("server/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level module of `path` under `src`: `store` for
/// `src/store/rows.rs`, `events` for `src/events.rs`.
fn floor_of(src: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(src).expect("under src");
    let first = relative
        .components()
        .next()
        .expect("a component")
        .as_os_str()
        .to_string_lossy()
        .to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The lines of `text` that are not test code, with their numbers.
fn checked_lines(text: &str) -> Vec<(usize, &str)> {
    let mut lines = Vec::new();
    let mut skip_next = false;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            if text.lines().nth(number + 1).is_some_and(|next| {
                let next = next.trim();
                next.starts_with("mod ") || next.starts_with("pub(crate) mod ")
            }) {
                // A test module: the rest of the file is its.
                break;
            }
            skip_next = true;
            continue;
        }
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        lines.push((number + 1, line));
    }
    lines
}

/// Every `crate::NAME` a line names (`use crate::store::…`, `crate::AppState`).
fn named_floors(line: &str) -> Vec<String> {
    line.match_indices("crate::")
        .filter(|(at, _)| {
            // Not `rookery_server::crate::` nor part of a longer name.
            *at == 0 || !line[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .map(|(at, _)| {
            line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .collect()
}

/// What breaks the floors in the sources under `src`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name == "tests.rs" || name == "testing.rs" {
            continue;
        }
        let floor = floor_of(src, &path);
        if EDGE.contains(&floor.as_str()) {
            continue;
        }
        let Some((_, allowed)) = FLOORS.iter().find(|(name, _)| *name == floor) else {
            found.push(format!(
                "{}: the module `{floor}` is on no floor: add it to FLOORS in tests/architecture.rs and docs/architecture.md",
                path.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("a readable source");
        for (number, line) in checked_lines(&text) {
            if line.contains("ApiError") {
                found.push(format!(
                    "{}:{number}: `{floor}` names the edge's ApiError (return this floor's own error; http/error.rs converts it)",
                    path.display()
                ));
            }
            for named in named_floors(line) {
                if named == floor || allowed.contains(&named.as_str()) {
                    continue;
                }
                let why = if EDGE.contains(&named.as_str()) || named == "AppState" {
                    "a floor below the edge names the edge".to_string()
                } else {
                    format!("`{named}` is not below `{floor}`")
                };
                found.push(format!(
                    "{}:{number}: {why}: {}",
                    path.display(),
                    line.trim()
                ));
            }
        }
    }
    found
}

#[test]
fn every_floor_names_only_itself_and_the_floors_below() {
    // `ROOKERY_ARCH_SRC` checks another tree instead (an older checkout's
    // server/src, to count its arrows).
    let src = std::env::var_os("ROOKERY_ARCH_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "{} arrow(s) run up a floor:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The check itself catches each kind of arrow (so that a green run above
/// means something): a store file naming a live game, a floor below the
/// edge naming `ApiError` or the edge, and a new module on no floor.
#[test]
fn the_check_catches_arrows_that_run_up() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |relative: &str, text: &str| {
        let path = src.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, text).expect("written");
    };
    write("store/games.rs", "use crate::live::game::LiveGame;\n");
    write(
        "identity/mod.rs",
        "use crate::http::error::ApiError;\nfn f() -> Result<(), ApiError> { Ok(()) }\n",
    );
    write("domain/mod.rs", "use crate::protocol::GameState;\n");
    write("lottery/mod.rs", "use crate::domain::Side;\n");
    // Allowed: downwards, the edge, and test code.
    write("live/mod.rs", "use crate::store::Store;\n");
    write("http/api.rs", "use crate::live::Registry;\n");
    write(
        "protocol/view.rs",
        "use crate::domain::Side;\n#[cfg(test)]\nmod tests {\n    use crate::live::Registry;\n}\n",
    );
    let found = violations(src);
    let text = found.join("\n");
    assert!(
        text.contains("store/games.rs:1: `live` is not below `store`"),
        "{text}"
    );
    assert!(
        text.contains("identity/mod.rs:1: `identity` names the edge's ApiError"),
        "{text}"
    );
    assert!(
        text.contains("identity/mod.rs:1: a floor below the edge names the edge"),
        "{text}"
    );
    assert!(
        text.contains("identity/mod.rs:2: `identity` names the edge's ApiError"),
        "{text}"
    );
    assert!(
        text.contains("domain/mod.rs:1: `protocol` is not below `domain`"),
        "{text}"
    );
    assert!(
        text.contains("the module `lottery` is on no floor"),
        "{text}"
    );
    assert_eq!(found.len(), 6, "{text}");
}
