//! `todo-backend`: runs the cachet example backend until Ctrl-C or SIGTERM.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use todo_backend::{start, AuthMode, ServerConfig};

/// The cachet example todo app's backend.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The built app to serve at `/` (e.g. `dist`).
    #[arg(long)]
    static_dir: Option<PathBuf>,
    /// SQLite database file; created (with parent directories) on first run.
    #[arg(long, default_value = "data/todo.sqlite")]
    db: PathBuf,
    /// `cookie` or `bearer`.
    #[arg(long, default_value = "cookie")]
    auth_mode: AuthMode,
    /// Lifetime of a bearer token or cookie session, in seconds.
    #[arg(long, default_value_t = 900)]
    token_ttl_secs: u64,
    /// Enable the `/__test/*` routes.
    #[arg(long)]
    test_hooks: bool,
}

/// Ctrl-C or SIGTERM, listened for from before the server says it listens: a signal sent as soon as the
/// line is read is never missed (the handler used to be installed after the line, a race a loaded machine
/// lost: the process died of the signal instead of stopping cleanly).
#[cfg(unix)]
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut interrupt) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let signal = shutdown_signal()?;
    let server = start(ServerConfig {
        addr: args.addr,
        static_dir: args.static_dir,
        db_path: args.db,
        auth_mode: args.auth_mode,
        token_ttl: Duration::from_secs(args.token_ttl_secs),
        test_hooks: args.test_hooks,
    })
    .await?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "cachet todo backend listening on {}", server.url())?;
    stdout.flush()?;
    drop(stdout);
    signal.await;
    server.stop().await;
    Ok(())
}
