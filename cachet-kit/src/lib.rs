//! cachet in one dependency.
//!
//! An app depends on this crate alone; `cachet init` writes the rest (the app's `src/cachet/` module, the
//! Service Worker and agent binaries, `index.html` and `Trunk.toml`). It re-exports:
//!
//! | path | crate | what for |
//! |---|---|---|
//! | [`yew`] (feature `yew`, default) | `cachet-yew` | `<CachetProvider>`, the `use_cachet_*` hooks, `<CachetDevtools />` |
//! | [`client`] | `cachet-client` | the page client, `GqlOptions`, `FetchOptions`, `AuthData` |
//! | [`worker`] | `cachet-worker` | the Service Worker entry point (`worker::sw::install`) and the agent (`worker::agent::CachetAgent`) |
//! | [`core`] | `cachet-core` | config, strategies, protocol, the failure check's types |
//! | [`yew_agent`] (feature `yew`) | `yew-agent` | `Registrable`, for the agent binary |
//! | [`serde`], [`serde_json`] | | what the generated modules use, so the app needs no dependency of its own for them |
//!
//! Features: `yew` (default), `devtools` (the panel in debug builds), `devtools-always` (in release
//! builds too), `auth` (the page client's auth: a config with `features.auth` on needs it), `push` (the
//! worker's push handler), `in-page-agent` (`AgentMode::InPage`). `cachet init --trunk`, `cachet add auth`
//! and `cachet add push` add the ones the config needs; `cachet doctor` names a missing one.
//!
//! **wasm-bindgen.** The crates ask for `wasm-bindgen` 0.2.130 or any later 0.2 release (no exact pin):
//! the version in the app's `Cargo.lock` decides, and the `wasm-bindgen` CLI that builds the app (trunk
//! fetches the matching one unless told otherwise in `Trunk.toml`'s `[tools]`) must equal it.
#![deny(missing_docs)]

pub use cachet_client as client;
pub use cachet_core as core;
pub use cachet_worker as worker;
pub use serde;
pub use serde_json;

#[cfg(feature = "yew")]
pub use cachet_yew as yew;
#[cfg(feature = "yew")]
pub use yew_agent;
