//! Request names: what lets a stopped worker's shim answer a fresh cache-first hit without loading the
//! engine (issue "A stopped worker costs the page nothing"; BENCHMARKS.md, session 34).
//!
//! A name is the shim's: a URL it makes from a SHA-256 of the whole request as the browser gives it
//! (method, URL, every header in the `Headers` order, the body). It hands the engine, with the request,
//! a function of the body the engine read to a promise of the name, which the engine calls only for a
//! hit it names (a warm worker's requests cost the shim nothing; a stopped worker's shim computed the
//! name for its own lookup already, and the function gives it back).
//! The engine decides what a name may point at: only a hit that the core says is served alone
//! ([`cachet_core::engine::Served::alone_until`]: a fresh cache-first or cache-only entry, through
//! plugins none of which shapes cached answers), with the time it stops being so. It writes, in the
//! names' cache of the build ([`NAMES_CACHE_PREFIX`]), a body-less response under the name whose headers
//! point at the entry: its cache, its URL, its stored-at mark, that time. The shim of a worker that has no
//! engine loaded yet looks the name up, compares the time with the clock and the stored-at mark with the
//! entry's, checks that the entry was stored marked `X-Cachet-Source: cache`, and answers with the entry
//! as the engine would (the same stored response); anything else (no name, a passed time, an entry gone
//! or replaced) is the engine's, as before.
//!
//! Kept true: the same bytes name the same answer, whatever the engine reads of them (the partition:
//! `Authorization`, the marker; the strategy and tags: cachet's headers), as long as nothing the engine
//! reads besides the request changes. Each such change forgets every name before it is acknowledged
//! ([`forget_all`]): an invalidation (`super::invalidate`), an identity written (`super::identity`: a
//! sign-in, a refresh's new token, a sign-out), clear-all (`super::messages`). A new build has a cache of
//! its own (its name carries the build stamp; the shim deletes the earlier builds' at activation). The
//! time is the core's ([`cachet_core::engine::plan::served_alone_until`]); an evicted or replaced entry
//! is found absent or different by the shim. Whole-cache deletion keeps an invalidation constant-time, as
//! the generations do: the names come back as the engine answers hits again.
//!
//! A name is written by the whole engine after its answer is given, once the worker is quiet (the shim
//! gives a warm engine the name through its `whenQuiet`: amid a burst, a name written and then forgotten
//! by the burst's mutation cost the mutation its time), and only if no [`forget_all`] began
//! since the request's job began ([`epoch`]): the check runs after the cache is opened and the write is
//! issued in the same step, so a write either lands before the deletion (and goes with the cache) or in
//! the deleted cache, which nobody reads again. The start module writes none (it links no write, as it
//! links no store): it hands what its hits are named from over with its marks of use ([`hand_over`],
//! [`take_handed`]), and the whole engine names them and writes them before it takes its first event
//! ([`write_handed`]), before any change of its could overtake them.

use std::cell::{Cell, RefCell};

use cachet_core::engine::key::CACHES;
use cachet_core::engine::EntryKey;
use cachet_core::protocol::headers::STORED_AT_HEADER;
use cachet_core::protocol::storage::{
    NAMES_CACHE_PREFIX, NAME_ENTRY_CACHE_HEADER, NAME_ENTRY_URL_HEADER, NAME_UNTIL_HEADER,
};
use js_sys::{Array, Promise};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Headers, Response, ResponseInit};

use super::http::await_js;
use super::store::{cache_storage, open_cache};
use crate::Error;

/// How many names this worker instance remembers having written (then it forgets them all and may write
/// some again: a repeat costs one `cache.put`, never a wrong answer).
const REMEMBERED: usize = 256;

thread_local! {
    /// How many [`forget_all`] this worker instance began.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
    /// The entries this instance named since its last [`forget_all`], with their times: a hit that would
    /// write the same again writes nothing, and asks the shim for no name.
    static WRITTEN: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
    /// What the start module's hits served alone are named from, for the whole engine ([`take_handed`]).
    static HANDED: RefCell<Vec<Array>> = const { RefCell::new(Vec::new()) };
    /// Whether the names cache holds nothing, as far as this instance knows: set as a deletion of it is
    /// issued, cleared as a write is (and when a deletion fails). Not known at an instance's start (an
    /// earlier instance may have written names); only the whole engine writes names, and a build has its
    /// own cache.
    static EMPTY: Cell<bool> = const { Cell::new(false) };
}

