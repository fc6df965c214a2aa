//! The worker's one IndexedDB database ([`cachet_core::protocol::storage`]: the entry index, the
//! generations, the identity and the mutation queue), opened once per worker instance and shared by
//! every module that keeps state in it.
//!
//! One database where there were three: each `indexedDB.open` cost a cold start 2–3 ms before its
//! answer (BENCHMARKS.md, cold start step by step), and the identity and the generations, which every
//! answer needs, are now read through one connection.
//!
//! # The databases of earlier builds
//!
//! The first open of an instance reads [`MIGRATED_KEY`] (one `get`). Absent, the [`LEGACY`] databases
//! are read whole and copied, with [`MIGRATED_KEY`], in one transaction: an app upgraded in place keeps
//! its queue, its entry index, its generations and its signed-in user, and a worker stopped half-way
//! copies again from the start (nothing was committed). Nothing else runs on an instance before that:
//! every reader and writer opens through [`open`]. The legacy databases are deleted after the commit, in
//! the background: a page of the old build may hold one open, which would block the deletion; a
//! deletion that never happens wastes a little room and is never read again.

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::protocol::storage::{
    DATABASE, ENTRIES, GENERATIONS, IDENTITY, LEGACY, META, MIGRATED_KEY, QUEUE, START_READS, TAGS_INDEX,
    USE_INDEX, VERSION,
};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::IdbDatabase;

use cachet_idb::{self as idb, IndexLayout, StoreLayout, Transaction, TransactionMode};

use crate::error::{commit, idb};
use crate::Error;

thread_local! {
    // A handle, not state: after the browser stops the worker, the next start opens the database again.
    static OPEN: RefCell<Option<Rc<IdbDatabase>>> = const { RefCell::new(None) };
    /// What the open read beside the migration mark, until its reader takes it (see [`StartRead`]).
    static START_READ: RefCell<StartRead> = RefCell::new(StartRead::default());
}

/// The identity's record and the generations' records, read by the instance's first open in the
/// transaction that reads the migration mark, with the three requests issued at once: a cold start's
/// first answer needs all three, and one transaction where there were three (the identity's and the
/// generations' begun only once the mark was read) brought the lookup from 9.8 to 2.9 ms after the
/// open in the traced cold start (BENCHMARKS.md, session 16). Each is
/// taken once by its reader ([`take_start_identity`], [`take_start_generations`]); a write of its store
/// drops it first, so a reader never takes what is no longer stored. `None`: not read, or taken.
#[derive(Default)]
struct StartRead {
    /// The identity's record (`Some(None)`: none stored).
    identity: Option<Option<JsValue>>,
    /// Every generations record.
    generations: Option<Vec<JsValue>>,
}

/// The identity's record as the open read it, once (then `None`: read it again).
pub fn take_start_identity() -> Option<Option<JsValue>> {
    START_READ.with(|read| read.borrow_mut().identity.take())
}

/// The generations' records as the open read them, once (then `None`: read them again).
pub fn take_start_generations() -> Option<Vec<JsValue>> {
    START_READ.with(|read| read.borrow_mut().generations.take())
}

/// The first open of an instance is one: the identity and the entry index are read at once on a cold
/// start, and both wait for the same open (and migration). A worker is one thread: `Sync` is only the
/// static's requirement.
static OPENING: futures::lock::Mutex<()> = futures::lock::Mutex::new(());

