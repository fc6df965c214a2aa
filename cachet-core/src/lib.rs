//! The pure logic of cachet: every decision the Service Worker, the page client, the yew-agent worker and
//! the Yew hooks carry out is made here.
//!
//! This crate never touches `web-sys`, `js-sys` or `wasm-bindgen`, performs no I/O, reads no clock and
//! draws no random numbers: callers pass `now` (Unix milliseconds) and random numbers in. It is tested
//! natively with `cargo test -p cachet-core`.
//!
//! | Module | Concern |
//! |---|---|
//! | [`config`] | `cachet.config.json`: model, defaults, validation, the auth-failure rule |
//! | [`deploy`] | the files a deployed app serves for its Service Worker and agent (checked by `cachet doctor` and the provider) |
//! | [`strategy`] | the caching strategies named by `X-SW-Strategy` |
//! | [`graphql`] | is a body GraphQL; query, mutation or subscription; the operation name |
//! | [`tags`] | tags derived from operation names; the tag headers |
//! | [`json`] | JSON as cachet reads and writes it (the worker links no serde_json reader) |
//! | [`cache_key`] | SHA-256 cache keys over canonical variables; user partitions |
//! | [`classify`] | what the Service Worker does with one request |
//! | [`engine`] | every step of a cached request and of a mutation: keys, the planner, the runner both edges use |
//! | [`generations`] | invalidation by generations: whether a stored entry is current |
//! | [`partition`] | which user partition a request's entry lives in |
//! | [`handover`] | the first visit's answers, handed from the page to the worker that takes control |
//! | [`protocol`] | every message between page, Service Worker and agent, the wire headers and the worker's storage layout; it depends on no other module of this crate |
//! | [`push`] | what the Service Worker does with a server push |
//! | [`machines`] | auth, single-flight refresh, query status and mutation queue reducers |
//! | [`devtools`] | what a devtools snapshot shows of entries, the queue and the identity |
//!
//! ```
//! use cachet_core::classify::{classify_request, GraphqlAction, RequestClass};
//! use cachet_core::config::Config;
//!
//! let config = Config::from_json_str(r#"{"features": {"graphql": {"enabled": true}}}"#).unwrap();
//! let body = br#"{"query": "mutation CreateNote($t: String!) { createNote(text: $t) { id } }", "variables": {"t": "hi"}}"#;
//! let class = classify_request("POST", "/graphql", &|_: &str| None, Some(body), &config).unwrap();
//! let RequestClass::Graphql(call) = class else { panic!("a GraphQL request") };
//! assert_eq!(call.operation_name.as_deref(), Some("CreateNote"));
//! assert_eq!(call.action, GraphqlAction::Mutation { invalidate: vec!["note".into(), "notes".into()] });
//! ```
#![deny(missing_docs)]

pub mod cache_key;
pub mod classify;
pub mod config;
pub mod deploy;
pub mod devtools;
pub mod engine;
pub mod error;
pub mod generations;
pub mod graphql;
pub mod handover;
pub mod join;
pub mod json;
pub mod machines;
pub mod noted;
pub mod partition;
pub mod protocol;
pub mod push;
pub mod shared;
pub mod sort;
pub mod strategy;
pub mod tags;

pub use error::Error;
