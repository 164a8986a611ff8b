//! Teams (issue 39) in lichess's team API shapes: an open team joined at
//! once, a team joined by request with a password, leaders answering
//! requests, removing members and appointing other leaders, members
//! leaving; refusals in lichess's flat error shape, changing nothing.

mod support;

use serde_json::{json, Value};
use support::*;

/// Signs a person up and makes them a token that may play.
pub async fn person(server: &TestServer, name: &str) -> String {
    support::person(server, name, &["play", "challenge"]).await
}

async fn get_as(server: &TestServer, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = server.http.get(server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("GET")).await
}

async fn send(server: &TestServer, method: &str, path: &str, token: &str) -> (u16, Value) {
    let request = match method {
        "PUT" => server.http.put(server.url(path)),
        "DELETE" => server.http.delete(server.url(path)),
        _ => server.http.post(server.url(path)),
    };
    read(request.bearer_auth(token).send().await.expect("request")).await
}

/// A refusal in lichess's shape: the status and a message.
fn refused(answer: &(u16, Value), status: u16) {
    assert_eq!(answer.0, status, "expected {status}, got {}", answer.1);
    assert!(
        answer.1["error"].as_str().is_some_and(|m| !m.is_empty()),
        "lichess's error shape: {}",
        answer.1
    );
}

