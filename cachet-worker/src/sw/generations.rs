//! The worker's generations ([`cachet_core::generations`]: the rule is the core's): held in memory,
//! loaded once per worker instance from the `generations` object store of the entry index's database,
//! written through on every change. IndexedDB is the truth: a worker stopped after an invalidation's ack
//! loads the bumped generation again before it answers anything.
//!
//! One record per invalidated tag, `{ tag, at }`, and the clock record `{ tag: "", clock, floor }`
//! ([`CLOCK_KEY`]). An invalidation writes the clock record and its tags' records in one transaction,
//! committed before it is acknowledged.

use std::cell::RefCell;

use cachet_core::engine::outlined;
use cachet_core::generations::{GenerationError, Generations, StoredRecord, CLOCK_KEY};
use cachet_core::join::all_at_once;
use futures::future::LocalBoxFuture;
use cachet_idb::TransactionMode;
use wasm_bindgen::JsValue;

use super::tag_index::{Indexed, TagIndex};
use crate::error::{commit, idb};
use crate::Error;

thread_local! {
    /// The generations as last loaded or written by this worker instance (`None`: not loaded yet).
    static CURRENT: RefCell<Option<Generations>> = const { RefCell::new(None) };
}

/// See [`loaded`]. A worker is one thread: `Sync` is only the static's requirement.
static LOADING: futures::lock::Mutex<()> = futures::lock::Mutex::new(());

/// The clock held in memory, if loaded.
fn clock() -> Option<u64> {
    CURRENT.with(|current| current.borrow().as_ref().map(Generations::clock))
}

/// Makes sure the generations are in memory (the first call of a worker instance reads them; the
/// others wait for it), then returns the clock: what a request beginning now records. Unreadable
/// records are named on the console (and already on the safe side).
pub(crate) async fn loaded(index: &TagIndex) -> Result<u64, Error> {
    if let Some(clock) = clock() {
        return Ok(clock);
    }
    for problem in read(index, false).await? {
        web_sys::console::error_1(&format!("cachet: {problem}").into());
    }
    Ok(clock().unwrap_or(0))
}

/// Reads the stored generations again, replacing what this worker instance holds, and returns the
/// records that did not decode ([`cachet_core::generations::GenerationError`], each naming its record:
/// already accounted for on the safe side and repaired in IndexedDB). What `loaded` does once per
/// worker instance; for the tests.
#[cfg(feature = "test-support")]
pub async fn reload(index: &TagIndex) -> Result<Vec<GenerationError>, Error> {
    read(index, true).await
}

/// One read path for [`loaded`] (`again`: false, nothing read when another caller read first) and
/// `reload` (the tests'): a state machine each would cost the worker's wasm twice.
async fn read(index: &TagIndex, again: bool) -> Result<Vec<GenerationError>, Error> {
    let _loading = LOADING.lock().await;
    if !again && clock().is_some() {
        return Ok(Vec::new());
    }
    let records = read_records(index).await?;
    // The newest generation an entry carries matters only when the clock is lost (or never written):
    // the entries are read for it then only.
    let clock_kept = records.iter().any(|record| record.readable_clock().is_some());
    // The clock lost (or never written) and the repair are rare: the whole engine's work ([`link_whole`]),
    // outside the state machine a worker's start compiles. The start module leaves the request to it.
    let newest_entry = match (clock_kept, WHOLE.get()) {
        (true, _) => 0,
        (false, Some(whole)) => (whole.newest_entry)(index).await?,
        (false, None) => return Err(Error::NotInStartModule { what: "reading every entry for a lost clock" }),
    };
    let loaded = Generations::load(&records, newest_entry);
    let rewrite = loaded.repair.then(|| loaded.generations.clone());
    CURRENT.with(|current| *current.borrow_mut() = Some(loaded.generations));
    // Written by the whole engine only ([`link_whole`]): the start module holds the repaired
    // generations in memory (the safe side), and the whole engine, which reads them again when it takes
    // over, finds the same damage and writes the repair.
    if let (Some(generations), Some(whole)) = (rewrite, WHOLE.get()) {
        (whole.repair)(index, generations).await?;
    }
    Ok(loaded.problems)
}

/// What only the whole engine links of the generations ([`link_whole`]): each a function of its own that
/// a worker's start does not compile (`outlined`, as a box).
#[derive(Clone, Copy)]
struct WholeOnly {
    /// The write of a repair.
    repair: for<'a> fn(&'a TagIndex, Generations) -> LocalBoxFuture<'a, Result<(), Error>>,
    /// The largest generation an entry records, for a lost clock.
    newest_entry: for<'a> fn(&'a TagIndex) -> LocalBoxFuture<'a, Result<u64, Error>>,
}

const WHOLE_ONLY: WholeOnly = WholeOnly {
    repair: |index, generations| outlined(write(index, Write::All(generations))),
    newest_entry: |index| {
        outlined(async move {
            let records = index.all_records().await?;
            Ok(records.iter().filter_map(|record| record.generation).max().unwrap_or(0))
        })
    },
};

thread_local! {
    /// [`WholeOnly`], once [`link_whole`] ran: the whole engine links it as it is installed
    /// (`super::install`); the start module never does (`super::start`), so its wasm holds no write of
    /// the generations and no read of every entry: it keeps a repair in memory, and leaves a request
    /// that meets a lost clock to the whole engine ([`Error::NotInStartModule`]). The crate's own tests
    /// have it from the start.
    static WHOLE: std::cell::Cell<Option<WholeOnly>> = const {
        std::cell::Cell::new(if cfg!(feature = "test-support") { Some(WHOLE_ONLY) } else { None })
    };
}

