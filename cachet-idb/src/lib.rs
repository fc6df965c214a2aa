//! IndexedDB in the calls cachet makes, for its Service Worker and its page client: open a database with
//! a layout, transactions, and an object store's and an index's reads and writes, each request awaited
//! as a future.
//!
//! ```no_run
//! use cachet_idb::{StoreLayout, TransactionMode};
//!
//! const LAYOUT: [StoreLayout; 1] = [StoreLayout { name: "auth", key_path: None, indexes: &[] }];
//!
//! async fn remember(text: &str) -> Result<bool, wasm_bindgen::JsValue> {
//!     let database = cachet_idb::open("my-app", Some(1), &LAYOUT).await?;
//!     let transaction = cachet_idb::transaction(&database, &["auth"], TransactionMode::Readwrite)?;
//!     transaction.store("auth")?.put(&text.into(), Some(&"current".into())).await?;
//!     let committed = transaction.done().await?;
//!     database.close();
//!     Ok(committed)
//! }
//! ```
//!
//! Written for cachet rather than taken from rexie (and the idb crate and tokio's channels below it),
//! which cachet used until session 16: those three were 21 KB of the worker's code before gzip (about
//! 19 KB of its gzipped wasm once their generic futures are counted; BENCHMARKS.md), for about twenty
//! calls, and as much again in the page's. The shapes are rexie's (`get` answers `None` for a missing
//! key, `put` takes an out-of-line key or none, a scan answers keys with values), so the modules
//! reading and writing state did not change; the crate's wasm tests (`tests/oracle.rs`) check each
//! call against rexie, kept as a dev-dependency for that.
//!
//! A request is awaited through a `Promise` settled by its `success` or `error` event. Its continuation
//! runs in the same task's microtasks, while its transaction is still active, so a transaction can be
//! used across awaits exactly as with rexie (which relied on the same). A failed request's error
//! aborts its transaction, as IndexedDB does by default; the error is the browser's `DOMException`,
//! as a `JsValue` (each caller names what it was doing).
#![deny(missing_docs)]

use js_sys::{Array, Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    IdbCursorDirection, IdbDatabase, IdbFactory, IdbIndex, IdbKeyRange, IdbObjectStore, IdbRequest,
};

pub use web_sys::IdbTransactionMode as TransactionMode;

/// The result of `request` once it succeeded; its error (a `DOMException`) when it failed.
pub async fn settled(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let promise = Promise::new(&mut |resolve: Function, reject: Function| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(promise).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    match outcome {
        Ok(_) => request.result(),
        Err(_) => Err(request.error().ok().flatten().map_or(JsValue::UNDEFINED, JsValue::from)),
    }
}

/// The global scope's `indexedDB`.
fn factory() -> Result<IdbFactory, JsValue> {
    js_sys::Reflect::get(&js_sys::global(), &"indexedDB".into())?
        .dyn_into::<IdbFactory>()
        .map_err(|_| JsValue::from_str("IndexedDB is not available here"))
}

/// An object store of a database's layout: its name, its in-line key path (none: keys out of line),
/// and its indexes.
pub struct StoreLayout {
    /// The store's name.
    pub name: &'static str,
    /// Its key path, when its records carry their keys.
    pub key_path: Option<&'static str>,
    /// Its indexes.
    pub indexes: &'static [IndexLayout],
}

/// An index of a [`StoreLayout`]: its name, its key path (one field, or several: an array key), and
/// whether an array field gives one key per element.
pub struct IndexLayout {
    /// The index's name.
    pub name: &'static str,
    /// The fields its keys are read from.
    pub key_path: &'static [&'static str],
    /// One key per element of an array field.
    pub multi_entry: bool,
}

