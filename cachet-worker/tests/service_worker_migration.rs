//! An app upgraded in place (issue 32): the three IndexedDB databases of earlier builds
//! (`cachet_core::protocol::storage::LEGACY`) are moved into the worker's one database on its first open,
//! whole (the signed-in user, the queue and a record kept aside as unreadable, the entry index, the
//! generations), and then deleted; a database of the worker's name without its layout is replaced. Its own test binary: the wasm-bindgen runner gives each binary an
//! origin of its own, so the worker's database does not exist before this test writes the legacy ones.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::config::QueueBounds;
use cachet_core::machines::queue::{QueueEvent, QueueState, QueuedRequest};
use cachet_core::partition::Identity;
use cachet_core::protocol::storage::{DATABASE, LEGACY};
use cachet_worker::sw::tag_index::TagIndex;
use cachet_worker::sw::{identity, queue_store};
use rexie::{Index, ObjectStore, Rexie, TransactionMode};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

mod common;
use common::database_names;

wasm_bindgen_test_configure!(run_in_service_worker);

/// Writes `records` (`(key, value)`, `None` for an in-line key) into `store` of the database `name`.
async fn write(database: &Rexie, store: &str, records: &[(Option<&str>, JsValue)]) {
    let transaction = database.transaction(&[store], TransactionMode::ReadWrite).unwrap();
    let object_store = transaction.store(store).unwrap();
    for (key, value) in records {
        object_store.put(value, key.map(JsValue::from_str).as_ref()).await.unwrap();
    }
    transaction.done().await.unwrap();
}

fn json(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap()
}

#[wasm_bindgen_test]
async fn the_databases_of_an_earlier_build_are_moved_in_whole_and_deleted() {
    assert!(!database_names().await.iter().any(|name| name == DATABASE), "a fresh origin");
    // The worker's database as a page may leave it when it opens it with no version before the worker
    // created it (after the origin's IndexedDB was cleared): at the worker's version, without its
    // layout. The worker replaces it.
    Rexie::builder(DATABASE).build().await.unwrap().close();

    // What a build before the move left: the identity, ...
    let alice = Identity::after_set(None, Some("alice".into()), Some(auth_fingerprint("Bearer A"))).unwrap();
    let old = Rexie::builder("cachet-sw-identity")
        .version(1)
        .add_object_store(ObjectStore::new("identity"))
        .build()
        .await
        .unwrap();
    write(&old, "identity", &[(Some("current"), alice.to_json().into())]).await;
    old.close();
    // ... the queue (one mutation waiting) and a record kept aside as unreadable, ...
    let request = QueuedRequest {
        method: "POST".into(),
        url: "https://t.invalid/graphql".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: r#"{"query":"mutation AddTodo { addTodo(title: \"milk\") { id } }"}"#.into(),
        operation_name: Some("AddTodo".into()),
        invalidate: vec!["todos".into()],
    };
    let (state, _) = QueueState::new(QueueBounds::default(), true).reduce(QueueEvent::Offline);
    let (state, _) = state.reduce(QueueEvent::Enqueue { request, now: 1_000, random: 7 });
    let queued = state.to_json();
    let old = Rexie::builder("cachet-sw-queue")
        .version(1)
        .add_object_store(ObjectStore::new("queue"))
        .build()
        .await
        .unwrap();
    let aside = "{\"items\": [";
    write(&old, "queue", &[(Some("state"), queued.as_str().into()), (Some("unreadable-5"), aside.into())])
        .await;
    old.close();
    // ... and the entry index with its generations (version 2 of `cachet-sw`).
    let entry = "https://t.invalid/__cachet/gql/alice/e1/k1";
    let old = Rexie::builder("cachet-sw")
        .version(2)
        .add_object_store(
            ObjectStore::new("entries")
                .key_path("url")
                .add_index(Index::new("tags", "tags").multi_entry(true))
                .add_index(Index::new_array("cacheUsedAt", ["cache", "usedAt"])),
        )
        .add_object_store(ObjectStore::new("generations").key_path("tag"))
        .build()
        .await
        .unwrap();
    let record = format!(
        r#"{{"url":"{entry}","cache":"cachet-graphql-v2","tags":["todos"],"generation":4,"storedAt":9,"usedAt":9}}"#
    );
    write(&old, "entries", &[(None, json(&record))]).await;
    let generations = [r#"{"tag":"","clock":6,"floor":0}"#, r#"{"tag":"todo","at":5}"#];
    write(&old, "generations", &generations.map(|record| (None, json(record)))).await;
    old.close();

    // The worker's first open moves them in: its identity, its queue, its index.
    assert_eq!(identity::current().await.unwrap(), Some(alice));
    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    assert_eq!(state.items.len(), 1, "{}", state.to_json());
    assert_eq!(state.items[0].request.operation_name.as_deref(), Some("AddTodo"));
    let unreadable = queue_store::unreadable().await.unwrap();
    assert_eq!(unreadable, vec![("unreadable-5".to_owned(), aside.to_owned())]);
    let index = TagIndex::open().await.unwrap();
    let tagged = index.entries_tagged(&["todos".to_owned()]).await.unwrap();
    assert_eq!(tagged, vec![(entry.to_owned(), "cachet-graphql-v2".to_owned())]);
    // The generations, record for record.
    let database = Rexie::builder(DATABASE).build().await.unwrap();
    let transaction = database.transaction(&["generations"], TransactionMode::ReadOnly).unwrap();
    let stored = transaction.store("generations").unwrap().get_all(None, None).await.unwrap();
    let stored: Vec<String> =
        stored.iter().map(|record| js_sys::JSON::stringify(record).unwrap().as_string().unwrap()).collect();
    assert_eq!(stored, generations.map(|record| record.replace(' ', "")).to_vec());
    database.close();

    // The legacy databases are deleted (in the background: waited for, within 5 s).
    let legacy: Vec<&str> = LEGACY.iter().map(|(name, _)| *name).collect();
    let started = js_sys::Date::now();
    loop {
        let names = database_names().await;
        if !names.iter().any(|name| legacy.contains(&name.as_str())) {
            assert!(names.iter().any(|name| name == DATABASE));
            break;
        }
        assert!(js_sys::Date::now() - started < 5_000.0, "still there after 5 s: {names:?}");
        let tick = js_sys::Promise::new(&mut |resolve, _| {
            let global: web_sys::WorkerGlobalScope = JsValue::from(js_sys::global()).into();
            global.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 20).unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(tick).await.unwrap();
    }
}
