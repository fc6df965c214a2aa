//! One origin per variant: a 127.0.0.1 port serving the variant's files and a GraphQL-shaped `/graphql`.
//!
//! Every origin answers `POST /graphql` the same way, without a database, so that the server costs the
//! same for every variant and its time is tiny:
//!
//! | request body | answer |
//! |---|---|
//! | a query with `variables: {id, size}` | `{"data":{"item":{"id":<id>,"rev":<rev>,"pad":"xx…"}}}`, exactly `size` bytes |
//! | a `mutation` with `variables: {id}` | `{"data":{"createNote":{"id":<id>}}}`, and item `id`'s `rev` goes up by one |
//!
//! `/graphql-apq` answers the same, and both speak Apollo's persisted queries as servers that do
//! (`extensions.persistedQuery.sha256Hash`: a hash with its text is kept, a hash alone is answered from
//! the text kept or with `PersistedQueryNotFound`), posted or as a GET (`?operationName=…&variables=…&extensions=…`).
//! The bytes each GraphQL request put on the wire (a body, a GET's search) are counted.
//!
//! A request carrying `X-Bench-Delay: <ms>` is answered that many milliseconds late (at most 1 000), as
//! over a network with that round trip. It counts the queries and mutations it answered, which is how the runner checks that a cache hit never
//! reached the network and that an invalidated entry did; `rev` is how a page sees fresh data.
//!
//! `GET /nav/<ms>/page.html` is a small page (one script, one stylesheet: `nav.js`, `nav.css` beside
//! it), each file answered `<ms>` milliseconds late (at most 1 000), as over a network with that round
//! trip; `Cache-Control: no-cache` keeps the HTTP cache from answering for it. The pages and the assets
//! served are counted, so that a navigation asked twice (a preload not used) fails the run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower_http::services::ServeDir;

/// How many GraphQL requests an origin answered.
#[derive(Debug, Default)]
pub struct Counts {
    queries: AtomicU64,
    mutations: AtomicU64,
    /// `/nav/<ms>/page.html` answers.
    pages: AtomicU64,
    /// `/nav/<ms>/nav.js` and `nav.css` answers.
    assets: AtomicU64,
    /// Item id → how many mutations named it.
    revisions: std::sync::Mutex<std::collections::HashMap<i64, u64>>,
    /// Bytes of GraphQL requests received: bodies, GETs' searches.
    wire: AtomicU64,
    /// GraphQL requests received (persisted-query not-found answers included).
    requests: AtomicU64,
    /// Persisted queries' texts by hash.
    persisted: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

impl Counts {
    /// `(queries, mutations)` answered so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (self.queries.load(Ordering::SeqCst), self.mutations.load(Ordering::SeqCst))
    }

    /// `(GraphQL requests, their bytes)` received so far.
    pub fn wire(&self) -> (u64, u64) {
        (self.requests.load(Ordering::SeqCst), self.wire.load(Ordering::SeqCst))
    }

    /// The `/nav/<ms>/page.html` answers so far.
    pub fn pages(&self) -> u64 {
        self.pages.load(Ordering::SeqCst)
    }

    /// The `/nav/<ms>/nav.js` and `nav.css` answers so far.
    pub fn assets(&self) -> u64 {
        self.assets.load(Ordering::SeqCst)
    }
}

