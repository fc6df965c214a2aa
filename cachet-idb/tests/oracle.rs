//! cachet-idb, the IndexedDB calls of cachet's worker and page, against rexie (the library it replaced, kept as the
//! oracle): the same layout gives the same schema, what one writes the other reads the same, an upgrade
//! adds and deletes as rexie's does, a failed request is an error that aborts its transaction, and a
//! transaction's end says whether it committed.
#![allow(clippy::unwrap_used)]

use cachet_idb::{self as idb, IndexLayout, KeyRange, StoreLayout, TransactionMode};
use rexie::{Index, ObjectStore, Rexie};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use web_sys::IdbDatabase;

wasm_bindgen_test_configure!(run_in_service_worker);

const LAYOUT: [StoreLayout; 2] = [
    StoreLayout {
        name: "entries",
        key_path: Some("url"),
        indexes: &[
            IndexLayout { name: "tags", key_path: &["tags"], multi_entry: true },
            IndexLayout { name: "use", key_path: &["cache", "usedAt"], multi_entry: false },
        ],
    },
    StoreLayout { name: "meta", key_path: None, indexes: &[] },
];

/// The same layout, as rexie builds it.
async fn rexie_database(name: &str, version: u32) -> Rexie {
    Rexie::builder(name)
        .version(version)
        .add_object_store(
            ObjectStore::new("entries")
                .key_path("url")
                .add_index(Index::new("tags", "tags").multi_entry(true))
                .add_index(Index::new_array("use", ["cache", "usedAt"])),
        )
        .add_object_store(ObjectStore::new("meta"))
        .build()
        .await
        .unwrap()
}

/// A database's schema, as the browser reports it: per store its key path, auto-increment, and per
/// index its key path, `multiEntry` and `unique`.
fn schema(database: &IdbDatabase) -> String {
    let names = database.object_store_names();
    let names: Vec<String> = (0..names.length()).filter_map(|index| names.item(index)).collect();
    if names.is_empty() {
        return String::new();
    }
    let store_names: js_sys::Array = names.iter().map(|name| JsValue::from_str(name)).collect();
    let transaction = database.transaction_with_str_sequence(&store_names).unwrap();
    let mut out = String::new();
    for name in &names {
        let store = transaction.object_store(name).unwrap();
        let key_path = js_sys::JSON::stringify(&store.key_path().unwrap()).unwrap();
        out.push_str(&format!("{name} {key_path:?} auto={}\n", store.auto_increment()));
        let indexes = store.index_names();
        for position in 0..indexes.length() {
            let index = store.index(&indexes.item(position).unwrap()).unwrap();
            let key_path = js_sys::JSON::stringify(&index.key_path().unwrap()).unwrap();
            out.push_str(&format!(
                "  {} {key_path:?} multi={} unique={}\n",
                index.name(),
                index.multi_entry(),
                index.unique()
            ));
        }
    }
    out
}

/// The raw connection under a rexie database (for [`schema`]): opened again, as it is.
async fn raw(name: &str) -> IdbDatabase {
    idb::open(name, None, &[]).await.unwrap()
}

fn json(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap()
}

fn text(value: &JsValue) -> String {
    js_sys::JSON::stringify(value).unwrap().as_string().unwrap()
}

fn texts(values: &[JsValue]) -> Vec<String> {
    values.iter().map(text).collect()
}

/// A key of the `use` index: cache `c1`, at `time`.
fn bound(time: f64) -> JsValue {
    js_sys::Array::of2(&"c1".into(), &JsValue::from_f64(time)).into()
}

const RECORDS: [&str; 4] = [
    r#"{"url":"https://a/1","cache":"c1","usedAt":5,"tags":["todos","user:1"]}"#,
    r#"{"url":"https://a/2","cache":"c1","usedAt":3,"tags":["todos"]}"#,
    r#"{"url":"https://a/3","cache":"c2","usedAt":9,"tags":["stats"]}"#,
    r#"{"url":"https://a/4","cache":"c1","usedAt":7,"tags":[]}"#,
];

