//! The HTTP API under `/api`, one module per resource: [`players`],
//! [`games`], and [`info`] (levels and scoreboard).
//!
//! Every route shares the per-client rate limit and the body size limit;
//! an unknown `/api` path is a `not_found` in our error shape.

pub mod accounts;
pub mod admin;
pub mod analysis;
pub mod arenas;
pub mod challenges;
pub mod events;
pub mod games;
pub mod health;
pub mod info;
pub mod players;
pub mod pools;
pub mod recovery;
pub mod social;
pub mod swiss;
pub mod teams;

use axum::extract::DefaultBodyLimit;
use axum::routing::{any, delete, get, post, put};
use axum::Router;

use self::games::action;
use crate::http::error::ApiError;
use crate::http::lichess::{self, board::Api};
use crate::http::rate_limit::limit_requests;
use crate::live::actor::Action::{self, DropDrawOffer, DropRematch, DropTakeback};
use crate::live::game::Answer::{Decline, Withdraw};
use crate::AppState;

pub fn router(state: AppState) -> Router {
    // Installs the metrics recorder before the first request is counted.
    crate::metrics::handle();
    let mut router = Router::new();
    for api in [Api::Board, Api::Bot] {
        router = play_routes(router, api);
    }
    // Teams and Swiss tournaments (issue 39).
    router = swiss::routes(teams::routes(router));
    router
        .route("/api/players", post(players::create).get(players::search))
        .route("/api/online", get(players::online))
        .route("/api/players/{name}/stakes", get(players::stakes))
        .route("/api/players/{name}", get(players::profile))
        .route("/api/players/{name}/games", get(players::games))
        // Accounts (issue 21).
        .route("/api/accounts", post(accounts::sign_up))
        .route(
            "/api/session",
            post(accounts::log_in).delete(accounts::log_out),
        )
        .route("/api/account", get(accounts::get))
        .route("/api/account/password", put(accounts::set_password))
        .route(
            "/api/account/sessions",
            get(accounts::sessions).delete(accounts::end_all_sessions),
        )
        .route("/api/account/sessions/{id}", delete(accounts::end_session))
        .route(
            "/api/account/tokens",
            get(accounts::tokens).post(accounts::create_token),
        )
        .route("/api/account/tokens/{id}", delete(accounts::revoke_token))
        .route("/api/account/games", get(accounts::games))
        .route("/api/account/recovery", get(recovery::info))
        .route("/api/account/email", put(recovery::set_email))
        .route("/api/account/email/verify", post(recovery::verify_email))
        .route("/api/account/forgot", post(recovery::forgot))
        .route(
            "/api/account/reset",
            get(recovery::check_reset).post(recovery::reset),
        )
        .route("/api/token", delete(accounts::revoke_own_token))
        // Challenges and the event stream (issue 21, in lichess's shapes).
        .route("/api/challenge", get(challenges::list))
        .route("/api/challenge/{username}", post(challenges::create))
        .route("/api/challenge/{id}/show", get(challenges::show))
        .route("/api/challenge/{id}/accept", post(challenges::accept))
        .route("/api/challenge/{id}/decline", post(challenges::decline))
        .route("/api/challenge/{id}/cancel", post(challenges::cancel))
        .route("/api/challenges/decline-all", post(challenges::decline_all))
        .route("/api/stream/event", get(events::stream))
        // lichess's Board, Bot and account API (issue 24).
        .route("/api/account/playing", get(lichess::account::playing))
        .route("/api/user/{username}", get(lichess::account::user))
        .route("/api/users/status", get(lichess::account::statuses))
        .route("/api/token/test", post(lichess::account::token_test))
        .route("/api/bot/account/upgrade", post(lichess::account::upgrade))
        .route("/api/bot/online", get(lichess::account::online_bots))
        .route("/api/challenge/ai", post(lichess::board::challenge_ai))
        .route("/game/export/{id}", get(lichess::export::game))
        .route(
            "/api/games/user/{username}",
            get(lichess::export::user_games),
        )
        // Follows, blocks, reports and moderators (issue 37).
        .merge(social_routes())
        // Quick pairing and Arena tournaments (issue 38).
        .route("/api/board/seek", post(lichess::seek::seek))
        .route("/ws/lobby", get(pools::upgrade))
        .route("/ws/arenas/{id}", get(arenas::upgrade))
        .route(
            "/api/tournament",
            get(lichess::arena::list).post(lichess::arena::create),
        )
        .route("/api/tournament/{id}", get(lichess::arena::get))
        .route("/api/tournament/{id}/join", post(lichess::arena::join))
        .route(
            "/api/tournament/{id}/withdraw",
            post(lichess::arena::withdraw),
        )
        .route("/api/tournament/{id}/results", get(lichess::arena::results))
        .route("/api/tournament/{id}/games", get(lichess::arena::games))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(crate::http::metrics::scrape))
        .route("/api/levels", get(info::levels))
        .route("/api/scoreboard", get(info::scoreboard))
        .route("/api/games", post(games::create).get(games::list))
        .route("/api/games/{id}", get(games::get).delete(admin::abort_game))
        .route("/api/admin/stats", get(admin::stats))
        .route("/api/games/{id}/join", post(games::join))
        .route("/api/games/{id}/pgn", get(games::pgn))
        .route(
            "/api/games/{id}/analysis",
            get(analysis::get).post(analysis::start),
        )
        .route("/api/pgn", post(analysis::read_pgn))
        // The analysis board (issue 36).
        .route("/api/position", post(analysis::position))
        .route("/api/analysis", post(analysis::evaluate))
        .route("/api/games/{id}/stream", get(games::stream))
        .route("/api/games/{id}/move", post(games::play))
        .route("/api/games/{id}/resign", post(games::resign))
        .route("/api/games/{id}/draw", post(games::draw))
        // Offers, takebacks and abort (issue 11).
        .route(
            "/api/games/{id}/draw/decline",
            action(|| DropDrawOffer(Decline)),
        )
        .route(
            "/api/games/{id}/draw/withdraw",
            action(|| DropDrawOffer(Withdraw)),
        )
        .route("/api/games/{id}/takeback", action(|| Action::Takeback))
        .route(
            "/api/games/{id}/takeback/decline",
            action(|| DropTakeback(Decline)),
        )
        .route(
            "/api/games/{id}/takeback/withdraw",
            action(|| DropTakeback(Withdraw)),
        )
        .route("/api/games/{id}/rematch", post(games::rematch))
        .route(
            "/api/games/{id}/rematch/decline",
            action(|| DropRematch(Decline)),
        )
        .route(
            "/api/games/{id}/rematch/withdraw",
            action(|| DropRematch(Withdraw)),
        )
        .route("/api/games/{id}/abort", action(|| Action::Abort))
        .route("/api", any(not_found))
        .route("/api/", any(not_found))
        .route("/api/{*rest}", any(not_found))
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(axum::middleware::from_fn(
            crate::http::metrics::track_requests,
        ))
        .layer(DefaultBodyLimit::max(state.config.http.max_body_bytes))
        .layer(axum::middleware::from_fn(
            crate::http::extract::require_decodable_path,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limit_requests,
        ))
        .with_state(state)
}

