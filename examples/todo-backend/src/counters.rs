//! Request counters: `"<METHOD> <path>"` for every request, `"graphql <operationName>"` for GraphQL.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// Thread-safe counters shared by the server and [`crate::RunningServer`], and the bearer tokens the
/// server issued (so that a test can look for them where they must never be).
#[derive(Debug, Default)]
pub struct Counters {
    map: Mutex<BTreeMap<String, u64>>,
    tokens: Mutex<Vec<String>>,
}

impl Counters {
    /// A fresh, empty set of counters.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Adds one to `key` and returns the new value.
    pub fn incr(&self, key: impl Into<String>) -> u64 {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let value = map.entry(key.into()).or_insert(0);
        *value += 1;
        *value
    }

    /// Adds `amount` to `key` (bytes on the wire: `graphql wire <operationName>`).
    pub fn add(&self, key: impl Into<String>, amount: u64) {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        *map.entry(key.into()).or_insert(0) += amount;
    }

    /// The current value of `key` (0 when never counted).
    pub fn get(&self, key: &str) -> u64 {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key).copied().unwrap_or(0)
    }

    /// A copy of every counter.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Records a token the server handed out (login or refresh).
    pub fn record_token(&self, token: &str) {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).push(token.to_owned());
    }

    /// Every token handed out, oldest first.
    pub fn tokens(&self) -> Vec<String> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Forgets every counter.
    pub fn reset(&self) {
        self.map.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

/// The key for a request: `"GET /api/hello"`.
pub fn request_key(method: &str, path: &str) -> String {
    format!("{method} {path}")
}

/// The key for a GraphQL operation: `"graphql GetTodos"` or `"graphql <anonymous>"`.
pub fn graphql_key(operation_name: Option<&str>) -> String {
    format!("graphql {}", operation_name.unwrap_or("<anonymous>"))
}

/// Middleware counting every request under [`request_key`].
pub async fn count_requests(State(counters): State<Arc<Counters>>, request: Request, next: Next) -> Response {
    let key = request_key(request.method().as_str(), request.uri().path());
    // A navigation the browser preloaded for a Service Worker (`Service-Worker-Navigation-Preload`) is
    // counted under `preload <key>` as well.
    if request.headers().contains_key("service-worker-navigation-preload") {
        counters.incr(format!("preload {key}"));
    }
    counters.incr(key);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_resets() {
        let c = Counters::new();
        assert_eq!(c.incr(request_key("GET", "/api/hello")), 1);
        assert_eq!(c.incr("GET /api/hello"), 2);
        c.incr(graphql_key(None));
        assert_eq!(c.get("graphql <anonymous>"), 1);
        assert_eq!(c.snapshot().len(), 2);
        c.reset();
        assert!(c.snapshot().is_empty());
        assert_eq!(c.get("GET /api/hello"), 0);
    }
}
