//! The store of a network answer, handed by the start module to the whole engine (issue "Weight"): the
//! start module links no store (the Cache Storage write, the entry index's record, eviction, the forget
//! of what did not fit), only this hand-over, and the whole engine stores as it stores its own answers.
//!
//! The start module's [`LaterStore`] looks entries up and marks them used as [`CacheStore`] does. Its
//! `store` hands the answer, with everything the store needs (the entry and its tags, how many entries to
//! keep, the clock when the request began, which stamps the entry's generation, the request as devtools
//! show it), to the shim's `self.__cachet_store_later(job)`. The shim has the whole engine take over for
//! it and calls its `store(job)` (`super::engine::store_handed`) before it gives the whole engine any
//! later event, so a lookup of the entry after the take-over waits for the store, as the whole engine's
//! own lookups wait for its own stores (`cachet_core::engine::commit`). The start module keeps the worker
//! alive until the store settles (the request's `waitUntil`, not counted by `sw::busy`: the take-over
//! waits for the start module to be idle, and this waits for the take-over).
//!
//! A hit's mark of use (the entry index's `usedAt`, for least-recently-used eviction) is an index write
//! too: the start module keeps the marks due ([`LaterStore::used`]) in memory and hands them over as it
//! becomes idle (its `idle()` resolves to them); the whole engine writes them
//! (`super::engine::touch_handed`) before it takes its first event. A worker stopped before the take-over
//! loses them: the marks are approximate anyway (one per entry per `TOUCH_EVERY_MS` per worker instance).
//!
//! An invalidation that begins while a handed store waits is the whole engine's (a message), so it runs
//! first, and it overtakes the store: the handed store counts every invalidation of the whole engine as
//! begun after its request (which came before the whole engine took any event), so it is not kept, as
//! a store of the whole engine's own that an invalidation overtook (and were it kept, the entry, stamped
//! with the generation its request began under, would not be current: a lookup finds nothing).

use std::rc::Rc;

use cachet_core::engine::key::CACHES;
use cachet_core::engine::{EntryKey, Fetched, Hit, Store, Stored};
use cachet_core::generations::generation_of;
use cachet_core::strategy::Strategy;
use js_sys::{Array, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Response;

use super::store::{touch_due, CacheStore};
use super::tag_index;
use crate::Error;

/// The global the shim defines for the start module's stores: `self.__cachet_store_later(job)`, whose
/// promise settles once the whole engine has stored it.
pub const STORE_LATER_GLOBAL: &str = "__cachet_store_later";

/// The start module's store: [`CacheStore`]'s lookups and marks of use; its stores go to the whole engine.
pub(crate) struct LaterStore {
    /// The lookups, and what a store needs to know of the request.
    pub(crate) cache: CacheStore,
    /// The URL the whole engine names in what it says of the store.
    pub(crate) announce_url: String,
    /// The request's `waitUntil`, uncounted by `sw::busy`.
    pub(crate) keep_alive: Rc<dyn Fn(Promise)>,
}

impl Store<Response, Error> for LaterStore {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<Response>>, Error> {
        // Once the whole engine's take-over began (`super::busy::retired`: a request that waited on the
        // network meanwhile goes on), what the start module keeps in memory (the generations, the
        // identity) may be stale: the whole engine may have changed them, and not yet swept or purged
        // what they cover. A lookup then finds nothing: a miss is sent, a failure stands (a GET's is
        // left to the whole engine, which answers it from its own state: `super::router`).
        if super::busy::retired() {
            return Ok(None);
        }
        self.cache.lookup(entry, read_body).await
    }

    /// Hands the store to the whole engine. `Ok(Stored::Kept)`: handed; what became of it (stored, refused
    /// by a full storage, overtaken) the whole engine says, as it says of its own.
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<Response>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        let later = Reflect::get(&js_sys::global(), &STORE_LATER_GLOBAL.into())
            .ok()
            .and_then(|later| later.dyn_into::<js_sys::Function>().ok())
            .ok_or(Error::Context("no self.__cachet_store_later: the shim is older than the start module"))?;
        let job = js_sys::Object::new();
        super::set(&job, CACHE, &entry.cache.into());
        super::set(&job, URL, &entry.url.as_str().into());
        super::set(&job, ANNOUNCE, &self.announce_url.as_str().into());
        super::set(&job, TAGS, &tags.iter().map(|tag| JsValue::from_str(tag)).collect::<Array>());
        super::set(&job, KEEP, &f64::from(keep).into());
        super::set(&job, NOW, &(now as f64).into());
        super::set(&job, GENERATION, &(self.cache.generation as f64).into());
        super::set(&job, REQUEST_URL, &self.cache.request_url.as_str().into());
        if let Some(body) = &self.cache.body {
            super::set(&job, REQUEST_BODY, &Uint8Array::from(&body[..]));
        }
        super::set(&job, STRATEGY, &self.cache.strategy.as_str().into());
        super::set(&job, RESPONSE, &fetched.response);
        super::set(&job, BODY, &Uint8Array::from(&fetched.body[..]));
        let handed = later.call1(&JsValue::UNDEFINED, &job).map_err(|e| Error::js(STORE_LATER_GLOBAL, e))?;
        (self.keep_alive)(Promise::resolve(&handed));
        Ok(Stored::Kept)
    }

    /// Kept for the whole engine ([`take_touches`]), as often as [`CacheStore`] would write it.
    fn used(&self, entry: &EntryKey, now: u64) {
        if touch_due(&entry.url, now) {
            TOUCHES.with(|touches| touches.borrow_mut().push((entry.url.clone(), now)));
        }
    }
}

