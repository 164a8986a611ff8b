//! HTTPS served by the server itself (`--tls-cert`, `--tls-key`; issue
//! 21): each test makes a throwaway CA and a certificate for 127.0.0.1 and
//! localhost signed by it, starts the real service in-process with them,
//! and talks to it with clients that trust that CA alone: HTTP requests
//! and a game over a WebSocket, a plain-HTTP request at the HTTPS port, a
//! handshake that never finishes, unusable certificate files.

#[path = "support/pki.rs"]
mod pki;
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use pki::make_pki;
use rookery_server::Config;
use serde_json::{json, Value};
use support::{read, test_config, within, TestDb, WAIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::tungstenite::Message;

/// A rustls client configuration trusting the test CA only.
fn client_tls(ca_pem: &[u8]) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(ca_pem).expect("CA PEM");
    roots.add(ca).expect("trust the CA");
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// The service serving HTTPS in this process.
struct TlsServer {
    addr: SocketAddr,
    https: reqwest::Client,
    tls: Arc<ClientConfig>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<anyhow::Result<()>>,
    _pki_dir: tempfile::TempDir,
}

impl TlsServer {
    /// `TestServer::start` waits for `/healthz` over plain HTTP; this
    /// waits for it over HTTPS.
    async fn start(mut config: Config) -> TlsServer {
        let pki_dir = tempfile::tempdir().expect("temporary directory");
        let pki = make_pki(pki_dir.path());
        let ca_pem = std::fs::read(&pki.ca).expect("read the CA");
        config.site.tls_cert = Some(pki.cert.clone());
        config.site.tls_key = Some(pki.key.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(rookery_server::run(listener, config, async move {
            let _ = stopped.await;
        }));
        let https = reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca_pem).expect("CA PEM"))
            .build()
            .expect("HTTPS client");
        let server = TlsServer {
            addr,
            https,
            tls: client_tls(&ca_pem),
            stop: Some(stop),
            task,
            _pki_dir: pki_dir,
        };
        within(WAIT, "the server to answer /healthz over HTTPS", async {
            loop {
                if let Ok(response) = server.https.get(server.url("/healthz")).send().await {
                    if response.status().is_success() {
                        break;
                    }
                }
                assert!(
                    !server.task.is_finished(),
                    "the server stopped while starting"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        server
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self.https.post(self.url(path)).json(&body).send().await;
        read(response.expect("POST over HTTPS")).await
    }

    /// A WebSocket over TLS (`wss://`) to game `id`, as its seat `token`.
    async fn socket(
        &self,
        id: &str,
        token: &str,
    ) -> tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>> {
        within(WAIT, "a wss:// connection", async {
            let tcp = TcpStream::connect(self.addr).await.expect("connect");
            let name = ServerName::try_from("localhost").expect("server name");
            let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
                .connect(name, tcp)
                .await
                .expect("TLS handshake");
            let url = format!(
                "wss://localhost:{}/ws/games/{id}?token={token}",
                self.addr.port()
            );
            let (socket, _) = tokio_tungstenite::client_async(url, tls)
                .await
                .expect("WebSocket upgrade over TLS");
            socket
        })
        .await
    }

    /// The server still answers `/healthz` over HTTPS.
    async fn assert_serving(&self, when: &str) {
        let response = self
            .https
            .get(self.url("/healthz"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("HTTPS {when}: {e}"));
        assert_eq!(response.status().as_u16(), 200, "HTTPS {when}");
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        within(WAIT, "the server to shut down", self.task)
            .await
            .expect("server task")
            .expect("server result");
    }
}

/// The next `state` message's game with at least `plies` moves.
async fn state_with_moves(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>>,
    plies: usize,
) -> Value {
    within(WAIT, "a state over wss://", async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let message: Value = serde_json::from_str(text.as_str()).expect("JSON");
                    if message["type"] == "error" {
                        panic!("error over wss://: {message}");
                    }
                    if message["type"] == "state"
                        && message["game"]["moves"]
                            .as_array()
                            .is_some_and(|moves| moves.len() >= plies)
                    {
                        return message["game"].clone();
                    }
                }
                Some(Ok(_)) => continue,
                other => panic!("unexpected WebSocket event: {other:?}"),
            }
        }
    })
    .await
}

#[tokio::test]
async fn https_requests_and_a_game_over_wss() {
    let db = TestDb::new();
    let server = TlsServer::start(test_config(&db)).await;

    // A game over HTTPS: created, joined.
    let (status, created) = server
        .post(
            "/api/games",
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str().expect("id").to_string();
    let white = created["seat"]["token"].as_str().expect("seat").to_string();
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), json!({}))
        .await;
    assert_eq!(status, 200, "{joined}");
    let black = joined["seat"]["token"].as_str().expect("seat").to_string();

    // Both players' moves over wss://, each seen by the other.
    let mut white_socket = server.socket(&id, &white).await;
    let mut black_socket = server.socket(&id, &black).await;
    state_with_moves(&mut white_socket, 0).await;
    state_with_moves(&mut black_socket, 0).await;
    let line = ["e2e4", "e7e5"];
    for (ply, uci) in line.iter().enumerate() {
        let (mover, other) = if ply % 2 == 0 {
            (&mut white_socket, &mut black_socket)
        } else {
            (&mut black_socket, &mut white_socket)
        };
        let message = json!({"type": "move", "uci": uci}).to_string();
        mover
            .send(Message::text(message))
            .await
            .expect("send over wss://");
        let seen = state_with_moves(other, ply + 1).await;
        assert_eq!(seen["moves"], json!(line[..=ply]));
    }

    // The game's state over HTTPS agrees; the session cookie of an account
    // made over HTTPS is `Secure` (the server serves TLS itself).
    let response = server
        .https
        .get(server.url(&format!("/api/games/{id}")))
        .send()
        .await
        .expect("GET over HTTPS");
    let (status, state) = read(response).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["moves"], json!(["e2e4", "e7e5"]));
    let response = server
        .https
        .post(server.url("/api/accounts"))
        .json(&json!({"name": "tls_carol", "password": "a long passphrase"}))
        .send()
        .await
        .expect("sign up over HTTPS");
    assert_eq!(response.status().as_u16(), 201);
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .expect("a session cookie")
        .to_string();
    assert!(cookie.starts_with("rookery_session="), "{cookie}");
    assert!(cookie.contains("; Secure"), "{cookie}");

    drop(white_socket);
    drop(black_socket);
    server.stop().await;
}

