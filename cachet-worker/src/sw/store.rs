//! The Service Worker's store: Cache Storage for the answers, the IndexedDB entry index
//! ([`TagIndex`]) for their tags and last use. `CacheStore` is the engine runner's
//! [`cachet_core::engine::Store`] here; the sweep after an invalidation, clear-all and the retirement of
//! old caches delete through the same helpers.
//!
//! Invalidation is by generations ([`cachet_core::generations`], [`super::generations`]): every stored
//! response carries `X-Cachet-Generation` (the clock when its request began, and its tags), a lookup
//! whose entry is not current finds nothing, and [`super::invalidate::invalidate_tags`] only bumps its tags' generations
//! before it answers; the stale entries are deleted afterwards ([`super::sweep`]).

use std::rc::Rc;

use cachet_core::devtools::EntryDetails;
use cachet_core::engine::key::{CACHES, RETIRED_CACHES};
use cachet_core::engine::{EntryKey, Fetched, Hit, Invalidations, Store, Stored};
use cachet_core::generations::{stamp_header, GENERATION_HEADER};
use cachet_core::strategy::Strategy;
use js_sys::Promise;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Cache, Response};

use super::http::{await_js, body_bytes, rebuild, remark, SOURCE_HEADER};
use super::tag_index::TagIndex;
use crate::Error;

use cachet_core::protocol::headers::STORED_AT_HEADER;

/// One job's store: Cache Storage (a lookup names the entry's cache, a store opens it) and the worker's
/// entry index.
pub(crate) struct CacheStore {
    pub(crate) index: Rc<TagIndex>,
    /// Keeps background work (marking an entry used) alive: `FetchEvent.waitUntil`.
    pub(crate) background: Rc<dyn Fn(Promise)>,
    /// What devtools show of a stored entry: the request's URL and body, and the strategy.
    pub(crate) request_url: String,
    pub(crate) body: Option<Rc<[u8]>>,
    pub(crate) strategy: Strategy,
    /// [`invalidations_begun`] when the job began, before it asked the network.
    pub(crate) begun: u64,
    /// The generations' clock when the job began ([`super::generations::loaded`]): what its entry records.
    pub(crate) generation: u64,
}

impl Store<Response, Error> for CacheStore {
    /// The stored response marked `X-Cachet-Source: cache`, with its body bytes when `read_body`
    /// (stale-while-revalidate compares them with the fresh copy). Without `read_body` the stored body is
    /// handed on as a stream, never copied into wasm and back: that copy was most of a hit's time beyond
    /// Workbox's (BENCHMARKS.md, "where the time goes").
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<Response>>, Error> {
        // One call into Cache Storage, as Workbox makes: `caches.match` with the cache's name, rather than
        // `caches.open` and then `cache.match` (BENCHMARKS.md, "Hits: where the time goes").
        let options = web_sys::CacheQueryOptions::new();
        let _ = js_sys::Reflect::set(&options, &"cacheName".into(), &entry.cache.into());
        let found =
            await_js("caches.match", cache_storage()?.match_with_str_and_options(&entry.url, &options))
                .await?;
        let Ok(stored) = found.dyn_into::<Response>() else {
            return Ok(None);
        };
        let headers = stored.headers();
        let header = |name: &str| headers.get(name).ok().flatten();
        // An invalidated entry (or one without a readable stamp) is absent: the network answers, and
        // its answer replaces it. Memory only: the generations were loaded when the job began.
        if !super::generations::is_current_stamp(header(GENERATION_HEADER).as_deref()) {
            return Ok(None);
        }
        let stored_at = header(STORED_AT_HEADER).and_then(|at| at.parse::<u64>().ok());
        let marked = [(SOURCE_HEADER, "cache")];
        if !read_body {
            // Stored marked (see `store`): handed on as the cache gave it, the browser's own body, as
            // Workbox does. An entry stored before the mark is wrapped in a response that says it.
            if header(SOURCE_HEADER).as_deref() == Some("cache") {
                return Ok(Some(Hit { response: stored, stored_at, body: None }));
            }
            return Ok(Some(Hit { response: remark(&stored, &marked)?, stored_at, body: None }));
        }
        let bytes = body_bytes(&stored).await?;
        Ok(Some(Hit { response: rebuild(&stored, &bytes, &marked)?, stored_at, body: Some(bytes) }))
    }