#[wasm_bindgen_test]
async fn the_same_layout_gives_rexies_schema_and_an_upgrade_changes_it_as_rexies_does() {
    let ours = idb::open("idb-ours", Some(1), &LAYOUT).await.unwrap();
    let theirs = rexie_database("idb-theirs", 1).await;
    let expected = schema(&raw("idb-theirs").await);
    assert!(expected.contains("multi=true"), "the oracle's schema: {expected}");
    assert_eq!(schema(&ours), expected);
    assert_eq!(idb::store_names(&ours), vec!["entries".to_owned(), "meta".to_owned()]);
    ours.close();
    theirs.close();

    // Version 2: an extra store of an earlier layout is deleted, a missing index is added.
    static SMALLER: [StoreLayout; 1] = [StoreLayout {
        name: "entries",
        key_path: Some("url"),
        indexes: &[IndexLayout { name: "tags", key_path: &["tags"], multi_entry: true }],
    }];
    let ours = idb::open("idb-ours", Some(2), &SMALLER).await.unwrap();
    let theirs = Rexie::builder("idb-theirs")
        .version(2)
        .add_object_store(
            ObjectStore::new("entries")
                .key_path("url")
                .add_index(Index::new("tags", "tags").multi_entry(true)),
        )
        .build()
        .await
        .unwrap();
    let expected = schema(&raw("idb-theirs").await);
    assert!(!expected.contains("meta"), "the oracle deleted the store: {expected}");
    // rexie deletes indexes its layout does not name; the worker's layout only grows, and keeps them.
    let kept: String = schema(&ours)
        .lines()
        .filter(|line| !line.starts_with("  use "))
        .map(|line| line.to_owned() + "\n")
        .collect();
    assert_eq!(kept, expected);
    ours.close();
    theirs.close();
    idb::delete("idb-ours").await.unwrap();
    Rexie::delete("idb-theirs").await.unwrap();
}

