//! `rookery-engine datagen` driven from outside: a tiny generation read
//! back record by record, and a restart on a file left with a torn record
//! (as a killed writer leaves it) that continues the file by whole records,
//! and settings refused before a file is touched; the provenance sidecar,
//! which refuses another engine's or settings' games in the same file.

use std::path::PathBuf;
use std::process::{Command, Output};

use rookery_engine::datagen::{read_records, PackedRecord, RECORD_BYTES};

/// A fresh path in Cargo's scratch directory for integration tests.
fn scratch(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("datagen-{name}-{}.bin", std::process::id()));
    let _ = std::fs::remove_file(&path); // left over from an earlier run, or absent
    path
}

fn datagen(path: &PathBuf, positions: u64, seed: u64) -> Output {
    datagen_with(path, positions, seed, "hand")
}

fn datagen_with(path: &PathBuf, positions: u64, seed: u64, eval: &str) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["datagen", "--out"])
        .arg(path)
        .args(["--positions", &positions.to_string()])
        .args(["--nodes", "400", "--hash", "1", "--report-secs", "1"])
        .args(["--seed", &seed.to_string(), "--eval", eval])
        .output()
        .expect("run rookery-engine datagen");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn records(path: &PathBuf) -> Vec<PackedRecord> {
    read_records(std::fs::File::open(path).expect("open")).expect("read")
}

#[test]
fn a_tiny_generation_reads_back_as_scored_quiet_positions() {
    let path = scratch("roundtrip");
    let output = datagen(&path, 300, 1);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("positions/s"), "{stderr}");

    let bytes = std::fs::read(&path).expect("read");
    assert_eq!(bytes.len() % RECORD_BYTES, 0);
    let records = records(&path);
    assert!(records.len() >= 300, "{} records", records.len());
    let mut results = [0; 3];
    let mut fens = std::collections::HashSet::new();
    for record in &records {
        let position = record
            .position()
            .unwrap_or_else(|e| panic!("{record:?}: {e}"));
        assert!(!position.is_check(), "{record:?}");
        assert_eq!(record.turn(), position.turn());
        // Each record packs back to itself: nothing was lost on the way.
        let result = record.result().expect("a result");
        assert_eq!(
            PackedRecord::pack(&position, record.score(), result),
            Ok(*record)
        );
        results[(result.signum() + 1) as usize] += 1;
        fens.insert(position.to_fen());
    }
    // Games go on after the opening: most positions are new.
    assert!(
        fens.len() * 10 > records.len() * 9,
        "{} distinct",
        fens.len()
    );
    // Some game was decided (at 400 nodes most are).
    assert!(results[0] + results[2] > 0, "{results:?}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_network_can_play_and_score_the_next_generation() {
    let (hand, net) = (scratch("eval-hand"), scratch("eval-net"));
    datagen(&hand, 100, 5);
    let output = datagen_with(&net, 100, 5, "built-in");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("built-in evaluation"), "{stderr}");
    let (hand_records, net_records) = (records(&hand), records(&net));
    assert!(net_records.len() >= 100);
    for record in &net_records {
        record
            .position()
            .unwrap_or_else(|e| panic!("{record:?}: {e}"));
    }
    // The same seed and openings, another evaluation: other moves and
    // scores from the first game on.
    assert_ne!(hand_records[..20], net_records[..20]);
    let _ = std::fs::remove_file(&hand);
    let _ = std::fs::remove_file(&net);
}

