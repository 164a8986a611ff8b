//! Tournaments from the terminal (issues 38 and 39): `rookery arena list`;
//! `arena join ID` and `swiss join ID`, which join and then play each of
//! the person's pairings as it comes, until the tournament ends or the
//! person withdraws; `arena withdraw ID` and `swiss withdraw ID`.
//!
//! A tournament's game is the two accounts' (no seat token), played as a
//! challenge's is: followed on the spectator's WebSocket, each action sent
//! over HTTP with the login's token ([`Participant::Account`]).
//!
//! A pairing is heard on the person's event stream (`gameStart` naming the
//! tournament: `tournamentId` for an arena, `swissId` for a Swiss), and,
//! in case one is missed (a stream reopened; a game paired before it
//! opened), read from the tournament itself every [`LOOK_AGAIN`] while
//! waiting, which is also how its end is noticed.

use std::collections::HashSet;
use std::time::Duration;

use rookery_engine::Color;
use serde_json::Value;

use super::challenge::{is_stop, open_terminal};
use super::client::{encode, EventGame, Server};
use super::events::{self, Event};
use super::inbox::Inbox;
use super::session::{Left, Participant, RemoteSession};
use crate::command;
use crate::console::{Interrupt, OutputFlags, Screen};

/// How often a player waiting for a pairing reads the tournament again.
pub const LOOK_AGAIN: Duration = Duration::from_secs(3);

/// Which kind of tournament.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Arena,
    Swiss,
}

impl Kind {
    /// The tournament's path in lichess's API.
    fn path(self, id: &str) -> String {
        match self {
            Kind::Arena => format!("/api/tournament/{}", encode(id)),
            Kind::Swiss => format!("/api/swiss/{}", encode(id)),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Arena => "arena",
            Kind::Swiss => "Swiss",
        }
    }

    /// Whether a `gameStart` is this tournament's.
    fn names(self, game: &EventGame, id: &str) -> bool {
        let named = match self {
            Kind::Arena => &game.tournament_id,
            Kind::Swiss => &game.swiss_id,
        };
        named.as_deref() == Some(id)
    }
}

/// What a waiting player needs of the tournament now.
#[derive(Debug, Default)]
struct Now {
    name: String,
    finished: bool,
    /// The person's game being played in it: id and colour.
    playing: Option<(String, Color)>,
    /// `starts in 3 min`, `ends in 25 min`, `round 2 of 5`, ...
    when: String,
}

fn same_name(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whole minutes (at least one) of `seconds`.
fn minutes(seconds: i64) -> i64 {
    (seconds + 59).max(60) / 60
}

impl Now {
    /// Reads `GET /api/tournament/{id}` (`duels`: the games going on,
    /// white first) or `GET /api/swiss/{id}` (the last round's pairings).
    fn of(kind: Kind, tournament: &Value, me: &str) -> Now {
        let text = |key: &str| tournament[key].as_str().unwrap_or_default().to_string();
        match kind {
            Kind::Arena => {
                let playing = tournament["duels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|duel| {
                        let id = duel["id"].as_str()?;
                        let names = [&duel["p"][0]["n"], &duel["p"][1]["n"]];
                        let side = names
                            .iter()
                            .position(|n| n.as_str().is_some_and(|n| same_name(n, me)))?;
                        let colour = if side == 0 {
                            Color::White
                        } else {
                            Color::Black
                        };
                        Some((id.to_string(), colour))
                    });
                let when = if let Some(s) = tournament["secondsToStart"].as_i64() {
                    format!("starts in {} min", minutes(s))
                } else if let Some(s) = tournament["secondsToFinish"].as_i64() {
                    format!("ends in {} min", minutes(s))
                } else {
                    "over".to_string()
                };
                Now {
                    name: text("fullName"),
                    finished: tournament["isFinished"] == true,
                    playing,
                    when,
                }
            }
            Kind::Swiss => {
                let rounds = tournament["rounds"].as_array().cloned().unwrap_or_default();
                let playing = rounds.last().and_then(|round| {
                    round["pairings"].as_array()?.iter().find_map(|p| {
                        let game = p["gameId"].as_str()?;
                        if !p["result"].is_null() {
                            return None;
                        }
                        let colour = if p["white"].as_str().is_some_and(|n| same_name(n, me)) {
                            Color::White
                        } else if p["black"].as_str().is_some_and(|n| same_name(n, me)) {
                            Color::Black
                        } else {
                            return None;
                        };
                        Some((game.to_string(), colour))
                    })
                });
                let when = format!(
                    "round {} of {}",
                    tournament["round"].as_i64().unwrap_or(0),
                    tournament["nbRounds"].as_i64().unwrap_or(0)
                );
                Now {
                    name: text("name"),
                    finished: tournament["status"] == "finished",
                    playing,
                    when,
                }
            }
        }
    }
}