/// The instance's connection, opened (creating the database, moving the legacy ones in) on first use.
pub async fn open() -> Result<Rc<IdbDatabase>, Error> {
    if let Some(database) = OPEN.with(|open| open.borrow().clone()) {
        return Ok(database);
    }
    let _opening = OPENING.lock().await;
    if let Some(database) = OPEN.with(|open| open.borrow().clone()) {
        return Ok(database);
    }
    let (mut database, mut read) = match early().await {
        Some((database, read)) => (database, read),
        None => (build().await?, None),
    };
    let names = idb::store_names(&database);
    if !STORES.iter().all(|store| names.iter().any(|name| name == store)) {
        // Created at our version without our layout: a page opened it (pages open it as it is, with no
        // version) after the origin's IndexedDB was cleared. It holds nothing of ours.
        database.close();
        idb::delete(DATABASE).await.map_err(idb("delete the worker's database without its layout"))?;
        (database, read) = (build().await?, None);
    }
    let read = match read {
        Some(read) => read,
        None => read_start(&database).await?,
    };
    migrate(&database, read).await?;
    let database = Rc::new(database);
    OPEN.with(|open| *open.borrow_mut() = Some(database.clone()));
    Ok(database)
}

/// The global where the shim leaves its own open of the database (`service-worker.js`,
/// `openDatabaseEarly`): a promise of the connection, or of `null` when it opened nothing (no
/// `self.CACHET_DATABASE`, an upgrade it left to the engine, an error).
pub const EARLY_GLOBAL: &str = "__cachet_database";

/// The connection the shim opened as the worker's script was evaluated, with the records it read
/// ([`START_READS`]), taken once per instance (a later open, after the browser closed a connection,
/// opens its own): a stopped worker's first answer then does not wait for the open and the read after
/// the wasm's compile (BENCHMARKS.md, cold start step by step). Only a connection to [`DATABASE`] at
/// [`VERSION`] is taken; its stores are checked as the engine's own open's are ([`open`]). Records the
/// shim could not read (`null`, or not one per read) are read again.
async fn early() -> Option<(IdbDatabase, Option<StartRecords>)> {
    let global = js_sys::global();
    let key = JsValue::from_str(EARLY_GLOBAL);
    let promise = js_sys::Reflect::get(&global, &key).ok()?.dyn_into::<js_sys::Promise>().ok()?;
    let _ = js_sys::Reflect::set(&global, &key, &JsValue::UNDEFINED);
    let opened = wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    let field = |name: &str| js_sys::Reflect::get(&opened, &name.into()).ok();
    let database = field("database")?.dyn_into::<IdbDatabase>().ok()?;
    if database.name() != DATABASE || database.version() != f64::from(VERSION) {
        database.close();
        return None;
    }
    let records = field("records").and_then(|records| records.dyn_into::<js_sys::Array>().ok());
    let read = records.and_then(|records| StartRecords::from_reads(records.iter().map(Ok).collect()));
    Some((database, read))
}

/// The records of [`START_READS`], in its order: the migration mark, the identity's record, every
/// generations record. `Err`: the read failed (the mark's failure fails the open; the others are left
/// to their readers, which read again and report it).
struct StartRecords {
    mark: Result<Option<JsValue>, JsValue>,
    identity: Result<Option<JsValue>, JsValue>,
    generations: Result<Vec<JsValue>, JsValue>,
}

impl StartRecords {
    /// The records as the shim gives them (one value per read) or as [`read_start`] reads them: a
    /// record not stored is `undefined`, every record of a store an array. `None` when there is not one
    /// per read.
    fn from_reads(mut reads: Vec<Result<JsValue, JsValue>>) -> Option<Self> {
        if reads.len() != START_READS.len() {
            return None;
        }
        let record = |read: Result<JsValue, JsValue>| read.map(|value| (!value.is_undefined()).then_some(value));
        let all = |read: Result<JsValue, JsValue>| {
            read?.dyn_into::<js_sys::Array>().map(|records| records.to_vec()).map_err(|_| "not an array".into())
        };
        let generations = all(reads.pop()?);
        let identity = record(reads.pop()?);
        Some(StartRecords { mark: record(reads.pop()?), identity, generations })
    }
}

