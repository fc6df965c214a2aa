//! Plugins: how an app changes what the engine does without forking it, on the hooks Workbox's
//! strategies offer, under the same names where they mean the same. The runner ([`super::run()`]) calls
//! them in both edges (the Service Worker and the page with no worker), in the order they were installed;
//! every hook has a default that changes nothing.
//!
//! | hook | when | what it may do |
//! |---|---|---|
//! | [`cache_key_will_be_used`](Plugin::cache_key_will_be_used) | before the store is read or written | change the entry's key (for instance drop a query parameter) |
//! | [`cached_response_will_be_used`](Plugin::cached_response_will_be_used) | a fresh entry is about to be served | replace it, or refuse it (`None`: it counts as absent) |
//! | [`request_will_fetch`](Plugin::request_will_fetch) | before each send (a retry too) | set request headers |
//! | [`fetch_did_succeed`](Plugin::fetch_did_succeed) | the network answered (any status) | ask for one more send ([`AfterFetch::Retry`], at most once per request) |
//! | [`fetch_did_fail`](Plugin::fetch_did_fail) | the network could not be reached | observe (the offline queue keeps the request here) |
//! | [`cache_will_update`](Plugin::cache_will_update) | the planner would store an answer | veto it ([`NotStored::Plugin`](super::NotStored::Plugin)); a plugin never stores what the planner refused |
//! | [`handler_did_error`](Plugin::handler_did_error) | the engine has no answer (unreachable, nothing cached) | answer instead |
//! | [`handler_will_respond`](Plugin::handler_will_respond) | last, before the answer leaves | replace it |
//!
//! Built on these hooks: the refresh-and-retry of an authenticated request (each edge's auth plugin:
//! `request_will_fetch` adds the fresh `Authorization`, `fetch_did_succeed` refreshes once and asks for
//! the retry) and the worker's offline queue for mutations (`fetch_did_fail` keeps the mutation,
//! `handler_did_error` answers the 202). [`CacheControl`] is one an app may add (an HTTP cache's reading of
//! `Cache-Control` on every answer).
//!
//! A plugin written over [`Message`] runs unchanged on both edges:
//!
//! ```
//! use cachet_core::engine::plugin::{Call, Message, Plugin};
//! use cachet_core::engine::{EntryKey, Fetched};
//!
//! /// Stores `/api/*` answers under their URL without the `utm_*` parameters, and never stores an answer
//! /// the server marked `X-Preview: 1`.
//! struct Tidy;
//!
//! impl<R: Message + 'static> Plugin<R> for Tidy {
//!     fn cache_key_will_be_used(&self, _call: &Call<'_>, mut entry: EntryKey) -> EntryKey {
//!         if let Some((path, query)) = entry.url.split_once('?') {
//!             let kept: Vec<&str> = query.split('&').filter(|pair| !pair.starts_with("utm_")).collect();
//!             entry.url = if kept.is_empty() { path.to_owned() } else { format!("{path}?{}", kept.join("&")) };
//!         }
//!         entry
//!     }
//!
//!     fn cache_will_update(&self, _call: &Call<'_>, fetched: &Fetched<R>) -> bool {
//!         fetched.response.header("x-preview").as_deref() != Some("1")
//!     }
//! }
//! ```
//!
//! Install it with `cachet_worker::sw::install_with(Options::new().plugin(Tidy))` in the worker binary
//! and `ClientBuilder::plugin(Tidy)` for the page.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use super::plan::Job;
pub use super::response::Message;
use super::response::{Fetched, Source};
use super::EntryKey;

/// The request a hook is called for.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// `GET` or `POST`.
    pub method: &'a str,
    /// The URL as the page asked for it.
    pub url: &'a str,
    /// What the planner decided for it; `None` for a request answered without a strategy (a mutation).
    pub job: Option<&'a Job>,
}

/// What follows an answer from the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFetch {
    /// The answer stands.
    Keep,
    /// Send the request once more (after `request_will_fetch` again): a refreshed token, say. A request
    /// is retried at most once; asked again, the second answer stands.
    Retry,
}

