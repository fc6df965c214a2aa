//! cachet in one dependency.
//!
//! An app depends on this crate alone; `cachet init` writes the rest (the app's `src/cachet/` module, the
//! Service Worker and agent binaries, `index.html` and `Trunk.toml`). It exports what an app writes, and
//! nothing of cachet's inside:
//!
//! | path | from | what for |
//! |---|---|---|
//! | [`yew`] (feature `yew`, default) | `cachet-yew`, whole: its surface is the provider and the hooks | `<CachetProvider>`, the `use_cachet_*` hooks, `<CachetDevtools />` |
//! | [`client`] | `cachet-client` | the page client: [`client::Client`], its builder, options and results, the auth adapters, an injectable network |
//! | [`worker`] | `cachet-worker` | the Service Worker's entry points ([`worker::sw::install`], [`worker::sw::install_with`], the start module's [`worker::sw::install_start`], [`worker::sw::install_start_with`], [`worker::sw::Options`]) and the agent ([`worker::agent::register`], [`worker::agent::CachetAgent`]), and their allocator ([`worker::Allocator`]) |
//! | [`core`] | `cachet-core` | the config ([`core::config`]), the strategies, the header names an app reads or sends ([`core::protocol::headers`]) |
//! | [`yew_agent`] (feature `yew`) | `yew-agent` | yew-agent, for an app that registers the agent itself (`Registrable`) |
//! | [`serde`], [`serde_json`] | | what the generated modules use, so the app needs no dependency of its own for them |
//!
//! Features: `yew` (default), `queue` (default: the worker's offline mutation queue; an app that never
//! queues a mutation sets `default-features = false` and keeps `yew`, about 14 KB less gzipped wasm in
//! its worker), `devtools` (the panel in debug builds), `devtools-always` (in release
//! builds too), `auth` (the page client's auth: a config with `features.auth` on needs it), `push` (the
//! worker's push handler), `persisted-queries` (the worker's persisted-query negotiation: a config
//! listing `features.graphql.persistedQueries` endpoints needs it), `in-page-agent`
//! (`AgentMode::InPage`). `cachet init --trunk`, `cachet add auth` and `cachet add push` add the ones the
//! config needs; `cachet doctor` names a missing one.
//!
//! **wasm-bindgen.** The crates ask for `wasm-bindgen` 0.2.130 or any later 0.2 release (no exact pin):
//! the version in the app's `Cargo.lock` decides, and the `wasm-bindgen` CLI that builds the app (trunk
//! fetches the matching one unless told otherwise in `Trunk.toml`'s `[tools]`) must equal it.
#![deny(missing_docs)]

pub use serde;
pub use serde_json;

#[cfg(feature = "yew")]
pub use cachet_yew as yew;
#[cfg(feature = "yew")]
pub use yew_agent;

/// The page client: what an app calls, configures and implements.
pub mod client {
    pub use cachet_client::{
        default_adapter, AuthAdapter, AuthChangeKind, AuthData, AuthSnapshot, AuthState, BearerAdapter,
        Client, ClientBuilder, ClientEvent, ClientOptions, ConfigSource, CookieAdapter, Credentials, Error,
        EventStream, FetchFn, FetchOptions, FetchResult, GqlOptions, GqlResponse, Http, HttpRequest,
        HttpResponse, MutationResult, QueryResult, Subscription, SwEvent,
    };
}

/// The worker side's entry points.
pub mod worker {
    /// The Service Worker engine, as the app's worker binary starts it.
    pub mod sw {
        pub use cachet_worker::sw::{install, install_start, install_start_with, install_with, Options};
    }
    /// The yew-agent reactor the hooks talk to, and [`agent::register`], the whole `main` of the app's
    /// agent binary (with the codec `<CachetProvider>` speaks).
    pub mod agent {
        pub use cachet_worker::agent::{register, CachetAgent};
    }
    pub use cachet_worker::{allocator, Allocator, Error};
}

/// The rules' types an app names: its config, strategies, the auth-failure check, cachet's headers.
pub mod core {
    pub use cachet_core::Error;

    /// `cachet.config.json` and the auth-failure check (`src/cachet/auth/check.rs`).
    pub mod config {
        pub use cachet_core::config::{
            rule_check, AuthFailureRule, AuthType, CacheBounds, Config, ConfigError, FailureCheck,
            FailureResponse, HeaderRule, JsonFieldRule, QueueBounds,
        };
    }

    /// The caching strategies (`X-SW-Strategy`).
    pub mod strategy {
        pub use cachet_core::strategy::{Strategy, STRATEGY_HEADER};
    }

    /// The wire an app meets.
    pub mod protocol {
        pub use cachet_core::protocol::{AuthChangeKind, SwEvent};

        /// Every HTTP header cachet reads or writes (`X-Cachet-Source` on each answer, say).
        pub mod headers {
            pub use cachet_core::protocol::headers::*;
        }
    }
}
