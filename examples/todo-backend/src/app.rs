//! Shared state and the axum router.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use axum::extract::{FromRef, Request, State};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::config::{AuthMode, ServerConfig};
use crate::counters::{count_requests, request_key, Counters};
use crate::db::Db;
use crate::error::{now_ms, ApiError};
use crate::graphql::{build_schema, TodoSchema};
use crate::static_files::StaticFiles;
use crate::{auth, graphql, test_hooks};

/// A scripted GraphQL answer: the operation it is for (any, when `None`) and its
/// [`test_hooks::build_response`] query.
pub type ScriptedResponse = (Option<String>, String);

/// Everything handlers share.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub db: Arc<Db>,
    /// Request counters.
    pub counters: Arc<Counters>,
    /// Cookie or bearer.
    pub auth_mode: AuthMode,
    /// Token / session lifetime in milliseconds.
    pub token_ttl_ms: i64,
    /// While set, `/api/refresh` answers 401 (test hook).
    pub fail_refresh: Arc<AtomicBool>,
    /// Statuses the next GraphQL requests are answered with, one each, in order (test hook).
    pub fail_graphql: Arc<std::sync::Mutex<std::collections::VecDeque<u16>>>,
    /// Responses the next GraphQL requests (of an operation, or any) are answered with, one each, in
    /// order, as [`test_hooks::build_response`] queries (test hook `/__test/next-graphql`).
    pub graphql_responses: Arc<std::sync::Mutex<std::collections::VecDeque<ScriptedResponse>>>,
    /// The GraphQL schema.
    pub schema: TodoSchema,
    /// The static-file fallback.
    pub static_files: StaticFiles,
    /// Held by a GraphQL request with an `Idempotency-Key` from the lookup of its key to the write of
    /// its answer ([`crate::idempotency`]).
    pub idempotency: Arc<tokio::sync::Mutex<()>>,
    /// Milliseconds each GraphQL answer waits after the operation ran (test hook `/__test/slow-graphql`).
    pub graphql_delay_ms: Arc<std::sync::atomic::AtomicU64>,
    /// Sends server pushes ([`crate::push`]).
    pub pusher: crate::push::Pusher,
    /// The static paths whose requests are held unanswered until released (test hooks
    /// `/__test/hold-static`, `/__test/release-static`).
    pub held_static: Arc<tokio::sync::watch::Sender<Vec<String>>>,
    /// The static path answered `503` until released (test hooks `/__test/fail-static`,
    /// `/__test/release-static`), or `None`.
    pub failed_static: Arc<std::sync::Mutex<Option<String>>>,
}

impl FromRef<AppState> for Arc<Counters> {
    fn from_ref(state: &AppState) -> Self {
        state.counters.clone()
    }
}

impl AppState {
    /// Opens the database and builds the state for `config`.
    pub fn new(config: &ServerConfig, counters: Arc<Counters>) -> anyhow::Result<Self> {
        let db = Arc::new(Db::open(&config.db_path)?);
        let pusher = crate::push::Pusher::new(&db)?;
        Ok(AppState {
            pusher,
            schema: build_schema(db.clone()),
            db,
            counters,
            auth_mode: config.auth_mode,
            token_ttl_ms: i64::try_from(config.token_ttl.as_millis()).unwrap_or(i64::MAX).min(i64::MAX / 4),
            fail_refresh: Arc::default(),
            fail_graphql: Arc::default(),
            graphql_responses: Arc::default(),
            static_files: StaticFiles::new(config.static_dir.as_deref()),
            idempotency: Arc::default(),
            graphql_delay_ms: Arc::default(),
            held_static: Arc::new(tokio::sync::watch::Sender::new(Vec::new())),
            failed_static: Arc::default(),
        })
    }
}

/// The full router: API, GraphQL, optional test hooks, static fallback, request counting.
pub fn router(state: AppState, test_hooks: bool) -> Router {
    let mut router = Router::new()
        .route("/api/hello", get(hello))
        .route("/api/login", post(auth::login))
        .route("/api/logout", post(auth::logout))
        .route("/api/refresh", post(auth::refresh))
        .route("/api/me", get(auth::me))
        .route("/graphql", get(graphql::get_handler).post(graphql::handler))
        .merge(crate::push::routes());
    if test_hooks {
        router = router.merge(test_hooks::routes());
    }
    router
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(state.counters.clone(), count_requests))
        .with_state(state)
}

/// `GET /api/hello`: a cacheable, unauthenticated GET for the walking-skeleton test.
async fn hello(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(json!({
        "message": "hello from the cachet todo backend",
        "servedAt": now_ms(),
        "count": state.counters.get(&request_key("GET", "/api/hello")),
    }))
}

async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    test_hooks::while_held(&state, request.uri().path()).await;
    if test_hooks::failed(&state, request.uri().path()) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    state.static_files.serve(request).await
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("method {method} not allowed for {}", uri.path()))
        .into_response()
}