/// A future a hook returns: single-threaded (wasm), boxed so that plugins are objects.
pub type Later<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// The hooks, each with a default that changes nothing. `R` is the edge's response (a `web_sys::Response`
/// in the worker, the client's `HttpResponse` in the page); write `impl<R: Message + 'static> Plugin<R>` to run on
/// both.
pub trait Plugin<R: 'static> {
    /// The key the entry is read and written under.
    fn cache_key_will_be_used(&self, _call: &Call<'_>, entry: EntryKey) -> EntryKey {
        entry
    }

    /// A fresh stored entry about to be served: the entry (or a replacement), or `None` to treat it as
    /// absent.
    fn cached_response_will_be_used(&self, _call: &Call<'_>, cached: R) -> Option<R> {
        Some(cached)
    }

    /// Headers to set on the request about to be sent (`(name, value)`, added to `headers`).
    fn request_will_fetch(&self, _call: &Call<'_>, _headers: &mut Vec<(String, String)>) {}

    /// The network answered (any status); `retried`: this is the answer of the one retry.
    fn fetch_did_succeed<'a>(
        &'a self,
        _call: &'a Call<'a>,
        _fetched: &'a Fetched<R>,
        _retried: bool,
    ) -> Later<'a, AfterFetch> {
        Box::pin(std::future::ready(AfterFetch::Keep))
    }

    /// The network could not be reached.
    fn fetch_did_fail<'a>(&'a self, _call: &'a Call<'a>, _error: &'a dyn Display) -> Later<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The planner would store `fetched`: `false` keeps it out of the store.
    fn cache_will_update(&self, _call: &Call<'_>, _fetched: &Fetched<R>) -> bool {
        true
    }

    /// The engine has no answer (`error`): an answer instead, or `None`.
    fn handler_did_error<'a>(&'a self, _call: &'a Call<'a>, _error: &'a dyn Display) -> Later<'a, Option<R>> {
        Box::pin(std::future::ready(None))
    }

    /// The answer, from `source`, just before it is returned. A network answer may still be being stored
    /// (in the background): return a new response rather than changing this one's headers in place.
    fn handler_will_respond(&self, _call: &Call<'_>, response: R, _source: Source) -> R {
        response
    }

    /// Whether this plugin may change a network answer the page gets (`request_will_fetch`'s headers, a
    /// retry asked by `fetch_did_succeed`, `handler_will_respond`): `true` unless it says otherwise.
    /// While no plugin of the app's says `true`, the worker's shim hands a 2xx network answer of what the
    /// browser loads (a navigation, a script...) to the page without waiting for the engine ([`crate::config::SwRoutes::hands_over`]); the
    /// engine still runs on a copy, with every hook, and stores it.
    fn shapes_network_answers(&self) -> bool {
        true
    }

    /// Whether this plugin may change which stored answer a request gets, or how it looks
    /// (`cache_key_will_be_used`, `cached_response_will_be_used`, `handler_will_respond`): `true` unless it
    /// says otherwise. While no plugin of a request says `true`, the worker names a fresh cache-first hit
    /// for the shim ([`super::plan::served_alone_until`]), which then answers it on a stopped worker's
    /// start without the engine; a plugin that says `true` keeps every hit of its requests in the engine.
    fn shapes_cached_answers(&self) -> bool {
        true
    }
}

/// The plugins one request runs with, in order.
pub type Plugins<R> = Vec<Rc<dyn Plugin<R>>>;

/// Treats the server's `Cache-Control` as an HTTP cache would, on every answer: `no-store` is never
/// stored, a GraphQL document's included (the planner holds a document's `no-store` advisory unless
/// `features.graphql.honorNoStore`, and never stores `private` in the shared partition: see
/// [`super::plan`]); [`CacheControl::strict`] refuses `private` everywhere too, for an app whose server
/// marks per-user answers `private` without cachet's auth. Installed by no edge by default (the planner's
/// rule is the default); an app adds it with `Options::plugin` / `ClientBuilder::plugin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheControl {
    /// Refuse `private` answers as well.
    pub refuse_private: bool,
}

impl CacheControl {
    /// Refuses `no-store` and `private`.
    pub fn strict() -> Self {
        CacheControl { refuse_private: true }
    }

    /// Whether a `Cache-Control` value forbids storing.
    pub fn forbids(&self, cache_control: &str) -> bool {
        super::plan::has_directive(cache_control, "no-store")
            || (self.refuse_private && super::plan::has_directive(cache_control, "private"))
    }
}

impl<R: Message + 'static> Plugin<R> for CacheControl {
    fn cache_will_update(&self, _call: &Call<'_>, fetched: &Fetched<R>) -> bool {
        !fetched.cache_control.as_deref().is_some_and(|value| self.forbids(value))
    }

    /// It only keeps answers out of the store.
    fn shapes_network_answers(&self) -> bool {
        false
    }

    /// It never sees a stored answer.
    fn shapes_cached_answers(&self) -> bool {
        false
    }
}