#[tokio::test]
async fn plain_http_at_the_https_port_is_told_and_the_server_goes_on() {
    let db = TestDb::new();
    let server = TlsServer::start(test_config(&db)).await;

    // An HTTP client that forgot the `s`: a plain answer it can read.
    let plain = reqwest::Client::new()
        .get(format!("http://{}/healthz", server.addr))
        .send()
        .await
        .expect("a plain-HTTP answer");
    let (status, body) = read(plain).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("https://"), "{body}");

    // Garbage that is not TLS either: the handshake fails (an alert may
    // come back), the connection closes, nothing else happens.
    let junk = [0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5, 6, 7, 8];
    let _ = until_closed(server.addr, &junk, "the junk connection to close").await;

    server.assert_serving("after the plain request").await;
    server.stop().await;
}

#[tokio::test]
async fn a_handshake_that_never_finishes_is_closed_by_the_header_timer() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.header_timeout_ms = 200;
    let server = TlsServer::start(config).await;

    // The first bytes of a ClientHello, then nothing: a slowloris
    // handshake. The header timer closes it; the test only waits for that
    // (with a generous limit), it does not time it.
    let answer = until_closed(
        server.addr,
        &[0x16, 0x03, 0x01],
        "the stalled handshake to be closed",
    )
    .await;
    assert!(
        answer.as_ref().map_or(true, Vec::is_empty),
        "closed without an answer: {answer:?}"
    );

    server.assert_serving("after the stalled handshake").await;
    server.stop().await;
}

/// Connects to `addr`, sends `bytes` and reads until the server closes
/// the connection: what came back (an error for a reset).
async fn until_closed(addr: SocketAddr, bytes: &[u8], what: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes).await.expect("write");
    let mut answer = Vec::new();
    within(WAIT, what, stream.read_to_end(&mut answer)).await?;
    Ok(answer)
}

#[tokio::test]
async fn unusable_certificate_files_stop_the_start() {
    let db = TestDb::new();
    let dir = tempfile::tempdir().expect("temporary directory");
    let pki = make_pki(dir.path());
    let other = tempfile::tempdir().expect("temporary directory");
    let other = make_pki(other.path());
    let missing = dir.path().join("missing.pem");
    let cases = [
        (&missing, &pki.key, "--tls-cert"),
        (&pki.cert, &missing, "--tls-key"),
        // The key of another certificate.
        (&pki.cert, &other.key, "unusable together"),
    ];
    for (cert, key, reason) in cases {
        let mut config = test_config(&db);
        config.site.tls_cert = Some(cert.clone());
        config.site.tls_key = Some(key.clone());
        let error = format!(
            "{:#}",
            rookery_server::App::start(config).await.err().unwrap()
        );
        assert!(error.contains(reason), "{error}");
    }
}
