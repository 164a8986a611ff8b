//! The terminal client against a `rookery-server` serving HTTPS itself
//! (`--tls-cert`, `--tls-key`) with a certificate from a throwaway CA the
//! test makes: two clients play over `wss://` trusting it with `--ca-cert`
//! (and are refused without it); `login` stores a token in a private file,
//! `whoami` names the account, games created afterwards are the account's,
//! and `logout` revokes the token.
//!
//! Like tests/server.rs, this needs the server binary built beside ours.

mod support;

use reqwest::Method;
use support::{config_dir, finish, run, spawn_rookery, Api, LineFeed, Server};

#[test]
fn two_clients_play_over_wss_with_a_private_ca() {
    let server = Server::start_tls();
    let ca = server.ca_cert.clone().expect("the test CA");
    let ca = ca.to_str().expect("a UTF-8 path");
    let dir = tempfile::tempdir().expect("temporary directory");

    // Without the CA the server's certificate is refused, and said why.
    let refused = run(dir.path(), &["games", "--server", &server.url], "");
    assert!(!refused.status.success(), "{refused:#?}");
    assert!(
        refused.stderr.contains("certificate"),
        "the reason names the certificate: {}",
        refused.stderr
    );

    let mut white = spawn_rookery(
        dir.path(),
        &[
            "play",
            "--server",
            &server.url,
            "--ca-cert",
            ca,
            "--color",
            "white",
        ],
    );
    let mut white_out = LineFeed::new(white.stdout.take().expect("stdout"));
    let link = white_out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });
    assert!(link.starts_with("https://127.0.0.1:"), "{link}");

    // Black joins by the https:// link; its WebSocket is wss://.
    let black = spawn_rookery(dir.path(), &["play", "--ca-cert", ca, &link]);
    let white_script = std::thread::spawn(move || {
        // `board` waits for white's turn or the end: the mate.
        let run = finish(white, "f3\ng4\nboard\n");
        (run.status, white_out.rest())
    });
    let black_run = finish(black, "e5\nQh4#\n");
    let (white_status, white_lines) = white_script.join().expect("white's script");
    black_run.assert_ok();
    assert!(white_status.success(), "white failed: {white_lines:#?}");
    let white_text = white_lines.join("\n");
    for (who, text) in [("white", &white_text), ("black", &black_run.stdout)] {
        for line in ["1. f3", "1... e5", "2. g4", "2... Qh4#", "game over: 0-1"] {
            assert!(
                text.contains(line),
                "{who} did not report {line:?}:\n{text}"
            );
        }
    }
}

#[test]
fn login_keeps_a_private_token_that_plays_and_logout_revokes_it() {
    let server = Server::start_tls();
    let ca = server.ca_cert.clone().expect("the test CA");
    let ca = ca.to_str().expect("a UTF-8 path");
    let api = Api::new(&server);
    api.sign_up("Carol_cli", "a long passphrase");
    let dir = tempfile::tempdir().expect("temporary directory");
    let on_server = ["--server", server.url.as_str(), "--ca-cert", ca];
    let with = |command: &'static str| -> Vec<&str> {
        let mut args = vec![command];
        args.extend(on_server);
        args
    };

    // A wrong password: the server's reason, nothing stored.
    let wrong = run(dir.path(), &with("login"), "Carol_cli\nnot the password\n");
    assert!(!wrong.status.success(), "{wrong:#?}");
    assert!(
        wrong.stderr.contains("wrong name or password"),
        "{}",
        wrong.stderr
    );
    let file = config_dir(dir.path())
        .join("rookery")
        .join("credentials.json");
    assert!(!file.exists());

    // Name and password piped, one line each (the name in another case).
    let login = run(dir.path(), &with("login"), "carol_cli\na long passphrase\n");
    login.assert_ok();
    assert!(
        login
            .stdout
            .contains(&format!("logged in to {} as Carol_cli", server.url)),
        "{}",
        login.stdout
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600, "the credentials file");
        assert_eq!(mode(file.parent().unwrap()), 0o700, "its directory");
    }
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
    let login_entry = &stored["logins"][0];
    assert_eq!(login_entry["server"], server.url.as_str());
    let token = login_entry["token"].as_str().expect("token").to_string();
    assert!(token.starts_with("rky_"), "{stored}");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(!text.contains("passphrase"), "no password stored: {text}");

    // The token names the account.
    let (status, account) = api.call(Method::GET, "/api/account", Some(&token), None);
    assert_eq!(status, 200, "{account}");
    assert_eq!(account["username"], "Carol_cli");

    let whoami = run(dir.path(), &with("whoami"), "");
    whoami.assert_ok();
    assert_eq!(whoami.stdout, "Carol_cli\n");
    // The one server logged in to is the default.
    let whoami = run(dir.path(), &["whoami", "--ca-cert", ca], "");
    whoami.assert_ok();
    assert_eq!(whoami.stdout, "Carol_cli\n");

    // Logging in again replaces the token and revokes the old one.
    let again = run(dir.path(), &with("login"), "Carol_cli\na long passphrase\n");
    again.assert_ok();
    let (status, _) = api.call(Method::GET, "/api/account", Some(&token), None);
    assert_eq!(status, 401, "the first token is revoked");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
    assert_eq!(
        stored["logins"].as_array().map(Vec::len),
        Some(1),
        "{stored}"
    );
    let token = stored["logins"][0]["token"]
        .as_str()
        .expect("token")
        .to_string();

    // A game made while logged in is the account's.
    let mut args = with("play");
    args.extend(["--color", "white"]);
    let created = run(dir.path(), &args, "");
    created.assert_ok();
    let link = created
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("game: "))
        .expect("the game link");
    let id = link
        .split('#')
        .next()
        .and_then(|page| page.rsplit('/').next())
        .expect("the game id");
    let (status, game) = api.call(Method::GET, &format!("/api/games/{id}"), None, None);
    assert_eq!(status, 200, "{game}");
    assert_eq!(game["white"]["name"], "Carol_cli", "{game}");

    // Logout revokes the token (the password is there in case the server
    // lets only a session revoke tokens) and deletes the file.
    let logout = run(dir.path(), &with("logout"), "a long passphrase\n");
    logout.assert_ok();
    assert!(logout.stdout.contains("logged out"), "{}", logout.stdout);
    assert!(!file.exists());
    let (status, _) = api.call(Method::GET, "/api/account", Some(&token), None);
    assert_eq!(status, 401, "the token is revoked");
    let whoami = run(dir.path(), &with("whoami"), "");
    assert!(!whoami.status.success());
    assert!(whoami.stderr.contains("not logged in"), "{}", whoami.stderr);
}
