//! Deleting what invalidation left stale, after the invalidation has answered.
//!
//! An invalidation only bumps generations ([`super::invalidate::invalidate_tags`]); the entries it made stale
//! are already absent to every lookup, and are deleted here, in the background (`waitUntil`):
//!
//! - `after_invalidation`: the stale entries of the invalidated tags (found by the tag index), at most
//!   [`BUDGET`] per invalidation.
//! - `start_once`: once per worker instance, after its first answer, one pass over the whole index
//!   and cachet's caches (state outlives the worker, its timers do not: what a stopped worker left
//!   unswept is swept by the next). It deletes stale entries with their records, heals records whose
//!   entry is gone and entries no record names (an entry no invalidation could find), at most
//!   [`BUDGET`] deletions; when it got through everything, the tags it covered are forgotten
//!   (`super::generations::prune`): no stale entry of theirs is left, and none can appear (every
//!   store records before it writes).
//!
//! Until it is swept a stale entry still counts toward its cache's `maxEntries` (it occupies the
//! storage the bound protects) and is evicted like any other, least recently used first; the index and
//! the caches stay in step (every deletion removes the entry, then its record).

use std::cell::Cell;

use cachet_core::engine::key::CACHES;
use js_sys::Promise;
use wasm_bindgen::JsValue;

use super::generations;
use super::http::await_js;
use super::store::{cache_storage, exclusive_writes, forget_entries, open_cache};
use super::tag_index::{self, Indexed};
use crate::Error;
use futures::future::LocalBoxFuture;

/// Entries deleted per batch of cache deletes.
pub const BATCH: usize = 100;
/// Most deletions (entries and records) of one sweep; the rest wait for the next start's pass.
pub const BUDGET: usize = 2_000;
/// How long a record without its entry is left alone: a `cache.put` a stopped worker issued after writing
/// the record still completes in the browser after the worker is gone, so a new instance's pass can read
/// the record before the entry lands. Healing it then would leave the entry without a record (one no
/// invalidation finds: the killed-mid-write chaos story saw it once in about thirty stores). A record
/// older than this whose entry is still missing is healed by a later pass.
pub const LANDING_MS: u64 = 30_000;

/// The sweep of `tags`' stale entries, as a promise for `waitUntil`, once `forgetting` (the request
/// names' deletion the invalidation issued, `super::names::forget_all`) is done. Failures are reported
/// on the console: the entries stay absent to lookups, and the next start's pass tries again.
pub(crate) fn after_invalidation(tags: Vec<String>, forgetting: LocalBoxFuture<'static, Result<(), Error>>) -> Promise {
    spawn(Some(tags), Some(forgetting))
}

thread_local! {
    /// Whether this worker instance has begun its start-up pass.
    static STARTED: Cell<bool> = const { Cell::new(false) };
}

/// Begins this worker instance's start-up pass, once, handed to `background` (`waitUntil`).
pub(crate) fn start_once(background: &dyn Fn(Promise)) {
    if !STARTED.with(|started| started.replace(true)) {
        background(spawn(None, None));
    }
}

fn spawn(tags: Option<Vec<String>>, forgetting: Option<LocalBoxFuture<'static, Result<(), Error>>>) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        if let Some(forgetting) = forgetting {
            if let Err(error) = forgetting.await {
                web_sys::console::error_1(&format!("cachet: forgetting the request names: {error}").into());
            }
        }
        match sweep(tags.as_deref()).await {
            Ok(report) if report.deleted() > 0 => web_sys::console::info_1(
                &format!(
                    "cachet: swept {} stale entries, {} records without entry, {} entries without record",
                    report.stale, report.records_without_entry, report.entries_without_record
                )
                .into(),
            ),
            Ok(_) => {}
            Err(error) => web_sys::console::warn_1(&format!("cachet: sweeping: {error}").into()),
        }
        Ok(JsValue::UNDEFINED)
    })
}

/// What one sweep deleted, and whether it got through everything.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    /// Stale entries deleted with their records.
    pub stale: usize,
    /// Records whose entry was gone, forgotten (the start-up pass only).
    pub records_without_entry: usize,
    /// Entries no record named, deleted (the start-up pass only).
    pub entries_without_record: usize,
    /// Whether nothing was left for the next start (within [`BUDGET`]).
    pub complete: bool,
}

impl SweepReport {
    /// Everything it deleted.
    pub fn deleted(&self) -> usize {
        self.stale + self.records_without_entry + self.entries_without_record
    }
}