/// Reads [`START_READS`] in one readonly transaction, every request issued before the first is awaited
/// (so they run at once, with no joined futures: `join_all` cost the worker 4 KB gzipped).
async fn read_start(database: &IdbDatabase) -> Result<StartRecords, Error> {
    let stores: Vec<&str> = START_READS.iter().map(|(store, _)| *store).collect();
    let issued: Vec<Result<web_sys::IdbRequest, JsValue>> =
        match idb::transaction(database, &stores, TransactionMode::Readonly) {
            Ok(transaction) => START_READS
                .iter()
                .map(|(name, key)| {
                    let store = transaction.raw().object_store(name)?;
                    match key {
                        Some(key) => store.get(&JsValue::from_str(key)),
                        None => store.get_all(),
                    }
                })
                .collect(),
            Err(error) => START_READS.iter().map(|_| Err(error.clone())).collect(),
        };
    let mut reads = Vec::with_capacity(issued.len());
    for request in issued {
        reads.push(match request {
            Ok(request) => idb::settled(&request).await,
            Err(error) => Err(error),
        });
    }
    // One read per entry of START_READS, so always one record each.
    StartRecords::from_reads(reads).ok_or(JsValue::from_str("not one record per read")).map_err(idb("the start read"))
}

/// Closes the instance's connection and forgets it, as a stopped worker's next instance starts without
/// one (for the tests: the next [`open`] opens again, or takes a connection the shim left).
#[cfg(feature = "test-support")]
pub fn forget_connection() {
    if let Some(database) = OPEN.with(|open| open.borrow_mut().take()) {
        database.close();
    }
}

/// Every object store of the database.
const STORES: [&str; 5] = [ENTRIES, GENERATIONS, IDENTITY, QUEUE, META];

/// The database's layout: the entry index keyed by URL, with its tag index (one key per tag) and its
/// use index (`[cache, usedAt]`); the generations keyed by tag; the others keyed out of line.
const LAYOUT: [StoreLayout; 5] = [
    StoreLayout {
        name: ENTRIES,
        key_path: Some("url"),
        indexes: &[
            IndexLayout { name: TAGS_INDEX, key_path: &["tags"], multi_entry: true },
            IndexLayout { name: USE_INDEX, key_path: &["cache", "usedAt"], multi_entry: false },
        ],
    },
    StoreLayout { name: GENERATIONS, key_path: Some("tag"), indexes: &[] },
    StoreLayout { name: IDENTITY, key_path: None, indexes: &[] },
    StoreLayout { name: QUEUE, key_path: None, indexes: &[] },
    StoreLayout { name: META, key_path: None, indexes: &[] },
];

/// Opens the database at [`VERSION`], creating it with its layout when it does not exist.
async fn build() -> Result<IdbDatabase, Error> {
    idb::open(DATABASE, Some(VERSION), &LAYOUT).await.map_err(idb("open the worker's database"))
}

/// A transaction on `stores` on the instance's connection; a connection that refuses it (closed by the
/// browser, which it may do at will) is replaced once.
pub(crate) async fn transaction(stores: &[&str], mode: TransactionMode) -> Result<Transaction, Error> {
    if let Ok(transaction) = idb::transaction(&*open().await?, stores, mode) {
        return Ok(transaction);
    }
    OPEN.with(|open| open.borrow_mut().take());
    idb::transaction(&*open().await?, stores, mode).map_err(idb("a transaction on the worker's database"))
}

/// Moves the [`LEGACY`] databases in, unless [`MIGRATED_KEY`] says it was done (its record in `read`,
/// with the identity and the generations read beside it, kept for their readers).
async fn migrate(database: &IdbDatabase, read: StartRecords) -> Result<(), Error> {
    let marker = JsValue::from_str(MIGRATED_KEY);
    if read.mark.map_err(idb("read the migration mark"))?.is_some() {
        // A read that failed is left to its reader, which reads again and reports it.
        let read = StartRead { identity: read.identity.ok(), generations: read.generations.ok() };
        START_READ.with(|start| *start.borrow_mut() = read);
        return Ok(());
    }
    // Once per origin, ever: a function of its own that a worker's start does not compile
    // (`cachet_core::engine::outlined`), and only the whole engine's ([`link_migration`]).
    match MOVER.get() {
        Some(mover) => cachet_core::engine::outlined(mover(database, marker)).await,
        None => Err(Error::NotInStartModule { what: "moving an earlier build's databases in" }),
    }
}

