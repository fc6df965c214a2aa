//! cachet's page client, free of Yew: what an app calls, in any Rust/wasm front end.
//!
//! - **Auth** (SPEC §2–§5), with the cargo feature `auth`: an [`AuthAdapter`] ([`CookieAdapter`],
//!   [`BearerAdapter`], or your own for `custom`), [`Client::set_auth`], [`Client::get_auth`],
//!   [`Client::clear_auth`], [`Client::clear_memory_auth`], [`Client::is_auth_valid`], [`Client::ensure_valid_auth`],
//!   [`Client::with_auth_headers`], [`Client::is_auth_url`], [`Client::auth_with_credentials`]
//!   (`AUTH_WITH_CREDENTIALS`), [`Client::get_auth_state`]. Headers are injected only for requests made
//!   with `auth: true`; an auth failure (THE check: [`Client::is_auth_failure_response`], the config's
//!   `features.auth.failure`, shared with the Service Worker) is refreshed once and retried once.
//! - **Data**: [`Client::fetch_with_cache`], [`Client::query_gql`], [`Client::mutate_gql`],
//!   [`Client::fetch_with_gql`], [`Client::invalidate_by_tag`]. Results say whether they came from a cache;
//!   errors say which of network, HTTP status, GraphQL `errors` or decoding failed ([`Error`]).
//! - **Devtools**: [`Client::devtools_snapshot`], [`Client::dead_letters`], [`Client::retry_dead_letters`],
//!   [`Client::discard_dead_letters`], [`Client::drop_entries`], [`Client::replay_queue`],
//!   [`Client::clear_caches`] ([`devtools`]).
//! - **Server push** (SPEC §5.8, cookie auth only): [`Client::subscribe_push`] with the server's VAPID
//!   key hands the app the subscription for its server, [`Client::unsubscribe_push`]; see [`push`].
//! - **Offline mutations** (`queueOffline`): the Service Worker keeps and replays them; with the cargo
//!   feature `queue` (which cachet-kit's defaults turn on) one tab also wakes the worker when the queue's
//!   head is due, for browsers without Background Sync (the queue alarm).
//! - **Events**: the SPEC §6 events fire on `window` (`sw-auth-state-change`, `cache-invalidated`,
//!   `cachet:cache-updated`), and Rust code subscribes with [`Client::subscribe`] or [`Client::events`].
//!
//! # With and without a Service Worker
//!
//! When cachet's Service Worker controls the page, requests go through it with cachet's headers and it
//! caches, invalidates and asks this client to refresh the token (the page is the single flight and the
//! only holder of the token). Before it controls (first visit, hard reload) the same calls work with the
//! same rules in the page: an in-memory cache following the same config, tags and invalidation,
//! refresh-and-retry. See [`pipeline`].
//!
//! # Across tabs
//!
//! A login, a refresh or a clear in one tab reaches every other tab of the origin, which fires
//! `sw-auth-state-change` with the same type ([`tabs`]). One refresh serves every tab: it runs under the
//! Web Lock `cachet-refresh`, and its result is shared over the `cachet-auth` channel ([`refresh`]).
//!
//! # Boxed futures
//!
//! The async methods of [`Client`] return their future boxed ([`futures::future::LocalBoxFuture`]),
//! made by a function that is not inlined: a crate that awaits one (cachet-yew, cachet-api, an app)
//! then polls it through its vtable, made here, instead of instantiating the client's state machines a
//! second time in its own code (without shared generics, which stable Rust lacks, every crate that
//! polls a state machine gets its own copy: 5.8 KB of the API's gzipped wasm, 16.8 KB of the example
//! app's; BENCHMARKS.md, session 27). Awaiting them reads as with `async fn`.
//!
//! # What is persisted
//!
//! The user and the expiry, in IndexedDB, never the token ([`auth_data`]).
//!
//! # Example
//!
//! ```no_run
//! use cachet_client::{AuthData, BearerAdapter, Client, GqlOptions};
//! use cachet_core::config::Config;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), cachet_client::Error> {
//! let config = Config::from_json_str(r#"{"features": {"auth": {"enabled": true, "type": "bearer"},
//!                                         "graphql": {"enabled": true}}}"#).map_err(cachet_core::Error::from)?;
//! let client = Client::builder().config(config).adapter(BearerAdapter::default()).build()?;
//!
//! // After the app's own login request:
//! let login = json!({ "token": "t1", "user": { "id": 7, "username": "ada" }, "expiresAt": 1_900_000_000_000_u64 });
//! client.set_auth(AuthData::from_json(login).unwrap_or_default()).await?;
//!
//! #[derive(serde::Deserialize)]
//! struct Todos { todos: Vec<serde_json::Value> }
//! let todos = client
//!     .query_gql::<Todos>("query GetTodos { todos { id title } }", None, GqlOptions::with_auth(true))
//!     .await?;
//! println!("{} todos, from cache: {}", todos.data.todos.len(), todos.from_cache);
//!
//! let _subscription = client.subscribe(|event| web_sys::console::log_1(&format!("{event:?}").into()));
//! client.clear_auth().await?; // every tab is logged out, every cache purged
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod adapter;
pub mod auth_data;
mod builder;
mod checks;
mod client;
pub mod config_sync;
mod dedup;
pub mod devtools;
mod error;
pub mod events;
mod fetch;
mod graphql;
mod handover;
mod http;
mod hub;
mod js;
pub mod json;
mod link;
mod listeners;
mod locks;
mod memory_cache;
mod page_engine;
pub mod pipeline;
pub mod push;
#[cfg(feature = "queue")]
mod queue_alarm;
mod settings;
mod transport;

// The auth part: present with the cargo feature `auth`, and a signed-out stand-in of the same shape
// without it; the auth calls of the façade with it. This is the feature's one seam: no other module of
// the crate asks which build it is in.
#[cfg(feature = "auth")]
mod auth;
#[cfg(feature = "auth")]
mod session;
#[cfg(not(feature = "auth"))]
#[path = "session_off.rs"]
mod session;
#[cfg(feature = "auth")]
pub use session::{refresh, tabs};

pub use adapter::{default_adapter, AuthAdapter, BearerAdapter, CookieAdapter};
pub use auth_data::{AuthData, AuthSnapshot};
pub use builder::ClientBuilder;
pub use cachet_core::config::{AuthType, Config};
pub use cachet_core::machines::auth::AuthState;
pub use cachet_core::protocol::{AuthChangeKind, SwEvent};
pub use cachet_core::strategy::Strategy;
pub use client::Client;
pub use config_sync::ConfigSource;
pub use error::Error;
pub use events::{ClientEvent, EventStream, Subscription};
pub use fetch::{FetchOptions, FetchResult};
pub use graphql::{GqlOptions, GqlResponse, MutationResult, QueryResult};
pub use http::{Credentials, FetchFn, Http, HttpRequest, HttpResponse};
pub use settings::ClientOptions;