/// lichess's Board or Bot API routes (issue 24): the same handlers, told
/// which API they serve.
fn play_routes(router: Router<AppState>, api: Api) -> Router<AppState> {
    use axum::extract::{Path, State};
    use axum::http::HeaderMap;
    use lichess::board;
    type Id = Path<String>;
    type IdAnd = Path<(String, String)>;
    let at = |tail: &str| format!("/api/{}/game/{tail}", api.prefix());
    router
        .route(
            &format!("/api/{}/game/stream/{{id}}", api.prefix()),
            get(move |s: State<AppState>, p: Id, h: HeaderMap| board::stream(api, s, p, h)),
        )
        .route(
            &at("{id}/move/{uci}"),
            post(
                move |s: State<AppState>,
                      p: IdAnd,
                      q: axum::extract::Query<board::MoveQuery>,
                      h: HeaderMap| board::play(api, s, p, q, h),
            ),
        )
        .route(
            &at("{id}/resign"),
            post(move |s: State<AppState>, p: Id, h: HeaderMap| board::resign(api, s, p, h)),
        )
        .route(
            &at("{id}/abort"),
            post(move |s: State<AppState>, p: Id, h: HeaderMap| board::abort(api, s, p, h)),
        )
        .route(
            &at("{id}/draw/{answer}"),
            post(move |s: State<AppState>, p: IdAnd, h: HeaderMap| board::draw(api, s, p, h)),
        )
        .route(
            &at("{id}/takeback/{answer}"),
            post(move |s: State<AppState>, p: IdAnd, h: HeaderMap| board::takeback(api, s, p, h)),
        )
        .route(
            &at("{id}/berserk"),
            post(move |s: State<AppState>, p: Id, h: HeaderMap| board::berserk(api, s, p, h)),
        )
        .route(
            &at("{id}/claim-victory"),
            post(move |s: State<AppState>, p: Id, h: HeaderMap| board::claim_victory(api, s, p, h)),
        )
        .route(
            &at("{id}/claim-victory/"),
            post(move |s: State<AppState>, p: Id, h: HeaderMap| board::claim_victory(api, s, p, h)),
        )
        .route(
            &at("{id}/chat"),
            get(move |s: State<AppState>, p: Id, h: HeaderMap| board::get_chat(api, s, p, h)).post(
                move |s: State<AppState>,
                      p: Id,
                      h: HeaderMap,
                      f: lichess::Form<board::ChatForm>| {
                    board::post_chat(api, s, p, h, f)
                },
            ),
        )
}

/// The community's routes (issue 37): lichess's relations, the account's
/// lists and settings, reports, the moderators' queue and log, leaving.
fn social_routes() -> Router<AppState> {
    use axum::extract::{Path, State};
    use axum::http::HeaderMap;
    type Name = Path<String>;
    let mut router = Router::new();
    for verb in ["follow", "unfollow", "block", "unblock"] {
        router = router.route(
            &format!("/api/rel/{verb}/{{username}}"),
            post(
                move |State(s): State<AppState>, Path(n): Name, h: HeaderMap| {
                    social::relate(verb, s, n, h)
                },
            ),
        );
    }
    for (path, kind) in [("following", "follow"), ("blocking", "block")] {
        router = router.route(
            &format!("/api/rel/{path}"),
            get(move |State(s): State<AppState>, h: HeaderMap| social::list(kind, s, h)),
        );
    }
    router
        .route("/api/account/social", get(social::get).put(social::set))
        .route("/api/account/notices", get(social::notices))
        .route("/api/account/notices/{id}", delete(social::dismiss_notice))
        .route("/api/account/close", post(social::close))
        .route("/api/account/export", get(social::export))
        .route("/api/reports", post(social::report))
        .route("/api/mod/reports", get(social::queue))
        .route("/api/mod/actions", post(social::act))
        .route("/api/mod/log", get(social::log))
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such endpoint".into())
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