/// The move of the earlier builds' databases, as the whole engine links it.
type Mover = for<'a> fn(&'a IdbDatabase, JsValue) -> futures::future::LocalBoxFuture<'a, Result<(), Error>>;

thread_local! {
    /// The move, once [`link_migration`] ran: the whole engine links it as it is installed
    /// (`super::install`); the start module never does (`super::start`), so its wasm does not hold the
    /// move, and an open that finds it not done fails, naming it ([`Error::NotInStartModule`]): the
    /// start module then leaves the request to the whole engine (`super::router::Answered::Elsewhere`),
    /// nothing sent. The crate's own tests have it from the start.
    static MOVER: std::cell::Cell<Option<Mover>> = const {
        std::cell::Cell::new(if cfg!(feature = "test-support") { Some(mover) } else { None })
    };
}

fn mover(database: &IdbDatabase, marker: JsValue) -> futures::future::LocalBoxFuture<'_, Result<(), Error>> {
    Box::pin(move_legacy(database, marker))
}

/// Links the move of the earlier builds' databases into this engine (the whole engine's install).
pub(crate) fn link_migration() {
    MOVER.set(Some(mover));
}

/// The move itself (see the module docs), marked done with `marker` in the same transaction.
async fn move_legacy(database: &IdbDatabase, marker: JsValue) -> Result<(), Error> {
    // Every legacy record, read before the one write (IndexedDB ends a transaction that waits on
    // anything but its own requests).
    let mut moved: Vec<(&str, Vec<(JsValue, JsValue)>)> = Vec::new();
    let mut legacy = Vec::new();
    for (name, stores) in LEGACY {
        // As it is (no version, no layout): created empty at version 1 when it never existed.
        let old = idb::open(name, None, &[]).await.map_err(idb("open a database of an earlier build"))?;
        let present = idb::store_names(&old);
        for store in stores.iter().copied().filter(|store| present.iter().any(|name| name == store)) {
            let transaction = idb::transaction(&old, &[store], TransactionMode::Readonly)
                .map_err(idb("read an earlier build"))?;
            let records = transaction
                .store(store)
                .map_err(idb("an earlier build's store"))?
                .scan(None, None)
                .await
                .map_err(idb("read an earlier build's records"))?;
            moved.push((store, records));
        }
        old.close();
        legacy.push(name);
    }
    let transaction =
        idb::transaction(database, &STORES, TransactionMode::Readwrite).map_err(idb("migration"))?;
    for (name, records) in &moved {
        let store = transaction.store(name).map_err(idb("migration store"))?;
        // The entries and the generations carry their keys (key paths); the others are out of line.
        let in_line = *name == ENTRIES || *name == GENERATIONS;
        for (key, value) in records {
            let key = (!in_line).then_some(key);
            store.put(value, key).await.map_err(idb("copy a record of an earlier build"))?;
        }
    }
    let store = transaction.store(META).map_err(idb("meta store"))?;
    let moved_count: usize = moved.iter().map(|(_, records)| records.len()).sum();
    store.put(&JsValue::from_f64(moved_count as f64), Some(&marker)).await.map_err(idb("mark migrated"))?;
    commit(transaction, "move the earlier build's databases in").await?;
    for name in legacy {
        wasm_bindgen_futures::spawn_local(async move {
            if let Err(error) = idb::delete(name).await {
                let error = idb("delete the earlier build's database")(error);
                let message = format!("cachet: deleting the earlier build's database {name}: {error}");
                web_sys::console::warn_1(&message.into());
            }
        });
    }
    Ok(())
}
