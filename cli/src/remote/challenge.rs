//! Challenges by name from the terminal (issue 21), with the stored login:
//!
//! - `rookery challenge NAME` makes a challenge, waits for the answer on
//!   the person's event stream, and plays the game once it is accepted;
//! - `rookery challenges` lists the open ones, and with `--watch` follows
//!   the event stream, telling each new one as it comes;
//! - `rookery accept ID` plays the challenge's game, `rookery decline ID`
//!   says no with one of lichess's reasons.
//!
//! Both seats of a challenge's game belong to the two accounts, and this
//! client holds no seat token for either: it plays as
//! [`Participant::Account`] (see [`super::session`]).

use std::collections::HashSet;
use std::io::IsTerminal;
use std::time::Duration;

use rookery_engine::Color;

use super::client::{Challenge, ChallengeAnswer, ChallengeTerms, Server};
use super::events::{self, Event, EventStream};
use super::inbox::Inbox;
use super::session::{Participant, RemoteSession};
use crate::command;
use crate::console::{self, Interrupt, Lines, OutputFlags, Screen};

/// How long after the server's expiry time the waiting side looks again:
/// the expiry is the server's to declare.
const EXPIRY_GRACE: Duration = Duration::from_secs(2);

/// Where a challenge stands.
enum Outcome {
    Open,
    /// The game it became, and the colour the reader plays in it.
    Accepted {
        game: String,
        color: Color,
    },
    Declined {
        reason: String,
    },
    Canceled,
    Expired,
}

impl Outcome {
    /// The outcome `challenge` shows to its challenger.
    fn of(challenge: &Challenge) -> Result<Outcome, String> {
        Ok(match challenge.status.as_str() {
            "accepted" => Outcome::Accepted {
                game: game_of(challenge),
                color: challenger_color(challenge)?,
            },
            "declined" => Outcome::Declined {
                reason: challenge
                    .decline_reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".into()),
            },
            "canceled" => Outcome::Canceled,
            "expired" => Outcome::Expired,
            _ => Outcome::Open,
        })
    }
}

/// The game an accepted challenge became (its id is the challenge's).
fn game_of(challenge: &Challenge) -> String {
    challenge
        .game_id
        .clone()
        .unwrap_or_else(|| challenge.id.clone())
}

fn color_named(name: Option<&str>) -> Result<Color, String> {
    match name {
        Some("white") => Ok(Color::White),
        Some("black") => Ok(Color::Black),
        other => Err(format!(
            "the server named no colour for the game ({other:?})"
        )),
    }
}

/// The challenger's colour, drawn when the challenge was made.
fn challenger_color(challenge: &Challenge) -> Result<Color, String> {
    color_named(challenge.final_color.as_deref())
}

/// `q`, `quit`, `exit` or `cancel`: the words that stop a wait.
pub(super) fn is_stop(line: &str) -> bool {
    matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "q" | "quit" | "exit" | "cancel"
    )
}

/// The screen and the lines of a command that may become a game.
pub(super) fn open_terminal(flags: OutputFlags) -> (Screen, Lines) {
    let (look, interactive) = console::detect(flags);
    let mut lines = Lines::open(interactive);
    let printer = lines.printer();
    (Screen::new(look, interactive).with_printer(printer), lines)
}

/// One challenge as a line, from the reader's side: `ID  from alice
/// (1500)  5+3 blitz  casual  you play black`, or `to bob ...`.
fn describe(challenge: &Challenge, incoming: bool) -> String {
    let (word, who) = if incoming {
        ("from", &challenge.challenger)
    } else {
        ("to", &challenge.dest_user)
    };
    let rating = match who.rating {
        Some(rating) if who.provisional => format!(" ({}?)", rating.round() as i64),
        Some(rating) => format!(" ({})", rating.round() as i64),
        None => String::new(),
    };
    let clock = match (
        challenge.time_control.kind.as_str(),
        &challenge.time_control.show,
    ) {
        ("clock", Some(show)) => format!("{show} {}", challenge.speed),
        _ => "untimed".into(),
    };
    let rated = if challenge.rated { "rated" } else { "casual" };
    let variant = if challenge.is_chess960() {
        "  Chess960"
    } else {
        ""
    };
    let mine = match challenger_color(challenge) {
        Ok(color) if incoming => format!("you play {}", !color),
        Ok(color) => format!("you play {color}"),
        Err(_) => "colour not drawn".into(),
    };
    format!(
        "{}  {word} {}{rating}  {clock}{variant}  {rated}  {mine}",
        challenge.id, who.name
    )
}

