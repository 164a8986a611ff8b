//! `rookery-server`: parses flags, sets up logging, binds, prints the
//! `listening on` line and serves until SIGINT or SIGTERM; or runs a
//! subcommand instead (`backup`, `admin` (roles, password resets), or `worker`, the AI
//! worker that `--role worker` also starts). Everything else is in the library
//! (`rookery_server::App`).

use std::io::{IsTerminal, Write};

use anyhow::Context;
use clap::Parser;
use rookery_server::config::{AdminAction, LogFormat, Task};
use rookery_server::{listening_line, App, Config};
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    // Logs go to stderr: stdout carries only the `listening on` line, which
    // scripts wait for.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(rookery_server::http::logging::env_filter())
        .with_writer(std::io::stderr);
    match config.ops.log_format {
        LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => logs.json().with_current_span(true).init(),
    }
    if let Some(Task::Backup { database, to }) = &config.command {
        let url = database.as_deref().unwrap_or(&config.storage.database);
        let bytes = rookery_server::store::backup(url, to).await?;
        println!("backed up {url} to {} ({bytes} bytes)", to.display());
        return Ok(());
    }
    if let Some(Task::Admin { action, database }) = &config.command {
        let url = database.as_deref().unwrap_or(&config.storage.database);
        let store = rookery_server::store::Store::open(url).await?;
        let done = match action {
            AdminAction::Grant { name, .. } => {
                rookery_server::social::set_moderator(&store, name, true).await
            }
            AdminAction::Revoke { name, .. } => {
                rookery_server::social::set_moderator(&store, name, false).await
            }
            AdminAction::ResetPassword { name } => {
                rookery_server::identity::reset_password(&store, name).await
            }
        };
        store.close().await;
        println!("{}", done?);
        return Ok(());
    }
    raise_open_files_limit();

    // Handlers first, so a SIGTERM that arrives while the database opens
    // still means a clean exit 0 rather than the default death.
    let shutdown = shutdown_signal();
    // `rookery-server worker …` or `--role worker`: an AI worker.
    if let Some(worker) = config.worker()? {
        return rookery_server::ai::remote::run_worker(&worker.nats, worker.threads, shutdown)
            .await;
    }
    let listener = TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("binding {}", config.addr))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let metrics_listener = match &config.ops.metrics_addr {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding the metrics address {addr}"))?,
        ),
        None => None,
    };
    let app = App::start(config).await?;
    if let Some(listener) = metrics_listener {
        tokio::spawn(app.serve_metrics(listener));
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", listening_line(addr, app.serves_tls())).context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    app.serve(listener, shutdown).await
}

/// Raises the soft limit on open files to the hard limit. Every WebSocket
/// and HTTP connection is a file descriptor, and the usual soft default
/// (1024) would cap a node at about a thousand players and spectators; the
/// hard limit is the operator's to set (see the README's Performance part).
#[cfg(unix)]
fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        tracing::warn!(err = %std::io::Error::last_os_error(), "cannot read the open-files limit");
        return;
    }
    let before = limit.rlim_cur;
    if before < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            tracing::warn!(err = %std::io::Error::last_os_error(), "cannot raise the open-files limit");
            limit.rlim_cur = before;
        }
    }
    tracing::info!(
        open_files = limit.rlim_cur,
        "open-files limit (each connection takes one)"
    );
}

#[cfg(not(unix))]
fn raise_open_files_limit() {}

/// Completes on the first SIGINT (Ctrl-C) or SIGTERM. The handlers are
/// installed when this is called, not when the future is first polled, so a
/// signal during start-up is not lost.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            let wait = |installed: std::io::Result<tokio::signal::unix::Signal>, name| async move {
                match installed {
                    Ok(mut signal) => {
                        signal.recv().await;
                    }
                    Err(err) => {
                        tracing::error!(%err, "cannot listen for {name}");
                        std::future::pending::<()>().await;
                    }
                }
            };
            tokio::select! {
                _ = wait(terminate, "SIGTERM") => {}
                _ = wait(interrupt, "SIGINT") => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!(%err, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    }
}
