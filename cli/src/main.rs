//! `rookery`: Rookery in the terminal.
//!
//! - [`local`]: play the engine on this machine, or two people at one
//!   keyboard; no server needed.
//! - [`remote`]: create, join, play and watch games on a rookery-server
//!   through its public HTTP and WebSocket contract (plain or TLS); list
//!   live games; log in to an account and keep its token; challenge
//!   players by name and answer their challenges; list arenas, and join
//!   an arena or a team's Swiss to play its pairings one after the other.
//! - [`table`]: what the player sees and asks about, shared by both: the
//!   game, the picked piece, `info`, typed moves.
//! - [`board`]: drawing the board, in colour or plain, Unicode or ASCII.
//! - [`command`]: the command language, one command a line.
//! - [`console`]: line editing on a terminal, plain lines from a pipe.

mod board;
mod command;
mod console;
mod local;
mod remote;
mod table;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rookery_engine::{Color, Game};
use serde_json::json;

use crate::console::{Lines, OutputFlags, Questions, Screen};
use crate::local::{LocalSession, LocalSetup};
use crate::remote::tournament::{self, Kind};
use crate::remote::{ChallengeTerms, GameRef, Participant, RemoteSession, Server};

#[derive(Parser)]
#[command(
    name = "rookery",
    version,
    about = "Play chess in the terminal: against Rookery's engine, or on a rookery-server"
)]
struct Cli {
    /// Letters instead of Unicode chess symbols.
    #[arg(long, global = true)]
    ascii: bool,
    /// No colours (also when NO_COLOR is set or output is not a terminal).
    #[arg(long, global = true)]
    no_color: bool,
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Play a game: locally against the engine, or on a server with --server.
    Play(PlayArgs),
    /// Watch a live game on a server.
    Watch {
        #[command(flatten)]
        server: ServerArgs,
        /// The game's id or its URL.
        #[arg(value_name = "GAME_URL_OR_ID")]
        game: String,
    },
    /// List the live games on a server.
    Games {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Log in to your account on a server: asks your name and password and
    /// keeps a token, so your games there are yours (play, watch, games)
    /// and you can challenge people by name (challenge, challenges).
    Login {
        #[command(flatten)]
        server: ServerArgs,
        /// Your account's name (asked when not given).
        #[arg(long)]
        name: Option<String>,
    },
    /// Revoke the token kept for a server and forget it.
    Logout {
        #[command(flatten)]
        server: ServerArgs,
        /// Only forget the token here, without asking the server to revoke
        /// it (for a server that is gone).
        #[arg(long)]
        forget: bool,
    },
    /// Show the account you are logged in as on a server.
    Whoami {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Challenge a player by name (logged in): waits for the answer, then
    /// plays the game. Ctrl-C or q while waiting cancels the challenge.
    Challenge(ChallengeArgs),
    /// List the open challenges to and from you (logged in).
    Challenges {
        #[command(flatten)]
        server: ServerArgs,
        /// Keep watching, and tell each new challenge as it comes (with
        /// the terminal's bell), until Ctrl-C.
        #[arg(long)]
        watch: bool,
    },
    /// Accept a challenge to you and play its game.
    Accept {
        #[command(flatten)]
        server: ServerArgs,
        /// The challenge's id, or its URL.
        #[arg(value_name = "CHALLENGE_URL_OR_ID")]
        challenge: String,
    },
    /// Decline a challenge to you.
    Decline {
        #[command(flatten)]
        server: ServerArgs,
        /// The challenge's id, or its URL.
        #[arg(value_name = "CHALLENGE_URL_OR_ID")]
        challenge: String,
        /// Why, as the challenger reads it.
        #[arg(long, value_enum, default_value_t = DeclineReason::Generic)]
        reason: DeclineReason,
    },
    /// Arena tournaments: list them, join one and play its pairings, or
    /// withdraw (logged in, but for `list`).
    Arena {
        #[command(subcommand)]
        command: ArenaCommand,
    },
    /// Swiss tournaments of your teams: join one and play its rounds, or
    /// withdraw (logged in).
    Swiss {
        #[command(subcommand)]
        command: SwissCommand,
    },
}

#[derive(Subcommand)]
enum ArenaCommand {
    /// The arenas going on, to come and lately finished.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Join an arena and play each game it pairs you in, one after the
    /// other, until it ends; q (or Ctrl-C while waiting) withdraws.
    Join {
        #[command(flatten)]
        server: ServerArgs,
        /// The arena's id.
        id: String,
        /// The entry code of a private arena.
        #[arg(long)]
        code: Option<String>,
    },
    /// Withdraw from an arena (a pause: your points stay, and joining
    /// again comes back).
    Withdraw {
        #[command(flatten)]
        server: ServerArgs,
        /// The arena's id.
        id: String,
    },
}

#[derive(Subcommand)]
enum SwissCommand {
    /// Join a Swiss tournament and play each round's game until it ends;
    /// q (or Ctrl-C while waiting) withdraws.
    Join {
        #[command(flatten)]
        server: ServerArgs,
        /// The tournament's id.
        id: String,
    },
    /// Withdraw from a Swiss tournament: no later round pairs you.
    Withdraw {
        #[command(flatten)]
        server: ServerArgs,
        /// The tournament's id.
        id: String,
    },
}

#[derive(Args)]
struct ChallengeArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The player's name.
    name: String,
    /// The clock: minutes+increment seconds, like 5+3 (the default).
    #[arg(long, value_parser = parse_clock, conflicts_with = "untimed")]
    clock: Option<(u64, u64)>,
    /// No clock.
    #[arg(long)]
    untimed: bool,
    /// The side you play (random: the server draws it).
    #[arg(long, value_enum, default_value_t = Side::Random)]
    color: Side,
    /// A rated game (casual without it).
    #[arg(long)]
    rated: bool,
    /// Chess960: the back ranks shuffled (the server draws the start
    /// unless --chess960-start names one).
    #[arg(long)]
    chess960: bool,
    /// The Chess960 start position's number, 0 to 959.
    #[arg(long, requires = "chess960", value_parser = clap::value_parser!(u32).range(0..960))]
    chess960_start: Option<u32>,
}

/// lichess's reasons to decline a challenge (the server's keys), those
/// that apply to Rookery's standard chess.
#[derive(Clone, Copy, ValueEnum)]
enum DeclineReason {
    /// Not accepting challenges at the moment.
    Generic,
    /// Not the right time: ask again later.
    Later,
    /// The clock is too fast.
    #[value(name = "tooFast")]
    TooFast,
    /// The clock is too slow.
    #[value(name = "tooSlow")]
    TooSlow,
    /// Not this time control.
    #[value(name = "timeControl")]
    TimeControl,
    /// A rated game, please.
    Rated,
    /// A casual game, please.
    Casual,
}

impl DeclineReason {
    fn key(self) -> &'static str {
        match self {
            DeclineReason::Generic => "generic",
            DeclineReason::Later => "later",
            DeclineReason::TooFast => "tooFast",
            DeclineReason::TooSlow => "tooSlow",
            DeclineReason::TimeControl => "timeControl",
            DeclineReason::Rated => "rated",
            DeclineReason::Casual => "casual",
        }
    }
}

