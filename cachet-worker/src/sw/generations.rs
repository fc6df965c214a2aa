//! The worker's generations ([`cachet_core::generations`]: the rule is the core's): held in memory,
//! loaded once per worker instance from the `generations` object store of the entry index's database,
//! written through on every change. IndexedDB is the truth: a worker stopped after an invalidation's ack
//! loads the bumped generation again before it answers anything.
//!
//! One record per invalidated tag, `{ tag, at }`, and the clock record `{ tag: "", clock, floor }`
//! ([`CLOCK_KEY`]). An invalidation writes the clock record and its tags' records in one transaction,
//! committed before it is acknowledged.

use std::cell::RefCell;

use cachet_core::generations::{Generations, StoredRecord, CLOCK_KEY};
use rexie::TransactionMode;
use wasm_bindgen::JsValue;

use super::tag_index::TagIndex;
use crate::error::{commit, idb};
use crate::Error;

/// The object store of the generations, in the entry index's database.
pub(crate) const GENERATIONS: &str = "generations";

thread_local! {
    /// The generations as last loaded or written by this worker instance (`None`: not loaded yet).
    static CURRENT: RefCell<Option<Generations>> = const { RefCell::new(None) };
}

/// See [`loaded`]. A worker is one thread: `Sync` is only the static's requirement.
static LOADING: futures::lock::Mutex<()> = futures::lock::Mutex::new(());

/// Makes sure the generations are in memory (the first call of a worker instance reads them; the
/// others wait for it), then returns the clock: what a request beginning now records.
pub(crate) async fn loaded(index: &TagIndex) -> Result<u64, Error> {
    if let Some(clock) = CURRENT.with(|current| current.borrow().as_ref().map(Generations::clock)) {
        return Ok(clock);
    }
    let _loading = LOADING.lock().await;
    if let Some(clock) = CURRENT.with(|current| current.borrow().as_ref().map(Generations::clock)) {
        return Ok(clock);
    }
    let loaded = Generations::load(&read_records(index).await?, index.newest_generation().await?);
    for problem in &loaded.problems {
        let error = Error::Core(problem.clone().into());
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
    if loaded.repair {
        write_all(index, &loaded.generations).await?;
    }
    let clock = loaded.generations.clock();
    CURRENT.with(|current| *current.borrow_mut() = Some(loaded.generations));
    Ok(clock)
}

/// Whether a stored response with this [`cachet_core::generations::GENERATION_HEADER`] value is
/// current. Not loaded yet (a caller that skipped [`loaded`]): never.
pub(crate) fn is_current_stamp(header: Option<&str>) -> bool {
    CURRENT.with(|current| current.borrow().as_ref().is_some_and(|current| current.is_current_stamp(header)))
}

/// Whether an index record begun at `generation` with `tags` is current (see [`is_current_stamp`]).
pub(crate) fn is_current<'t>(generation: Option<u64>, tags: impl IntoIterator<Item = &'t str>) -> bool {
    CURRENT.with(|current| current.borrow().as_ref().is_some_and(|current| current.is_current(generation, tags)))
}

/// The current clock and the tags still remembered, for a sweep.
pub(crate) fn snapshot() -> Option<Generations> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Invalidates `tags`: in memory at once (lookups from now on miss), then in IndexedDB, committed
/// before this returns. A failed write leaves memory invalidated (the safe side) and is an error.
pub(crate) async fn bump(index: &TagIndex, tags: &[String]) -> Result<(), Error> {
    loaded(index).await?;
    let Some(bump) = CURRENT.with(|current| current.borrow_mut().as_mut().map(|current| current.bump(tags))) else {
        return Err(Error::Context("generations not loaded"));
    };
    let (transaction, store) = index.generations(TransactionMode::ReadWrite)?;
    store.put(&clock_record(bump.clock, bump.floor), None).await.map_err(idb("write the clock"))?;
    for tag in tags {
        store.put(&tag_record(tag, bump.clock), None).await.map_err(idb("write a tag's generation"))?;
    }
    for tag in &bump.folded {
        store.delete(JsValue::from_str(tag)).await.map_err(idb("fold a tag's generation"))?;
    }
    commit(transaction, "commit an invalidation").await
}

/// A clear-all: every entry stored until now is invalidated, no tag is remembered.
pub(crate) async fn clear(index: &TagIndex) -> Result<(), Error> {
    loaded(index).await?;
    let cleared = CURRENT.with(|current| current.borrow_mut().as_mut().map(Generations::clear));
    let Some(_) = cleared else { return Err(Error::Context("generations not loaded")) };
    let generations = snapshot().unwrap_or_default();
    write_all(index, &generations).await
}

/// Forgets the tags invalidated at or before `up_to`: a complete sweep begun at that clock left no
/// stale entry of theirs.
pub(crate) async fn prune(index: &TagIndex, up_to: u64) -> Result<(), Error> {
    let forgotten = CURRENT.with(|current| current.borrow_mut().as_mut().map(|current| current.prune(up_to)));
    let Some(forgotten) = forgotten.filter(|forgotten| !forgotten.is_empty()) else { return Ok(()) };
    let (transaction, store) = index.generations(TransactionMode::ReadWrite)?;
    for tag in &forgotten {
        store.delete(JsValue::from_str(tag)).await.map_err(idb("forget a tag's generation"))?;
    }
    commit(transaction, "commit forgetting tags").await
}

/// Every stored record, with its number fields as read (`None`: missing or not a number).
async fn read_records(index: &TagIndex) -> Result<Vec<StoredRecord>, Error> {
    let (_transaction, store) = index.generations(TransactionMode::ReadOnly)?;
    let records = store.scan(None, None, None, None).await.map_err(idb("read the generations"))?;
    let number = |record: &JsValue, field: &str| {
        js_sys::Reflect::get(record, &field.into()).ok().and_then(|value| value.as_f64())
    };
    Ok(records
        .into_iter()
        .map(|(key, record)| StoredRecord {
            key: key.as_string().unwrap_or_default(),
            at: number(&record, "at"),
            clock: number(&record, "clock"),
            floor: number(&record, "floor"),
        })
        .collect())
}

/// Replaces every stored record with `generations`' (a repair, a clear-all).
async fn write_all(index: &TagIndex, generations: &Generations) -> Result<(), Error> {
    let ((clock, floor), tags) = generations.records();
    let (transaction, store) = index.generations(TransactionMode::ReadWrite)?;
    store.clear().await.map_err(idb("clear the generations"))?;
    store.put(&clock_record(clock, floor), None).await.map_err(idb("write the clock"))?;
    for (tag, at) in &tags {
        store.put(&tag_record(tag, *at), None).await.map_err(idb("write a tag's generation"))?;
    }
    commit(transaction, "commit the generations").await
}

fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (name, value) in fields {
        // Setting a property on a fresh plain object cannot throw.
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(name), value);
    }
    object.into()
}

fn clock_record(clock: u64, floor: u64) -> JsValue {
    object(&[
        ("tag", JsValue::from_str(CLOCK_KEY)),
        ("clock", JsValue::from_f64(clock as f64)),
        ("floor", JsValue::from_f64(floor as f64)),
    ])
}

fn tag_record(tag: &str, at: u64) -> JsValue {
    object(&[("tag", JsValue::from_str(tag)), ("at", JsValue::from_f64(at as f64))])
}