#[wasm_bindgen_test]
async fn what_one_writes_the_other_reads_the_same() {
    let ours = idb::open("idb-rw", Some(1), &LAYOUT).await.unwrap();
    // Written by ours: in-line keys and one out-of-line.
    let transaction = idb::transaction(&ours, &["entries", "meta"], TransactionMode::Readwrite).unwrap();
    let entries = transaction.store("entries").unwrap();
    for record in RECORDS {
        entries.put(&json(record), None).await.unwrap();
    }
    transaction.store("meta").unwrap().put(&JsValue::from_f64(42.0), Some(&"mark".into())).await.unwrap();
    assert!(transaction.done().await.unwrap(), "committed");
    ours.close();

    let theirs = rexie_database("idb-rw", 1).await;
    let read = theirs.transaction(&["entries", "meta"], rexie::TransactionMode::ReadOnly).unwrap();
    let their_entries = read.store("entries").unwrap();
    assert_eq!(texts(&their_entries.get_all(None, None).await.unwrap()), RECORDS);
    let mark = read.store("meta").unwrap().get("mark".into()).await.unwrap().unwrap();
    assert_eq!(mark.as_f64(), Some(42.0));
    // Written by rexie: a fifth record, and a deletion.
    drop(read);
    let write = theirs.transaction(&["entries"], rexie::TransactionMode::ReadWrite).unwrap();
    let store = write.store("entries").unwrap();
    store
        .put(&json(r#"{"url":"https://a/5","cache":"c2","usedAt":1,"tags":["todos"]}"#), None)
        .await
        .unwrap();
    store.delete("https://a/4".into()).await.unwrap();
    write.done().await.unwrap();
    theirs.close();

    // Read back by both, each in its own transaction (one kept waiting while the other awaits would
    // end), then compared.
    let ours = idb::open("idb-rw", Some(1), &LAYOUT).await.unwrap();
    let mut our_reads: Vec<String> = Vec::new();
    {
        let read = idb::transaction(&ours, &["entries"], TransactionMode::Readonly).unwrap();
        let store = read.store("entries").unwrap();
        assert_eq!(store.get("https://a/4".into()).await.unwrap(), None);
        our_reads.push(text(&store.get("https://a/5".into()).await.unwrap().unwrap()));
        let after = || KeyRange::lower_bound(&"https://a/1".into(), Some(true)).unwrap();
        our_reads.extend(texts(&store.get_all(Some(after()), Some(2)).await.unwrap()));
        our_reads.extend(texts(&store.get_all_keys(None, None).await.unwrap()));
        let scanned = store.scan(Some(after()), Some(3)).await.unwrap();
        assert_eq!(scanned.len(), 3);
        our_reads.extend(scanned.iter().map(|(key, value)| text(key) + " " + &text(value)));
        let tags = store.index("tags").unwrap();
        let todos = JsValue::from_str("todos");
        our_reads.extend(texts(&tags.get_all(Some(KeyRange::only(&todos).unwrap()), None).await.unwrap()));
        let use_index = store.index("use").unwrap();
        let range = || KeyRange::bound(&bound(0.0), &bound(100.0), None, None).unwrap();
        let count = use_index.count(Some(range())).await.unwrap();
        assert_eq!(count, 2);
        our_reads.push(count.to_string());
        our_reads.extend(texts(&use_index.get_all_keys(Some(range()), Some(1)).await.unwrap()));
        let unique = tags.unique_keys(10).await.unwrap();
        assert_eq!(unique.len(), 3, "stats, todos, user:1");
        our_reads.extend(texts(&unique));
        our_reads.extend(texts(&tags.unique_keys(2).await.unwrap()));
    }
    ours.close();
    let theirs = rexie_database("idb-rw", 1).await;
    let mut their_reads: Vec<String> = Vec::new();
    {
        let read = theirs.transaction(&["entries"], rexie::TransactionMode::ReadOnly).unwrap();
        let store = read.store("entries").unwrap();
        assert_eq!(store.get("https://a/4".into()).await.unwrap(), None);
        their_reads.push(text(&store.get("https://a/5".into()).await.unwrap().unwrap()));
        let after = || rexie::KeyRange::lower_bound(&"https://a/1".into(), Some(true)).unwrap();
        their_reads.extend(texts(&store.get_all(Some(after()), Some(2)).await.unwrap()));
        their_reads.extend(texts(&store.get_all_keys(None, None).await.unwrap()));
        let scanned = store.scan(Some(after()), Some(3), None, None).await.unwrap();
        their_reads.extend(scanned.iter().map(|(key, value)| text(key) + " " + &text(value)));
        let tags = store.index("tags").unwrap();
        let todos = JsValue::from_str("todos");
        their_reads
            .extend(texts(&tags.get_all(Some(rexie::KeyRange::only(&todos).unwrap()), None).await.unwrap()));
        let use_index = store.index("use").unwrap();
        let range = || rexie::KeyRange::bound(&bound(0.0), &bound(100.0), None, None).unwrap();
        their_reads.push(use_index.count(Some(range())).await.unwrap().to_string());
        their_reads.extend(texts(&use_index.get_all_keys(Some(range()), Some(1)).await.unwrap()));
        let unique: Vec<JsValue> = tags
            .scan(None, Some(10), None, Some(rexie::Direction::NextUnique))
            .await
            .unwrap()
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        their_reads.extend(texts(&unique));
        their_reads.extend(texts(&unique[..2]));
    }
    theirs.close();
    assert_eq!(our_reads, their_reads);
    assert!(our_reads.len() > 15, "{our_reads:?}");
    idb::delete("idb-rw").await.unwrap();
}

#[wasm_bindgen_test]
async fn a_failed_request_is_an_error_that_aborts_its_transaction() {
    let ours = idb::open("idb-fail", Some(1), &LAYOUT).await.unwrap();
    let transaction = idb::transaction(&ours, &["entries"], TransactionMode::Readwrite).unwrap();
    let entries = transaction.store("entries").unwrap();
    entries.put(&json(RECORDS[0]), None).await.unwrap();
    // No `url`: the store's key path finds no key (a DataError, thrown as the request is made).
    let error = entries.put(&json(r#"{"cache":"c1"}"#), None).await.unwrap_err();
    assert_eq!(
        js_sys::Reflect::get(&error, &"name".into()).unwrap().as_string().as_deref(),
        Some("DataError")
    );
    // A request that fails once made (an `add` of a key it holds): the error event, then the abort.
    let add = transaction.raw().object_store("entries").unwrap().add(&json(RECORDS[0])).unwrap();
    let failed = idb::settled(&add).await.unwrap_err();
    assert_eq!(
        js_sys::Reflect::get(&failed, &"name".into()).unwrap().as_string().as_deref(),
        Some("ConstraintError")
    );
    assert!(!transaction.done().await.unwrap(), "aborted");
    assert!(transaction.error().is_some(), "the abort's cause");
    // Nothing of the aborted transaction was kept.
    let read = idb::transaction(&ours, &["entries"], TransactionMode::Readonly).unwrap();
    assert_eq!(read.store("entries").unwrap().get_all(None, None).await.unwrap().len(), 0);
    drop(read);
    ours.close();
    idb::delete("idb-fail").await.unwrap();
}
