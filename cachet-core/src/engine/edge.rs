//! The three small traits an edge implements for the runner ([`super::run()`]): where entries live
//! ([`Store`]), where answers come from ([`Network`]), and background work, the clock and announcements
//! ([`Host`]). The Service Worker implements them over Cache Storage, `fetch` and `waitUntil`; the page
//! with no worker over its memory cache, its HTTP client and `spawn_local`.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::protocol::SwEvent;

use super::key::EntryKey;
use super::response::{Fetched, Hit};

/// Where entries live.
#[allow(async_fn_in_trait)] // single-threaded wasm: no `Send` bound wanted
pub trait Store<R, E> {
    /// The entry at `entry`, with its body when `read_body`.
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<R>>, E>;
    /// Stores `fetched` at `entry` with `tags` (recorded for invalidation), stored at `now`, then keeps at
    /// most `keep` entries in `entry.cache`, least recently used evicted first; what became of it.
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<R>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, E>;
    /// A hit at `now` on `entry`: mark it used (least-recently-used eviction).
    fn used(&self, entry: &EntryKey, now: u64);
}

/// What became of a [`Store::store`] that did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Stored.
    Kept,
    /// Refused by the storage, full even after the store's own eviction.
    Full,
    /// Not kept: an invalidation of its tags, or a clear-all, began while the answer was on its way (it
    /// may predate the change). Said as a reason of its own, not as a full storage.
    Overtaken,
}

/// Where answers come from.
#[allow(async_fn_in_trait)]
pub trait Network<R, E> {
    /// Sends the request (again, for a retry or a background re-fetch) with `headers` set on it (the
    /// plugins' `request_will_fetch`), and reads the answer.
    async fn fetch(&self, headers: &[(String, String)]) -> Result<Fetched<R>, E>;
    /// Called with `true` as this request begins to wait for another's send it joined (`flights`), and
    /// with `false` once that wait is over: a wait on the network, as [`Network::fetch`]'s is (the
    /// worker's start module does not count it as its work, so that the whole engine may take over
    /// meanwhile). Two calls rather than an `async` wrapper around the wait: a wrapper is a state machine
    /// of its own in every edge's wasm.
    fn waits_joined(&self, _waits: bool) {}
    /// Whether `error` means the network could not be reached (network-first then falls back).
    fn unreachable(error: &E) -> bool;
    /// The same answer again, for another caller that shared its network call (`flights`): a response of
    /// its own, built from `fetched` (whose response's body may have been read by its first caller).
    fn answer_copy(&self, fetched: &Fetched<R>) -> Result<R, E>;
    /// Whether `error` hands the request to another engine rather than failing it (the worker's start
    /// module leaves an auth failure to the whole engine, which refreshes): the runner then gives it back
    /// as it is, never to the plugins' `handler_did_error`, whose answer in its place would end the
    /// request there. No edge but the start module's leaves any.
    fn leaves(_error: &E) -> bool {
        false
    }
}

/// Work in the background, the clock, announcements.
pub trait Host {
    /// Whether this edge runs a served entry's background re-fetch itself (stale-while-revalidate,
    /// cache-and-network, a stored `stale-while-revalidate=N`). The worker's start module does not: it
    /// links no re-fetch, and the runner marks the answer instead ([`super::Served::revalidate_left`]),
    /// which the edge hands to the engine that re-fetches (the whole engine runs the request again).
    const REVALIDATES: bool = true;
    /// Now, Unix milliseconds.
    fn now(&self) -> u64;
    /// Keeps `work` running after the answer is given (`waitUntil`, `spawn_local`).
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>);
    /// Tells every page (the worker's broadcast, the client's listeners).
    fn announce(&self, event: SwEvent);
    /// Reports something ignored (a console warning).
    fn warn(&self, message: &str);
    /// An answer decided for storing that the store did not keep, after it was given (a full storage,
    /// an invalidation that overtook it: [`Stored`]): said where the edge says why an answer was not
    /// stored. The answer's own `Storing` was decided before.
    fn not_stored(&self, url: &str, reason: &super::plan::NotStored);
}

impl<R, E, T: Store<R, E>> Store<R, E> for Rc<T> {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<R>>, E> {
        (**self).lookup(entry, read_body).await
    }
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<R>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, E> {
        (**self).store(entry, fetched, tags, keep, now).await
    }
    fn used(&self, entry: &EntryKey, now: u64) {
        (**self).used(entry, now)
    }
}

impl<T: Host> Host for Rc<T> {
    const REVALIDATES: bool = T::REVALIDATES;
    fn now(&self) -> u64 {
        (**self).now()
    }
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        (**self).background(work)
    }
    fn announce(&self, event: SwEvent) {
        (**self).announce(event)
    }
    fn warn(&self, message: &str) {
        (**self).warn(message)
    }
    fn not_stored(&self, url: &str, reason: &super::plan::NotStored) {
        (**self).not_stored(url, reason)
    }
}
