//! A local SMTP sink for the tests of mail (issue 36): a listener on
//! 127.0.0.1 that speaks just enough SMTP (RFC 5321: greeting, EHLO/HELO,
//! MAIL, RCPT, DATA, RSET, NOOP, QUIT) to take every letter the server
//! sends and keep it, so a test reads the link from the mail it received.
//! No TLS and no AUTH: the server under test runs with `--smtp-tls none`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// One letter as received.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: Vec<String>,
    /// Headers and body, as sent (dot-stuffing undone).
    pub data: String,
}

impl Mail {
    /// The body with quoted-printable soft breaks and `=3D` undone (a
    /// mailer may encode long lines so).
    pub fn text(&self) -> String {
        self.data.replace("=\r\n", "").replace("=3D", "=")
    }

    /// The `token` of the first link to `path` in the letter.
    pub fn link_token(&self, path: &str) -> Option<String> {
        let text = self.text();
        let start = text.find(&format!("{path}?token="))? + path.len() + "?token=".len();
        let token: String = text[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        (!token.is_empty()).then_some(token)
    }
}

#[derive(Clone)]
pub struct SmtpSink {
    pub port: u16,
    mails: Arc<Mutex<Vec<Mail>>>,
    arrived: Arc<Notify>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind SMTP");
        let port = listener.local_addr().expect("address").port();
        let sink = SmtpSink {
            port,
            mails: Arc::default(),
            arrived: Arc::default(),
        };
        let serving = sink.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let sink = serving.clone();
                tokio::spawn(async move { sink.session(socket).await });
            }
        });
        sink
    }

    async fn session(&self, socket: tokio::net::TcpStream) {
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read);
        if write.write_all(b"220 sink ESMTP\r\n").await.is_err() {
            return;
        }
        let mut to = Vec::new();
        loop {
            let mut line = String::new();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let command = line.trim_end().to_ascii_uppercase();
            let answer = if command.starts_with("EHLO") {
                "250-sink\r\n250 8BITMIME".to_string()
            } else if command.starts_with("HELO") || command.starts_with("MAIL FROM") {
                "250 OK".to_string()
            } else if command.starts_with("RCPT TO") {
                let address = line.trim_end()[8..]
                    .trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string();
                to.push(address);
                "250 OK".to_string()
            } else if command == "DATA" {
                if write.write_all(b"354 go ahead\r\n").await.is_err() {
                    return;
                }
                let mut data = String::new();
                loop {
                    let mut line = String::new();
                    match lines.read_line(&mut line).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    if line == ".\r\n" || line == ".\n" {
                        break;
                    }
                    data.push_str(line.strip_prefix('.').unwrap_or(&line));
                }
                self.mails.lock().expect("mails").push(Mail {
                    to: std::mem::take(&mut to),
                    data,
                });
                self.arrived.notify_waiters();
                "250 OK queued".to_string()
            } else if command == "QUIT" {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            } else if command == "RSET" {
                to.clear();
                "250 OK".to_string()
            } else {
                "250 OK".to_string()
            };
            if write
                .write_all(format!("{answer}\r\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Every letter received so far.
    pub fn mails(&self) -> Vec<Mail> {
        self.mails.lock().expect("mails").clone()
    }

    /// The `n`th letter (from 1), waiting for it at most `limit`.
    pub async fn nth(&self, n: usize, limit: Duration) -> Mail {
        super::within(limit, "a letter in the SMTP sink", async {
            loop {
                let arrived = self.arrived.notified();
                if let Some(mail) = self.mails().get(n - 1) {
                    return mail.clone();
                }
                arrived.await;
            }
        })
        .await
    }
}