/// `rookery challenge NAME`: makes the challenge, waits for the answer and
/// plays the game. Declined, canceled or expired: an error (exit 1), so
/// the exit status says whether a game was played.
pub async fn challenge(
    server: Server,
    name: &str,
    terms: ChallengeTerms,
    flags: OutputFlags,
) -> Result<(), String> {
    let (mut screen, lines) = open_terminal(flags);
    // Caught before anything is made, so no Ctrl-C leaves a challenge
    // behind.
    let interrupt = Interrupt::catch()?;
    // Subscribed before the challenge exists: no answer can come between
    // its making and the stream's opening.
    let events = server.events().await.map_err(|e| e.to_string())?;
    let made = server
        .create_challenge(name, &terms)
        .await
        .map_err(|e| e.to_string())?;
    screen.say(&format!("challenge {}", describe(&made, false)));
    screen.say(&format!(
        "waiting for {} to answer (q or Ctrl-C cancels)",
        made.dest_user.name
    ));
    let mut inbox = Inbox::start(lines);
    let (game, color, held) =
        wait_for_answer(&server, &made, events, &mut inbox, &mut screen, interrupt).await?;
    screen.announce(&format!("{} accepted: game {game}", made.dest_user.name));
    play(server, game, color, screen, inbox, held).await
}

/// Waits on the event stream for the answer to `made`; returns the game,
/// the challenger's colour and a line of a script read meanwhile (a piped
/// script's lines are the game's moves, kept for it; only a line `q`
/// cancels).
async fn wait_for_answer(
    server: &Server,
    made: &Challenge,
    mut events: EventStream,
    inbox: &mut Inbox,
    screen: &mut Screen,
    mut interrupt: Interrupt,
) -> Result<(String, Color, Option<String>), String> {
    let id = made.id.as_str();
    let opponent = made.dest_user.name.as_str();
    // The server's time to live, timed on this machine's clock: the two
    // machines' clocks are never compared.
    let ttl = u64::try_from(made.expires_at - made.created_at).unwrap_or(0);
    let mut deadline = tokio::time::Instant::now() + Duration::from_millis(ttl) + EXPIRY_GRACE;
    let interactive = screen.interactive;
    let mut held: Option<String> = None;
    loop {
        if held.is_none() {
            inbox.request();
        }
        let outcome = tokio::select! {
            event = events.next() => match event {
                Ok(Some(Event::GameStart { game })) if game.game_id == id => Outcome::Accepted {
                    color: color_named(Some(&game.color))?,
                    game: game.game_id,
                },
                Ok(Some(
                    Event::ChallengeDeclined { challenge } | Event::ChallengeCanceled { challenge },
                )) if challenge.id == id => Outcome::of(&challenge)?,
                Ok(Some(_)) => Outcome::Open,
                Ok(None) | Err(_) => {
                    events = events::reopen(server).await?;
                    // The stream's opening lines tell only what is open:
                    // an answer given meanwhile is read from the challenge.
                    Outcome::of(&server.challenge(id).await.map_err(|e| e.to_string())?)?
                }
            },
            line = inbox.recv(), if inbox.waiting => match line {
                Some(line) if is_stop(&line) => cancel(server, made).await?,
                Some(line) if matches!(command::parse(&line), Ok(None)) => Outcome::Open,
                Some(_) if interactive => {
                    screen.say(&format!("waiting for {opponent} to answer: q cancels"));
                    Outcome::Open
                }
                Some(line) => {
                    held = Some(line);
                    Outcome::Open
                }
                // Ctrl-D, or Ctrl-C at the prompt.
                None if interactive => cancel(server, made).await?,
                // A script with nothing left for the game: the game will
                // see its end.
                None => Outcome::Open,
            },
            () = interrupt.caught() => cancel(server, made).await?,
            () = tokio::time::sleep_until(deadline) => {
                deadline = tokio::time::Instant::now() + EXPIRY_GRACE;
                Outcome::of(&server.challenge(id).await.map_err(|e| e.to_string())?)?
            }
        };
        match outcome {
            Outcome::Open => {}
            Outcome::Accepted { game, color } => return Ok((game, color, held)),
            Outcome::Declined { reason } => return Err(format!("{opponent} declined: {reason}")),
            Outcome::Canceled => return Err("the challenge was canceled".into()),
            Outcome::Expired => {
                return Err(format!("{opponent} did not answer: the challenge expired"))
            }
        }
    }
}

