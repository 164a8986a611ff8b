//! Where a data file's records came from: the sidecar `FILE.meta` beside
//! every data file, which names the engine, the evaluation and the
//! settings that played and scored the file's games, and each run that
//! appended to it (from which record, with which seed and threads, when).
//!
//! Why a sidecar and not a header: the data file stays a plain array of
//! 32-byte records (record `n` at byte `32 n`, which the trainer and every
//! earlier file rely on), and the sidecar is rewritten whole through a
//! temporary file and a rename, so a reader sees the old note or the new
//! one, never half of one, whenever the generator is stopped or killed.
//!
//! **One engine per file.** The engine commit, the evaluation and the
//! settings (all but the seed and the thread count, which only choose
//! *which* games are played) are the file's *identity*; a run whose
//! identity differs from the sidecar's is refused before a record is
//! written, so a file never mixes the games of two engines. `--dir` names
//! the file after its identity ([`Identity::file_name`]), so the same
//! command keeps adding to one file while the engine stays the same and
//! starts a new file when it changes.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use thiserror::Error;

use super::Settings;

/// The engine's version, from the build script: the last commit that
/// changed the engine crate, `-dirty` when the build's sources differed
/// from it, `unknown` outside a git checkout.
pub const ENGINE_COMMIT: &str = env!("ROOKERY_ENGINE_COMMIT");

/// The sidecar's format version (the `format:` line).
const FORMAT: u32 = 1;

/// What played and scored a file's games: the lines every run of the file
/// must share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub engine: String,
    /// `hand` or `network sha256 HEX (…)`.
    pub evaluation: String,
    /// Every setting that changes what a game is (nodes, book, …).
    pub settings: String,
}

impl Identity {
    /// The identity of a run with `settings` from this binary; `book` is
    /// a name for the opening book (`builtin`, a path) and `book_text` its
    /// contents (hashed, so an edited book is a different identity).
    pub fn of_run(
        settings: &Settings,
        book: &str,
        book_positions: usize,
        book_text: &str,
    ) -> Identity {
        let evaluation = match &settings.network {
            None => "hand".to_string(),
            Some(network) => format!(
                "network sha256 {} ({}x2, {} output bucket(s))",
                network.sha256(),
                network.hidden(),
                network.output_buckets()
            ),
        };
        let settings = format!(
            "nodes {}, hash {} MiB, book {book} ({book_positions} positions, sha256 {}), \
             random moves {}-{} a side, skip plies {}, max opening score {} cp, max plies {}",
            settings.nodes,
            settings.hash_mb,
            &hex(&Sha256::digest(book_text.as_bytes()))[..16],
            settings.random_moves_min,
            settings.random_moves_max,
            settings.skip_plies,
            settings.max_opening_score,
            settings.max_plies,
        );
        Identity {
            engine: ENGINE_COMMIT.to_string(),
            evaluation,
            settings,
        }
    }

    /// The data file's name under `--dir`: nodes, evaluation (`hand` or
    /// the network's hash), engine commit and a hash of the settings,
    /// e.g. `selfplay-5000n-net-ca18ce8d-e24f0258-1a2b3c4d.bin`.
    pub fn file_name(&self, nodes: u64) -> String {
        let evaluation = match self.evaluation.strip_prefix("network sha256 ") {
            Some(rest) => format!("net-{}", &rest[..8.min(rest.len())]),
            None => "hand".to_string(),
        };
        let engine = match self.engine.split_once('-') {
            Some((commit, mark)) => format!("{}-{mark}", &commit[..8.min(commit.len())]),
            None => self.engine[..8.min(self.engine.len())].to_string(),
        };
        let settings = &hex(&Sha256::digest(self.settings.as_bytes()))[..8];
        format!("selfplay-{nodes}n-{evaluation}-{engine}-{settings}.bin")
    }
}

/// A run's own line: where it started and how it drew its games.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub from_record: u64,
    pub seed: u64,
    pub threads: usize,
}

/// Why a run may not write to a file.
#[derive(Debug, Error)]
pub enum ProvenanceError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The sidecar names another engine, evaluation or settings.
    #[error(
        "the file's records were made with {field} {file:?}, this run's is {run:?}: \
         one file holds one engine's games (use --dir, or another --out)"
    )]
    Mismatch {
        field: &'static str,
        file: String,
        run: String,
    },
    /// The sidecar is not one this engine wrote.
    #[error("unreadable provenance sidecar: {0}")]
    Unreadable(String),
}

/// The sidecar's path for the data file `data`: `data` + `.meta`.
pub fn sidecar_path(data: &Path) -> PathBuf {
    let mut name = data.as_os_str().to_owned();
    name.push(".meta");
    PathBuf::from(name)
}