/// The member names of a team, from its NDJSON list.
async fn members(server: &TestServer, team: &str) -> Vec<String> {
    let (status, content_type, body) = server.get_text(&format!("/api/team/{team}/users")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, "application/x-ndjson");
    let mut names: Vec<String> = body
        .lines()
        .map(|line| {
            let member: Value = serde_json::from_str(line).expect("a JSON line");
            assert!(member["joinedTeamAt"].is_i64(), "{member}");
            member["name"].as_str().expect("name").to_string()
        })
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn teams_are_joined_open_by_request_and_by_password_and_led_by_their_leaders() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = person(&server, "alice").await;
    let bob = person(&server, "bob").await;
    let carol = person(&server, "carol").await;

    // Creation: the founder leads; bad names change nothing.
    refused(
        &server
            .post("/api/team", None, Some(json!({"name": "Knights"})))
            .await,
        401,
    );
    refused(
        &server
            .post("/api/team", Some(&alice), Some(json!({"name": "K"})))
            .await,
        400,
    );
    let (status, team) = server
        .post(
            "/api/team",
            Some(&alice),
            Some(json!({"name": "Rookery Knights", "description": "Tuesday nights", "open": true})),
        )
        .await;
    assert_eq!(status, 200, "{team}");
    assert_eq!(team["id"], "rookery-knights");
    assert_eq!(team["leader"]["id"], "alice");
    assert_eq!(team["leaders"], json!([{"id": "alice", "name": "alice"}]));
    assert_eq!(team["nbMembers"], 1);
    assert_eq!(team["open"], true);
    assert_eq!(team["joined"], true);
    refused(
        &server
            .post(
                "/api/team",
                Some(&bob),
                Some(json!({"name": "rookery KNIGHTS!"})),
            )
            .await,
        409,
    );
    refused(&get_as(&server, "/api/team/no-such-team", None).await, 404);

    // An open team: joined at once (lichess's path, form-encoded).
    let response = server
        .http
        .post(server.url("/team/rookery-knights/join"))
        .bearer_auth(&bob)
        .form(&[("message", "")])
        .send()
        .await
        .expect("join");
    let joined = read(response).await;
    assert_eq!(joined.0, 200, "{}", joined.1);
    assert_eq!(joined.1["ok"], true);
    assert_eq!(members(&server, "rookery-knights").await, ["alice", "bob"]);
    let (_, seen) = get_as(&server, "/api/team/rookery-knights", Some(&bob)).await;
    assert_eq!(
        (seen["joined"].clone(), seen["nbMembers"].clone()),
        (json!(true), json!(2))
    );

    // A team by request, with a password.
    let (status, club) = server
        .post(
            "/api/team",
            Some(&alice),
            Some(json!({"name": "Closed Club", "open": false, "password": "sesame"})),
        )
        .await;
    assert_eq!(status, 200, "{club}");
    assert_eq!(club["open"], false);
    let join = |body: Value| {
        let token = carol.clone();
        let server = &server;
        async move {
            server
                .post("/api/team/closed-club/join", Some(&token), Some(body))
                .await
        }
    };
    refused(&join(json!({"message": "let me in please"})).await, 403);
    refused(
        &join(json!({"message": "let me in please", "password": "wrong"})).await,
        403,
    );
    refused(&join(json!({"password": "sesame"})).await, 403);
    let asked = join(json!({"message": "let me in please", "password": "sesame"})).await;
    assert_eq!(asked.0, 200, "{}", asked.1);
    assert_eq!(asked.1["requested"], true);
    assert_eq!(members(&server, "closed-club").await, ["alice"]);
    let (_, seen) = get_as(&server, "/api/team/closed-club", Some(&carol)).await;
    assert_eq!(
        (seen["joined"].clone(), seen["requested"].clone()),
        (json!(false), json!(true))
    );

    // Only leaders see and answer requests.
    refused(
        &get_as(&server, "/api/team/closed-club/requests", Some(&bob)).await,
        403,
    );
    let (status, requests) = get_as(&server, "/api/team/closed-club/requests", Some(&alice)).await;
    assert_eq!(status, 200, "{requests}");
    assert_eq!(requests[0]["request"]["userId"], "carol");
    assert_eq!(requests[0]["request"]["teamId"], "closed-club");
    assert_eq!(requests[0]["request"]["message"], "let me in please");
    assert_eq!(requests[0]["user"]["name"], "carol");
    refused(
        &send(
            &server,
            "POST",
            "/api/team/closed-club/request/carol/accept",
            &bob,
        )
        .await,
        403,
    );
    let declined = send(
        &server,
        "POST",
        "/api/team/closed-club/request/carol/decline",
        &alice,
    )
    .await;
    assert_eq!(declined.0, 200, "{}", declined.1);
    refused(
        &send(
            &server,
            "POST",
            "/api/team/closed-club/request/carol/decline",
            &alice,
        )
        .await,
        404,
    );
    let (_, pending) = get_as(&server, "/api/team/closed-club/requests", Some(&alice)).await;
    assert_eq!(pending, json!([]));
    let (_, refused_list) = get_as(
        &server,
        "/api/team/closed-club/requests?declined=true",
        Some(&alice),
    )
    .await;
    assert_eq!(refused_list[0]["request"]["userId"], "carol");
    // Asked again, accepted.
    assert_eq!(
        join(json!({"message": "please, again", "password": "sesame"}))
            .await
            .0,
        200
    );
    let accepted = send(
        &server,
        "POST",
        "/api/team/closed-club/request/carol/accept",
        &alice,
    )
    .await;
    assert_eq!(accepted.0, 200, "{}", accepted.1);
    assert_eq!(members(&server, "closed-club").await, ["alice", "carol"]);

    // Kicking: leaders only, and not a leader.
    refused(
        &send(&server, "POST", "/api/team/closed-club/kick/alice", &carol).await,
        403,
    );
    let kicked = send(&server, "POST", "/api/team/closed-club/kick/carol", &alice).await;
    assert_eq!(kicked.0, 200, "{}", kicked.1);
    assert_eq!(members(&server, "closed-club").await, ["alice"]);
    refused(
        &send(&server, "POST", "/api/team/closed-club/kick/carol", &alice).await,
        404,
    );

    // Leaders appoint leaders; a team keeps one.
    refused(
        &send(
            &server,
            "PUT",
            "/api/team/rookery-knights/leaders/bob",
            &bob,
        )
        .await,
        403,
    );
    let appointed = send(
        &server,
        "PUT",
        "/api/team/rookery-knights/leaders/bob",
        &alice,
    )
    .await;
    assert_eq!(appointed.0, 200, "{}", appointed.1);
    refused(
        &send(
            &server,
            "POST",
            "/api/team/rookery-knights/kick/bob",
            &alice,
        )
        .await,
        403,
    );
    let stepped = send(
        &server,
        "DELETE",
        "/api/team/rookery-knights/leaders/alice",
        &alice,
    )
    .await;
    assert_eq!(stepped.0, 200, "{}", stepped.1);
    refused(
        &send(
            &server,
            "DELETE",
            "/api/team/rookery-knights/leaders/bob",
            &bob,
        )
        .await,
        400,
    );
    let (_, knights) = get_as(&server, "/api/team/rookery-knights", None).await;
    assert_eq!(knights["leaders"], json!([{"id": "bob", "name": "bob"}]));
    // The last leader cannot leave while others remain; a member can.
    refused(
        &send(&server, "POST", "/team/rookery-knights/quit", &bob).await,
        400,
    );
    let quit = send(&server, "POST", "/team/rookery-knights/quit", &alice).await;
    assert_eq!(quit.0, 200, "{}", quit.1);
    assert_eq!(members(&server, "rookery-knights").await, ["bob"]);
    refused(
        &send(&server, "POST", "/team/rookery-knights/quit", &alice).await,
        404,
    );

    // A person's teams, and every team.
    let (status, of_alice) = get_as(&server, "/api/team/of/alice", None).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = of_alice
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, ["closed-club"]);
    refused(&get_as(&server, "/api/team/of/nobody", None).await, 404);
    let (status, all) = get_as(&server, "/api/team/all", None).await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["nbResults"], 2);
    assert_eq!(all["currentPage"], 1);
    assert_eq!(all["currentPageResults"].as_array().map(Vec::len), Some(2));
    refused(&get_as(&server, "/api/team/all?page=zero", None).await, 400);

    server.stop().await;
}