thread_local! {
    /// The marks of use the start module's hits made, for the whole engine.
    static TOUCHES: std::cell::RefCell<Vec<(String, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The marks of use kept so far, as `[[url, at], ...]`, for the whole engine's `touch`; kept no more.
pub(crate) fn take_touches() -> Array {
    TOUCHES.take().into_iter().map(|(url, at)| Array::of2(&url.into(), &(at as f64).into())).collect()
}

/// Reads marks of use [`take_touches`] wrote: `(url, at)` pairs. Anything else is
/// [`Error::HandedStore`] naming `touched`: nothing is marked.
pub fn read_touches(touched: &JsValue) -> Result<Vec<(String, u64)>, Error> {
    let wrong = || Error::HandedStore { field: "touched" };
    let touched = touched.dyn_ref::<Array>().ok_or_else(wrong)?;
    touched
        .iter()
        .map(|pair| {
            let pair = pair.dyn_into::<Array>().map_err(|_| wrong())?;
            let url = pair.get(0).as_string().ok_or_else(wrong)?;
            let at = pair.get(1).as_f64().and_then(generation_of).ok_or_else(wrong)?;
            Ok((url, at))
        })
        .collect()
}

// The job's fields, written by the start module and read by the whole engine (the same source).
const CACHE: &str = "cache";
const URL: &str = "url";
const ANNOUNCE: &str = "announce";
const TAGS: &str = "tags";
const KEEP: &str = "keep";
const NOW: &str = "now";
const GENERATION: &str = "generation";
const REQUEST_URL: &str = "requestUrl";
const REQUEST_BODY: &str = "requestBody";
const STRATEGY: &str = "strategy";
const RESPONSE: &str = "response";
const BODY: &str = "body";

/// A store the start module handed over, as the whole engine reads it ([`read`]).
pub struct Handed {
    pub(crate) entry: EntryKey,
    pub(crate) announce_url: String,
    pub(crate) tags: Vec<String>,
    pub(crate) keep: u32,
    pub(crate) now: u64,
    /// The network's answer: its status and headers (its body may have been read by the page).
    pub(crate) response: Response,
    /// Its body.
    pub(crate) body: Vec<u8>,
    /// Where it goes.
    pub(crate) store: HandedStore,
}

/// Reads a job `LaterStore::store` wrote. A field missing or of the wrong kind is
/// [`Error::HandedStore`], naming it: nothing is stored.
pub fn read(job: &JsValue) -> Result<Handed, Error> {
    let field = |name: &'static str| Reflect::get(job, &name.into()).map_err(|_| Error::HandedStore { field: name });
    let string = |name: &'static str| field(name)?.as_string().ok_or(Error::HandedStore { field: name });
    // A whole number that a JavaScript number holds exactly (the core's check of a stored number).
    let number = |name: &'static str| {
        field(name)?.as_f64().and_then(generation_of).ok_or(Error::HandedStore { field: name })
    };
    let bytes = |name: &'static str| {
        field(name)?.dyn_into::<Uint8Array>().map(|bytes| bytes.to_vec()).map_err(|_| Error::HandedStore { field: name })
    };
    let cache = string(CACHE)?;
    let cache = CACHES.into_iter().find(|known| *known == cache).ok_or(Error::HandedStore { field: CACHE })?;
    let tags = field(TAGS)?.dyn_into::<Array>().map_err(|_| Error::HandedStore { field: TAGS })?;
    let tags = tags
        .iter()
        .map(|tag| tag.as_string().ok_or(Error::HandedStore { field: TAGS }))
        .collect::<Result<Vec<_>, _>>()?;
    let keep = u32::try_from(number(KEEP)?).map_err(|_| Error::HandedStore { field: KEEP })?;
    let strategy = string(STRATEGY)?.parse::<Strategy>().map_err(|_| Error::HandedStore { field: STRATEGY })?;
    let request_body = field(REQUEST_BODY)?;
    let request_body = if request_body.is_undefined() { None } else { Some(Rc::from(bytes(REQUEST_BODY)?)) };
    let response = field(RESPONSE)?.dyn_into::<Response>().map_err(|_| Error::HandedStore { field: RESPONSE })?;
    Ok(Handed {
        entry: EntryKey { cache, url: string(URL)? },
        announce_url: string(ANNOUNCE)?,
        tags,
        keep,
        now: number(NOW)?,
        body: bytes(BODY)?,
        response,
        store: HandedStore {
            request_url: string(REQUEST_URL)?,
            body: request_body,
            strategy,
            generation: number(GENERATION)?,
            // Its request began before this engine took any event (the start module gets none after the
            // take-over began): every invalidation this engine began covers it, as it covers a store of
            // its own that one overtook. A clear-all run before the store leaves nothing of it.
            begun: 0,
        },
    })
}

/// The whole engine's store of a handed job: a [`CacheStore`] over the entry index, opened as the store
/// runs, so that the store is known to lookups from the moment it is handed (`commit_decided`), before
/// any await.
pub(crate) struct HandedStore {
    request_url: String,
    body: Option<Rc<[u8]>>,
    strategy: Strategy,
    generation: u64,
    begun: u64,
}

impl Store<Response, Error> for HandedStore {
    /// Never asked: a handed job is only stored.
    async fn lookup(&self, _entry: &EntryKey, _read_body: bool) -> Result<Option<Hit<Response>>, Error> {
        Ok(None)
    }

    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<Response>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        let store = CacheStore {
            index: tag_index::shared().await?,
            // Only a hit's mark of use runs in it: never here.
            background: Rc::new(drop),
            request_url: self.request_url.clone(),
            body: self.body.clone(),
            strategy: self.strategy,
            begun: self.begun,
            generation: self.generation,
        };
        store.store(entry, fetched, tags, keep, now).await
    }

    fn used(&self, _entry: &EntryKey, _now: u64) {}
}
