//! The interactive mode in a pseudo-terminal: colours (picked piece blue,
//! free targets yellow, captures red), the prompt, `NO_COLOR` with `--ascii`,
//! Ctrl-C at the prompt quitting cleanly, and `login` asking the password
//! without echoing it.

mod support;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

use support::{rookery, WAIT};

/// White pawn e4 can advance to e5 or take on d5.
const CAPTURE_FEN: &str = "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1";

/// `rookery` running in a pseudo-terminal, its output gathered as it comes.
struct Terminal {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    /// Closing the master would hang up the child's terminal.
    _master: Box<dyn MasterPty + Send>,
    _dir: tempfile::TempDir,
}

impl Terminal {
    fn start(args: &[&str], no_color: bool) -> Terminal {
        let dir = tempfile::tempdir().expect("temporary directory");
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 50,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let mut command = CommandBuilder::new(rookery());
        command.args(args);
        command.cwd(dir.path());
        command.env("XDG_CONFIG_HOME", support::config_dir(dir.path()));
        command.env("TERM", "xterm-256color");
        command.env_remove("CLICOLOR_FORCE");
        command.env_remove("CLICOLOR");
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        let child = pair.slave.spawn_command(command).expect("start rookery");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("output lock")
                    .extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            child,
            writer,
            output,
            _master: pair.master,
            _dir: dir,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().expect("output lock")).into_owned()
    }

    /// Waits until the output (after `from` bytes) contains `needle`;
    /// returns the byte offset just past it.
    fn wait_for(&self, needle: &str, from: usize) -> usize {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.text();
            if let Some(at) = text.get(from..).and_then(|rest| rest.find(needle)) {
                return from + at + needle.len();
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {needle:?}; output:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn type_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\r").as_bytes())
            .expect("type");
        self.writer.flush().expect("flush");
    }

    fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.success();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("rookery did not exit; output:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
    }
}

#[test]
fn pick_is_drawn_in_the_seed_games_colours() {
    let mut term = Terminal::start(&["play", "--human", "--fen", CAPTURE_FEN], false);
    let start = term.wait_for("rookery> ", 0);
    assert!(
        term.text().contains("\u{1b}[48;2;"),
        "the board has coloured squares:\n{}",
        term.text()
    );
    term.type_line("pick e4");
    let picked = term.wait_for("picked pawn on e4: 2 legal moves", start);
    let board = term.wait_for("rookery> ", picked);
    let shown = &term.text()[picked..board];
    for (code, meaning) in [
        ("\u{1b}[44m", "blue picked square"),
        ("\u{1b}[43m", "yellow free target"),
        ("\u{1b}[41m", "red capture"),
    ] {
        assert!(shown.contains(code), "no {meaning} in:\n{shown:?}");
    }
    term.type_line("place d5");
    let moved = term.wait_for("last move: exd5", board);
    term.wait_for("rookery> ", moved);
    term.type_line("quit");
    assert!(term.wait_exit(), "quit exits 0");
}

/// Without colour (by `NO_COLOR` or `--no-color`) the marks are brackets,
/// in Unicode or (`--ascii`) letters.
#[test]
fn without_colour_squares_are_marked_in_plain_text() {
    let cases: [(&[&str], bool, [&str; 3]); 2] = [
        (&["--ascii"], true, ["[P]", "(p)", " * "]),
        (&["--no-color"], false, ["[♙]", "(♟)", " * "]),
    ];
    for (flags, no_color_env, marks) in cases {
        let mut args = vec!["play", "--human", "--fen", CAPTURE_FEN];
        args.extend_from_slice(flags);
        let mut term = Terminal::start(&args, no_color_env);
        let start = term.wait_for("rookery> ", 0);
        term.type_line("pick e4");
        let picked = term.wait_for("picked pawn on e4", start);
        let end = term.wait_for("rookery> ", picked);
        let text = term.text();
        let shown = &text[picked..end];
        for mark in marks {
            assert!(shown.contains(mark), "{flags:?}: no {mark:?} in\n{shown}");
        }
        for code in ["\u{1b}[48;2;", "\u{1b}[44m", "\u{1b}[43m", "\u{1b}[41m"] {
            assert!(!text.contains(code), "{flags:?}: still coloured:\n{text:?}");
        }
        term.type_line("quit");
        assert!(term.wait_exit(), "{flags:?}");
    }
}

#[test]
fn ctrl_c_at_the_prompt_quits_cleanly() {
    let mut term = Terminal::start(&["play", "--level", "1"], false);
    term.wait_for("rookery> ", 0);
    term.writer.write_all(b"\x03").expect("type Ctrl-C");
    term.writer.flush().expect("flush");
    assert!(term.wait_exit(), "Ctrl-C at the prompt exits 0");
}

/// Online at a terminal: the opponent's move arrives while the prompt
/// waits, printed above it, and the board is redrawn in colour.
#[test]
fn online_moves_arrive_live_at_the_prompt() {
    let server = support::Server::start();
    let mut term = Terminal::start(&["play", "--server", &server.url], false);
    let link_at = term.wait_for("game: ", 0);
    let text = term.text();
    let link: String = text[link_at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let prompt = term.wait_for("rookery> ", link_at);

    let dir = tempfile::tempdir().expect("temporary directory");
    let black = support::spawn_rookery(dir.path(), &["play", &link]);
    let joined = term.wait_for("both players are here", prompt);
    let ready = term.wait_for("your move", joined);
    term.type_line("e4");
    let sent = term.wait_for("1. e4", ready);
    let black_run = support::finish(black, "e5\n");
    black_run.assert_ok();
    let arrived = term.wait_for("1... e5", sent);
    term.wait_for("last move: e5", arrived);
    assert!(
        term.text()[sent..].contains("\u{1b}[48;2;"),
        "board in colour"
    );
    term.type_line("quit");
    assert!(term.wait_exit(), "quit exits 0");
}

/// `rookery login` at a terminal: prompts for the name and the password,
/// and the password typed is not echoed.
#[test]
fn login_at_a_terminal_does_not_echo_the_password() {
    let server = support::Server::start();
    support::Api::new(&server).sign_up("Dana_tty", "quiet passphrase 42");
    let mut term = Terminal::start(&["login", "--server", &server.url], false);
    let asked = term.wait_for("name: ", 0);
    term.type_line("Dana_tty");
    let asked = term.wait_for("password for Dana_tty: ", asked);
    term.type_line("quiet passphrase 42");
    term.wait_for("logged in to", asked);
    assert!(term.wait_exit(), "login exits 0:\n{}", term.text());
    assert!(
        !term.text().contains("passphrase"),
        "the password was echoed:\n{}",
        term.text()
    );
    let stored = support::config_dir(term._dir.path())
        .join("rookery")
        .join("credentials.json");
    assert!(stored.exists(), "{}", term.text());
}