/// The number of the last [`forget_all`] this instance began: a job notes it before it looks up.
pub fn epoch() -> u64 {
    EPOCH.with(Cell::get)
}

/// The build's names cache: [`NAMES_CACHE_PREFIX`] and the build stamp (the shim's `BUILD`, `unstamped`
/// when the build has none).
fn cache_name() -> String {
    let build = super::build_stamp();
    let build = if build.is_empty() { "unstamped" } else { build.as_str() };
    [NAMES_CACHE_PREFIX, build].concat()
}

/// Forgets every name (deletes the build's names cache), before what changes an answer is acknowledged.
/// A write of a job begun earlier is never kept (see the module's doc).
///
/// Begun by the call, not by the first poll: the epoch moves and the deletion is issued before this
/// returns, and the future only awaits it. A request issued after the call reaches Cache Storage after
/// the deletion: the browser runs an origin's Cache Storage operations in the order they were issued, a
/// cache's deletion alone (Chromium's `CacheStorageScheduler`). So an invalidation, the one change
/// frequent enough for the deletion's time to count, issues it and leaves its end to the background
/// (`super::invalidate`); a sign-in, a sign-out and clear-all await it. Nothing is deleted when this
/// instance deleted the cache and wrote no name since ([`EMPTY`]).
pub fn forget_all() -> impl std::future::Future<Output = Result<(), Error>> {
    EPOCH.with(|epoch| epoch.set(epoch.get() + 1));
    WRITTEN.with(|written| written.borrow_mut().clear());
    let deleting = if EMPTY.replace(true) {
        Ok(None)
    } else {
        cache_storage().map(|storage| Some(storage.delete(&cache_name()))).inspect_err(|_| EMPTY.set(false))
    };
    async move {
        let Some(deleting) = deleting? else { return Ok(()) };
        await_js("caches.delete", deleting).await.inspect_err(|_| EMPTY.set(false))?;
        Ok(())
    }
}

/// Whether this instance named `url`'s entry until `until` since its last [`forget_all`].
pub fn written(url: &str, until: u64) -> bool {
    WRITTEN.with(|written| written.borrow().iter().any(|(at, time)| at == url && *time == until))
}

/// What a served-alone hit's name is written from: the shim's name of the request (a promise of its
/// URL), the entry, its stored-at mark, the time the core gave, and the [`epoch`] when its job began.
pub struct Naming {
    name: Promise,
    entry: EntryKey,
    stored_at: String,
    until: u64,
    epoch: u64,
}

impl Naming {
    /// The naming of `response`, a stored answer served alone until `until` from `entry`, when it can
    /// be named: it carries a stored-at mark. The name is asked of the shim's `naming` function with the
    /// request's `body`. (The shim answers only with an entry stored already marked
    /// `X-Cachet-Source: cache`, which the engine answers as it is: one stored before the mark, which the
    /// engine answers wrapped in a marked response, is left to the engine.)
    pub fn of(
        naming: &js_sys::Function,
        body: Option<&[u8]>,
        entry: EntryKey,
        response: &Response,
        until: u64,
        epoch: u64,
    ) -> Option<Self> {
        let stored_at = response.headers().get(STORED_AT_HEADER).ok().flatten()?;
        let body = body.map_or(JsValue::UNDEFINED, |body| js_sys::Uint8Array::from(body).into());
        let name = naming.call1(&JsValue::UNDEFINED, &body).ok()?.dyn_into::<Promise>().ok()?;
        Some(Naming { name, entry, stored_at, until, epoch })
    }

