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

/// Ctrl-C as something to answer rather than the end of the process, for
/// as long as this lives: waiting for a challenge's answer, Ctrl-C cancels
/// the challenge on the server before leaving. (At the line editor's prompt
/// Ctrl-C is a key, and ends the input instead.) Dropping it gives Ctrl-C
/// back its default, ending the process: tokio's handler, once installed,
/// would otherwise swallow it for the rest of the run, in a game too.
pub struct Interrupt {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupt {
    /// Catches Ctrl-C from now on (needs the async runtime).
    pub fn catch() -> Result<Interrupt, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let signal =
                signal(SignalKind::interrupt()).map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
            Ok(Interrupt { signal })
        }
        #[cfg(not(unix))]
        Ok(Interrupt {})
    }

    /// Waits for Ctrl-C.
    pub async fn caught(&mut self) {
        // `None`: the runtime's signal driver is gone, so no Ctrl-C will
        // come through it.
        #[cfg(unix)]
        if self.signal.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: restores the default disposition of SIGINT; tokio's
        // handler is simply no longer called (its stream is gone).
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
    }
}

/// Questions asked outside a game (`rookery login`'s name and password).
/// At a terminal: a prompt on stderr, and a secret typed without echo.
/// Piped: one line of stdin each and no prompt, so a script (or a test)
/// can pipe the answers in.
pub struct Questions {
    terminal: bool,
}

impl Questions {
    pub fn new() -> Questions {
        Questions {
            terminal: std::io::stdin().is_terminal(),
        }
    }

    /// One line, trimmed; an error at the end of input.
    pub fn ask(&mut self, prompt: &str) -> Result<String, String> {
        if self.terminal {
            eprint!("{prompt}");
        }
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) => Err(format!("no answer to {:?}", prompt.trim_end())),
            Ok(_) => Ok(line.trim().to_string()),
            Err(e) => Err(format!("cannot read stdin: {e}")),
        }
    }

    /// A secret: not echoed at a terminal; piped, one line as it is (only
    /// the line ending removed: spaces may belong to it).
    pub fn ask_secret(&mut self, prompt: &str) -> Result<String, String> {
        if !self.terminal {
            let mut line = String::new();
            return match std::io::stdin().read_line(&mut line) {
                Ok(0) => Err(format!("no answer to {:?}", prompt.trim_end())),
                Ok(_) => Ok(line.trim_end_matches(['\n', '\r']).to_string()),
                Err(e) => Err(format!("cannot read stdin: {e}")),
            };
        }
        eprint!("{prompt}");
        let secret = read_without_echo();
        // The Enter that ended it was not echoed either.
        eprintln!();
        secret
    }
}

/// Reads a line from the terminal with echo off, byte by byte (the
/// terminal's own line editing is off too, so Ctrl-C cancels at once
/// rather than killing the process with echo still off): Enter ends it,
/// Backspace and Ctrl-U edit it, Ctrl-C cancels, Ctrl-D on an empty line
/// is the end of input.
#[cfg(unix)]
fn read_without_echo() -> Result<String, String> {
    use std::io::Read;

    /// Puts the terminal's settings back however the reading ends.
    struct Restore(libc::termios);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: settings read from the same descriptor; a failure
            // leaves the terminal as it is.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.0);
            }
        }
    }

    let mut termios = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills the struct on success (0); on failure it is
    // not read.
    let saved = unsafe {
        if libc::tcgetattr(libc::STDIN_FILENO, termios.as_mut_ptr()) != 0 {
            return Err(format!(
                "cannot switch the terminal's echo off: {}",
                std::io::Error::last_os_error()
            ));
        }
        termios.assume_init()
    };
    let mut quiet = saved;
    quiet.c_lflag &= !(libc::ECHO | libc::ICANON | libc::ISIG);
    quiet.c_cc[libc::VMIN] = 1;
    quiet.c_cc[libc::VTIME] = 0;
    // SAFETY: a valid termios for the same descriptor.
    if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &quiet) } != 0 {
        return Err(format!(
            "cannot switch the terminal's echo off: {}",
            std::io::Error::last_os_error()
        ));
    }
    let _restore = Restore(saved);
    let mut stdin = std::io::stdin().lock();
    let mut secret: Vec<u8> = Vec::new();
    loop {
        let mut byte = [0u8; 1];
        match stdin.read(&mut byte) {
            Ok(0) => return Err("no answer: end of input".into()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read the terminal: {e}")),
        }
        match byte[0] {
            b'\r' | b'\n' => break,
            0x03 => return Err("cancelled".into()),
            0x04 if secret.is_empty() => return Err("no answer: end of input".into()),
            // Backspace: the last character, all of its UTF-8 bytes.
            0x7f | 0x08 => while secret.pop().is_some_and(|b| b & 0xC0 == 0x80) {},
            0x15 => secret.clear(),
            control if control < 0x20 => {}
            other => secret.push(other),
        }
    }
    String::from_utf8(secret).map_err(|_| "the answer is not UTF-8".into())
}

#[cfg(not(unix))]
fn read_without_echo() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}
