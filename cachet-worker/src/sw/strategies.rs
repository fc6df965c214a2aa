//! The caching strategies, chosen per request by the `X-SW-Strategy` header (or the config's default).
//!
//! Every response the engine returns carries `X-Cachet-Source: cache` or `X-Cachet-Source: network`, so
//! any client (not only cachet's) can tell whether it was served from the cache.

use std::rc::Rc;

use cachet_core::config::CacheBounds;
use cachet_core::devtools::EntryDetails;
use cachet_core::graphql::result_is_cacheable;
use cachet_core::protocol::SwEvent;
use cachet_core::strategy::Strategy;
use cachet_core::tags::{merge_tags, parse_tag_list, CACHE_TAGS_HEADER};
use js_sys::Promise;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Cache, Request, Response};

use super::auth_retry::{send, AuthRetry};
use super::broadcast;
use super::http::{await_js, body_bytes, rebuild, remark, without_cachet_headers, SOURCE_HEADER};
use super::tag_index::TagIndex;
use crate::Error;

/// The header recording when a stored response was fetched (Unix milliseconds).
const STORED_AT_HEADER: &str = "x-cachet-stored-at";

/// What one request is answered and cached as.
#[derive(Debug, Clone)]
pub struct Target {
    /// The request as the page sent it. What goes to the network is built from it, and from `body`, only
    /// when the network is asked ([`Target::outgoing`]): a hit never pays for it.
    pub request: Request,
    /// The body of `request`, already read (a GraphQL POST); `None` for a GET.
    pub body: Option<Rc<[u8]>>,
    /// The Cache Storage key: the URL for a GET, a synthetic GET URL for a GraphQL query.
    pub cache_url: String,
    /// The name of the cache the entry lives in; `bounds.max_entries` applies to each cache.
    pub cache_name: &'static str,
    /// `cache.maxEntries`, `cache.maxAgeSeconds`, `cache.maxBodyBytes` of the config.
    pub bounds: CacheBounds,
    /// The entry index (tags, last use).
    pub index: Rc<TagIndex>,
    /// For a GraphQL document, its tags; such an entry is stored only when its body is a GraphQL result
    /// without `errors`. `None` for a plain GET.
    pub tags: Option<Vec<String>>,
    /// Refresh-and-retry for a request marked as authenticated while auth is enabled; `None` otherwise.
    pub auth: Option<AuthRetry>,
}

impl Target {
    /// A GET answered and cached by its own URL in the runtime cache.
    pub fn get(request: &Request, bounds: CacheBounds, index: Rc<TagIndex>) -> Result<Self, Error> {
        Ok(Target {
            request: Clone::clone(request),
            body: None,
            cache_url: request.url(),
            cache_name: super::RUNTIME_CACHE,
            bounds,
            index,
            tags: None,
            auth: None,
        })
    }

    /// What goes to the network: the request without cachet's headers, with `body` (so that it can be
    /// sent again).
    pub fn outgoing(&self) -> Result<Request, Error> {
        without_cachet_headers(&self.request, self.body.as_deref())
    }
}

