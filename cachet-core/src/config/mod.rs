//! `cachet.config.json`: the typed model, its defaults and its validation.
//!
//! # Keys and defaults
//!
//! | Key | Type | Default | Rule |
//! |---|---|---|---|
//! | `features.auth.enabled` | bool | `false` | |
//! | `features.auth.type` | `"cookie"` \| `"bearer"` \| `"custom"` | `"cookie"` | |
//! | `features.auth.routePaths` | array of URL paths | `["/api/login", "/api/logout", "/api/refresh", "/api/me"]` | each starts with `/`, no `?`/`#`, no duplicates |
//! | `features.auth.failure.statuses` | array of integers | `[401]` | each 100–599 |
//! | `features.auth.failure.header` | `{ "name", "value"? }` | none | see [`AuthFailureRule`] |
//! | `features.auth.failure.jsonField` | `{ "path", "value"? }` | none | see [`AuthFailureRule`] |
//! | `features.graphql.enabled` | bool | `false` | |
//! | `features.graphql.endpoints` | array of URL paths | `["/graphql"]` | non-empty, index 0 is the default |
//! | `features.graphql.honorNoStore` | bool | `false` | a server's `Cache-Control: no-store` on a query's answer keeps it out of the cache (by default it is advisory for queries: see [`crate::engine::plan`]) |
//! | `features.graphql.persistedQueries.endpoints` | array of URL paths | `[]` (off) | each one of `features.graphql.endpoints`; their queries go as persisted-query hashes, negotiated by the worker ([`crate::graphql::persisted`]) |
//! | `features.graphql.persistedQueries.getMaxUrlLength` | integer | `0` (always `POST`) | 0–65536; a hash the server is known to hold goes as a `GET` whose URL is at most this long |
//! | `features.push.enabled` | bool | `false` | server push; cookie auth or no auth only ([`PushRefusal`]) |
//! | `features.push.notification.*` | see [`PushNotification`] | | the notification shown for a push |
//! | `strategy.default` | strategy name | `"network-first"` | for cacheable GETs without `X-SW-Strategy` |
//! | `strategy.graphql` | strategy name | `"cache-first"` | for GraphQL queries without `X-SW-Strategy` |
//! | `cache.maxEntries` | integer | `200` | 1–1 000 000; oldest entries are evicted past it |
//! | `cache.maxAgeSeconds` | integer | `86400` (1 day) | 1–2^53-1; older entries are not served |
//! | `cache.maxBodyBytes` | integer | `1048576` (1 MiB) | 1–2^53-1; larger responses are not stored |
//! | `cache.staleIfErrorSeconds` | integer | `0` (off, unless the stored answer says `stale-if-error`) | 0–2^53-1; how long past `maxAgeSeconds` an entry may still answer when the network fails or the server answers 5xx, marked `X-Cachet-Stale: 1` (see [`crate::engine::plan::after_failure`]) |
//! | `queue.maxItems` | integer | `100` | 1–100 000; the queue refuses more |
//! | `queue.maxAttempts` | integer | `5` | 1–1000; then the mutation is dead-lettered |
//! | `queue.backoffBaseMs` | integer | `1000` | 1–2^53-1 |
//! | `queue.backoffMaxMs` | integer | `60000` | at least `queue.backoffBaseMs` |
//!
//! Strategy names: `cache-first`, `network-first`, `stale-while-revalidate`, `network-only`, `cache-and-network`,
//! `cache-only`. Every key is optional; `{}` is the default config, with both features off, and
//! `features.auth.enabled: true` alone gives cookie auth, as `cachet add auth` does.
//!
//! # Unknown keys are errors
//!
//! A key this build does not know is rejected with its path and the keys that are allowed there
//! (`features.auth.routepaths: unknown key, expected one of enabled, type, routePaths, failure`): a
//! misspelt key silently ignored would leave the feature configured in a way the author never meant, and
//! the config is generated and read by the same cachet version. Only a top-level `$schema` (for editors)
//! is accepted and ignored.
//!
//! # Errors
//!
//! Every [`ConfigError::Invalid`] names the JSON path and what was expected there, for example
//! `features.auth.type: expected one of cookie, bearer, custom, got "jwt"`. Array items are written
//! `features.graphql.endpoints[1]`.
//!
//! # What a page reads
//!
//! A page reads only configs cachet wrote from a config this reader accepted: `cachet-sw-config.js`
//! and its Service Worker's. It reads them with [`Config::from_written_json`], the writer's inverse,
//! which checks their shape and not these rules again (see `written.rs`).