/// Deletes stale entries with their records, holding `exclusive_writes` throughout (a store waits
/// until it is done; a store that replaced a stale entry before is current and kept), at most
/// [`BUDGET`] deletions:
///
/// - `Some(tags)`: the stale entries carrying one of `tags`, found through the tag index (after an
///   invalidation);
/// - `None`, the start-up pass: every record of the index and every key of cachet's caches are read
///   once; entries no record names are deleted first, then records whose entry is gone, then stale
///   entries. Complete, it forgets the generations of the tags invalidated before it began.
///
/// One function for both: each async function is a state machine in the worker's wasm, and the two
/// cost 3 KB gzipped each. Membership is tested with JavaScript `Set`s of `cache + " " + url` (no cache
/// name holds a space): a Rust hash set of string pairs cost kilobytes more.
pub async fn sweep(tags: Option<&[String]>) -> Result<SweepReport, Error> {
    let index = tag_index::shared().await?;
    let up_to = generations::loaded(&index).await?;
    let _writing = exclusive_writes().await;
    let records = match tags {
        Some(tags) => index.records_tagged(tags).await?,
        None => index.all_records().await?,
    };
    let records: Vec<Indexed> =
        records.into_iter().filter(|record| CACHES.contains(&record.cache.as_str())).collect();
    let key = |cache: &str, url: &str| JsValue::from_str(&[cache, url].join(" "));
    let recorded = js_sys::Set::new(&JsValue::UNDEFINED);
    let stored = js_sys::Set::new(&JsValue::UNDEFINED);
    let mut report = SweepReport::default();
    let mut budget = BUDGET;
    for name in CACHES.into_iter().filter(|_| tags.is_none()) {
        for record in records.iter().filter(|record| record.cache == name) {
            recorded.add(&key(name, &record.url));
        }
        // A cache that is not there holds no entry, and is not created (`caches.open` would create it):
        // a clear-all may have just deleted it (RELIABILITY.md).
        if !await_js("caches.has", cache_storage()?.has(name)).await?.is_truthy() {
            continue;
        }
        let cache = open_cache(name).await?;
        let keys = js_sys::Array::from(&await_js("cache.keys", cache.keys()).await?);
        let mut without_record = Vec::new();
        for request in keys.iter() {
            let Some(url) =
                js_sys::Reflect::get(&request, &"url".into()).ok().and_then(|url| url.as_string())
            else {
                continue;
            };
            let entry = key(name, &url);
            stored.add(&entry);
            if !recorded.has(&entry) {
                without_record.push(url);
            }
        }
        let take = without_record.len().min(budget);
        let deletes: js_sys::Array =
            without_record[..take].iter().map(|url| cache.delete_with_str(url)).collect();
        await_js("cache.delete", Promise::all(&deletes)).await?;
        report.entries_without_record += take;
        budget -= take;
        if take < without_record.len() {
            return Ok(report);
        }
    }
    // Without the caches' keys (a targeted sweep), every record counts as having its entry. A record
    // without its entry stored less than `LANDING_MS` ago is left alone: its entry may still be landing.
    let now = super::clock::now_ms();
    let landing = |record: &Indexed| record.stored_at.is_some_and(|at| now.saturating_sub(at) < LANDING_MS);
    let (with_entry, without_entry): (Vec<&Indexed>, Vec<&Indexed>) = records
        .iter()
        .filter(|record| tags.is_some() || stored.has(&key(&record.cache, &record.url)) || !landing(record))
        .partition(|record| tags.is_some() || stored.has(&key(&record.cache, &record.url)));
    let with_entry_count = with_entry.len();
    let take = without_entry.len().min(budget);
    let forgotten: Vec<String> = without_entry[..take].iter().map(|record| record.url.clone()).collect();
    index.remove(&forgotten).await?;
    report.records_without_entry = take;
    budget -= take;
    let stale: Vec<(String, String)> = with_entry
        .into_iter()
        .filter(|record| !generations::is_current_record(record))
        .map(|record| (record.url.clone(), record.cache.clone()))
        .collect();
    let take_stale = stale.len().min(budget);
    for chunk in stale[..take_stale].chunks(BATCH) {
        forget_entries(&index, chunk).await?;
    }
    report.stale = take_stale;
    // A record left alone as landing makes the pass incomplete: its tags' generations stay.
    let landing_left = records.len() != with_entry_count + without_entry.len();
    report.complete = take == without_entry.len() && take_stale == stale.len() && !landing_left;
    if report.complete && tags.is_none() {
        generations::prune(&index, up_to).await?;
    }
    Ok(report)
}
