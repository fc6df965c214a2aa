//! `read_existing`, what a page reads of its Service Worker's database: the record when the database
//! exists, no record and no database when it does not (the open's upgrade aborted, never a database
//! created by a read).
#![allow(clippy::unwrap_used)]

use cachet_idb::{self as idb, StoreLayout, TransactionMode};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_service_worker);

const LAYOUT: [StoreLayout; 1] = [StoreLayout { name: "queue", key_path: None, indexes: &[] }];

/// The names `indexedDB.databases()` lists.
async fn databases() -> Vec<String> {
    let factory = js_sys::Reflect::get(&js_sys::global(), &"indexedDB".into()).unwrap();
    let list = js_sys::Reflect::get(&factory, &"databases".into())
        .unwrap()
        .dyn_into::<js_sys::Function>()
        .unwrap()
        .call0(&factory)
        .unwrap();
    let list = JsFuture::from(js_sys::Promise::from(list)).await.unwrap();
    js_sys::Array::from(&list)
        .iter()
        .filter_map(|info| js_sys::Reflect::get(&info, &"name".into()).ok()?.as_string())
        .collect()
}

#[wasm_bindgen_test]
async fn a_database_that_does_not_exist_reads_as_no_record_and_is_not_created() {
    assert!(!databases().await.contains(&"idb-absent".to_owned()));
    assert_eq!(idb::read_existing("idb-absent", "queue", "state".into()).await, Ok(None));
    assert!(!databases().await.contains(&"idb-absent".to_owned()), "a read created the database");
    // Opened afterwards as the worker opens it: a first version, as for a new database.
    let database = idb::open("idb-absent", None, &LAYOUT).await.unwrap();
    assert_eq!(database.version(), 1.0);
    database.close();
    idb::delete("idb-absent").await.unwrap();
}

#[wasm_bindgen_test]
async fn an_existing_database_gives_its_record_and_is_left_as_it_was() {
    let database = idb::open("idb-present", Some(3), &LAYOUT).await.unwrap();
    let transaction = idb::transaction(&database, &["queue"], TransactionMode::Readwrite).unwrap();
    transaction
        .store("queue")
        .unwrap()
        .put(&JsValue::from_str("{\"items\":[]}"), Some(&"state".into()))
        .await
        .unwrap();
    assert!(transaction.done().await.unwrap());
    database.close();
    let record = idb::read_existing("idb-present", "queue", "state".into()).await.unwrap();
    assert_eq!(record.and_then(|value| value.as_string()).as_deref(), Some("{\"items\":[]}"));
    assert_eq!(idb::read_existing("idb-present", "queue", "other".into()).await, Ok(None));
    // A store the database does not have is the browser's error.
    assert!(idb::read_existing("idb-present", "missing", "state".into()).await.is_err());
    // Still at the worker's version: nothing upgraded it.
    let database = idb::open("idb-present", None, &LAYOUT).await.unwrap();
    assert_eq!(database.version(), 3.0);
    database.close();
    idb::delete("idb-present").await.unwrap();
}