mod auth_failure;
mod auth_type;
mod diff;
mod push;
mod read;
mod routes;
mod write;
mod written;

use crate::strategy::Strategy;
pub use auth_failure::{
    rule_check, AuthFailureRule, FailureCheck, FailureResponse, HeaderRule, JsonFieldRule,
};
pub use auth_type::AuthType;
pub use diff::ConfigDifference;
pub use push::{PushConfig, PushNotification, PushRefusal};
use read::{check_path, invalid, Noted, Object, MAX_SAFE_INTEGER};
pub use routes::SwRoutes;
use serde::Serialize;

/// The conventional file name of the config.
pub const CONFIG_FILE_NAME: &str = "cachet.config.json";

/// The whole of `cachet.config.json`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Config {
    /// `features`: auth and GraphQL.
    pub features: Features,
    /// `strategy`: default caching strategies.
    pub strategy: StrategyConfig,
    /// `cache`: bounds of the runtime cache.
    pub cache: CacheBounds,
    /// `queue`: bounds of the offline mutation queue.
    pub queue: QueueBounds,
}

impl PartialEq for Config {
    /// Field by field, as the derive compares, but one function: a page compares configs in three places
    /// (the provider's props and its memo, the worker's answer), and the derive's `eq`, inlined into
    /// each, was three copies in its wasm. The destructuring names every field: a new one does not
    /// compile until it is compared.
    #[inline(never)]
    fn eq(&self, other: &Self) -> bool {
        let Config { features, strategy, cache, queue } = self;
        *features == other.features
            && *strategy == other.strategy
            && *cache == other.cache
            && *queue == other.queue
    }
}

/// `features`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Features {
    /// `features.auth`.
    pub auth: AuthConfig,
    /// `features.graphql`.
    pub graphql: GraphqlConfig,
    /// `features.push`: server push (SPEC §5.8).
    pub push: PushConfig,
}

/// `features.auth`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthConfig {
    /// Whether the auth layer is on.
    pub enabled: bool,
    /// `type`: how the app authenticates.
    #[serde(rename = "type")]
    pub kind: AuthType,
    /// Paths that bypass the Service Worker cache.
    pub route_paths: Vec<String>,
    /// What counts as an auth failure.
    pub failure: AuthFailureRule,
}

/// `features.graphql`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphqlConfig {
    /// Whether the GraphQL layer is on.
    pub enabled: bool,
    /// Endpoint paths; index 0 is the default `endpointIndex`.
    pub endpoints: Vec<String>,
    /// `honorNoStore`: a server's `Cache-Control: no-store` on a query's answer binds (advisory by
    /// default, see [`crate::engine::plan`]).
    #[serde(rename = "honorNoStore")]
    pub honor_no_store: bool,
    /// `persistedQueries`: the endpoints whose queries the worker sends as persisted-query hashes.
    #[serde(rename = "persistedQueries")]
    pub persisted_queries: PersistedQueries,
}

/// `features.graphql.persistedQueries`: automatic persisted queries, negotiated by the Service Worker
/// ([`crate::graphql::persisted`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistedQueries {
    /// Endpoint paths (each one of `features.graphql.endpoints`) whose queries go as hashes; none: off.
    pub endpoints: Vec<String>,
    /// The longest URL a hashed query the server is known to hold may go as, with `GET` (so that an HTTP
    /// cache in front of the server can answer it); `0`: always `POST`.
    pub get_max_url_length: u32,
}

impl GraphqlConfig {
    /// The persisted-query settings of the endpoint at `index`, when its queries go as hashes.
    pub fn persisted(&self, index: usize) -> Option<&PersistedQueries> {
        let endpoint = self.endpoints.get(index)?;
        self.persisted_queries.endpoints.contains(endpoint).then_some(&self.persisted_queries)
    }
}

/// `strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StrategyConfig {
    /// For cacheable GET requests.
    pub default: Strategy,
    /// For GraphQL queries.
    pub graphql: Strategy,
}

/// `cache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheBounds {
    /// Most entries kept; the oldest are evicted first.
    pub max_entries: u32,
    /// Entries older than this are not served.
    pub max_age_seconds: u64,
    /// Responses larger than this are not stored.
    pub max_body_bytes: u64,
    /// How long past `max_age_seconds` an entry may still answer in place of a failure (stale-if-error);
    /// a stored answer's own `Cache-Control: stale-if-error=N` can make it longer.
    pub stale_if_error_seconds: u64,
}