thread_local! {
    static LAST_TIME: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// When this worker instance last marked each entry used (see [`touch_due`]).
    static TOUCHED: std::cell::RefCell<std::collections::HashMap<String, u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// A hit marks its entry used in the entry index at most once per this many milliseconds.
pub const TOUCH_EVERY_MS: u64 = 10_000;
/// How many recent marks are remembered before the old ones are dropped.
const TOUCHED_REMEMBERED: usize = 4_096;

/// Whether a hit on `url` at `now` should mark the entry used: not when this worker instance marked it
/// less than [`TOUCH_EVERY_MS`] ago. Least-recently-used eviction is then exact to that window only, and
/// a hot entry costs one IndexedDB write per window instead of one per hit (the write was the largest
/// part of a hit's wall time in BENCHMARKS.md). Memory only speeds this up: a restarted worker marks again.
fn touch_due(url: &str, now: u64) -> bool {
    TOUCHED.with(|touched| {
        let mut touched = touched.borrow_mut();
        if touched.get(url).is_some_and(|&at| now.saturating_sub(at) < TOUCH_EVERY_MS) {
            return false;
        }
        if touched.len() >= TOUCHED_REMEMBERED {
            touched.retain(|_, at| now.saturating_sub(*at) < TOUCH_EVERY_MS);
        }
        if touched.len() < TOUCHED_REMEMBERED {
            touched.insert(url.to_owned(), now);
        }
        true
    })
}

/// Now, in whole Unix milliseconds, strictly increasing within one run of the worker: two uses in the
/// same millisecond still order, so least-recently-used eviction never breaks a tie by URL. (A restarted
/// worker starts later than the last run's times.)
fn now_ms() -> u64 {
    LAST_TIME.with(|last| {
        let now = (js_sys::Date::now() as u64).max(last.get() + 1);
        last.set(now);
        now
    })
}

/// Answers `target` from `cache` and the network with `strategy`. Background work (the
/// stale-while-revalidate re-fetch) is handed to `background`, which should keep the worker alive until
/// it settles (`FetchEvent.waitUntil`).
pub async fn respond(
    cache: &Cache,
    target: &Target,
    strategy: Strategy,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    let url = &target.cache_url;
    match strategy {
        Strategy::NetworkOnly => Ok(send(&target.outgoing()?, target.auth.as_ref()).await?.2),
        Strategy::CacheOnly => match cached(cache, target, background, false).await? {
            Some((hit, _)) => Ok(hit),
            None => Err(Error::NotCached { url: url.clone() }),
        },
        Strategy::CacheFirst => match cached(cache, target, background, false).await? {
            Some((hit, _)) => Ok(hit),
            None => Ok(fetch_and_store(cache, target, strategy).await?.1),
        },
        Strategy::NetworkFirst => match fetch_and_store(cache, target, strategy).await {
            Ok((_, response)) => Ok(response),
            Err(network_error @ Error::Network { .. }) => {
                cached(cache, target, background, false).await?.map(|(hit, _)| hit).ok_or(network_error)
            }
            Err(other) => Err(other),
        },
        Strategy::StaleWhileRevalidate => {
            let Some((hit, Some(stale_bytes))) = cached(cache, target, background, true).await? else {
                return Ok(fetch_and_store(cache, target, strategy).await?.1);
            };
            let (cache, target) = (cache.clone(), target.clone());
            background(wasm_bindgen_futures::future_to_promise(async move {
                revalidate(&cache, &target, &stale_bytes).await.map_err(JsValue::from)?;
                Ok(JsValue::UNDEFINED)
            }));
            Ok(hit)
        }
    }
}

/// Re-fetches `target`, stores the fresh copy and broadcasts `cache-updated {url}` when its body differs
/// from `before`, the body of the stale copy that was served.
async fn revalidate(cache: &Cache, target: &Target, before: &[u8]) -> Result<(), Error> {
    // An offline background re-fetch is not an error worth reporting: the stale copy stays.
    let Ok((Some(after), _)) = fetch_and_store(cache, target, Strategy::StaleWhileRevalidate).await else {
        return Ok(());
    };
    if before != after.as_slice() {
        // A GET is announced by the URL the page asked for (its entry may live under a partitioned cache
        // URL); a GraphQL document by its document URL, as the page client announces its own.
        let url = if target.tags.is_none() { target.request.url() } else { target.cache_url.clone() };
        broadcast::broadcast(&SwEvent::CacheUpdated { url })?;
    }
    Ok(())
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

/// The cached response for `target`, marked `X-Cachet-Source: cache`, with its body bytes when `read_body`
/// (stale-while-revalidate compares them with the fresh copy), unless it is older than
/// `cache.maxAgeSeconds`: an expired entry counts as absent (it is replaced by the next store). An entry
/// without a readable stored-at time (not stored by cachet) is served as it is. A hit marks the entry used,
/// in the background, for least-recently-used eviction (at most once per [`TOUCH_EVERY_MS`]).
///
/// Without `read_body` the stored body is handed on as a stream, never copied into wasm and back: that
/// copy was most of a hit's time beyond Workbox's (BENCHMARKS.md, "where the time goes").
async fn cached(
    cache: &Cache,
    target: &Target,
    background: &dyn Fn(Promise),
    read_body: bool,
) -> Result<Option<(Response, Option<Vec<u8>>)>, Error> {
    let Some(stored) = cache_match(cache, &target.cache_url).await? else {
        return Ok(None);
    };
    let stored_at =
        stored.headers().get(STORED_AT_HEADER).ok().flatten().and_then(|at| at.parse::<u64>().ok());
    let now = now_ms();
    if stored_at.is_some_and(|at| now.saturating_sub(at) > target.bounds.max_age_seconds.saturating_mul(1000))
    {
        return Ok(None);
    }
    if touch_due(&target.cache_url, now) {
        let (index, url) = (target.index.clone(), target.cache_url.clone());
        background(wasm_bindgen_futures::future_to_promise(async move {
            index.touch(&url, now).await.map_err(JsValue::from)?;
            Ok(JsValue::UNDEFINED)
        }));
    }
    let marked = [(SOURCE_HEADER, "cache")];
    if !read_body {
        return Ok(Some((remark(&stored, &marked)?, None)));
    }
    let bytes = body_bytes(&stored).await?;
    Ok(Some((rebuild(&stored, &bytes, &marked)?, Some(bytes))))
}

async fn cache_match(cache: &Cache, url: &str) -> Result<Option<Response>, Error> {
    let found = await_js("cache.match", cache.match_with_str(url)).await?;
    Ok(found.dyn_into::<Response>().ok())
}

/// Fetches `target` and stores the answer when it may be stored (2xx, within `cache.maxBodyBytes`, and
/// for a GraphQL document a result without `errors`), records it in the entry index with its tags, and
/// evicts the least recently used entries of its cache beyond `cache.maxEntries`. Returns the stored
/// bytes, if stored, and the answer marked `X-Cachet-Source: network`.
async fn fetch_and_store(
    cache: &Cache,
    target: &Target,
    strategy: Strategy,
) -> Result<(Option<Vec<u8>>, Response), Error> {
    let (response, bytes, answer) = send(&target.outgoing()?, target.auth.as_ref()).await?;
    let storable = response.ok()
        && (bytes.len() as u64) <= target.bounds.max_body_bytes
        && (target.tags.is_none() || result_is_cacheable(&bytes));
    if !storable {
        return Ok((None, answer));
    }
    let now = now_ms();
    let stored = rebuild(&response, &bytes, &[(STORED_AT_HEADER, &now.to_string())])?;
    if !put_or_evict_and_retry(cache, target, &stored).await? {
        return Ok((None, answer));
    }
    let tags = match &target.tags {
        Some(tags) => merge_tags(tags, &server_tags(&response)),
        None => Vec::new(),
    };
    let details =
        EntryDetails::describe(&target.request.url(), target.body.as_deref(), bytes.len() as u64, strategy);
    target.index.record_with(&target.cache_url, target.cache_name, &tags, now, &details).await?;
    let evicted = target.index.beyond(target.cache_name, target.bounds.max_entries).await?;
    forget(cache, &target.index, &evicted).await?;
    Ok((Some(bytes), answer))
}

/// Stores `stored` under the target's URL. When storage is full (`QuotaExceededError`), evicts the least
/// recently used half of the target's cache and tries once more; when that fails too, the answer is
/// passed on without being stored (`false`). Nothing else is touched: the entry index and the mutation
/// queue live in IndexedDB and are never evicted for room.
async fn put_or_evict_and_retry(cache: &Cache, target: &Target, stored: &Response) -> Result<bool, Error> {
    let put = |response: Response| {
        let promise = cache.put_with_str(&target.cache_url, &response);
        async move { await_js("cache.put", promise).await }
    };
    // Keep a copy for the second attempt: a response body can be read once.
    let second = stored.clone().map_err(|e| Error::js("Response.clone", e))?;
    match put(Clone::clone(stored)).await {
        Ok(_) => return Ok(true),
        Err(Error::Js { name, .. }) if name == "QuotaExceededError" => {}
        Err(other) => return Err(other),
    }
    // Every entry of the cache, least recently used first: the first half (rounded up) goes.
    let entries = target.index.beyond(target.cache_name, 0).await?;
    let evicted = &entries[..entries.len() - entries.len() / 2];
    forget(cache, &target.index, evicted).await?;
    match put(second).await {
        Ok(_) => Ok(true),
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: not stored, storage is full: {error}").into());
            Ok(false)
        }
    }
}

/// The tags of the server's `X-SW-Cache-Tags`. A malformed header is reported and ignored: the entry
/// keeps its own tags, and nothing stored is lost.
fn server_tags(response: &Response) -> Vec<String> {
    let Some(value) = response.headers().get(CACHE_TAGS_HEADER).ok().flatten() else {
        return Vec::new();
    };
    parse_tag_list(&value).unwrap_or_else(|error| {
        web_sys::console::warn_1(&format!("cachet: ignored X-SW-Cache-Tags \"{value}\": {error}").into());
        Vec::new()
    })
}
