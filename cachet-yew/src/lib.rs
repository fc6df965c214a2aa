//! Yew components and hooks for cachet.
//!
//! Wrap the app in [`CachetProvider`]: it builds the page client ([`cachet_client::Client`]) from the
//! config, registers cachet's Service Worker and starts the agent hub (by default in a yew-agent worker)
//! that mirrors the Service Worker's events, the auth state and connectivity, and keeps the registry of
//! which query holds which tags. Components then use the hooks; each is a thin layer over the core's state machines:
//!
//! | Hook | Gives |
//! |---|---|
//! | [`use_cachet_auth`] | `{ authenticated, auth, online, set_auth, clear_auth }`, following every tab |
//! | [`use_cachet_gql`] | a GraphQL query: status × fetch status, data, error, `from_cache`, `refetch` |
//! | [`use_cachet_fetch`] | the same for any [`DataRequest`], REST or GraphQL, with [`RefetchOptions`] |
//! | [`use_cachet_mutation`] | a GraphQL mutation (`invalidate`, `queue_offline`) |
//! | [`use_cachet_query`], [`use_cachet_typed_mutation`] | the same, typed by `graphql_client`'s `#[derive(GraphQLQuery)]` (checked against the schema at compile time) |
//! | [`use_cachet_sw_event`] | the latest raw Service Worker event |
//! | [`use_cachet_client`] | the page client itself |
//!
//! [`CachetDevtools`] is a panel of what the Service Worker holds (entries, tags, queue, dead letters),
//! behind the cargo features `devtools` (debug builds) and `devtools-always` (see [`devtools`]).
//!
//! A query re-runs by itself when a `cache-invalidated` hits its tags, whoever caused it.
//!
//! # Where the agent hub runs: [`AgentMode`]
//!
//! The hub — one `cachet` BroadcastChannel listener, the online/offline listeners and the registry of
//! which query holds which tags (`cachet_worker::agent`) — runs in one of two places, chosen by the
//! provider's `agent` prop:
//!
//! - [`AgentMode::Worker`] (the default): a yew-agent worker, hosted by the app as a two-line binary that
//!   trunk builds with it. The hub's listeners and bookkeeping stay off the main thread, as the design asks.
//! - `AgentMode::InPage`, with the cargo feature `in-page-agent`: the same hub, serving the same protocol,
//!   in the page. For apps that cannot host a worker binary, pages without a bundler, and tests: a
//!   `wasm-bindgen-test` binary cannot start a yew-agent worker (its generated JS has no default wasm path
//!   and `#[wasm_bindgen(start)]` does not run there), so `cachet-yew/tests/hooks.rs` drives the hooks
//!   against the in-page hub. The feature is off by default: an app in the worker mode would otherwise
//!   carry the hub's code twice, in the agent's wasm and in its own (about 15 KB gzipped).
//!
//! Why two modes rather than a fake: both run the same code. The reactor in the worker is a one-line call
//! to `cachet_worker::agent::serve_bridge`, and the in-page mode calls it over an in-memory channel pair
//! per hook; the hooks reach either through one crate-private bridge (send an `AgentRequest`, hear
//! `AgentResponse`s) and do not know which one they talk to. What the in-page tests do not cover — the
//! worker transport itself — is covered by cachet-worker's `dedicated_worker` test (the hub in a real
//! dedicated worker) and by the end-to-end tests of the example app, built by trunk with its real agent
//! binary.
//!
//! ```no_run
//! use cachet_client::GqlOptions;
//! use cachet_yew::{use_cachet_gql, use_cachet_mutation, CachetProvider};
//! use yew::prelude::*;
//!
//! #[derive(Clone, PartialEq, serde::Deserialize)]
//! struct Todos { todos: Vec<serde_json::Value> }
//!
//! #[function_component]
//! fn TodoCount() -> Html {
//!     let todos = use_cachet_gql::<Todos>("query GetTodos { todos { id } }", None, GqlOptions::default());
//!     let add = use_cachet_mutation::<serde_json::Value>("mutation CreateTodo { createTodo { id } }", GqlOptions::default());
//!     let onclick = Callback::from(move |_| add.mutate(None)); // GetTodos re-runs: `todos` is hit
//!     html! { <p>{ todos.data.map(|data| data.todos.len()).unwrap_or_default() }<button {onclick}>{"+"}</button></p> }
//! }
//!
//! #[function_component]
//! fn App() -> Html {
//!     html! { <CachetProvider><TodoCount /></CachetProvider> }
//! }
//! ```
#![deny(missing_docs)]

mod agent_bridge;
pub mod devtools;
mod error;
mod polling;
mod provider;
mod query;
mod sw_registration;
mod use_cachet_auth;
mod use_cachet_client;
mod use_cachet_fetch;
mod use_cachet_gql;
mod use_cachet_mutation;
mod use_cachet_query;
mod use_cachet_sw_event;

pub use agent_bridge::AgentMode;
pub use cachet_core::machines::query::{FetchStatus, QueryStatus};
pub use devtools::CachetDevtools;
pub use error::Error;
#[cfg(feature = "test-support")]
pub use polling::testing;
pub use provider::{CachetContext, CachetProvider, CachetProviderProps, SwRegistration};
pub use query::{DataRequest, RefetchOptions, UseCachetQueryHandle};
pub use sw_registration::register_service_worker;
pub use use_cachet_auth::{use_cachet_auth, UseCachetAuthHandle};
pub use use_cachet_client::use_cachet_client;
pub use use_cachet_fetch::{use_cachet_fetch, use_cachet_fetch_suspense, UseCachetFetchHandle};
pub use use_cachet_gql::{use_cachet_gql, UseCachetGqlHandle};
pub use use_cachet_mutation::{use_cachet_mutation, MutationStatus, UseCachetMutationHandle};
pub use use_cachet_query::{
    use_cachet_query, use_cachet_query_suspense, use_cachet_query_with, use_cachet_typed_mutation,
    UseCachetTypedMutationHandle,
};
pub use use_cachet_sw_event::use_cachet_sw_event;