async fn read(server: &Server, kind: Kind, id: &str, me: &str) -> Result<Now, String> {
    let tournament = server
        .get_value(&kind.path(id))
        .await
        .map_err(|e| e.to_string())?;
    Ok(Now::of(kind, &tournament, me))
}

/// The person's final line: `you finished 2nd of 8 with 7 points`.
async fn final_line(server: &Server, kind: Kind, id: &str, me: &str) -> Result<String, String> {
    let lines: Vec<Value> = match kind {
        Kind::Arena => server
            .get_text(&format!("{}/results", kind.path(id)))
            .await
            .map_err(|e| e.to_string())?
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect(),
        Kind::Swiss => server
            .get_value(&kind.path(id))
            .await
            .map_err(|e| e.to_string())?["standings"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    };
    let mine = lines.iter().find(|line| {
        line["username"]
            .as_str()
            .is_some_and(|name| same_name(name, me))
    });
    Ok(match mine {
        Some(line) => {
            let points = match kind {
                Kind::Arena => &line["score"],
                Kind::Swiss => &line["points"],
            };
            format!(
                "you finished #{} of {} with {} points",
                line["rank"],
                lines.len(),
                points
            )
        }
        None => "you have no standing in it".to_string(),
    })
}

/// `rookery arena list`: one line per arena, going on first, then those
/// to come and the latest finished.
pub async fn list_arenas(server: &Server) -> Result<String, String> {
    let lists = server
        .get_value("/api/tournament")
        .await
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (key, word) in [
        ("started", "playing"),
        ("created", "soon"),
        ("finished", "finished"),
    ] {
        for arena in lists[key].as_array().into_iter().flatten() {
            let now = Now::of(Kind::Arena, arena, "");
            let limit = arena["clock"]["limit"].as_f64().unwrap_or(0.0) / 60.0;
            let increment = arena["clock"]["increment"].as_i64().unwrap_or(0);
            let rated = if arena["rated"] == true {
                "rated"
            } else {
                "casual"
            };
            let private = if arena["private"] == true {
                "  private"
            } else {
                ""
            };
            out.push_str(&format!(
                "{}  {word}  {}  {limit}+{increment}  {rated}  {} players  {}{private}\n",
                arena["id"].as_str().unwrap_or_default(),
                now.name,
                arena["nbPlayers"].as_i64().unwrap_or(0),
                now.when,
            ));
        }
    }
    if out.is_empty() {
        out.push_str("no arenas\n");
    }
    Ok(out)
}

/// `rookery arena withdraw ID` / `swiss withdraw ID`.
pub async fn withdraw(server: &Server, kind: Kind, id: &str) -> Result<String, String> {
    server
        .post_form(&format!("{}/withdraw", kind.path(id)), &[])
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "withdrew from {} {id} (rookery {} join {id} comes back)",
        kind.noun(),
        kind.noun().to_lowercase()
    ))
}

