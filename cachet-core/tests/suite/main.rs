//! The cachet-core test suite: one binary, one module per concern (data-driven tables and property tests).
#![allow(clippy::unwrap_used)]

mod cache_key;
mod classify;
mod config;
mod devtools_table;
mod engine_plugins;
mod engine_table;
mod fuzz;
mod generations;
mod graphql_oracle;
mod graphql_table;
mod handover;
mod machines_auth;
mod machines_dead_letters;
mod machines_query;
mod machines_queue;
mod machines_refresh;
mod machines_registry;
mod parity_scenarios;
mod persisted;
mod protocol_table;
mod push;
mod tags_table;