#[test]
fn a_restart_cuts_a_torn_record_and_appends_whole_ones() {
    let path = scratch("resume");
    datagen(&path, 100, 7);
    let first = std::fs::read(&path).expect("read");
    assert_eq!(first.len() % RECORD_BYTES, 0);

    // A writer killed in the middle of a record leaves part of it.
    let mut torn = first.clone();
    torn.extend_from_slice(&[0xab; 13]);
    std::fs::write(&path, &torn).expect("write");

    let output = datagen(&path, first.len() as u64 / RECORD_BYTES as u64 + 100, 7);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cut 13 bytes"), "{stderr}");
    let second = std::fs::read(&path).expect("read");
    assert_eq!(second.len() % RECORD_BYTES, 0);
    assert!(second.len() >= first.len() + 100 * RECORD_BYTES);
    // The old records are untouched, the torn bytes are gone, and every
    // record decodes.
    assert_eq!(&second[..first.len()], &first[..]);
    for record in records(&path) {
        record
            .position()
            .unwrap_or_else(|e| panic!("{record:?}: {e}"));
    }
    // The restart played new games, not the first run's again.
    assert_ne!(
        &second[first.len()..first.len() + 100 * RECORD_BYTES],
        &first[..100 * RECORD_BYTES]
    );

    // A file that already holds the target is left as it is.
    datagen(&path, 10, 7);
    assert_eq!(std::fs::read(&path).expect("read"), second);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn bad_settings_are_refused_before_anything_is_written() {
    let path = scratch("refused");
    let book = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("datagen-bad-book-{}.epd", std::process::id()));
    std::fs::write(&book, "not a position\n").expect("write book");
    let out = path.to_string_lossy().to_string();
    let book_arg = book.to_string_lossy().to_string();
    for (args, says) in [
        (vec!["--nodes", "0", "--out", &out], "--nodes"),
        (
            vec!["--out", &out, "--random-moves", "3-1"],
            "--random-moves",
        ),
        (vec!["--out", &out, "--threads"], "needs a value"),
        (vec!["--positions", "10"], "--out FILE or --dir DIR"),
        (
            vec!["--out", &out, "--dir", env!("CARGO_TARGET_TMPDIR")],
            "exclude each other",
        ),
        (vec!["--out", &out, "--book", &book_arg], "not positions"),
        (vec!["--out", &out, "--colour", "white"], "unknown argument"),
        (
            vec!["--out", &out, "--eval", "/nonexistent/net.nnue"],
            "--eval /nonexistent/net.nnue",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
            .arg("datagen")
            .args(&args)
            .output()
            .expect("run rookery-engine datagen");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!path.exists(), "{args:?} created the file");
    }
    let _ = std::fs::remove_file(&book);
}

#[test]
fn the_sidecar_names_the_engine_and_refuses_other_settings() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("datagen-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir); // left from an earlier run, or absent
    let run = |nodes: &str, seed: &str| {
        Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
            .args(["datagen", "--dir"])
            .arg(&dir)
            .args(["--positions", "60", "--nodes", nodes, "--hash", "1"])
            .args(["--seed", seed, "--eval", "built-in"])
            .output()
            .expect("run rookery-engine datagen")
    };
    assert!(run("300", "1").status.success());
    let names = |dir: &PathBuf| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let files = names(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    let (data, meta) = (dir.join(&files[0]), dir.join(&files[1]));
    let net = rookery_engine::nnue::built_in();
    let net_hash = net.sha256();
    assert!(
        files[0].starts_with(&format!("selfplay-300n-net-{}-", &net_hash[..8])),
        "{files:?}"
    );
    assert_eq!(files[1], format!("{}.meta", files[0]));
    let text = std::fs::read_to_string(&meta).expect("sidecar");
    for line in [
        "format: 1\n",
        "\nengine: ",
        &format!("evaluation: network sha256 {net_hash}"),
        "settings: nodes 300, hash 1 MiB, book builtin (300 positions",
        "run: records from 0, seed 1, 1 thread(s), started 20",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }

    // The same engine and settings, another seed: the same file grows.
    let records_before = records(&data).len();
    let mut more = Command::new(env!("CARGO_BIN_EXE_rookery-engine"));
    more.args(["datagen", "--out"])
        .arg(&data)
        .args(["--positions", &(records_before + 30).to_string()])
        .args([
            "--nodes", "300", "--hash", "1", "--seed", "2", "--eval", "built-in",
        ]);
    assert!(more.output().expect("run").status.success());
    let text = std::fs::read_to_string(&meta).expect("sidecar");
    assert!(
        text.contains(&format!("run: records from {records_before}, seed 2")),
        "{text}"
    );

    // Other settings into that file: refused, nothing changes.
    let bytes = std::fs::read(&data).expect("read");
    let mut other = Command::new(env!("CARGO_BIN_EXE_rookery-engine"));
    other.args(["datagen", "--out"]).arg(&data).args([
        "--positions",
        "100000",
        "--nodes",
        "400",
        "--eval",
        "built-in",
    ]);
    let output = other.output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("one file holds one engine's games"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&data).expect("read"), bytes);
    assert_eq!(std::fs::read_to_string(&meta).expect("sidecar"), text);

    // Under --dir the other settings get a file of their own.
    assert!(run("400", "1").status.success());
    assert_eq!(names(&dir).len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}
