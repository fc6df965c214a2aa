//! `<CachetDevtools />`: a small panel, collapsed to a corner button, that shows what cachet's Service
//! Worker holds and lets you steer it (TanStack Query Devtools' idea, for a worker's state).
//!
//! It shows one page of cached entries (request, short variables, partition, tags, size, stored and
//! last-used times, strategy; filter by tag, operation, partition), the tag index, the mutation queue
//! (pending, in flight, next retry, attempts) and the dead letters with their reason, the auth state and
//! online flag, and a live log of events with their times (`cache-invalidated`, `cache-updated`, auth
//! changes, queue events). Actions: invalidate a tag, drop an entry, replay the queue, retry or discard
//! a dead letter, clear all (the user stays signed in). Everything goes through the page client's
//! devtools calls (`cachet_client::devtools`); the worker decides nothing new for it.
//!
//! # Costs nothing unless asked for
//!
//! | cargo features of `cachet-yew` | `<CachetDevtools />` renders |
//! |---|---|
//! | neither | nothing (an empty component: the app pays nothing) |
//! | `devtools` | the panel in debug builds; nothing in release builds |
//! | `devtools-always` | the panel in every build (the example app turns it on to show it) |
//!
//! ```no_run
//! use cachet_yew::{CachetDevtools, CachetProvider};
//! use yew::prelude::*;
//!
//! #[function_component]
//! fn App() -> Html {
//!     html! { <CachetProvider><p>{ "my app" }</p><CachetDevtools /></CachetProvider> }
//! }
//! ```

#[cfg(any(feature = "devtools-always", all(feature = "devtools", debug_assertions)))]
mod model;
#[cfg(any(feature = "devtools-always", all(feature = "devtools", debug_assertions)))]
mod panel;
#[cfg(any(feature = "devtools-always", all(feature = "devtools", debug_assertions)))]
mod view;

use yew::prelude::*;

/// The devtools panel (see the module docs); place it inside `<CachetProvider>`.
#[function_component]
pub fn CachetDevtools() -> Html {
    #[cfg(any(feature = "devtools-always", all(feature = "devtools", debug_assertions)))]
    return html! { <panel::Panel /> };
    #[cfg(not(any(feature = "devtools-always", all(feature = "devtools", debug_assertions))))]
    Html::default()
}