#[derive(Args)]
struct ServerArgs {
    /// The server's URL, like http://127.0.0.1:8080 or https://chess.example
    /// (without one: the server you are logged in to, if only one).
    #[arg(long, env = "ROOKERY_SERVER")]
    server: Option<String>,
    /// Also trust the CA certificates in this PEM file for https://
    /// servers (a private CA); the system's roots are trusted anyway.
    #[arg(long, env = "ROOKERY_CA_CERT", value_name = "FILE")]
    ca_cert: Option<PathBuf>,
}

#[derive(Args)]
struct PlayArgs {
    /// The engine's level, 1 (beginner) to 8 (full strength); 3 by default.
    /// With --server: create a game against the server's computer at this
    /// level.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    level: Option<u8>,
    /// The side you play.
    #[arg(long, value_enum, default_value_t = Side::White)]
    color: Side,
    /// Start from this position (FEN).
    #[arg(long, conflicts_with = "pgn")]
    fen: Option<String>,
    /// Play Chess960: the back ranks shuffled, castling by putting the king
    /// on its rook (`pick b1`, `place a1`, or `b1a1`, or O-O-O). The start
    /// is drawn at random unless --chess960-start names one (with --fen,
    /// that position in Chess960).
    #[arg(long, conflicts_with = "pgn")]
    chess960: bool,
    /// The Chess960 start position's number, 0 to 959 (518 is the standard
    /// one).
    #[arg(long, requires = "chess960", conflicts_with = "fen", value_parser = clap::value_parser!(u32).range(0..960))]
    chess960_start: Option<u32>,
    /// Continue the game saved in this PGN file (local games).
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Two people at one keyboard, no engine (local games).
    #[arg(long, conflicts_with = "level")]
    human: bool,
    #[command(flatten)]
    server: ServerArgs,
    /// Clock for a new online game: minutes+increment seconds, like 5+3.
    #[arg(long, value_parser = parse_clock)]
    clock: Option<(u64, u64)>,
    /// A player token (from POST /api/players), so online results count for
    /// you on the scoreboard.
    #[arg(long, env = "ROOKERY_PLAYER_TOKEN", hide_env_values = true)]
    player_token: Option<String>,
    /// Post the new online game as an open seek (listed in the lobby,
    /// anyone may join with its id) instead of a private friend game whose
    /// link carries the invite secret.
    #[arg(long, conflicts_with = "level")]
    open: bool,
    /// Join this game (its id, or the game URL a friend sent) instead of
    /// creating one.
    #[arg(value_name = "GAME_URL_OR_ID")]
    game: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Side {
    White,
    Black,
    Random,
}

impl Side {
    /// As the server spells it.
    fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
            Side::Random => "random",
        }
    }

    fn resolve(self) -> Color {
        match self {
            Side::White => Color::White,
            Side::Black => Color::Black,
            // The clock's low bits are random enough to pick a colour.
            Side::Random => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                if (nanos >> 10) & 1 == 0 {
                    Color::White
                } else {
                    Color::Black
                }
            }
        }
    }
}