    /// Writes the name (after the answer: the caller runs it in the background). Nothing when this
    /// instance wrote the same already, or forgot every name since the job began.
    pub async fn write(self) -> Result<JsValue, JsValue> {
        let name = await_js("the request's name", self.name).await?.as_string();
        let Some(name) = name else { return Ok(JsValue::UNDEFINED) };
        // A change since the job began (the name waits for the worker to be quiet): no name, and no
        // names cache opened (which would make again the cache a sign-out or clear-all just deleted).
        if written(&self.entry.url, self.until) || epoch() != self.epoch {
            return Ok(JsValue::UNDEFINED);
        }
        // Opened in the same step as the check above, so before any deletion a later change issues.
        let cache = open_cache(&cache_name()).await?;
        if epoch() != self.epoch {
            return Ok(JsValue::UNDEFINED);
        }
        let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
        let until = self.until.to_string();
        for (header, value) in [
            (NAME_ENTRY_CACHE_HEADER, self.entry.cache),
            (NAME_ENTRY_URL_HEADER, self.entry.url.as_str()),
            (STORED_AT_HEADER, self.stored_at.as_str()),
            (NAME_UNTIL_HEADER, until.as_str()),
        ] {
            headers.set(header, value).map_err(|e| Error::js("Headers.set", e))?;
        }
        let init = ResponseInit::new();
        init.set_headers(&headers);
        let pointer =
            Response::new_with_opt_str_and_init(None, &init).map_err(|e| Error::js("new Response", e))?;
        // Issued in the same step as the check above (see the module's doc).
        let put = cache.put_with_str(&name, &pointer);
        EMPTY.set(false);
        await_js("cache.put", put).await?;
        WRITTEN.with(|written| {
            let mut written = written.borrow_mut();
            if written.len() >= REMEMBERED {
                written.clear();
            }
            written.push((self.entry.url, self.until));
        });
        Ok(JsValue::UNDEFINED)
    }
}

/// Keeps what the start module's hit served alone is named from, for the whole engine
/// ([`take_handed`]): the shim's naming function, the request's body, the entry, the answer, the time.
/// The whole engine makes the naming of them ([`Naming::of`]): the start module links none of it.
pub fn hand_over(
    naming: &js_sys::Function,
    body: Option<&[u8]>,
    entry: EntryKey,
    response: &Response,
    until: u64,
) {
    let body = body.map_or(JsValue::UNDEFINED, |body| js_sys::Uint8Array::from(body).into());
    let fields = [
        naming.into(),
        body,
        entry.cache.into(),
        entry.url.into(),
        response.into(),
        JsValue::from_f64(until as f64),
    ];
    HANDED.with(|handed| handed.borrow_mut().push(fields.into_iter().collect()));
}

/// What the start module kept so far ([`hand_over`]), as `[[naming, body, cache, url, response, until],
/// ...]`, for the whole engine's [`write_handed`]; kept no more.
pub fn take_handed() -> Array {
    HANDED.with(|handed| handed.take().into_iter().collect())
}

/// Writes the namings the start module handed over (`named`, [`take_handed`]'s), each after the other,
/// with this engine's [`epoch`]: it runs before the whole engine's first event, so no change of answers
/// began since their hits. A malformed list writes nothing ([`Error::HandedStore`] naming `named`).
pub async fn write_handed(named: &JsValue) -> Result<(), Error> {
    let wrong = || Error::HandedStore { field: "named" };
    let named = named.dyn_ref::<Array>().ok_or_else(wrong)?;
    let namings = named
        .iter()
        .map(|fields| {
            let fields = fields.dyn_into::<Array>().map_err(|_| wrong())?;
            let naming = fields.get(0).dyn_into::<js_sys::Function>().map_err(|_| wrong())?;
            let body = fields.get(1);
            let body = if body.is_undefined() {
                None
            } else {
                Some(body.dyn_into::<js_sys::Uint8Array>().map_err(|_| wrong())?.to_vec())
            };
            let cache = fields.get(2).as_string().ok_or_else(wrong)?;
            let cache = CACHES.into_iter().find(|known| *known == cache).ok_or_else(wrong)?;
            let url = fields.get(3).as_string().ok_or_else(wrong)?;
            let response = fields.get(4).dyn_into::<Response>().map_err(|_| wrong())?;
            let until = fields
                .get(5)
                .as_f64()
                .filter(|until| until.is_finite() && *until >= 0.0)
                .ok_or_else(wrong)?;
            let entry = EntryKey { cache, url };
            Ok(Naming::of(&naming, body.as_deref(), entry, &response, until as u64, epoch()))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    for naming in namings.into_iter().flatten() {
        naming.write().await.map_err(|error| Error::js("writing a request name", error))?;
    }
    Ok(())
}
