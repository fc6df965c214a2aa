//! The engine: what happens to one request the core classified as answered with a strategy (a GET, a
//! GraphQL query), decided once here and carried out by the same runner in the Service Worker and in the
//! page when no worker controls it.
//!
//! - [`key`]: where an answer is stored (cache, entry URL), for both edges.
//! - [`plan`]: the decisions: first step, freshness, what follows a lookup or a network failure, whether
//!   an answer is stored and with which tags, what a background re-fetch announces.
//! - `commit`: the storing step: decided as the answer arrives, carried out after it is given.
//! - [`flights`]: one network call for every request of the same entry made while it runs.
//! - [`invalidations`]: the invalidations begun, which an answer stored after them may predate.
//! - [`edge`]: the [`Store`], [`Network`] and [`Host`] traits each edge implements for the runner.
//! - [`mutation`]: a GraphQL mutation's decisions (send or queue behind, its `Idempotency-Key`, which
//!   answers invalidate its tags, what a queued copy keeps); the runner sends it with [`mutate`].
//! - [`run`](mod@run): the runner over them.
//! - [`response`]: what moves between store, network and plugins ([`Hit`], [`Fetched`], [`Source`],
//!   [`Message`]).
//! - [`plugin`]: the hooks an app changes the engine with, and [`CacheControl`], installed by default.
//! - [`adopt`](mod@adopt): an answer fetched elsewhere (a page's hand-over) stored by the runner's storing step.

pub mod adopt;
mod commit;
pub mod edge;
pub mod flights;
pub mod invalidations;
pub mod key;
pub mod mutation;
pub mod plan;
pub mod plugin;
pub mod response;
pub mod run;

pub use adopt::adopt;
pub use commit::commit_decided;
pub use invalidations::Invalidations;
pub use key::EntryKey;
pub use mutation::{Mutation, MutationStart};
pub use plan::{Job, NotStored, Storing};
pub use plugin::{CacheControl, Call, Message, Plugin, Plugins};
pub use run::{
    mutate, outlined, pass, run, send, Failed, Fetched, Hit, Host, Mutated, Network, Runner, Served, Source,
    Store, Stored,
};
