//! Getting an account back (issue 36): an e-mail address verified by a
//! link, "forgot password" links mailed through the operator's SMTP server
//! (here a local sink the test starts, tests/support/smtp.rs), the same
//! answer for known and unknown names, a reset that ends every session
//! (open event streams included), and `rookery-server admin
//! reset-password` for a server without mail.

mod support;

use std::time::Duration;

use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{json, Value};
use support::smtp::SmtpSink;
use support::*;

const PASSWORD: &str = "a long and rare phrase";
const NEW_PASSWORD: &str = "another quite long phrase";

fn mail_config(db: &TestDb, sink: &SmtpSink) -> rookery_server::Config {
    let mut config = test_config(db);
    config.site.public_url = Some("http://chess.rookery.test/".into());
    config.mail.smtp_host = Some("127.0.0.1".into());
    config.mail.smtp_port = Some(sink.port);
    config.mail.smtp_tls = Some(rookery_server::mail::SmtpTls::None);
    config.mail.smtp_from = Some("Rookery <chess@rookery.test>".into());
    config
}

/// Sends a request with the session `cookie`; answers (status, JSON or
/// null, the new session cookie if one was set).
async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    cookie: Option<&str>,
    body: Option<Value>,
) -> (u16, Value, Option<String>) {
    let mut request = server.http.request(method, server.url(path));
    if let Some(cookie) = cookie {
        request = request.header(COOKIE, format!("rookery_session={cookie}"));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let set = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .and_then(|v| v.strip_prefix("rookery_session="))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let (status, value) = read(response).await;
    (status, value, set)
}

async fn sign_up(server: &TestServer, name: &str) -> String {
    let (status, account, cookie) = send(
        server,
        reqwest::Method::POST,
        "/api/accounts",
        None,
        Some(json!({"name": name, "password": PASSWORD})),
    )
    .await;
    assert_eq!(status, 201, "{account}");
    cookie.expect("a session cookie")
}

async fn log_in(server: &TestServer, name: &str, password: &str) -> (u16, Option<String>) {
    let (status, _, cookie) = send(
        server,
        reqwest::Method::POST,
        "/api/session",
        None,
        Some(json!({"name": name, "password": password})),
    )
    .await;
    (status, cookie)
}

async fn account(server: &TestServer, cookie: &str) -> (u16, Value) {
    let (status, value, _) = send(
        server,
        reqwest::Method::GET,
        "/api/account",
        Some(cookie),
        None,
    )
    .await;
    (status, value)
}

async fn post(server: &TestServer, path: &str, cookie: Option<&str>, body: Value) -> (u16, Value) {
    let (status, value, _) = send(server, reqwest::Method::POST, path, cookie, Some(body)).await;
    (status, value)
}

#[tokio::test]
async fn a_forgotten_password_comes_back_by_a_mailed_link() {
    let sink = SmtpSink::start().await;
    let db = TestDb::new();
    let server = TestServer::start(mail_config(&db, &sink)).await;
    let (_, info) = server.get("/api/account/recovery").await;
    assert_eq!(info, json!({"mail": true}));
    let phone = sign_up(&server, "carol").await;

    // An address: refused when it is none, else a link to verify it.
    let put = |cookie: String, body: Value| {
        let server = &server;
        async move {
            let (status, value, _) = send(
                server,
                reqwest::Method::PUT,
                "/api/account/email",
                Some(&cookie),
                Some(body),
            )
            .await;
            (status, value)
        }
    };
    assert_error(
        &put(phone.clone(), json!({"email": "not an address"})).await,
        400,
        "bad_request",
    );
    let (status, _) = put(phone.clone(), json!({"email": "Carol@Example.org"})).await;
    assert_eq!(status, 202);
    let letter = sink.nth(1, WAIT).await;
    assert_eq!(letter.to, vec!["Carol@Example.org".to_string()]);
    assert!(
        letter
            .text()
            .contains("http://chess.rookery.test/verify-email?token="),
        "{}",
        letter.data
    );
    let verify = letter
        .link_token("/verify-email")
        .expect("a verification link");
    let (_, me) = account(&server, &phone).await;
    assert_eq!(me["email"], Value::Null, "not before the link is opened");
    assert_eq!(me["email_pending"], "Carol@Example.org");
    assert_error(
        &post(
            &server,
            "/api/account/email/verify",
            None,
            json!({"token": "0".repeat(64)}),
        )
        .await,
        400,
        "bad_request",
    );
    let (status, _) = post(
        &server,
        "/api/account/email/verify",
        None,
        json!({"token": verify}),
    )
    .await;
    assert_eq!(status, 204);
    assert_error(
        &post(
            &server,
            "/api/account/email/verify",
            None,
            json!({"token": verify}),
        )
        .await,
        400,
        "bad_request",
    );
    let (_, me) = account(&server, &phone).await;
    assert_eq!(me["email"], "Carol@Example.org");

    // A second device, with its event stream open.
    let (status, laptop) = log_in(&server, "carol", PASSWORD).await;
    assert_eq!(status, 200);
    let laptop = laptop.expect("a cookie");
    let mut stream = server
        .http
        .get(server.url("/api/stream/event"))
        .header(COOKIE, format!("rookery_session={laptop}"))
        .send()
        .await
        .expect("event stream");
    assert_eq!(stream.status().as_u16(), 200);

    // "Forgot password": the same answer for nobody and for carol (by
    // address, ignoring case); only carol gets a letter.
    let nobody = post(
        &server,
        "/api/account/forgot",
        None,
        json!({"login": "nobody"}),
    )
    .await;
    let known = post(
        &server,
        "/api/account/forgot",
        None,
        json!({"login": "CAROL@example.org"}),
    )
    .await;
    assert_eq!(nobody, known);
    assert_eq!(known.0, 202);
    let letter = sink.nth(2, WAIT).await;
    assert_eq!(letter.to, vec!["Carol@Example.org".to_string()]);
    let reset = letter.link_token("/reset-password").expect("a reset link");
    assert_eq!(reset.len(), 64);
    assert!(
        sink.mails().iter().all(|mail| mail.to == letter.to),
        "only carol's address gets mail"
    );

    // The page asks whose link it is; a weak password changes nothing.
    let (status, whose) = server
        .get(&format!("/api/account/reset?token={reset}"))
        .await;
    assert_eq!((status, whose), (200, json!({"name": "carol"})));
    assert_error(
        &server.get("/api/account/reset?token=nope").await,
        400,
        "bad_request",
    );
    assert_error(
        &post(
            &server,
            "/api/account/reset",
            None,
            json!({"token": reset, "password": "short"}),
        )
        .await,
        400,
        "weak_password",
    );
    let (status, _) = post(
        &server,
        "/api/account/reset",
        None,
        json!({"token": reset, "password": NEW_PASSWORD}),
    )
    .await;
    assert_eq!(status, 204);
    // Single use.
    assert_error(
        &post(
            &server,
            "/api/account/reset",
            None,
            json!({"token": reset, "password": "yet another long phrase"}),
        )
        .await,
        400,
        "bad_request",
    );

    // Every session ended, the open stream too.
    assert_eq!(account(&server, &phone).await.0, 401);
    assert_eq!(account(&server, &laptop).await.0, 401);
    within(Duration::from_secs(20), "the event stream to end", async {
        while stream.chunk().await.ok().flatten().is_some() {}
    })
    .await;
    assert_eq!(log_in(&server, "carol", PASSWORD).await.0, 401);
    assert_eq!(log_in(&server, "carol", NEW_PASSWORD).await.0, 200);

    // Removing the address: no letter goes to it any more.
    let (status, _) = log_in(&server, "carol", NEW_PASSWORD).await;
    assert_eq!(status, 200);
    let (_, cookie) = log_in(&server, "carol", NEW_PASSWORD).await;
    let cookie = cookie.expect("a cookie");
    assert_eq!(put(cookie.clone(), json!({"email": null})).await.0, 204);
    let (_, me) = account(&server, &cookie).await;
    assert_eq!(me["email"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn forgot_password_is_throttled_alike_for_everyone() {
    let sink = SmtpSink::start().await;
    let db = TestDb::new();
    let server = TestServer::start(mail_config(&db, &sink)).await;
    sign_up(&server, "erin").await;
    for login in ["erin", "nobody", "erin", "x@example.org", "nobody"] {
        let answer = post(
            &server,
            "/api/account/forgot",
            None,
            json!({"login": login}),
        )
        .await;
        assert_eq!(answer.0, 202, "{login}: {}", answer.1);
    }
    for login in ["erin", "nobody"] {
        let answer = post(
            &server,
            "/api/account/forgot",
            None,
            json!({"login": login}),
        )
        .await;
        assert_error(&answer, 429, "rate_limited");
    }
    assert_error(
        &post(&server, "/api/account/forgot", None, json!({"login": ""})).await,
        400,
        "bad_request",
    );
    server.stop().await;
}

#[tokio::test]
async fn without_smtp_the_server_says_it_sends_no_mail() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (_, info) = server.get("/api/account/recovery").await;
    assert_eq!(info, json!({"mail": false}));
    let cookie = sign_up(&server, "frank").await;
    assert_error(
        &post(
            &server,
            "/api/account/forgot",
            None,
            json!({"login": "frank"}),
        )
        .await,
        503,
        "mail_unavailable",
    );
    let (status, value, _) = send(
        &server,
        reqwest::Method::PUT,
        "/api/account/email",
        Some(&cookie),
        Some(json!({"email": "frank@example.org"})),
    )
    .await;
    assert_error(&(status, value), 503, "mail_unavailable");
    server.stop().await;
}

#[tokio::test]
async fn the_operator_resets_a_password_from_the_command_line() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let cookie = sign_up(&server, "Grace").await;
    let output = within(
        WAIT,
        "rookery-server admin reset-password",
        server_binary(&["admin", "reset-password", "grace", "--database", &db.url()]).output(),
    )
    .await
    .expect("run admin");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let password = stdout
        .lines()
        .find_map(|line| line.strip_prefix("new password for Grace: "))
        .expect("the new password")
        .trim()
        .to_string();
    assert_eq!(password.len(), 20, "{stdout}");
    assert_eq!(account(&server, &cookie).await.0, 401, "the session ended");
    assert_eq!(log_in(&server, "Grace", PASSWORD).await.0, 401);
    assert_eq!(log_in(&server, "Grace", &password).await.0, 200);

    let output = server_binary(&["admin", "reset-password", "nobody", "--database", &db.url()])
        .output()
        .await
        .expect("run admin");
    assert_ne!(output.status.code(), Some(0), "no such account");
    server.stop().await;
}