/// Checks `identity` against the sidecar of `data`, if it has one,
/// without writing anything.
pub fn check_file(data: &Path, identity: &Identity) -> Result<(), ProvenanceError> {
    match fs::read_to_string(sidecar_path(data)) {
        Ok(text) => check(&text, identity),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Checks `identity` against the sidecar of `data` (holding `records`
/// records now) and records `run` in it, atomically. A file without a
/// sidecar gets one; records it held before are marked as of unknown
/// provenance. Nothing is written when the identity does not match.
pub fn record_run(
    data: &Path,
    records: u64,
    identity: &Identity,
    run: &Run,
) -> Result<(), ProvenanceError> {
    let path = sidecar_path(data);
    let mut text = match fs::read_to_string(&path) {
        Ok(text) => {
            check(&text, identity)?;
            text
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut text = header(data, identity);
            if records > 0 {
                let _ = writeln!(
                    text,
                    "run: records from 0 of unknown provenance (written before this sidecar)"
                );
            }
            text
        }
        Err(e) => return Err(e.into()),
    };
    let _ = writeln!(
        text,
        "run: records from {}, seed {}, {} thread(s), started {}",
        run.from_record,
        run.seed,
        run.threads,
        utc_now()
    );
    write_atomically(&path, text.as_bytes())?;
    Ok(())
}

fn header(data: &Path, identity: &Identity) -> String {
    let name = data
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    format!(
        "# Provenance of {name}: rookery-engine datagen's 32-byte records\n\
         # (engine/src/datagen/record.rs). Every record was played and scored by the\n\
         # engine, evaluation and settings below; each run appended from the record\n\
         # it names, its games drawn from its seed and that record number.\n\
         format: {FORMAT}\n\
         engine: {}\n\
         evaluation: {}\n\
         settings: {}\n",
        identity.engine, identity.evaluation, identity.settings
    )
}

fn check(text: &str, identity: &Identity) -> Result<(), ProvenanceError> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
            .ok_or_else(|| ProvenanceError::Unreadable(format!("no {name:?} line")))
    };
    if field("format")? != FORMAT.to_string() {
        return Err(ProvenanceError::Unreadable(format!(
            "format {:?}, this engine writes {FORMAT}",
            field("format")?
        )));
    }
    for (name, ours) in [
        ("engine", &identity.engine),
        ("evaluation", &identity.evaluation),
        ("settings", &identity.settings),
    ] {
        let theirs = field(name)?;
        if theirs != ours {
            return Err(ProvenanceError::Mismatch {
                field: name,
                file: theirs.to_string(),
                run: ours.clone(),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it, synced and
/// renamed over it, then syncs the directory: after a crash `path` holds
/// the old contents or the new, whole.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut file = File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&temporary, path)?;
    if let Some(directory) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(directory)?.sync_all()?;
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The time now, `YYYY-MM-DD HH:MM:SS UTC`.
fn utc_now() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::calendar::utc_date_time(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity::of_run(&Settings::default(), "builtin", 1, "startpos")
    }

    #[test]
    fn a_run_of_another_identity_is_refused_and_changes_nothing() {
        let data =
            std::env::temp_dir().join(format!("rookery-provenance-{}.bin", std::process::id()));
        let meta = sidecar_path(&data);
        let _ = fs::remove_file(&meta); // left from an earlier run, or absent
        let run = |from_record| Run {
            from_record,
            seed: 3,
            threads: 1,
        };
        record_run(&data, 5, &identity(), &run(5)).unwrap();
        record_run(&data, 9, &identity(), &run(9)).unwrap();
        let text = fs::read_to_string(&meta).unwrap();
        assert!(
            text.contains(&format!("engine: {ENGINE_COMMIT}\n")),
            "{text}"
        );
        assert!(text.contains("evaluation: hand\n"));
        assert!(text.contains("run: records from 0 of unknown provenance"));
        assert!(text.contains("run: records from 5, seed 3, 1 thread(s), started "));
        assert!(text.contains("run: records from 9, seed 3"));

        let mut other = identity();
        other.settings = other.settings.replace("nodes 5000", "nodes 400");
        let refused = record_run(&data, 12, &other, &run(12));
        assert!(
            matches!(
                refused,
                Err(ProvenanceError::Mismatch {
                    field: "settings",
                    ..
                })
            ),
            "{refused:?}"
        );
        assert_eq!(fs::read_to_string(&meta).unwrap(), text, "unchanged");
        assert_ne!(identity().file_name(5000), other.file_name(5000));
        assert!(identity()
            .file_name(5000)
            .starts_with("selfplay-5000n-hand-"));
        let _ = fs::remove_file(&meta);
    }
}
