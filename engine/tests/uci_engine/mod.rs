//! The real `rookery-engine` binary driven through stdin/stdout, as a GUI
//! would, for the UCI test files. Every wait for output has a timeout, so
//! a silent engine fails the test instead of hanging it.

// Each test file uses its own part of the harness.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct Engine {
    pub child: Child,
    stdin: ChildStdin,
    pub lines: Receiver<String>,
}

impl Engine {
    pub fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rookery-engine");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break; // the test is over
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to engine");
        self.stdin.flush().expect("flush");
    }

    pub fn next_line(&self) -> String {
        self.lines
            .recv_timeout(TIMEOUT)
            .expect("engine answered within the timeout")
    }

    /// Lines up to and including the first one for which `last` holds.
    pub fn read_until(&self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let line = self.next_line();
            let done = last(&line);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Sends `position` and `go`; returns the lines before `bestmove` and
    /// the best move.
    pub fn search(&mut self, position: &str, go: &str) -> (Vec<String>, String) {
        self.send(position);
        self.send(go);
        let mut lines = self.read_until(|l| l.starts_with("bestmove "));
        let best = bestmove(&lines.pop().expect("a bestmove line"));
        (lines, best)
    }
}

/// The move of a `bestmove` line.
pub fn bestmove(line: &str) -> String {
    line.split_whitespace().nth(1).unwrap_or("").to_string()
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit on its own, then make sure it is gone.
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
