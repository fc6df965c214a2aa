//! Deleting what invalidation left stale, after the invalidation has answered.
//!
//! An invalidation only bumps generations ([`super::store::invalidate_tags`]); the entries it made stale
//! are already absent to every lookup, and are deleted here, in the background (`waitUntil`):
//!
//! - [`after_invalidation`]: the stale entries of the invalidated tags (found by the tag index), at most
//!   [`BATCH`] per hold of [`exclusive_writes`] (stores wait that long, not longer), at most
//!   [`SWEEP_BUDGET`] per invalidation.
//! - [`start_once`]: once per worker instance, after its first answer, one pass over the whole index
//!   and cachet's caches (state outlives the worker, its timers do not: what a stopped worker left
//!   unswept is swept by the next). It deletes stale entries with their records, heals records whose
//!   entry is gone and entries no record names (an entry no invalidation could find), at most
//!   [`START_BUDGET`] deletions; when it got through everything, the tags it covered are forgotten
//!   ([`super::generations::prune`]): no stale entry of theirs is left, and none can appear (every
//!   store records before it writes).
//!
//! Until it is swept a stale entry still counts toward its cache's `maxEntries` (it occupies the
//! storage the bound protects) and may be evicted first like any other; the index and the caches stay
//! in step (no entry without a record, no record without an entry).

use std::cell::Cell;
use std::collections::HashSet;

use cachet_core::engine::key::CACHES;
use js_sys::Promise;
use wasm_bindgen::JsValue;

use super::http::await_js;
use super::store::{exclusive_writes, forget_entries, open_cache};
use super::tag_index::{self, Indexed};
use super::generations;
use crate::Error;

/// Entries deleted per hold of [`exclusive_writes`].
pub const BATCH: usize = 100;
/// Most entries one invalidation's sweep deletes; the rest wait for the next start's pass.
pub const SWEEP_BUDGET: usize = 2_000;
/// Most deletions (entries and records) of one start-up pass; the rest wait for the next start.
pub const START_BUDGET: usize = 2_000;

/// The sweep of `tags`' stale entries, as a promise for `waitUntil`. Failures are reported on the
/// console: the entries stay absent to lookups, and the next start's pass tries again.
pub(crate) fn after_invalidation(tags: Vec<String>) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        if let Err(error) = sweep_tags(&tags).await {
            web_sys::console::warn_1(&format!("cachet: sweeping {}: {error}", tags.join(",")).into());
        }
        Ok(JsValue::UNDEFINED)
    })
}

/// Deletes the stale entries carrying one of `tags`, [`BATCH`] at a time; returns how many.
pub async fn sweep_tags(tags: &[String]) -> Result<usize, Error> {
    let index = tag_index::shared().await?;
    let mut deleted = 0;
    while deleted < SWEEP_BUDGET {
        let _writing = exclusive_writes().await;
        // Read under the lock: a store that replaced a stale entry since is current, and kept.
        let stale: Vec<(String, String)> = index
            .records_tagged(tags)
            .await?
            .into_iter()
            .filter(|record| !current(record))
            .take(BATCH)
            .map(|record| (record.url, record.cache))
            .collect();
        forget_entries(&index, &stale).await?;
        deleted += stale.len();
        if stale.len() < BATCH {
            break;
        }
    }
    Ok(deleted)
}

fn current(record: &Indexed) -> bool {
    generations::is_current(record.generation, record.tags.iter().map(String::as_str))
}

thread_local! {
    /// Whether this worker instance has begun its start-up pass.
    static STARTED: Cell<bool> = const { Cell::new(false) };
}

/// Begins this worker instance's start-up pass, once, handed to `background` (`waitUntil`).
pub(crate) fn start_once(background: &dyn Fn(Promise)) {
    if STARTED.with(|started| started.replace(true)) {
        return;
    }
    background(wasm_bindgen_futures::future_to_promise(async {
        match start_pass().await {
            Ok(report) if report.deleted() > 0 => {
                web_sys::console::info_1(&format!("cachet: start-up sweep: {report:?}").into())
            }
            Ok(_) => {}
            Err(error) => web_sys::console::warn_1(&format!("cachet: start-up sweep: {error}").into()),
        }
        Ok(JsValue::UNDEFINED)
    }));
}

/// What one start-up pass deleted, and whether it got through everything.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StartReport {
    /// Stale entries deleted with their records.
    pub stale: usize,
    /// Records whose entry was gone, forgotten.
    pub records_without_entry: usize,
    /// Entries no record named, deleted.
    pub entries_without_record: usize,
    /// Whether nothing was left for the next start (within [`START_BUDGET`]).
    pub complete: bool,
}

impl StartReport {
    /// Everything it deleted.
    pub fn deleted(&self) -> usize {
        self.stale + self.records_without_entry + self.entries_without_record
    }
}

/// The start-up pass (see the module docs), holding [`exclusive_writes`] throughout: one read of the
/// index, one `keys()` per cache, then the deletions, entries without a record first.
pub async fn start_pass() -> Result<StartReport, Error> {
    let index = tag_index::shared().await?;
    let up_to = generations::loaded(&index).await?;
    let _writing = exclusive_writes().await;
    let records: Vec<Indexed> =
        index.all_records().await?.into_iter().filter(|record| CACHES.contains(&record.cache.as_str())).collect();
    let mut report = StartReport::default();
    let mut budget = START_BUDGET;
    let recorded: HashSet<(&str, &str)> =
        records.iter().map(|record| (record.cache.as_str(), record.url.as_str())).collect();
    let mut stored: HashSet<(String, String)> = HashSet::new();
    for name in CACHES {
        let cache = open_cache(name).await?;
        let keys = js_sys::Array::from(&await_js("cache.keys", cache.keys()).await?);
        let urls = keys.iter().filter_map(|request| js_sys::Reflect::get(&request, &"url".into()).ok()?.as_string());
        stored.extend(urls.map(|url| (name.to_owned(), url)));
        let without_record: Vec<String> = stored
            .iter()
            .filter(|(cache, url)| cache == name && !recorded.contains(&(name, url.as_str())))
            .map(|(_, url)| url.clone())
            .collect();
        let take = without_record.len().min(budget);
        let deletes: js_sys::Array = without_record[..take].iter().map(|url| cache.delete_with_str(url)).collect();
        await_js("cache.delete", Promise::all(&deletes)).await?;
        report.entries_without_record += take;
        budget -= take;
        if take < without_record.len() {
            return Ok(report);
        }
    }
    let (with_entry, without_entry): (Vec<&Indexed>, Vec<&Indexed>) =
        records.iter().partition(|record| stored.contains(&(record.cache.clone(), record.url.clone())));
    let take = without_entry.len().min(budget);
    let forgotten: Vec<String> = without_entry[..take].iter().map(|record| record.url.clone()).collect();
    index.remove(&forgotten).await?;
    report.records_without_entry = take;
    budget -= take;
    let stale: Vec<(String, String)> = with_entry
        .into_iter()
        .filter(|record| !current(record))
        .map(|record| (record.url.clone(), record.cache.clone()))
        .collect();
    let take_stale = stale.len().min(budget);
    for chunk in stale[..take_stale].chunks(BATCH) {
        forget_entries(&index, chunk).await?;
    }
    report.stale = take_stale;
    report.complete = take == without_entry.len() && take_stale == stale.len();
    if report.complete {
        generations::prune(&index, up_to).await?;
    }
    Ok(report)
}
