//! Binding, the accept loop, and [`RunningServer`], whose `stop` really closes everything.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::app::{router, AppState};
use crate::config::ServerConfig;
use crate::counters::Counters;

/// A server started by [`start`]. Dropping it also shuts the server down (without waiting).
pub struct RunningServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    db: Arc<crate::db::Db>,
    graphql_delay_ms: Arc<std::sync::atomic::AtomicU64>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Opens the database, binds `config.addr` and starts serving in the background.
pub async fn start(config: ServerConfig) -> anyhow::Result<RunningServer> {
    let counters = Counters::new();
    let test_hooks = config.test_hooks;
    let state = {
        let counters = counters.clone();
        let config = config.clone();
        tokio::task::spawn_blocking(move || AppState::new(&config, counters))
            .await
            .context("database setup task failed")??
    };
    let (db, graphql_delay_ms) = (state.db.clone(), state.graphql_delay_ms.clone());
    let app = router(state, test_hooks);
    let listener =
        TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?;
    let addr = listener.local_addr()?;
    let (shutdown, shutdown_rx) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, app, shutdown_rx));
    Ok(RunningServer { addr, counters, db, graphql_delay_ms, shutdown: Some(shutdown), task: Some(task) })
}

/// Accepts connections until told to stop (or until the [`RunningServer`] is dropped), then
/// closes the listener and drops every open connection, keep-alive ones included.
async fn accept_loop(listener: TcpListener, app: Router, mut shutdown: oneshot::Receiver<()>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Best effort: a failure only costs latency.
                    let _ = stream.set_nodelay(true);
                    let service = TowerToHyperService::new(app.clone());
                    connections.spawn(async move {
                        let _ = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .keep_alive(true)
                            .serve_connection(TokioIo::new(stream), service)
                            .with_upgrades()
                            .await;
                    });
                }
                // E.g. out of file descriptors: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.abort_all();
    while connections.join_next().await.is_some() {}
}

impl RunningServer {
    /// The bound address (with the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request counter: `"GET /api/hello"`, `"graphql GetTodos"`, …
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.counters.snapshot()
    }

    /// Every bearer token the server handed out (login and refresh), oldest first.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.counters.tokens()
    }

    /// The todos of the user `username` as stored, oldest first (empty for an unknown user): what the
    /// server applied, read without a request.
    pub fn todos_of(&self, username: &str) -> anyhow::Result<Vec<crate::todos::Todo>> {
        match self.db.user_with_hash(username)? {
            Some((user, _)) => self.db.list_todos(user.id),
            None => Ok(Vec::new()),
        }
    }

    /// The answers kept under `Idempotency-Key`s of the user `username`, oldest first: `(key, status,
    /// body)` (see [`crate::idempotency`]).
    pub fn idempotent_answers_of(&self, username: &str) -> anyhow::Result<Vec<(String, u16, String)>> {
        match self.db.user_with_hash(username)? {
            Some((user, _)) => self.db.idempotent_answers(user.id),
            None => Ok(Vec::new()),
        }
    }

    /// Makes every GraphQL answer wait `ms` after its operation ran, as `/__test/slow-graphql` does.
    pub fn slow_graphql(&self, ms: u64) {
        self.graphql_delay_ms.store(ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// Zeroes every counter.
    pub fn reset_counts(&self) {
        self.counters.reset();
    }

    /// Stops the server: the listener is closed and every open connection dropped,
    /// so clients get network errors from now on. Returns once all of it is done.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