/// `5+3`: five minutes, three seconds a move; returns seconds.
fn parse_clock(text: &str) -> Result<(u64, u64), String> {
    let (minutes, increment) = text.split_once('+').unwrap_or((text, "0"));
    let minutes: f64 = minutes
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: expected minutes+increment, like 5+3"))?;
    let increment: u64 = increment
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: expected minutes+increment, like 5+3"))?;
    if !(minutes > 0.0 && minutes <= 24.0 * 60.0) {
        return Err(format!(
            "{text:?}: minutes must be above 0 and at most a day"
        ));
    }
    Ok(((minutes * 60.0).round() as u64, increment))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let flags = OutputFlags {
        ascii: cli.ascii,
        no_color: cli.no_color,
    };
    let result = match cli.command {
        Commands::Play(args) if args.server.server.is_some() || args.game.is_some() => {
            online(|| play_online(args, flags))
        }
        Commands::Play(args) => play_local(args, flags),
        Commands::Watch { server, game } => online(|| watch(server, game, flags)),
        Commands::Games { server } => online(|| games(server)),
        Commands::Login { server, name } => online(|| login(server, name)),
        Commands::Logout { server, forget } => online(|| logout(server, forget)),
        Commands::Whoami { server } => online(|| whoami(server)),
        Commands::Challenge(args) => online(|| challenge(args, flags)),
        Commands::Challenges { server, watch } => online(|| challenges(server, watch, flags)),
        Commands::Accept { server, challenge } => online(|| accept(server, challenge, flags)),
        Commands::Decline {
            server,
            challenge,
            reason,
        } => online(|| decline(server, challenge, reason)),
        Commands::Arena { command } => online(|| arena(command, flags)),
        Commands::Swiss { command } => online(|| swiss(command, flags)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("rookery: {why}");
            ExitCode::FAILURE
        }
    }
}

