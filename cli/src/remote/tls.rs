//! TLS for `https://` and `wss://` servers: one rustls configuration, used
//! by the HTTP client and the WebSockets alike, so both trust exactly the
//! same certificates.
//!
//! Trusted: the operating system's roots (read by `rustls-native-certs`,
//! which honours `SSL_CERT_FILE` and `SSL_CERT_DIR`), plus the PEM
//! certificates of `--ca-cert FILE`, for a server whose certificate comes
//! from a private CA (a company's, or one made for testing). The crypto is
//! rustls's `ring` provider; TLS 1.3 and 1.2 with rustls's safe defaults.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// The client configuration for a TLS server, trusting the system's roots
/// and those in `ca_cert`.
pub fn client_config(ca_cert: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    // A system certificate rustls cannot use (an odd or expired root) is
    // skipped: the others still serve.
    let system = rustls_native_certs::load_native_certs();
    let (usable, _unusable) = roots.add_parsable_certificates(system.certs);
    if let Some(path) = ca_cert {
        let added = private_ca(&mut roots, path)?;
        if added == 0 {
            return Err(format!(
                "--ca-cert {}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)",
                path.display()
            ));
        }
    } else if usable == 0 {
        return Err(
            "no trusted root certificates found on this system: install the \
                    ca-certificates package, or name the server's CA with --ca-cert FILE"
                .into(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Adds the certificates of a PEM file; returns how many.
fn private_ca(roots: &mut RootCertStore, path: &Path) -> Result<usize, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("--ca-cert {}: cannot read it: {e}", path.display()))?;
    let count = certs.len();
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("--ca-cert {}: unusable certificate: {e}", path.display()))?;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing here\n").unwrap();
        let error = client_config(Some(&empty)).err().unwrap();
        assert!(error.contains("no PEM certificate"), "{error}");
        let missing = dir.path().join("missing.pem");
        let error = client_config(Some(&missing)).err().unwrap();
        assert!(
            error.starts_with("--ca-cert ") && error.contains("missing.pem"),
            "{error}"
        );
    }
}
