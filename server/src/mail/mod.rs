//! Mail the server sends (issue 36): the link that verifies an account's
//! e-mail address and the link that resets a forgotten password, through
//! the SMTP server the operator names with the `--smtp-…` flags.
//!
//! A floor of its own at the bottom of the house: it knows SMTP and the
//! words of the two letters, and nothing of accounts or the database (the
//! edge mints the links, the store keeps their hashes). Without `--smtp-host`
//! there is no [`Mailer`], and the routes that would send mail say so
//! (503 `mail_unavailable`) instead of pretending.
//!
//! Sending is `lettre`'s async SMTP transport on the runtime: it waits on
//! the network, not the CPU.

use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SmtpTls {
    /// Plain SMTP, no TLS (a relay on the same host or private network).
    None,
    /// Plain connection upgraded with STARTTLS, required (port 587).
    Starttls,
    /// TLS from the first byte (SMTPS, port 465).
    Tls,
}

/// What the operator configured (`--smtp-host` and the rest).
#[derive(Debug, Clone)]
pub struct MailSettings {
    pub host: String,
    pub port: u16,
    pub tls: SmtpTls,
    /// User name and password for SMTP AUTH, when the server wants them.
    pub credentials: Option<(String, String)>,
    /// The `From:` of every letter (`Rookery <chess@example.org>`).
    pub from: String,
    /// The site's public address, the base of the links
    /// (`https://chess.example.org`, no trailing slash).
    pub public_base: String,
}

/// What went wrong while sending (logged; the person is told only that
/// the mail could not be sent).
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("bad mail setting: {0}")]
    Settings(String),
    #[error("bad address {0:?}")]
    Address(String),
    #[error("SMTP: {0}")]
    Smtp(String),
}

/// A letter the server sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Letter {
    /// To an address being added to `name`'s account: the link that
    /// verifies it.
    Verify { name: String, token: String },
    /// To an account's verified address: the link that sets a new password.
    Reset { name: String, token: String },
}

/// How long a verification link works.
pub const VERIFY_LINK_TTL: Duration = Duration::from_secs(48 * 3600);
/// How long a password-reset link works.
pub const RESET_LINK_TTL: Duration = Duration::from_secs(3600);

/// The SMTP connection's settings, ready to send.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    public_base: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// Checks the settings (the addresses parse, TLS can be set up); no
    /// connection is made until the first letter.
    pub fn new(settings: MailSettings) -> Result<Mailer, MailError> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|_| MailError::Address(settings.from.clone()))?;
        let tls = match settings.tls {
            SmtpTls::None => Tls::None,
            SmtpTls::Starttls | SmtpTls::Tls => {
                let parameters = TlsParameters::new(settings.host.clone())
                    .map_err(|err| MailError::Settings(err.to_string()))?;
                if settings.tls == SmtpTls::Tls {
                    Tls::Wrapper(parameters)
                } else {
                    Tls::Required(parameters)
                }
            }
        };
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(settings.host.as_str())
                .port(settings.port)
                .tls(tls)
                .timeout(Some(Duration::from_secs(20)));
        if let Some((user, password)) = settings.credentials {
            builder = builder.credentials(Credentials::new(user, password));
        }
        Ok(Mailer {
            transport: builder.build(),
            from,
            public_base: settings.public_base,
        })
    }

    /// The page a link opens: `{public base}{path}?token=…`.
    pub fn link(&self, path: &str, token: &str) -> String {
        format!("{}{path}?token={token}", self.public_base)
    }

    /// Sends `letter` to `to`.
    pub async fn send(&self, to: &str, letter: &Letter) -> Result<(), MailError> {
        let to: Mailbox = to.parse().map_err(|_| MailError::Address(to.to_string()))?;
        let (subject, body) = self.words(letter);
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|err| MailError::Settings(err.to_string()))?;
        self.transport
            .send(message)
            .await
            .map_err(|err| MailError::Smtp(err.to_string()))?;
        Ok(())
    }

    fn words(&self, letter: &Letter) -> (String, String) {
        match letter {
            Letter::Verify { name, token } => (
                "Rookery: confirm your e-mail address".to_string(),
                format!(
                    "Hello {name},\n\nTo confirm that this address belongs to your Rookery \
                     account, open this link within {} hours:\n\n{}\n\nIf you did not add \
                     this address, ignore this mail: nothing changes.\n",
                    VERIFY_LINK_TTL.as_secs() / 3600,
                    self.link("/verify-email", token)
                ),
            ),
            Letter::Reset { name, token } => (
                "Rookery: reset your password".to_string(),
                format!(
                    "Hello {name},\n\nSomeone (you, we hope) asked to reset the password of \
                     your Rookery account. To choose a new one, open this link within {} \
                     minutes; it works once:\n\n{}\n\nSetting a new password logs the account \
                     out everywhere. If you did not ask, ignore this mail: your password stays \
                     as it is.\n",
                    RESET_LINK_TTL.as_secs() / 60,
                    self.link("/reset-password", token)
                ),
            ),
        }
    }
}

/// Whether `text` looks like an e-mail address worth sending a link to:
/// one `@`, something on both sides, no spaces, at most 254 characters
/// (RFC 5321's limit); lettre's own parser then has the last word.
pub fn plausible_address(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    text.len() <= 254
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !text.contains(char::is_whitespace)
        && !domain.contains('@')
        && text.parse::<Mailbox>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_before_a_link_is_sent() {
        assert!(plausible_address("carol@example.org"));
        assert!(!plausible_address("carol"));
        assert!(!plausible_address("carol@localhost"));
        assert!(!plausible_address("ca rol@example.org"));
        assert!(!plausible_address("a@b@example.org"));
        assert!(!plausible_address(&format!(
            "{}@example.org",
            "a".repeat(250)
        )));
    }
}
