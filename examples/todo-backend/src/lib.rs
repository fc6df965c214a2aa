//! The cachet example todo app's backend: axum + async-graphql + embedded SQLite.
//!
//! It serves the built app (`dist`) with an SPA fallback, a cookie- or bearer-authenticated
//! REST API (`/api/login`, `/api/logout`, `/api/refresh`, `/api/me`, `/api/hello`), a GraphQL
//! endpoint (`/graphql`) whose todos are scoped per user and which honours `Idempotency-Key`
//! ([`idempotency`]), request counters,
//! server push to a user's other browsers after a change ([`push`]), and optional `/__test/*` hooks
//! for end-to-end tests.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let mut config = todo_backend::ServerConfig::new("data/todo.sqlite");
//! config.addr = "127.0.0.1:0".parse()?;
//! let server = todo_backend::start(config).await?;
//! println!("{}", server.url());
//! server.stop().await;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod app;
pub mod auth;
pub mod config;
pub mod counters;
pub mod db;
pub mod error;
pub mod fake_push_service;
pub mod graphql;
pub mod idempotency;
pub mod push;
pub mod push_send;
pub mod server;
pub mod static_files;
pub mod test_hooks;
pub mod todos;

pub use config::{AuthMode, ServerConfig, DEFAULT_TOKEN_TTL};
pub use server::{start, RunningServer};