/// A Chess960 start for a local game: the clock's nanoseconds spread over
/// the 960 (a game's start needs no secret randomness).
fn local_chess960_start() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    nanos % 960
}

fn play_local(args: PlayArgs, flags: OutputFlags) -> Result<(), String> {
    if args.clock.is_some() {
        return Err("--clock is for online games (with --server)".into());
    }
    let (mut game, ending) = match (&args.fen, &args.pgn) {
        (Some(fen), _) => (
            Game::from_fen(fen).map_err(|e| format!("--fen: {e}"))?,
            None,
        ),
        (None, Some(path)) => local::load_pgn(path)?,
        (None, None) if args.chess960 => {
            let number = args.chess960_start.unwrap_or_else(local_chess960_start);
            let start = rookery_engine::chess960_start(number)
                .ok_or_else(|| format!("--chess960-start: no start {number}"))?;
            println!("Chess960 start {number}");
            (Game::new(start), None)
        }
        (None, None) => (Game::default(), None),
    };
    if args.chess960 {
        game.set_castling_mode(rookery_engine::CastlingMode::Chess960);
    }
    let engine = if args.human {
        None
    } else {
        Some(local::engine_level(args.level.unwrap_or(3))?)
    };
    let (look, interactive) = console::detect(flags);
    let mut lines = Lines::open(interactive);
    let screen = Screen::new(look, interactive);
    let setup = LocalSetup {
        engine,
        human_color: args.color.resolve(),
        game,
        ending,
    };
    LocalSession::new(setup, screen).run(&mut lines);
    Ok(())
}

/// Runs an online command on a small runtime: two worker threads are
/// plenty for one socket and one HTTP client.
fn online<F, Fut>(task: F) -> Result<(), String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let guard = console::TerminalGuard::save();
    let result = runtime.block_on(task());
    drop(guard);
    // The line reader may still be blocked on stdin; don't wait for it.
    runtime.shutdown_background();
    result
}

/// Which credential a command sends.
enum Credential {
    /// None: the account commands bring their own.
    Nobody,
    /// `--player-token` if given, else the stored login's token for the
    /// server, if any.
    PlayerOr(Option<String>),
}

/// The server named by `--server`, else by the game URL, else the one
/// server logged in to (when there is exactly one).
fn server_for(
    args: &ServerArgs,
    game: Option<&GameRef>,
    credential: Credential,
) -> Result<Server, String> {
    let url = args
        .server
        .clone()
        .or_else(|| game.and_then(|g| g.server.clone()))
        .or_else(remote::account::only_login_server)
        .ok_or("which server? give --server URL (or ROOKERY_SERVER), or a game URL")?;
    let mut server = Server::new(&url, args.ca_cert.as_deref())?;
    match credential {
        Credential::Nobody => {}
        Credential::PlayerOr(Some(token)) => server.authenticate(token, false),
        Credential::PlayerOr(None) => {
            if let Some(login) = remote::account::stored_login(&server.base) {
                server.authenticate(login.token, true);
            }
        }
    }
    Ok(server)
}