/// Opens the database `name` at `version` (its current version, creating it at 1, when `None`). When
/// the browser asks for an upgrade (a new database, or an older version), the stores of `layout` that
/// are missing are created with their indexes, indexes missing from an existing store are added, and the
/// stores `layout` does not name are deleted. A later open at a higher version (another build's worker)
/// closes this connection, as it must to let that upgrade run.
pub async fn open(
    name: &str,
    version: Option<u32>,
    layout: &'static [StoreLayout],
) -> Result<IdbDatabase, JsValue> {
    let factory = factory()?;
    let request = match version {
        Some(version) => factory.open_with_u32(name, version)?,
        None => factory.open(name)?,
    };
    let upgrade = wasm_bindgen::closure::Closure::<dyn FnMut()>::new({
        let request = request.clone();
        move || {
            // A layout the browser refuses aborts the upgrade: the open then fails with its error.
            if let Err(error) = apply(&request, layout) {
                web_sys::console::error_1(&error);
                if let Some(transaction) = request.transaction() {
                    let _ = transaction.abort();
                }
            }
        }
    });
    request.set_onupgradeneeded(Some(upgrade.as_ref().unchecked_ref()));
    let opened = settled(&request).await;
    request.set_onupgradeneeded(None);
    let database: IdbDatabase = opened?.unchecked_into();
    // `database.close`, bound: closing on `versionchange` needs no Rust closure kept alive.
    let close =
        js_sys::Reflect::get(&database, &"close".into())?.unchecked_into::<Function>().bind0(&database);
    database.set_onversionchange(Some(&close));
    Ok(database)
}

/// The upgrade of [`open`]: `layout` applied to the database being opened.
fn apply(request: &web_sys::IdbOpenDbRequest, layout: &[StoreLayout]) -> Result<(), JsValue> {
    let database: IdbDatabase = request.result()?.unchecked_into();
    let transaction = request.transaction().ok_or_else(|| JsValue::from_str("no upgrade transaction"))?;
    let existing = database.object_store_names();
    let has = |list: &web_sys::DomStringList, name: &str| list.contains(name);
    for store in layout {
        let object_store = if has(&existing, store.name) {
            transaction.object_store(store.name)?
        } else {
            let parameters = web_sys::IdbObjectStoreParameters::new();
            if let Some(path) = store.key_path {
                parameters.set_key_path(&JsValue::from_str(path));
            }
            database.create_object_store_with_optional_parameters(store.name, &parameters)?
        };
        let indexes = object_store.index_names();
        for index in store.indexes.iter().filter(|index| !has(&indexes, index.name)) {
            let parameters = web_sys::IdbIndexParameters::new();
            parameters.set_multi_entry(index.multi_entry);
            match index.key_path {
                [one] => object_store.create_index_with_str_and_optional_parameters(
                    index.name,
                    one,
                    &parameters,
                )?,
                many => object_store.create_index_with_str_sequence_and_optional_parameters(
                    index.name,
                    &many.iter().copied().map(JsValue::from_str).collect::<Array>(),
                    &parameters,
                )?,
            };
        }
    }
    for index in 0..existing.length() {
        if let Some(name) = existing.item(index).filter(|name| !layout.iter().any(|store| store.name == name))
        {
            database.delete_object_store(&name)?;
        }
    }
    Ok(())
}

/// Deletes the database `name`; waits while another connection holds it open.
pub async fn delete(name: &str) -> Result<(), JsValue> {
    let request = factory()?.delete_database(name)?;
    settled(&request).await.map(drop)
}

/// The names of `database`'s object stores.
pub fn store_names(database: &IdbDatabase) -> Vec<String> {
    let names = database.object_store_names();
    (0..names.length()).filter_map(|index| names.item(index)).collect()
}

/// A transaction on `stores` of `database`.
pub fn transaction(
    database: &IdbDatabase,
    stores: &[&str],
    mode: TransactionMode,
) -> Result<Transaction, JsValue> {
    let names: Array = stores.iter().copied().map(JsValue::from_str).collect();
    Ok(Transaction(database.transaction_with_str_sequence_and_mode(&names, mode)?))
}

/// A transaction.
pub struct Transaction(web_sys::IdbTransaction);