/// Cancels `made` (Ctrl-C or `q` while waiting). An answer that came
/// first stands, except an acceptance: its game is aborted (nobody has
/// moved yet), since the challenger asked to leave.
async fn cancel(server: &Server, made: &Challenge) -> Result<Outcome, String> {
    let refused = match server
        .answer_challenge(&made.id, ChallengeAnswer::Cancel)
        .await
    {
        Ok(()) => return Err(format!("challenge {} canceled", made.id)),
        Err(why) => why,
    };
    let now = server
        .challenge(&made.id)
        .await
        .map_err(|_| refused.to_string())?;
    match Outcome::of(&now)? {
        Outcome::Accepted { game, .. } => {
            server
                .seat_action(&game, "abort", None)
                .await
                .map_err(|e| format!("{} accepted as you canceled: {e}", made.dest_user.name))?;
            Err(format!(
                "{} accepted as you canceled: game {game} aborted",
                made.dest_user.name
            ))
        }
        Outcome::Open => Err(refused.to_string()),
        answered => Ok(answered),
    }
}

/// Plays the account's seat in `game`.
async fn play(
    server: Server,
    game: String,
    color: Color,
    screen: Screen,
    inbox: Inbox,
    held: Option<String>,
) -> Result<(), String> {
    let state = server.game(&game).await.map_err(|e| e.to_string())?;
    RemoteSession::new(server, game, Participant::Account(color), screen)
        .run_with(inbox, Some(state), held)
        .await
}

/// `rookery accept ID`: accepts the challenge and plays its game.
pub async fn accept(server: Server, id: &str, flags: OutputFlags) -> Result<(), String> {
    server
        .answer_challenge(id, ChallengeAnswer::Accept)
        .await
        .map_err(|e| e.to_string())?;
    let accepted = server.challenge(id).await.map_err(|e| e.to_string())?;
    let color = !challenger_color(&accepted)?;
    let game = game_of(&accepted);
    let (mut screen, lines) = open_terminal(flags);
    screen.announce(&format!(
        "accepted the challenge from {}: game {game}",
        accepted.challenger.name
    ));
    play(server, game, color, screen, Inbox::start(lines), None).await
}

/// `rookery decline ID --reason KEY`.
pub async fn decline(server: &Server, id: &str, reason: &str) -> Result<String, String> {
    server
        .answer_challenge(id, ChallengeAnswer::Decline(reason))
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("declined challenge {id}"))
}

/// `rookery challenges`: one line per open challenge, those to the person
/// first, or `no open challenges`.
pub async fn list(server: &Server) -> Result<String, String> {
    let lists = server.challenges().await.map_err(|e| e.to_string())?;
    let mut out = String::new();
    for challenge in &lists.incoming {
        out.push_str(&describe(challenge, true));
        out.push('\n');
    }
    for challenge in &lists.outgoing {
        out.push_str(&describe(challenge, false));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("no open challenges\n");
    }
    Ok(out)
}