/// Links the generations' rare work into this engine (the whole engine's install).
pub(crate) fn link_whole() {
    WHOLE.set(Some(WHOLE_ONLY));
}

/// Runs `change` on the generations in memory; `None` when they are not loaded.
fn change<T>(change: impl FnOnce(&mut Generations) -> T) -> Option<T> {
    CURRENT.with(|current| current.borrow_mut().as_mut().map(change))
}

/// Invalidates `tags`: in memory at once (lookups from now on miss), then in IndexedDB, committed
/// before this returns. A failed write leaves memory invalidated (the safe side) and is an error.
pub(crate) async fn bump(index: &TagIndex, tags: &[String]) -> Result<(), Error> {
    loaded(index).await?;
    let bump = change(|current| current.bump(tags)).ok_or(Error::Context("generations not loaded"))?;
    let mut puts = vec![clock_record(bump.clock, bump.floor)];
    puts.extend(tags.iter().map(|tag| tag_record(tag, bump.clock)));
    write(index, Write::Some { puts, deletes: bump.folded }).await
}

/// A clear-all: every entry stored until now is invalidated, no tag is remembered.
pub(crate) async fn clear(index: &TagIndex) -> Result<(), Error> {
    loaded(index).await?;
    change(Generations::clear).ok_or(Error::Context("generations not loaded"))?;
    write(index, Write::All(snapshot().unwrap_or_default())).await
}

/// Forgets the tags invalidated at or before `up_to`: a complete sweep begun at that clock left no
/// stale entry of theirs.
pub(crate) async fn prune(index: &TagIndex, up_to: u64) -> Result<(), Error> {
    let deletes = change(|current| current.prune(up_to)).unwrap_or_default();
    if deletes.is_empty() {
        return Ok(());
    }
    write(index, Write::Some { puts: Vec::new(), deletes }).await
}

/// A change of the stored records, in one transaction.
enum Write {
    /// Every record replaced by these generations' (a repair, a clear-all).
    All(Generations),
    /// Records put, tags' records deleted.
    Some { puts: Vec<JsValue>, deletes: Vec<String> },
}

/// The one write path (one state machine in the wasm, see [`read`]).
async fn write(index: &TagIndex, change: Write) -> Result<(), Error> {
    super::database::open().await?;
    // What the open read is no longer what is stored.
    drop(super::database::take_start_generations());
    let (clear, puts, deletes) = match change {
        Write::All(generations) => {
            let ((clock, floor), tags) = generations.records();
            let mut puts = vec![clock_record(clock, floor)];
            puts.extend(tags.iter().map(|(tag, at)| tag_record(tag, *at)));
            (true, puts, Vec::new())
        }
        Write::Some { puts, deletes } => (false, puts, deletes),
    };
    let (transaction, store) = index.generations(TransactionMode::Readwrite).await?;
    if clear {
        store.clear().await.map_err(idb("clear the generations"))?;
    }
    // Every request issued at once (awaiting each in turn cost the invalidation a round trip per put).
    let store = &store;
    let puts = puts.iter().map(|record| async move { store.put(record, None).await.map(drop) });
    all_at_once(puts).await.map_err(idb("write a generation"))?;
    let deletes = deletes.iter().map(|tag| async move { store.delete(JsValue::from_str(tag)).await });
    all_at_once(deletes).await.map_err(idb("forget a tag's generation"))?;
    commit(transaction, "commit the generations").await
}

/// Whether a stored response with this [`cachet_core::generations::GENERATION_HEADER`] value is
/// current. Not loaded yet (a caller that skipped [`loaded`]): never.
pub(crate) fn is_current_stamp(header: Option<&str>) -> bool {
    CURRENT.with(|current| current.borrow().as_ref().is_some_and(|current| current.is_current_stamp(header)))
}

/// Whether an index record begun at `generation` with `tags` is current (see [`is_current_stamp`]).
pub(crate) fn is_current<'t>(generation: Option<u64>, tags: impl IntoIterator<Item = &'t str>) -> bool {
    CURRENT
        .with(|current| current.borrow().as_ref().is_some_and(|current| current.is_current(generation, tags)))
}

/// [`is_current`] of an entry index record: whether a lookup would answer with its entry.
pub(crate) fn is_current_record(record: &Indexed) -> bool {
    is_current(record.generation, record.tags.iter().map(String::as_str))
}

/// The generations this worker instance holds.
pub(crate) fn snapshot() -> Option<Generations> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Every stored record, with its number fields as read (`None`: missing or not a number).
async fn read_records(index: &TagIndex) -> Result<Vec<StoredRecord>, Error> {
    super::database::open().await?;
    let records = match super::database::take_start_generations() {
        Some(records) => records,
        None => {
            let (_transaction, store) = index.generations(TransactionMode::Readonly).await?;
            store.get_all(None, None).await.map_err(idb("read the generations"))?
        }
    };
    let field = |record: &JsValue, name: &str| js_sys::Reflect::get(record, &name.into()).ok();
    let number = |record: &JsValue, name: &str| field(record, name).and_then(|value| value.as_f64());
    Ok(records
        .into_iter()
        .map(|record| StoredRecord {
            // The key path; a number is a key too, but no tag: named, never taken for the clock.
            key: field(&record, "tag")
                .and_then(|tag| tag.as_string())
                .unwrap_or_else(|| "(not a tag)".to_owned()),
            at: number(&record, "at"),
            clock: number(&record, "clock"),
            floor: number(&record, "floor"),
        })
        .collect())
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