impl Transaction {
    /// Its object store `name`.
    pub fn store(&self, name: &str) -> Result<Store, JsValue> {
        self.0.object_store(name).map(Store)
    }

    /// Waits until it ends: `Ok(true)` committed, `Ok(false)` aborted (the error that aborted it, if
    /// any, is [`Transaction::error`]).
    pub async fn done(&self) -> Result<bool, JsValue> {
        let promise = Promise::new(&mut |resolve: Function, reject: Function| {
            self.0.set_oncomplete(Some(&resolve));
            self.0.set_onabort(Some(&reject));
        });
        let outcome = JsFuture::from(promise).await;
        self.0.set_oncomplete(None);
        self.0.set_onabort(None);
        Ok(outcome.is_ok())
    }

    /// The browser's transaction, for a request this crate does not wrap.
    pub fn raw(&self) -> &web_sys::IdbTransaction {
        &self.0
    }

    /// The error that aborted it, if one did.
    pub fn error(&self) -> Option<JsValue> {
        self.0.error().map(JsValue::from)
    }
}

/// A key range.
pub struct KeyRange(IdbKeyRange);

impl KeyRange {
    /// The one key `key`.
    pub fn only(key: &JsValue) -> Result<Self, JsValue> {
        IdbKeyRange::only(key).map(KeyRange)
    }

    /// From `lower` to `upper`, each included unless its `open` flag is `Some(true)`.
    pub fn bound(
        lower: &JsValue,
        upper: &JsValue,
        lower_open: Option<bool>,
        upper_open: Option<bool>,
    ) -> Result<Self, JsValue> {
        IdbKeyRange::bound_with_lower_open_and_upper_open(
            lower,
            upper,
            lower_open.unwrap_or(false),
            upper_open.unwrap_or(false),
        )
        .map(KeyRange)
    }

    /// From `lower` up, `lower` included unless `open` is `Some(true)`.
    pub fn lower_bound(lower: &JsValue, open: Option<bool>) -> Result<Self, JsValue> {
        IdbKeyRange::lower_bound_with_open(lower, open.unwrap_or(false)).map(KeyRange)
    }
}

/// What [`Store::get_all`] and the others read: every key, or a range.
fn query(range: Option<&KeyRange>) -> JsValue {
    range.map_or(JsValue::UNDEFINED, |range| range.0.clone().into())
}

/// The values of an array result.
fn values(result: JsValue) -> Vec<JsValue> {
    Array::from(&result).iter().collect()
}

/// A count result.
fn count_of(result: JsValue) -> u32 {
    result.as_f64().unwrap_or(0.0) as u32
}

/// `getAll` (or `getAllKeys` when `keys`) of `source` over `range`, at most `limit`: one function for
/// an object store and an index (see [`Index::as_store`]), one state machine in the wasm.
async fn read_all(
    source: &IdbObjectStore,
    keys: bool,
    range: Option<KeyRange>,
    limit: Option<u32>,
) -> Result<Vec<JsValue>, JsValue> {
    let query = query(range.as_ref());
    let request = match (keys, limit) {
        (false, Some(limit)) => source.get_all_with_key_and_limit(&query, limit)?,
        (false, None) => source.get_all_with_key(&query)?,
        (true, Some(limit)) => source.get_all_keys_with_key_and_limit(&query, limit)?,
        (true, None) => source.get_all_keys_with_key(&query)?,
    };
    settled(&request).await.map(values)
}

/// An object store of a transaction.
pub struct Store(IdbObjectStore);

impl Store {
    /// The record at `key`; `None` when there is none.
    pub async fn get(&self, key: JsValue) -> Result<Option<JsValue>, JsValue> {
        let value = settled(&self.0.get(&key)?).await?;
        Ok((!value.is_undefined()).then_some(value))
    }