/// `rookery challenges --watch`: the list, then each change as the event
/// stream tells it, until Ctrl-C (or `q` at a terminal). A new challenge
/// to the person rings the terminal's bell.
pub async fn watch(server: Server, flags: OutputFlags) -> Result<(), String> {
    let (mut screen, lines) = open_terminal(flags);
    let mut interrupt = Interrupt::catch()?;
    // Subscribed first, then listed: a challenge made in between is in the
    // list, on the stream, or both, and `known` prints it once.
    let mut events = server.events().await.map_err(|e| e.to_string())?;
    let lists = server.challenges().await.map_err(|e| e.to_string())?;
    let mut known: HashSet<String> = HashSet::new();
    let mut listed = String::new();
    for (challenge, incoming) in lists
        .incoming
        .iter()
        .map(|c| (c, true))
        .chain(lists.outgoing.iter().map(|c| (c, false)))
    {
        known.insert(challenge.id.clone());
        listed.push_str(&describe(challenge, incoming));
        listed.push('\n');
    }
    if listed.is_empty() {
        listed.push_str("no open challenges\n");
    }
    screen.say(&listed);
    let interactive = screen.interactive;
    screen.say(if interactive {
        "watching for challenges (q or Ctrl-C stops)"
    } else {
        "watching for challenges (Ctrl-C stops)"
    });
    let bell = std::io::stdout().is_terminal();
    let mut inbox = Inbox::start(lines);
    loop {
        // Piped, stdin is not this command's: it is not read.
        if interactive {
            inbox.request();
        }
        tokio::select! {
            event = events.next() => match event {
                Ok(Some(Event::Challenge { challenge })) if known.insert(challenge.id.clone()) => {
                    let incoming = challenge.direction.as_deref() == Some("in");
                    let mut line = describe(&challenge, incoming);
                    if incoming && bell {
                        line.push('\x07');
                    }
                    screen.say(&line);
                }
                Ok(Some(Event::ChallengeCanceled { challenge })) if known.remove(&challenge.id) => {
                    screen.say(&format!("{}  canceled", challenge.id));
                }
                Ok(Some(Event::ChallengeDeclined { challenge })) if known.remove(&challenge.id) => {
                    let reason = challenge.decline_reason.as_deref().unwrap_or("no reason given");
                    screen.say(&format!(
                        "{}  declined by {}: {reason}",
                        challenge.id, challenge.dest_user.name
                    ));
                }
                Ok(Some(Event::GameStart { game })) if known.remove(&game.game_id) => {
                    screen.say(&format!(
                        "{id}  accepted: game {id} (rookery play {id})",
                        id = game.game_id
                    ));
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => events = events::reopen(&server).await?,
            },
            line = inbox.recv(), if inbox.waiting => match line {
                Some(line) if is_stop(&line) => return Ok(()),
                Some(line) if matches!(command::parse(&line), Ok(None)) => {}
                Some(_) => screen.say(
                    "watching for challenges: q stops (rookery accept ID or decline ID answers one)",
                ),
                None => return Ok(()),
            },
            () = interrupt.caught() => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(json: serde_json::Value) -> Challenge {
        serde_json::from_value(json).expect("a challenge")
    }

    #[test]
    fn lines_from_each_side() {
        let timed = challenge(serde_json::json!({
            "id": "c1", "status": "created",
            "challenger": {"id": "alice", "name": "Alice", "rating": 1500.4, "provisional": true},
            "destUser": {"id": "bob", "name": "Bob", "rating": 1612, "provisional": false},
            "rated": false, "speed": "blitz",
            "timeControl": {"type": "clock", "limit": 300, "increment": 3, "show": "5+3"},
            "color": "random", "finalColor": "black", "createdAt": 0, "expiresAt": 600000
        }));
        assert_eq!(
            describe(&timed, true),
            "c1  from Alice (1500?)  5+3 blitz  casual  you play white"
        );
        assert_eq!(
            describe(&timed, false),
            "c1  to Bob (1612)  5+3 blitz  casual  you play black"
        );
        let untimed = challenge(serde_json::json!({
            "id": "c2", "status": "declined",
            "challenger": {"name": "Alice"}, "destUser": {"name": "Bob"},
            "rated": true, "timeControl": {"type": "unlimited"}, "finalColor": "white",
            "declineReason": "Please send me a casual challenge instead."
        }));
        assert_eq!(
            describe(&untimed, false),
            "c2  to Bob  untimed  rated  you play white"
        );
        let shuffled = challenge(serde_json::json!({
            "id": "c3", "status": "created",
            "challenger": {"name": "Alice"}, "destUser": {"name": "Bob"},
            "rated": false, "speed": "blitz",
            "timeControl": {"type": "clock", "limit": 180, "increment": 2, "show": "3+2"},
            "variant": {"key": "chess960", "name": "Chess960", "short": "960"},
            "finalColor": "white"
        }));
        assert_eq!(
            describe(&shuffled, true),
            "c3  from Alice  3+2 blitz  Chess960  casual  you play black"
        );
        match Outcome::of(&untimed) {
            Ok(Outcome::Declined { reason }) => assert!(reason.contains("casual"), "{reason}"),
            _ => panic!("a declined challenge reads as declined"),
        }
    }

    #[test]
    fn stop_words() {
        for word in ["q", " Q\n", "quit", "cancel", "exit"] {
            assert!(is_stop(word), "{word:?}");
        }
        for word in ["e4", "", "queen"] {
            assert!(!is_stop(word), "{word:?}");
        }
    }
}