async fn play_online(args: PlayArgs, flags: OutputFlags) -> Result<(), String> {
    if args.human || args.pgn.is_some() {
        return Err("--human and --pgn are for local games (without --server)".into());
    }
    let game_ref = args
        .game
        .as_deref()
        .map(remote::parse_game_ref)
        .transpose()?;
    let server = server_for(
        &args.server,
        game_ref.as_ref(),
        Credential::PlayerOr(args.player_token.clone()),
    )?;
    let (look, interactive) = console::detect(flags);
    let (state, participant) = match &game_ref {
        Some(game_ref) => {
            if args.level.is_some() || args.fen.is_some() || args.clock.is_some() || args.chess960 {
                return Err(
                    "--level, --fen, --chess960 and --clock set up a new game; not with a game to join"
                        .into(),
                );
            }
            match server.join(&game_ref.id, game_ref.invite.as_deref()).await {
                Ok((state, seat)) => (state, Participant::Player(seat)),
                Err(e) if remote::is_seat_taken(&e) => {
                    let mine = match &args.player_token {
                        None => login_seat(&server, &game_ref.id).await,
                        Some(_) => None,
                    };
                    match mine {
                        Some((state, color)) => (state, Participant::Account(color)),
                        None => {
                            return Err(format!(
                            "no free seat in game {}: watch it with rookery watch --server {} {}",
                            game_ref.id, server.base, game_ref.id
                        ))
                        }
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        None => {
            let me = args.color.resolve();
            let opponent = match args.level {
                Some(level) => json!({"kind": "ai", "level": level}),
                None => json!({"kind": "human"}),
            };
            let human = json!({"kind": "human"});
            let (white, black) = match me {
                Color::White => (human, opponent),
                Color::Black => (opponent, human),
            };
            // A game against a friend is private unless asked otherwise:
            // only the holder of the printed link (it carries the invite
            // secret) can take the free seat.
            let visibility = if args.open { "open" } else { "private" };
            let mut body =
                json!({"white": white, "black": black, "as": me.name(), "visibility": visibility});
            if let Some((initial, increment)) = args.clock {
                body["clock"] = json!({"initial": initial, "increment": increment});
            }
            if let Some(fen) = &args.fen {
                body["fen"] = json!(fen);
            }
            if args.chess960 {
                body["variant"] = json!("chess960");
                if let Some(number) = args.chess960_start {
                    body["chess960_start"] = json!(number);
                }
            }
            let (state, seat, link) = server.create(body).await.map_err(|e| e.to_string())?;
            let seat = seat.ok_or("the server gave no seat for the new game")?;
            // The one line a script needs to hand the game to the opponent.
            println!("game: {link}");
            (state, Participant::Player(seat))
        }
    };
    let mut lines = Lines::open(interactive);
    let printer = lines.printer();
    let screen = Screen::new(look, interactive).with_printer(printer);
    let id = state.id.clone();
    RemoteSession::new(server, id, participant, screen)
        .run(lines, Some(state))
        .await
}

/// The game and the seat in it of the login stored for `server`, if it
/// holds one (a challenge's game: both seats are taken, by the accounts).
async fn login_seat(server: &Server, id: &str) -> Option<(remote::GameState, Color)> {
    let login = remote::account::stored_login(&server.base)?;
    let state = server.game(id).await.ok()?;
    let color = remote::account_seat(&state, &login.name)?;
    Some((state, color))
}

async fn watch(args: ServerArgs, game: String, flags: OutputFlags) -> Result<(), String> {
    let game_ref = remote::parse_game_ref(&game)?;
    let server = server_for(&args, Some(&game_ref), Credential::PlayerOr(None))?;
    let state = server.game(&game_ref.id).await.map_err(|e| {
        if remote::is_not_found(&e) {
            format!("no game {} on {}", game_ref.id, server.base)
        } else {
            e.to_string()
        }
    })?;
    let (look, interactive) = console::detect(flags);
    let mut lines = Lines::open(interactive);
    let printer = lines.printer();
    let screen = Screen::new(look, interactive).with_printer(printer);
    RemoteSession::new(server, game_ref.id, Participant::Spectator, screen)
        .run(lines, Some(state))
        .await
}

async fn games(args: ServerArgs) -> Result<(), String> {
    let server = server_for(&args, None, Credential::PlayerOr(None))?;
    let list = remote::list_games(&server)
        .await
        .map_err(|e| e.to_string())?;
    print!("{list}");
    Ok(())
}

async fn login(args: ServerArgs, name: Option<String>) -> Result<(), String> {
    let server = server_for(&args, None, Credential::Nobody)?;
    let said = remote::account::login(&server, name, &mut Questions::new()).await?;
    println!("{said}");
    Ok(())
}

async fn logout(args: ServerArgs, forget: bool) -> Result<(), String> {
    let server = server_for(&args, None, Credential::Nobody)?;
    let said = remote::account::logout(&server, forget, &mut Questions::new()).await?;
    println!("{said}");
    Ok(())
}

/// The server (as [`server_for`] finds it) with the stored login's token:
/// for the commands that need an account.
fn logged_in(args: &ServerArgs, reference: Option<&GameRef>) -> Result<Server, String> {
    let mut server = server_for(args, reference, Credential::Nobody)?;
    let login = remote::account::stored_login(&server.base).ok_or_else(|| {
        format!(
            "not logged in to {base}: rookery login --server {base}",
            base = server.base
        )
    })?;
    server.authenticate(login.token, true);
    Ok(server)
}

async fn whoami(args: ServerArgs) -> Result<(), String> {
    let server = logged_in(&args, None)?;
    println!("{}", remote::account::whoami(&server).await?);
    Ok(())
}

async fn challenge(args: ChallengeArgs, flags: OutputFlags) -> Result<(), String> {
    let server = logged_in(&args.server, None)?;
    let clock = match (args.untimed, args.clock) {
        (true, _) => None,
        (false, Some(clock)) => Some(clock),
        // The web client's default.
        (false, None) => Some((5 * 60, 3)),
    };
    let terms = ChallengeTerms {
        clock,
        color: args.color.name(),
        rated: args.rated,
        chess960: args.chess960.then_some(args.chess960_start),
    };
    remote::challenge::challenge(server, &args.name, terms, flags).await
}

async fn challenges(args: ServerArgs, watch: bool, flags: OutputFlags) -> Result<(), String> {
    let server = logged_in(&args, None)?;
    if watch {
        return remote::challenge::watch(server, flags).await;
    }
    print!("{}", remote::challenge::list(&server).await?);
    Ok(())
}

async fn accept(args: ServerArgs, challenge: String, flags: OutputFlags) -> Result<(), String> {
    let reference = remote::parse_challenge_ref(&challenge)?;
    let server = logged_in(&args, Some(&reference))?;
    remote::challenge::accept(server, &reference.id, flags).await
}

async fn decline(args: ServerArgs, challenge: String, reason: DeclineReason) -> Result<(), String> {
    let reference = remote::parse_challenge_ref(&challenge)?;
    let server = logged_in(&args, Some(&reference))?;
    let said = remote::challenge::decline(&server, &reference.id, reason.key()).await?;
    println!("{said}");
    Ok(())
}

async fn arena(command: ArenaCommand, flags: OutputFlags) -> Result<(), String> {
    match command {
        ArenaCommand::List { server } => {
            let server = server_for(&server, None, Credential::PlayerOr(None))?;
            print!("{}", tournament::list_arenas(&server).await?);
            Ok(())
        }
        ArenaCommand::Join { server, id, code } => {
            let server = logged_in(&server, None)?;
            tournament::join_and_play(server, Kind::Arena, &id, code.as_deref(), flags).await
        }
        ArenaCommand::Withdraw { server, id } => {
            let server = logged_in(&server, None)?;
            println!("{}", tournament::withdraw(&server, Kind::Arena, &id).await?);
            Ok(())
        }
    }
}

async fn swiss(command: SwissCommand, flags: OutputFlags) -> Result<(), String> {
    match command {
        SwissCommand::Join { server, id } => {
            let server = logged_in(&server, None)?;
            tournament::join_and_play(server, Kind::Swiss, &id, None, flags).await
        }
        SwissCommand::Withdraw { server, id } => {
            let server = logged_in(&server, None)?;
            println!("{}", tournament::withdraw(&server, Kind::Swiss, &id).await?);
            Ok(())
        }
    }
}
