//! The terminal: where lines come from and where text goes.
//!
//! Interactive (stdin and stdout both terminals): rustyline reads lines with
//! editing and history behind a prompt, and colour follows `anstream`'s
//! detection (`NO_COLOR`, `CLICOLOR_FORCE`, a terminal or not). Piped: plain
//! lines from stdin, no prompt, no escape codes, errors on stderr, so a
//! script's output is only what it asked for.

use std::io::{IsTerminal, Write};

use anstyle::{AnsiColor, Style};
use rustyline::error::ReadlineError;
use rustyline::{DefaultEditor, ExternalPrinter};

use crate::board::Look;

pub const PROMPT: &str = "rookery> ";

/// How the user asked for output, before looking at the terminal.
#[derive(Debug, Clone, Copy)]
pub struct OutputFlags {
    pub ascii: bool,
    pub no_color: bool,
}

/// Decides the look and whether the session is interactive.
pub fn detect(flags: OutputFlags) -> (Look, bool) {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let color = !flags.no_color
        && interactive
        && anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    (
        Look {
            color,
            ascii: flags.ascii,
        },
        interactive,
    )
}

/// A source of command lines.
pub enum Lines {
    Editor(Box<DefaultEditor>),
    Piped(std::io::Stdin),
}

impl Lines {
    pub fn open(interactive: bool) -> Lines {
        if interactive {
            // Falls back to plain lines if the terminal cannot be driven.
            if let Ok(editor) = DefaultEditor::new() {
                return Lines::Editor(Box::new(editor));
            }
        }
        Lines::Piped(std::io::stdin())
    }

    /// The next line, or `None` at the end of input (Ctrl-D, Ctrl-C, end of
    /// the pipe, or an unreadable stdin).
    pub fn next(&mut self) -> Option<String> {
        match self {
            Lines::Editor(editor) => match editor.readline(PROMPT) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        // History is a convenience; failing to record is fine.
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    Some(line)
                }
                Err(ReadlineError::Interrupted | ReadlineError::Eof) => None,
                Err(_) => None,
            },
            Lines::Piped(stdin) => {
                let mut line = String::new();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            }
        }
    }

    /// A printer that can write above the prompt from another thread while
    /// a line is being edited (for moves arriving from the server).
    pub fn printer(&mut self) -> Option<Box<dyn ExternalPrinter + Send>> {
        match self {
            Lines::Editor(editor) => editor
                .create_external_printer()
                .ok()
                .map(|p| Box::new(p) as Box<dyn ExternalPrinter + Send>),
            Lines::Piped(_) => None,
        }
    }
}

/// Where the session's text goes.
pub struct Screen {
    pub look: Look,
    pub interactive: bool,
    printer: Option<Box<dyn ExternalPrinter + Send>>,
}

impl Screen {
    pub fn new(look: Look, interactive: bool) -> Screen {
        Screen {
            look,
            interactive,
            printer: None,
        }
    }

    pub fn with_printer(mut self, printer: Option<Box<dyn ExternalPrinter + Send>>) -> Screen {
        self.printer = printer;
        self
    }

    /// Prints `text` (a newline is added unless it ends with one).
    pub fn say(&mut self, text: &str) {
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if let Some(printer) = &mut self.printer {
            if printer.print(text.clone()).is_ok() {
                return;
            }
        }
        let mut stdout = std::io::stdout().lock();
        // A closed stdout (the reader of a pipe went away) is not worth
        // failing the game for; the session ends at the next read anyway.
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    /// Explains a refused command: in red on a terminal, on stderr in a pipe
    /// (so scripts can tell answers from complaints).
    pub fn complain(&mut self, text: &str) {
        if self.interactive {
            let style = Style::new().fg_color(Some(AnsiColor::Red.into()));
            let painted = self.look.paint(style, text);
            self.say(&painted);
        } else {
            eprintln!("error: {text}");
        }
    }

    /// A headline (game over, whose turn), bold when colour is on.
    pub fn announce(&mut self, text: &str) {
        let painted = self.look.paint(Style::new().bold(), text);
        self.say(&painted);
    }
}

/// Restores the terminal's settings when an online session ends while the
/// line editor is mid-line (in raw mode) on its own thread: the process
/// exits without that thread ever returning, so rustyline cannot.
pub struct TerminalGuard {
    #[cfg(unix)]
    saved: Option<libc::termios>,
}

impl TerminalGuard {
    pub fn save() -> TerminalGuard {
        #[cfg(unix)]
        {
            if !std::io::stdin().is_terminal() {
                return TerminalGuard { saved: None };
            }
            let mut termios = std::mem::MaybeUninit::<libc::termios>::uninit();
            // SAFETY: tcgetattr fills the struct on success (returns 0); on
            // failure it is not read.
            let saved = unsafe {
                (libc::tcgetattr(libc::STDIN_FILENO, termios.as_mut_ptr()) == 0)
                    .then(|| termios.assume_init())
            };
            TerminalGuard { saved }
        }
        #[cfg(not(unix))]
        TerminalGuard {}
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(termios) = &self.saved {
            // SAFETY: restores settings read from the same descriptor. A
            // failure leaves the terminal as it is, nothing worse.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, termios);
            }
        }
    }
}
