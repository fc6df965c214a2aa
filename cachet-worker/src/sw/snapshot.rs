//! Devtools in the worker: `snapshot-request {query}` answered with one page of what the worker holds,
//! and `drop-entries {urls}`. What is shown, and how entries are filtered and paged, is the core's
//! (`cachet_core::devtools`); this module only reads the stores.
//!
//! An entry whose tags were invalidated after it was stored is not shown: the engine already treats it
//! as absent (generations), and the sweep deletes it later. A page lists what a lookup would answer.
//!
//! A page costs at most [`SCAN_BUDGET`] index records read in key order from the query's cursor, however
//! many entries the index holds, and at most [`MAX_TAGS`] tags counted. A record that does not decode is
//! skipped and named in `problems`; so are an unreadable queue or identity: the rest of the snapshot is
//! still answered, and nothing stored is changed.

use cachet_core::config::Config;
use cachet_core::protocol::snapshot::{MAX_TAGS, SCAN_BUDGET};
use cachet_core::protocol::{
    EntryPage, EntryView, IdentityView, NotStoredView, QueueView, SnapshotQuery, StateSnapshot, TagCount,
};
use cachet_idb::{KeyRange, TransactionMode};
use js_sys::Promise;
use wasm_bindgen::{JsCast, JsValue};

use super::http::await_js;
use super::store::open_cache;
use super::tag_index::{Indexed, TagIndex, TAGS_INDEX};
use super::{generations, identity, queue_store, tag_index};
use crate::error::idb;
use crate::Error;
use cachet_core::engine::key::CACHES;

/// Index records read at a time while filling a page.
const CHUNK: u32 = 250;

/// The snapshot `query` asks for. Never fails: what cannot be read is named in `problems`.
pub(crate) async fn take(query: &SnapshotQuery, config: &Config) -> StateSnapshot {
    let mut problems = Vec::new();
    let mut note = |what: &str, error: Error| problems.push(format!("{what}: {error}"));
    let identity = match identity::current().await {
        Ok(identity) => identity.as_ref().map(IdentityView::of),
        Err(error) => {
            note("identity", error);
            None
        }
    };
    let queue = match queue_store::load(config.queue).await {
        Ok(state) => QueueView::of(&state),
        Err(error) => {
            note("mutation queue", error);
            QueueView::default()
        }
    };
    let (mut entries, mut tags, mut unreadable) = (EntryPage::default(), Vec::new(), Vec::new());
    match tag_index::shared().await {
        Ok(index) => {
            match entry_page(&index, query, &mut unreadable).await {
                Ok(page) => entries = page,
                Err(error) => note("entry index", error),
            }
            match tag_counts(&index).await {
                Ok(counts) => tags = counts,
                Err(error) => note("tags", error),
            }
        }
        Err(error) => note("entry index", error),
    }
    problems.extend(unreadable);
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    StateSnapshot {
        build: super::build_stamp(),
        config: super::config_text(),
        online: global.navigator().on_line(),
        identity,
        entries,
        tags,
        queue,
        problems,
        not_stored: NOT_STORED.with(|list| list.borrow().clone()),
        ignored_pushes: IGNORED_PUSHES.with(|list| list.borrow().clone()),
    }
}

thread_local! {
    /// The last answers this worker instance did not store ([`NotStoredView::remember`]).
    static NOT_STORED: std::cell::RefCell<Vec<NotStoredView>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Why the last pushes this worker instance ignored were ignored ([`StateSnapshot::push_ignored`]).
    static IGNORED_PUSHES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Names a push this worker ignored, and why, for the next snapshots.
#[cfg(feature = "push")]
pub(crate) fn push_ignored(why: String) {
    IGNORED_PUSHES.with(|list| StateSnapshot::push_ignored(&mut list.borrow_mut(), why));
}

/// Names an answer from the network to `url` (a GraphQL query's `operation`) that was not stored, for the
/// next snapshots.
pub(crate) fn not_stored(url: &str, operation: Option<&str>, reason: &cachet_core::engine::NotStored) {
    let request = match operation {
        Some(operation) => operation.to_owned(),
        None => web_sys::Url::new(url).map(|parsed| parsed.pathname()).unwrap_or_else(|_| url.to_owned()),
    };
    let view = NotStoredView {
        url: url.to_owned(),
        request,
        reason: reason.code().to_owned(),
        why: reason.describe().to_owned(),
        at: js_sys::Date::now() as u64,
    };
    NOT_STORED.with(|list| NotStoredView::remember(&mut list.borrow_mut(), view));
}

/// One page of entries in URL order from after `query.after`, read [`CHUNK`] records at a time, at most
/// [`SCAN_BUDGET`] records in all.
async fn entry_page(
    index: &TagIndex,
    query: &SnapshotQuery,
    unreadable: &mut Vec<String>,
) -> Result<EntryPage, Error> {
    generations::loaded(index).await?;
    let (_transaction, store) = index.entries(TransactionMode::Readonly).await?;
    let size = query.page_size() as usize;
    let mut page = EntryPage::default();
    let mut after = query.after.clone();
    while page.scanned < SCAN_BUDGET {
        let range = match &after {
            Some(url) => {
                Some(KeyRange::lower_bound(&JsValue::from_str(url), Some(true)).map_err(idb("page range"))?)
            }
            None => None,
        };
        let records = store.scan(range, Some(CHUNK)).await.map_err(idb("read the entry index"))?;
        let exhausted = records.len() < CHUNK as usize;
        for (key, record) in records {
            page.scanned += 1;
            after = key.as_string();
            let text =
                js_sys::JSON::stringify(&record).ok().and_then(|text| text.as_string()).unwrap_or_default();
            // A record that does not decode is named first; one that decodes but is stale is left out.
            let current =
                || Indexed::read(&record).is_some_and(|indexed| generations::is_current_record(&indexed));
            match EntryView::from_record_json(&text) {
                Ok(entry) if query.matches(&entry) && current() => page.items.push(entry),
                Ok(_) => {}
                Err(error) => unreadable.push(format!("{}: {error}", after.clone().unwrap_or_default())),
            }
            if page.items.len() >= size {
                page.next = after;
                return Ok(page);
            }
        }
        if exhausted {
            return Ok(page);
        }
    }
    page.next = after;
    Ok(page)
}

/// The first [`MAX_TAGS`] distinct tags of the index, each with its number of entries.
async fn tag_counts(index: &TagIndex) -> Result<Vec<TagCount>, Error> {
    let (_transaction, store) = index.entries(TransactionMode::Readonly).await?;
    let tags = store.index(TAGS_INDEX).map_err(idb("tag index"))?;
    let unique = tags.unique_keys(MAX_TAGS).await.map_err(idb("list tags"))?;
    let mut counts = Vec::new();
    for key in unique {
        let Some(tag) = key.as_string() else { continue };
        let range = KeyRange::only(&key).map_err(idb("tag key range"))?;
        let entries = tags.count(Some(range)).await.map_err(idb("count a tag"))?;
        counts.push(TagCount { tag, entries });
    }
    Ok(counts)
}

/// `drop-entries {urls}`: removes the entries at `urls` (cache URLs) from cachet's caches and the index.
pub(crate) async fn drop_entries(urls: &[String]) -> Result<(), Error> {
    for name in CACHES {
        let cache = open_cache(name).await?;
        let deletes: js_sys::Array = urls.iter().map(|url| cache.delete_with_str(url)).collect();
        await_js("cache.delete", Promise::all(&deletes)).await?;
    }
    tag_index::shared().await?.remove(urls).await
}