/// `queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueBounds {
    /// Most queued mutations.
    pub max_items: u32,
    /// Sends per mutation before it is dead-lettered.
    pub max_attempts: u32,
    /// First retry delay.
    pub backoff_base_ms: u64,
    /// Longest retry delay.
    pub backoff_max_ms: u64,
}

/// `cachet.config.json` could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not JSON.
    #[error("{CONFIG_FILE_NAME} is not valid JSON (line {line}, column {column}): {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// A value is not allowed; `path` is the dotted JSON path (`(root)` for the document).
    #[error("{path}: {message}")]
    Invalid {
        /// Where, e.g. `features.auth.type`.
        path: String,
        /// What was expected and what was found.
        message: String,
    },
}

/// The default auth route paths.
pub const DEFAULT_ROUTE_PATHS: [&str; 4] = ["/api/login", "/api/logout", "/api/refresh", "/api/me"];
/// The default GraphQL endpoints.
pub const DEFAULT_ENDPOINTS: [&str; 1] = ["/graphql"];

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            enabled: false,
            kind: AuthType::Cookie,
            route_paths: DEFAULT_ROUTE_PATHS.iter().map(|path| (*path).to_owned()).collect(),
            failure: AuthFailureRule::default(),
        }
    }
}

impl Default for GraphqlConfig {
    fn default() -> Self {
        GraphqlConfig {
            enabled: false,
            endpoints: DEFAULT_ENDPOINTS.iter().map(|path| (*path).to_owned()).collect(),
            honor_no_store: false,
            persisted_queries: PersistedQueries::default(),
        }
    }
}

impl Default for StrategyConfig {
    fn default() -> Self {
        StrategyConfig { default: Strategy::NetworkFirst, graphql: Strategy::CacheFirst }
    }
}

impl Default for CacheBounds {
    fn default() -> Self {
        CacheBounds {
            max_entries: 200,
            max_age_seconds: 86_400,
            max_body_bytes: 1_048_576,
            stale_if_error_seconds: 0,
        }
    }
}

impl Default for QueueBounds {
    fn default() -> Self {
        QueueBounds { max_items: 100, max_attempts: 5, backoff_base_ms: 1_000, backoff_max_ms: 60_000 }
    }
}

const STRATEGY_NAMES: [&str; 6] = Strategy::NAMES;

impl Config {
    /// Reads and validates the text of `cachet.config.json`.
    pub fn from_json_str(text: &str) -> Result<Config, ConfigError> {
        let value = crate::json::from_str(text).map_err(|error| syntax_error(text, &error))?;
        Config::from_json_value(&value)
    }

