//! The shim's own open of the worker's database (`cachet-cli/js/service-worker.js`, the function
//! `openDatabaseEarly` between its markers, evaluated here as the shim has it; issue 32): it never creates
//! or upgrades the database (the engine does), gives `null` when it opened nothing (no database, an
//! upgrade it aborted, a blocked open), and otherwise the connection with the records of
//! `START_READS` in their order (`null` records when they could not be read). Its own test binary: the
//! wasm-bindgen runner gives each binary an origin of its own.
#![allow(clippy::unwrap_used)]

#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::protocol::storage::{DATABASE, START_READS, VERSION};
use cachet_worker::sw::database;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

mod common;
use common::database_names;

wasm_bindgen_test_configure!(run_in_service_worker);

const SHIM: &str = include_str!("../../cachet-cli/js/service-worker.js");

/// The shim's `openDatabaseEarly`, as a function of this worker.
fn open_database_early() -> js_sys::Function {
    let start = SHIM.find("// <openDatabaseEarly>").expect("the shim's start marker");
    let end = SHIM.find("// </openDatabaseEarly>").expect("the shim's end marker");
    let source = format!("{}\nreturn openDatabaseEarly();", &SHIM[start..end]);
    js_sys::Function::new_no_args(&source)
}

/// `self.CACHET_DATABASE` as `cachet generate` writes it, at `version`.
fn configure(version: u32) {
    let reads = js_sys::Array::new();
    for (store, key) in START_READS {
        let key = key.map(JsValue::from_str).unwrap_or(JsValue::NULL);
        reads.push(&js_sys::Array::of2(&store.into(), &key));
    }
    let wanted = js_sys::Object::new();
    js_sys::Reflect::set(&wanted, &"name".into(), &DATABASE.into()).unwrap();
    js_sys::Reflect::set(&wanted, &"version".into(), &version.into()).unwrap();
    js_sys::Reflect::set(&wanted, &"reads".into(), &reads).unwrap();
    js_sys::Reflect::set(&js_sys::global(), &"CACHET_DATABASE".into(), &wanted).unwrap();
}

/// What the shim's open gives (`null`, or `{database, records}`).
async fn shim_open() -> JsValue {
    // A promise, or `null` at once when there is nothing to open.
    let given = open_database_early().call0(&JsValue::UNDEFINED).unwrap();
    JsFuture::from(js_sys::Promise::resolve(&given)).await.unwrap()
}

fn field(value: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(value, &name.into()).unwrap()
}

#[wasm_bindgen_test]
async fn the_shim_opens_only_a_database_at_its_version_and_reads_the_start_records() {
    configure(VERSION);
    // No database yet: the upgrade is aborted, nothing is created, the engine is given nothing.
    assert!(shim_open().await.is_null());
    assert!(!database_names().await.iter().any(|name| name == DATABASE), "the shim created nothing");

    // The engine creates it (and writes the migration mark); the shim then opens it and reads, in the
    // order of START_READS, the mark, no identity, no generations.
    database::open().await.unwrap();
    database::forget_connection();
    let opened = shim_open().await;
    let connection = field(&opened, "database").dyn_into::<web_sys::IdbDatabase>().unwrap();
    assert_eq!((connection.name(), connection.version()), (DATABASE.to_owned(), f64::from(VERSION)));
    let records = field(&opened, "records").dyn_into::<js_sys::Array>().unwrap();
    assert_eq!(records.length() as usize, START_READS.len());
    assert!(!records.get(0).is_undefined(), "the migration mark");
    assert!(records.get(1).is_undefined(), "no identity stored");
    assert_eq!(records.get(2).dyn_into::<js_sys::Array>().unwrap().length(), 0, "no generations");

    // A later build's version while this connection is open without closing on versionchange (a page
    // of the old build may hold one so): blocked, so nothing; once it closes, the upgrade that follows
    // is aborted, and the database keeps its version.
    connection.set_onversionchange(None);
    configure(VERSION + 1);
    assert!(shim_open().await.is_null(), "blocked: the engine opens it itself");
    connection.close();
    configure(VERSION);
    let again = shim_open().await;
    let connection = field(&again, "database").dyn_into::<web_sys::IdbDatabase>().unwrap();
    assert_eq!(connection.version(), f64::from(VERSION), "the aborted upgrade changed nothing");
    connection.close();

    // Reads of a store the database does not have: the connection, without records.
    let wanted = field(&js_sys::global(), "CACHET_DATABASE");
    let reads = js_sys::Array::of1(&js_sys::Array::of2(&"no-such-store".into(), &JsValue::NULL));
    js_sys::Reflect::set(&wanted, &"reads".into(), &reads).unwrap();
    let unread = shim_open().await;
    assert!(field(&unread, "records").is_null());
    field(&unread, "database").dyn_into::<web_sys::IdbDatabase>().unwrap().close();

    // No `self.CACHET_DATABASE` (a config file older than the shim): nothing, and no open.
    js_sys::Reflect::set(&js_sys::global(), &"CACHET_DATABASE".into(), &JsValue::UNDEFINED).unwrap();
    assert!(shim_open().await.is_null());
}
