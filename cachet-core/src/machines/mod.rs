//! State machines as pure reducers: `reduce(state, event) -> (state, effects)`.
//!
//! The edges (Service Worker, page client, agent, hooks) feed events in and carry effects out; nothing in
//! here reads a clock, draws a random number or does I/O.

pub mod auth;
pub mod dead_letters;
pub mod query;
pub mod queue;
mod queue_json;
mod queue_model;
pub mod refresh;
pub mod registry;
