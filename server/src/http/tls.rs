//! HTTPS served by the server itself (`--tls-cert`, `--tls-key`), for an
//! operator who runs no TLS proxy in front of it (issue 21).
//!
//! rustls on the `ring` provider: TLS 1.3 and 1.2 with rustls's safe
//! defaults, no client certificates, ALPN `http/1.1` (the accept loop
//! speaks HTTP/1.1 only; WebSockets upgrade over it as over plain TCP).
//! The files are read once, at start-up: a missing or unreadable file, a
//! file with no PEM certificate or key in it, or a key that does not
//! belong to the certificate stops the server before it prints its
//! `listening on` line. A renewed certificate takes a restart.
//!
//! The handshake itself runs in the accept loop ([`crate::http::serve`]), inside
//! the connection's header timer.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
pub use tokio_rustls::TlsAcceptor;

use crate::Config;

/// The acceptor for `--tls-cert`/`--tls-key`, or `None` when the server
/// speaks plain HTTP.
pub fn from_config(config: &Config) -> anyhow::Result<Option<TlsAcceptor>> {
    match (&config.site.tls_cert, &config.site.tls_key) {
        (Some(cert), Some(key)) => acceptor(cert, key).map(Some),
        (None, None) => Ok(None),
        // clap's `requires` keeps the two together on the command line; a
        // Config built in code could still hold one alone.
        _ => bail!("--tls-cert and --tls-key go together: give both, or neither"),
    }
}

/// Reads a PEM certificate chain (the server's certificate first, then its
/// intermediates) and its PEM private key (PKCS#8, PKCS#1 or SEC1).
pub fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<TlsAcceptor> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .with_context(|| format!("--tls-cert {}: cannot read it", cert.display()))?;
    if chain.is_empty() {
        bail!(
            "--tls-cert {}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)",
            cert.display()
        );
    }
    let key = PrivateKeyDer::from_pem_file(key).with_context(|| {
        format!(
            "--tls-key {}: cannot read a PEM private key from it",
            key.display()
        )
    })?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .with_context(|| {
            format!(
                "--tls-cert {}: the certificate and key are unusable together",
                cert.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();

        let error = format!("{:#}", acceptor(&missing, &missing).err().unwrap());
        assert!(error.starts_with("--tls-cert "), "{error}");
        assert!(error.contains("missing.pem"), "{error}");

        let error = format!("{:#}", acceptor(&empty, &empty).err().unwrap());
        assert!(error.contains("no PEM certificate"), "{error}");

        let mut config = Config::defaults();
        assert!(from_config(&config).unwrap().is_none());
        config.site.tls_cert = Some(empty);
        assert!(from_config(&config).is_err());
    }
}