    /// Validates an already parsed JSON document. The checks run in this order, and the error is the first
    /// one found (each read notes its error and goes on: see `read::Noted`).
    pub fn from_json_value(value: &crate::json::Value) -> Result<Config, ConfigError> {
        let noted = Noted::default();
        let mut config = Config::default();
        let root =
            Object::new(&noted, String::new(), Some(value), &["features", "strategy", "cache", "queue"]);
        let features = root.child("features", &["auth", "graphql", "push"]);
        let auth = features.child("auth", &["enabled", "type", "routePaths", "failure"]);
        let graphql =
            features.child("graphql", &["enabled", "endpoints", "honorNoStore", "persistedQueries"]);
        let persisted = graphql.child("persistedQueries", &["endpoints", "getMaxUrlLength"]);
        PushConfig::read(&features.child("push", &["enabled", "notification"]), &mut config.features.push);
        let strategy = root.child("strategy", &["default", "graphql"]);
        let cache =
            root.child("cache", &["maxEntries", "maxAgeSeconds", "maxBodyBytes", "staleIfErrorSeconds"]);
        let queue = root.child("queue", &["maxItems", "maxAttempts", "backoffBaseMs", "backoffMaxMs"]);

        let gql = &mut config.features.graphql;
        graphql.strings("endpoints", &mut gql.endpoints, check_path);
        if gql.endpoints.is_empty() {
            graphql.wrong("endpoints", "expected at least one endpoint path, got []".to_owned());
        }
        persisted.strings("endpoints", &mut gql.persisted_queries.endpoints, check_path);
        let outside =
            gql.persisted_queries.endpoints.iter().position(|endpoint| !gql.endpoints.contains(endpoint));
        if let Some(index) = outside {
            noted.note(invalid(
                &format!("features.graphql.persistedQueries.endpoints[{index}]"),
                format!(
                    "expected one of features.graphql.endpoints ({}), got {}",
                    gql.endpoints.join(", "),
                    crate::json::quoted(&gql.persisted_queries.endpoints[index])
                ),
            ));
        }
        let bounds = &mut config.queue;
        queue.small("maxItems", &mut bounds.max_items, 1, 100_000);
        queue.small("maxAttempts", &mut bounds.max_attempts, 1, 1_000);
        queue.integer("backoffBaseMs", &mut bounds.backoff_base_ms, 1, MAX_SAFE_INTEGER);
        queue.integer("backoffMaxMs", &mut bounds.backoff_max_ms, 1, MAX_SAFE_INTEGER);
        if bounds.backoff_max_ms < bounds.backoff_base_ms {
            queue.wrong(
                "backoffMaxMs",
                format!(
                    "expected at least queue.backoffBaseMs ({}), got {}",
                    bounds.backoff_base_ms, bounds.backoff_max_ms
                ),
            );
        }
        let auth_config = &mut config.features.auth;
        auth.bool("enabled", &mut auth_config.enabled);
        auth.one_of("type", &mut auth_config.kind, &["cookie", "bearer", "custom"]);
        auth.strings("routePaths", &mut auth_config.route_paths, check_path);
        AuthFailureRule::read(
            &auth.child("failure", &["statuses", "header", "jsonField"]),
            &mut auth_config.failure,
        );
        let gql = &mut config.features.graphql;
        graphql.bool("enabled", &mut gql.enabled);
        graphql.bool("honorNoStore", &mut gql.honor_no_store);
        persisted.small("getMaxUrlLength", &mut gql.persisted_queries.get_max_url_length, 0, 65_536);
        strategy.one_of("default", &mut config.strategy.default, &STRATEGY_NAMES);
        strategy.one_of("graphql", &mut config.strategy.graphql, &STRATEGY_NAMES);
        let bounds = &mut config.cache;
        cache.small("maxEntries", &mut bounds.max_entries, 1, 1_000_000);
        cache.integer("maxAgeSeconds", &mut bounds.max_age_seconds, 1, MAX_SAFE_INTEGER);
        cache.integer("maxBodyBytes", &mut bounds.max_body_bytes, 1, MAX_SAFE_INTEGER);
        cache.integer("staleIfErrorSeconds", &mut bounds.stale_if_error_seconds, 0, MAX_SAFE_INTEGER);
        noted.result(config)
    }

    /// The config as pretty JSON with every key written out; [`Config::from_json_str`] reads it back equal.
    pub fn to_json_pretty(&self) -> String {
        // Serialising plain structs of strings, numbers and JSON values into a String cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The auth-failure rule in force: `features.auth.failure` while auth is enabled, else none (no
    /// answer is then an auth failure). Both edges give every answer this verdict before storing it.
    pub fn auth_failure_rule(&self) -> Option<&AuthFailureRule> {
        self.features.auth.enabled.then_some(&self.features.auth.failure)
    }

    /// Whether a request path is an auth route: auth is enabled and the path equals a route path or
    /// continues it with `/` (`/api/me/avatar` is under `/api/me`). The query string is ignored.
    pub fn is_auth_route(&self, path: &str) -> bool {
        let path = strip_query(path);
        self.features.auth.enabled
            && self.features.auth.route_paths.iter().any(|route| path_is_under(path, route))
    }

    /// The index of the GraphQL endpoint a request path targets (exact match, query string ignored), when
    /// GraphQL is enabled.
    pub fn graphql_endpoint_index(&self, path: &str) -> Option<usize> {
        let path = strip_query(path);
        let graphql = &self.features.graphql;
        graphql.enabled.then(|| graphql.endpoints.iter().position(|endpoint| endpoint == path)).flatten()
    }
}

impl<'de> serde::Deserialize<'de> for Config {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = crate::json::Value::deserialize(deserializer)?;
        Config::from_json_value(&value).map_err(serde::de::Error::custom)
    }
}

/// The JSON reader's `error` in `text`, with the line and column (1-based, in bytes) of the byte where
/// it stopped.
fn syntax_error(text: &str, error: &crate::json::Error) -> ConfigError {
    let before = &text.as_bytes()[..error.at.min(text.len())];
    let line_start = before.iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
    let line = before.iter().filter(|byte| **byte == b'\n').count() + 1;
    let column = before.len() - line_start + 1;
    ConfigError::Syntax { line, column, message: format!("{} at line {line} column {column}", error.what) }
}

fn strip_query(path: &str) -> &str {
    path.split(['?', '#']).next().unwrap_or(path)
}

fn path_is_under(path: &str, route: &str) -> bool {
    path.strip_prefix(route)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || route.ends_with('/'))
}
