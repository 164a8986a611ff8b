//! A throwaway certificate authority for the tests over TLS: a CA and a
//! server certificate for 127.0.0.1 and localhost signed by it, written as
//! PEM files. Shared by the server's tests (tests/tls.rs) and the terminal
//! client's (cli/tests/support), which include this file by path.

use std::path::{Path, PathBuf};

/// The PEM files made by [`make_pki`].
pub struct Pki {
    /// The CA's certificate: what a client trusts (`--ca-cert`).
    pub ca: PathBuf,
    /// The server's certificate (`--tls-cert`) and key (`--tls-key`).
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Makes a CA and a server certificate signed by it in `dir`.
pub fn make_pki(dir: &Path) -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "Rookery test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).expect("CA certificate");
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate().expect("server key");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".into()])
        .expect("server params");
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &issuer).expect("server certificate");

    let pki = Pki {
        ca: dir.join("ca.pem"),
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    std::fs::write(&pki.ca, ca_cert.pem()).expect("write the CA");
    std::fs::write(&pki.cert, cert.pem()).expect("write the certificate");
    std::fs::write(&pki.key, key.serialize_pem()).expect("write the key");
    pki
}
