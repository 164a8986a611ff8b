//! The player's lines, read on their own thread (rustyline blocks) one at
//! a time, for the async loops of online commands: a game's session, and
//! the wait for the answer to a challenge, which hands the same inbox (and
//! any line it read early) on to the game.

use tokio::sync::mpsc;

use crate::console::Lines;

/// Messages from the line-reading thread.
enum Input {
    Line(String),
    End,
}

/// The reader reads the next line only when asked (`request`), so the
/// terminal is in the editor's raw mode only while a loop really waits for
/// a line.
pub struct Inbox {
    rx: mpsc::UnboundedReceiver<Input>,
    more: std::sync::mpsc::Sender<()>,
    /// A line has been asked for and not yet received.
    pub waiting: bool,
    /// The input has ended.
    pub done: bool,
}

impl Inbox {
    pub fn start(mut lines: Lines) -> Inbox {
        let (tx, rx) = mpsc::unbounded_channel::<Input>();
        let (more, more_rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            while more_rx.recv().is_ok() {
                let input = match lines.next() {
                    Some(line) => Input::Line(line),
                    None => Input::End,
                };
                let end = matches!(input, Input::End);
                if tx.send(input).is_err() || end {
                    break;
                }
            }
        });
        Inbox {
            rx,
            more,
            waiting: false,
            done: false,
        }
    }

    /// Asks for the next line unless one is asked for already.
    pub fn request(&mut self) {
        if !self.waiting && !self.done {
            // The reader ends only after sending `End` (which sets `done`),
            // so it is still there to receive this.
            let _ = self.more.send(());
            self.waiting = true;
        }
    }

    /// The line asked for; `None` once the input has ended.
    pub async fn recv(&mut self) -> Option<String> {
        let input = self.rx.recv().await;
        self.waiting = false;
        match input {
            Some(Input::Line(line)) => Some(line),
            Some(Input::End) | None => {
                self.done = true;
                None
            }
        }
    }
}