    /// Records the answer in the entry index with its tags, stores it, and evicts the least recently
    /// used entries of its cache beyond `keep`.
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<Response>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        // The writes first, then the cache: a cache opened before a clear-all's deletion and written
        // after it would take the answer out of sight while its record stays (RELIABILITY.md).
        let _writing = exclusive_writes().await;
        let cache = &open_cache(entry.cache).await?;
        // Marked `X-Cachet-Source: cache` as stored, so that a hit needs no new response around it.
        let stamp = stamp_header(self.generation, tags);
        let stored_at = now.to_string();
        let marks = [
            (STORED_AT_HEADER, stored_at.as_str()),
            (GENERATION_HEADER, stamp.as_str()),
            (SOURCE_HEADER, "cache"),
        ];
        let stored = rebuild(&fetched.response, &fetched.body, &marks)?;
        let size = fetched.body.len() as u64;
        let details = EntryDetails::describe(&self.request_url, self.body.as_deref(), size, self.strategy);
        // The record before the entry: a worker stopped between the two leaves a record without its
        // entry (a miss, stored again), never an entry that no invalidation can find (RELIABILITY.md).
        self.index.record_with(&entry.url, entry.cache, tags, self.generation, now, &details).await?;
        let outcome = match put_or_evict_and_retry(cache, &self.index, entry, &stored).await {
            // An invalidation of its tags that began while this answer was on its way may have missed it
            // (its record not yet written) and the answer may predate the change: it is not kept.
            Ok(true) if invalidated_since(self.begun, tags) => Ok(Stored::Overtaken),
            Ok(true) => Ok(Stored::Kept),
            Ok(false) => Ok(Stored::Full),
            Err(error) => Err(error),
        };
        if !matches!(outcome, Ok(Stored::Kept)) {
            // Not stored: neither an earlier entry at this URL nor the new record may stay.
            forget(cache, &self.index, std::slice::from_ref(&entry.url)).await?;
            return outcome;
        }
        let evicted = self.index.beyond(entry.cache, keep).await?;
        forget(cache, &self.index, &evicted).await?;
        Ok(Stored::Kept)
    }

    /// Marks the entry used in the index, in the background, at most once per [`TOUCH_EVERY_MS`].
    fn used(&self, entry: &EntryKey, now: u64) {
        if touch_due(&entry.url, now) {
            let (index, url) = (self.index.clone(), entry.url.clone());
            super::http::after_answer(&*self.background, Box::pin(async move {
                index.touch(&url, now).await.map_err(JsValue::from)?;
                Ok(JsValue::UNDEFINED)
            }));
        }
    }
}

