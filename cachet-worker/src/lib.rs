//! cachet's worker side: the Service Worker engine and the yew-agent worker.
//!
//! * [`sw`] is the Service Worker engine. It is written in Rust and loaded by a small, generic JavaScript
//!   shim (`service-worker.js`, which the CLI writes into each app from `cachet-cli/js/`) that adds the
//!   `install` / `activate` / `fetch` / `message` / `sync` listeners synchronously, as browsers require,
//!   and calls into the engine once its wasm has loaded. An app hosts it as a two-line binary:
//!
//!   ```no_run
//!   // src/bin/cachet-sw.rs of the app
//!   fn main() {
//!       cachet_worker::sw::install();
//!   }
//!   ```
//! * [`agent`] is the yew-agent reactor that mirrors the Service Worker's broadcast events to Yew
//!   components (through `cachet-yew`).
//!
//! Everything this crate decides comes from `cachet-core`; this crate only performs the effects with the
//! browser's APIs (Cache Storage, `fetch`, `BroadcastChannel`).
#![deny(missing_docs)]
// The examples show the `main` of the two binaries an app hosts: `fn main` is the point of them.
#![allow(clippy::needless_doctest_main)]

pub mod agent;
mod allocator;
pub mod error;
pub mod sw;

pub use allocator::{allocator, Allocator};
pub use error::Error;