    /// Writes `value`, at `key` for a store whose keys are out of line.
    pub async fn put(&self, value: &JsValue, key: Option<&JsValue>) -> Result<(), JsValue> {
        let request = match key {
            Some(key) => self.0.put_with_key(value, key)?,
            None => self.0.put(value)?,
        };
        settled(&request).await.map(drop)
    }

    /// Deletes the record at `key` (nothing when there is none).
    pub async fn delete(&self, key: JsValue) -> Result<(), JsValue> {
        settled(&self.0.delete(&key)?).await.map(drop)
    }

    /// Deletes every record.
    pub async fn clear(&self) -> Result<(), JsValue> {
        settled(&self.0.clear()?).await.map(drop)
    }

    /// The values in `range` (all when `None`), in key order, at most `limit`.
    pub async fn get_all(
        &self,
        range: Option<KeyRange>,
        limit: Option<u32>,
    ) -> Result<Vec<JsValue>, JsValue> {
        read_all(&self.0, false, range, limit).await
    }

    /// The keys in `range` (all when `None`), in order, at most `limit`.
    pub async fn get_all_keys(
        &self,
        range: Option<KeyRange>,
        limit: Option<u32>,
    ) -> Result<Vec<JsValue>, JsValue> {
        read_all(&self.0, true, range, limit).await
    }

    /// The keys with their values in `range` (all when `None`), in key order, at most `limit`: one read
    /// of the keys and one of the values, in the same transaction (so the same records, in the same
    /// order).
    pub async fn scan(
        &self,
        range: Option<KeyRange>,
        limit: Option<u32>,
    ) -> Result<Vec<(JsValue, JsValue)>, JsValue> {
        let range = range.map(|range| range.0);
        let again = range.clone().map(KeyRange);
        let keys = self.get_all_keys(range.map(KeyRange), limit).await?;
        let values = self.get_all(again, limit).await?;
        Ok(keys.into_iter().zip(values).collect())
    }

    /// Its index `name`.
    pub fn index(&self, name: &str) -> Result<Index, JsValue> {
        self.0.index(name).map(Index)
    }
}

/// An index of an object store.
pub struct Index(IdbIndex);

impl Index {
    /// The values whose index key is in `range`, in index order, at most `limit`.
    pub async fn get_all(
        &self,
        range: Option<KeyRange>,
        limit: Option<u32>,
    ) -> Result<Vec<JsValue>, JsValue> {
        read_all(self.as_store(), false, range, limit).await
    }

    /// The primary keys of the records whose index key is in `range`, in index order, at most `limit`.
    pub async fn get_all_keys(
        &self,
        range: Option<KeyRange>,
        limit: Option<u32>,
    ) -> Result<Vec<JsValue>, JsValue> {
        read_all(self.as_store(), true, range, limit).await
    }

    /// The index seen as a store, for [`read_all`]: `IDBIndex` has `getAll` and `getAllKeys` with the
    /// same arguments and meaning (over index keys), and web-sys calls them by name on the object.
    fn as_store(&self) -> &IdbObjectStore {
        self.0.unchecked_ref()
    }

    /// How many records have an index key in `range`.
    pub async fn count(&self, range: Option<KeyRange>) -> Result<u32, JsValue> {
        settled(&self.0.count_with_key(&query(range.as_ref()))?).await.map(count_of)
    }

    /// The index's distinct keys, in order, at most `limit`: a key cursor that skips repeats.
    pub async fn unique_keys(&self, limit: u32) -> Result<Vec<JsValue>, JsValue> {
        let request = self
            .0
            .open_key_cursor_with_range_and_direction(&JsValue::NULL, IdbCursorDirection::Nextunique)?;
        let mut keys = Vec::new();
        // The request succeeds once per step; `continue` asks for the next.
        while (keys.len() as u32) < limit {
            let Some(cursor) = settled(&request).await?.dyn_into::<web_sys::IdbCursor>().ok() else {
                break;
            };
            keys.push(cursor.key()?);
            cursor.continue_()?;
        }
        Ok(keys)
    }
}