thread_local! {
    /// When this worker instance last marked each entry used within the last [`TOUCH_EVERY_MS`] (see
    /// [`touch_due`]). A list, scanned: the entries hit within one window are few, and a `HashMap` (its
    /// SipHash and hashbrown's table) cost the start module's wasm 4 KB for them.
    static TOUCHED: std::cell::RefCell<Vec<(String, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A hit marks its entry used in the entry index at most once per this many milliseconds.
pub const TOUCH_EVERY_MS: u64 = 10_000;
/// How many marks of the last window are remembered: past it, a hit marks again.
const TOUCHED_REMEMBERED: usize = 4_096;

/// Whether a hit on `url` at `now` should mark the entry used: not when this worker instance marked it
/// less than [`TOUCH_EVERY_MS`] ago. Least-recently-used eviction is then exact to that window only, and
/// a hot entry costs one IndexedDB write per window instead of one per hit (the write was the largest
/// part of a hit's wall time in BENCHMARKS.md). Memory only speeds this up: a restarted worker marks again.
pub(crate) fn touch_due(url: &str, now: u64) -> bool {
    TOUCHED.with(|touched| {
        let mut touched = touched.borrow_mut();
        touched.retain(|(_, at)| now.saturating_sub(*at) < TOUCH_EVERY_MS);
        if touched.iter().any(|(marked, _)| marked == url) {
            return false;
        }
        if touched.len() < TOUCHED_REMEMBERED {
            touched.push((url.to_owned(), now));
        }
        true
    })
}

/// Removes the entries at `urls` from `cache` (every delete issued at once), then from the entry index.
/// Cache entries go first: if the index update fails, the index names entries that are already gone,
/// which is harmless.
pub(crate) async fn forget(cache: &Cache, index: &TagIndex, urls: &[String]) -> Result<(), Error> {
    if !urls.is_empty() {
        let deletes: js_sys::Array = urls.iter().map(|url| cache.delete_with_str(url)).collect();
        await_js("cache.delete", Promise::all(&deletes)).await?;
    }
    index.remove(urls).await
}

/// The `CacheStorage` of the current global (`self.caches`).
pub fn cache_storage() -> Result<web_sys::CacheStorage, Error> {
    js_sys::Reflect::get(&js_sys::global(), &"caches".into())
        .ok()
        .and_then(|v| v.dyn_into::<web_sys::CacheStorage>().ok())
        .ok_or(Error::Context("CacheStorage is not available here"))
}

/// Opens (creating if needed) a cache of the worker's `CacheStorage`.
pub async fn open_cache(name: &str) -> Result<Cache, Error> {
    let cache = await_js("caches.open", cache_storage()?.open(name)).await?;
    Ok(cache.unchecked_into())
}

/// Stores `stored` at `entry`. When storage is full (`QuotaExceededError`), evicts the least recently
/// used half of the entry's cache and tries once more; when that fails too, the answer is passed on
/// without being stored (`false`). Nothing else is touched: the entry index and the mutation queue live in
/// IndexedDB and are never evicted for room.
async fn put_or_evict_and_retry(
    cache: &Cache,
    index: &TagIndex,
    entry: &EntryKey,
    stored: &Response,
) -> Result<bool, Error> {
    let put = |response: Response| {
        let promise = cache.put_with_str(&entry.url, &response);
        async move { await_js("cache.put", promise).await }
    };
    // Keep a copy for the second attempt: a response body can be read once.
    let second = stored.clone().map_err(|e| Error::js("Response.clone", e))?;
    match put(Clone::clone(stored)).await {
        Ok(_) => return Ok(true),
        Err(Error::Js { name, .. }) if name == "QuotaExceededError" => {}
        Err(other) => return Err(other),
    }
    evict_half(cache, index, entry.cache).await?;
    // Refused again: the engine says it (`Stored::Full`, a warning naming the entry).
    Ok(put(second).await.is_ok())
}

/// Evicts the least recently used half (rounded up) of the cache named `name`: what storage-full makes
/// room with, for a store and for a queue write (the caller holds [`exclusive_writes`]).
pub(crate) async fn evict_half(cache: &Cache, index: &TagIndex, name: &str) -> Result<(), Error> {
    let entries = index.beyond(name, 0).await?;
    forget(cache, index, &entries[..entries.len() - entries.len() / 2]).await
}

/// See [`exclusive_writes`]. A worker is one thread: `Sync` is only the static's requirement.
static WRITES: futures::lock::Mutex<()> = futures::lock::Mutex::new(());

/// Held by every write of this worker instance that spans the entry index and Cache Storage (a store,
/// an invalidation, an eviction for room, a clear-all, the retirement of old caches), for its whole
/// length: IndexedDB runs its writes one at a time anyway, and two of them interleaved could leave an
/// entry whose record the other removed (an entry no invalidation finds: RELIABILITY.md).
pub(crate) async fn exclusive_writes() -> futures::lock::MutexGuard<'static, ()> {
    WRITES.lock().await
}

/// Makes room when a queue write met a full storage: the least recently used half of every cache goes
/// (the queue itself and the index are never evicted for room).
pub(crate) async fn make_room() -> Result<(), Error> {
    let _writing = exclusive_writes().await;
    let index = super::tag_index::shared().await?;
    for name in CACHES {
        evict_half(&open_cache(name).await?, &index, name).await?;
    }
    Ok(())
}

/// Removes `entries` (`(url, cache)`) from their caches (every delete issued at once), then from the
/// index. A record naming a cache cachet no longer stores in is only forgotten. The caller holds
/// [`exclusive_writes`].
pub(crate) async fn forget_entries(index: &TagIndex, entries: &[(String, String)]) -> Result<(), Error> {
    let deletes = js_sys::Array::new();
    for name in CACHES {
        if entries.iter().any(|(_, cache)| cache == name) {
            let cache = open_cache(name).await?;
            for (url, _) in entries.iter().filter(|(_, cache)| cache == name) {
                deletes.push(&cache.delete_with_str(url));
            }
        }
    }
    await_js("cache.delete", Promise::all(&deletes)).await?;
    let urls: Vec<String> = entries.iter().map(|(url, _)| url.clone()).collect();
    index.remove(&urls).await
}

/// Deletes the caches of earlier versions ([`RETIRED_CACHES`]: their entries can no longer be named by
/// any request) and their index records. Run on activation.
pub async fn retire_old_caches(index: &TagIndex) -> Result<(), Error> {
    let _writing = exclusive_writes().await;
    let storage = cache_storage()?;
    for name in RETIRED_CACHES {
        let urls = index.beyond(name, 0).await?;
        index.remove(&urls).await?;
        await_js("caches.delete", storage.delete(name)).await?;
    }
    Ok(())
}

thread_local! {
    /// The invalidations this worker instance began. A stopped worker's stores die with it, so what
    /// began in another instance never matters.
    static INVALIDATIONS: std::cell::RefCell<Invalidations> = std::cell::RefCell::default();
}

/// The number of the last invalidation this worker instance began (a job notes it before it asks the
/// network).
pub fn invalidations_begun() -> u64 {
    INVALIDATIONS.with(|log| log.borrow().begun())
}

/// Notes that an invalidation of `tags` (`None`: everything, a clear-all) begins.
pub(crate) fn note_invalidation(tags: Option<&[String]>) {
    INVALIDATIONS.with(|log| log.borrow_mut().note(tags))
}

/// Whether an invalidation begun after number `since` covers an entry tagged `tags`.
fn invalidated_since(since: u64, tags: &[String]) -> bool {
    INVALIDATIONS.with(|log| log.borrow().since(since, tags))
}