/// `rookery arena join ID` / `swiss join ID`: joins, then plays each
/// pairing as it comes, until the tournament is over (exit 0), or the
/// person leaves: `q` (or `quit`, `withdraw`), Ctrl-C while waiting, the
/// end of input. Leaving withdraws (an arena: a pause, points kept).
pub async fn join_and_play(
    server: Server,
    kind: Kind,
    id: &str,
    code: Option<&str>,
    flags: OutputFlags,
) -> Result<(), String> {
    let me = server.account().await.map_err(|e| e.to_string())?.username;
    let (mut screen, lines) = open_terminal(flags);
    // Caught from here on: Ctrl-C while waiting withdraws before leaving
    // (during a game it is heard once the game is over).
    let mut interrupt = Interrupt::catch()?;
    // Subscribed before joining: no pairing can come in between.
    let mut events = server.events().await.map_err(|e| e.to_string())?;
    let form: Vec<(&str, &str)> = code.map(|code| ("password", code)).into_iter().collect();
    server
        .post_form(&format!("{}/join", kind.path(id)), &form)
        .await
        .map_err(|e| e.to_string())?;
    let mut now = read(&server, kind, id, &me).await?;
    screen.say(&format!("joined {} ({id}), {}", now.name, now.when));
    let interactive = screen.interactive;
    let mut inbox = Inbox::start(lines);
    let mut played: HashSet<String> = HashSet::new();
    let mut held: Option<String> = None;
    let mut told_waiting = false;
    loop {
        if let Some((game, colour)) = now.playing.take() {
            if played.insert(game.clone()) {
                screen.say(&format!("paired: game {game}"));
                let state = server.game(&game).await.map_err(|e| e.to_string())?;
                let mut session =
                    RemoteSession::new(server.clone(), game, Participant::Account(colour), screen)
                        .leaving_at_end();
                let left = session.run_on(&mut inbox, Some(state), held.take()).await;
                screen = session.into_screen();
                match left? {
                    Left::Quit => return leave(&server, kind, id, &mut screen).await,
                    Left::GameOver(line) => held = line,
                }
                told_waiting = false;
                now = read(&server, kind, id, &me).await?;
                continue;
            }
        }
        if now.finished {
            let line = final_line(&server, kind, id, &me).await?;
            screen.announce(&format!("the {} is over: {line}", kind.noun()));
            return Ok(());
        }
        if !told_waiting {
            screen.say(&format!(
                "waiting for a pairing ({}; q or Ctrl-C withdraws)",
                now.when
            ));
            told_waiting = true;
        }
        if held.is_none() {
            inbox.request();
        }
        tokio::select! {
            event = events.next() => match event {
                Ok(Some(Event::GameStart { game })) if kind.names(&game, id) => {
                    let colour = if game.color == "black" { Color::Black } else { Color::White };
                    now.playing = Some((game.game_id, colour));
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    events = events::reopen(&server).await?;
                    now = read(&server, kind, id, &me).await?;
                }
            },
            line = inbox.recv(), if inbox.waiting => match line {
                Some(line) if is_stop(&line) || line.trim().eq_ignore_ascii_case("withdraw") => {
                    return leave(&server, kind, id, &mut screen).await;
                }
                Some(line) if matches!(command::parse(&line), Ok(None)) => {}
                Some(_) if interactive => {
                    screen.say("waiting for a pairing: q withdraws");
                }
                // A script's line for the next game.
                Some(line) => held = Some(line),
                None => return leave(&server, kind, id, &mut screen).await,
            },
            () = interrupt.caught() => return leave(&server, kind, id, &mut screen).await,
            () = tokio::time::sleep(LOOK_AGAIN) => {
                now = read(&server, kind, id, &me).await?;
            }
        }
    }
}

/// Withdraws on leaving and says so.
async fn leave(server: &Server, kind: Kind, id: &str, screen: &mut Screen) -> Result<(), String> {
    let said = withdraw(server, kind, id).await?;
    screen.say(&said);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_arenas_duel_names_the_players_game() {
        let arena = json!({
            "fullName": "Club Arena", "isFinished": false, "secondsToFinish": 61,
            "duels": [
                {"id": "g1", "p": [{"n": "Ann"}, {"n": "Bob"}]},
                {"id": "g2", "p": [{"n": "Cat"}, {"n": "Dan"}]}
            ]
        });
        let now = Now::of(Kind::Arena, &arena, "dan");
        assert_eq!(now.playing, Some(("g2".to_string(), Color::Black)));
        assert_eq!(now.when, "ends in 2 min");
        assert_eq!(Now::of(Kind::Arena, &arena, "eve").playing, None);
    }

    #[test]
    fn a_swiss_round_names_the_players_unfinished_game() {
        let swiss = json!({
            "name": "Tuesday", "status": "started", "round": 2, "nbRounds": 5,
            "rounds": [
                {"round": 1, "pairings": [{"white": "ann", "black": "bob", "gameId": "g0", "result": "1-0"}]},
                {"round": 2, "pairings": [
                    {"white": "bob", "black": "ann", "gameId": "g1", "result": null},
                    {"player": "cat", "bye": "pab"}
                ]}
            ]
        });
        let now = Now::of(Kind::Swiss, &swiss, "Ann");
        assert_eq!(now.playing, Some(("g1".to_string(), Color::Black)));
        assert_eq!(now.when, "round 2 of 5");
        assert_eq!(Now::of(Kind::Swiss, &swiss, "cat").playing, None);
    }
}