/// A running origin.
pub struct Origin {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its request counts.
    pub counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `dir` and `/graphql` on a free 127.0.0.1 port.
pub async fn serve(dir: PathBuf) -> Result<Origin> {
    let counts = Arc::new(Counts::default());
    let app = Router::new()
        .route("/graphql", get(graphql_get).post(graphql))
        .route("/graphql-apq", get(graphql_get).post(graphql))
        .route("/nav/{ms}/{file}", get(navigation_file))
        .fallback_service(ServeDir::new(dir))
        .layer(axum::middleware::map_response(isolate))
        .with_state(counts.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .context("binding a bench origin")?;
    let url = format!("http://{}", listener.local_addr()?);
    let task = tokio::spawn(async move {
        // Ends when the runner aborts the task at the end of the run.
        let _ = axum::serve(listener, app).await;
    });
    Ok(Origin { url, counts, task })
}

/// Makes the page cross-origin isolated, which gives `performance.now()` 5 µs resolution instead of 100 µs.
async fn isolate(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-embedder-policy", HeaderValue::from_static("require-corp"));
    response
}

async fn graphql(State(counts): State<Arc<Counts>>, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    counts.wire.fetch_add(body.len() as u64, Ordering::SeqCst);
    respond(&counts, &headers, &body).await
}

/// A GraphQL GET: its search read into the body it stands for (JSON members as JSON text).
async fn graphql_get(
    State(counts): State<Arc<Counts>>,
    headers: axum::http::HeaderMap,
    axum::extract::RawQuery(search): axum::extract::RawQuery,
) -> Response {
    let search = search.unwrap_or_default();
    counts.wire.fetch_add(search.len() as u64, Ordering::SeqCst);
    let mut body = serde_json::Map::new();
    for (name, value) in form_urlencoded::parse(search.as_bytes()) {
        let member = match &*name {
            "query" | "operationName" => serde_json::Value::String(value.into_owned()),
            _ => serde_json::from_str(&value).unwrap_or(serde_json::Value::Null),
        };
        body.insert(name.into_owned(), member);
    }
    respond(&counts, &headers, serde_json::Value::Object(body).to_string().as_bytes()).await
}

async fn respond(counts: &Counts, headers: &axum::http::HeaderMap, body: &[u8]) -> Response {
    counts.requests.fetch_add(1, Ordering::SeqCst);
    // `X-Bench-Delay: <ms>` (at most 1 000): answered that late, as over a network with that round trip.
    let delay = headers.get("x-bench-delay").and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if let Some(ms) = delay {
        tokio::time::sleep(std::time::Duration::from_millis(ms.min(1_000))).await;
    }
    match answer(counts, body) {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(message) => (StatusCode::BAD_REQUEST, message).into_response(),
    }
}

/// The bench's page for navigations and its two assets (see the module docs).
const NAV_PAGE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>nav</title>\
<link rel=\"stylesheet\" href=\"nav.css\"><script src=\"nav.js\"></script></head>\
<body><p>navigated</p></body></html>";
/// The navigation page's script (also what the first-asset row fetches).
pub const NAV_SCRIPT: &str = "window.navScript = true;";
const NAV_STYLE: &str = "p { color: #333; }";

/// `GET /nav/<ms>/<file>`: the page or one of its assets, `ms` milliseconds late.
async fn navigation_file(
    State(counts): State<Arc<Counts>>,
    Path((ms, file)): Path<(u64, String)>,
) -> Response {
    let (content_type, body) = match file.as_str() {
        "page.html" => ("text/html; charset=utf-8", NAV_PAGE),
        "nav.js" => ("text/javascript", NAV_SCRIPT),
        "nav.css" => ("text/css", NAV_STYLE),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    tokio::time::sleep(std::time::Duration::from_millis(ms.min(1_000))).await;
    match file == "page.html" {
        true => counts.pages.fetch_add(1, Ordering::SeqCst),
        false => counts.assets.fetch_add(1, Ordering::SeqCst),
    };
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// The answer to one GraphQL request body (see the module docs), or why it is not one the bench sends.
pub fn answer(counts: &Counts, body: &[u8]) -> Result<String, String> {
    let request: serde_json::Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let kept;
    let query = match request["extensions"]["persistedQuery"]["sha256Hash"].as_str() {
        None => request["query"].as_str().ok_or("no query")?,
        Some(hash) => {
            let mut persisted = counts.persisted.lock().map_err(|_| "a handler panicked")?;
            if let Some(text) = request["query"].as_str() {
                persisted.insert(hash.to_owned(), text.to_owned());
            }
            let Some(text) = persisted.get(hash).cloned() else {
                return Ok(r#"{"errors":[{"message":"PersistedQueryNotFound"}]}"#.to_owned());
            };
            kept = text;
            &kept
        }
    };
    let id = request["variables"]["id"].as_i64().ok_or("no variables.id")?;
    let mut revisions = counts.revisions.lock().map_err(|_| "a handler panicked")?;
    if query.trim_start().starts_with("mutation") {
        counts.mutations.fetch_add(1, Ordering::SeqCst);
        *revisions.entry(id).or_default() += 1;
        return Ok(format!(r#"{{"data":{{"createNote":{{"id":{id}}}}}}}"#));
    }
    let size = request["variables"]["size"].as_u64().ok_or("no variables.size")?;
    let rev = revisions.get(&id).copied().unwrap_or(0);
    let head = format!(r#"{{"data":{{"item":{{"id":{id},"rev":{rev},"pad":""#);
    let tail = r#""}}}"#;
    let pad = usize::try_from(size)
        .ok()
        .and_then(|size| size.checked_sub(head.len() + tail.len()))
        .ok_or_else(|| format!("size {size} is too small"))?;
    counts.queries.fetch_add(1, Ordering::SeqCst);
    Ok(format!("{head}{}{tail}", "x".repeat(pad)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_have_the_asked_size_and_count() {
        let counts = Counts::default();
        let body = br#"{"query":"query BenchItem { item { id } }","variables":{"id":7,"size":1024}}"#;
        let text = answer(&counts, body).expect("a query");
        assert_eq!(text.len(), 1024);
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(parsed["data"]["item"]["id"], 7);
        assert_eq!(parsed["data"]["item"]["rev"], 0);
        let mutation = br#"{"query":" mutation CreateNote { createNote { id } }","variables":{"id":7}}"#;
        assert_eq!(answer(&counts, mutation).expect("a mutation"), r#"{"data":{"createNote":{"id":7}}}"#);
        assert_eq!(counts.snapshot(), (1, 1));
        let fresh: serde_json::Value =
            serde_json::from_str(&answer(&counts, body).expect("a query")).expect("JSON");
        assert_eq!(fresh["data"]["item"]["rev"], 1);
        assert_eq!(counts.snapshot(), (2, 1));
        assert!(answer(&counts, br#"{"query":"{ a }","variables":{"id":1,"size":3}}"#).is_err());
        assert!(answer(&counts, b"nope").is_err());
    }

    #[test]
    fn persisted_queries_are_kept_and_answered_by_hash() {
        let counts = Counts::default();
        let hashed = br#"{"variables":{"id":7,"size":1024},"extensions":{"persistedQuery":{"version":1,"sha256Hash":"h"}}}"#;
        let not_found = answer(&counts, hashed).expect("an answer");
        assert!(not_found.contains("PersistedQueryNotFound"), "{not_found}");
        let registered = br#"{"query":"query BenchItem { item { id } }","variables":{"id":7,"size":1024},"extensions":{"persistedQuery":{"version":1,"sha256Hash":"h"}}}"#;
        assert_eq!(answer(&counts, registered).expect("a query").len(), 1024);
        assert_eq!(answer(&counts, hashed).expect("a query").len(), 1024);
        assert_eq!(counts.snapshot(), (2, 0));
    }
}
