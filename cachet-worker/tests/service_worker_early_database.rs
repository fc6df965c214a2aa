//! The connection the shim opens as the worker's script is evaluated, with the start records it read
//! (`service-worker.js`, `openDatabaseEarly`, left in `self.__cachet_database`; issue 32): the engine's
//! first open takes them instead of opening and reading itself, once, and only a connection to its own
//! database at its own version (records not one per read are read again); given nothing (`null`, no
//! promise) or something else, it opens its own. Its own test binary:
//! the wasm-bindgen runner gives each binary an origin of its own, and the instance's connection is
//! forgotten between the cases ([`database::forget_connection`]).
#![allow(clippy::unwrap_used)]

#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::protocol::storage::{DATABASE, VERSION};
use cachet_worker::sw::database::{self, EARLY_GLOBAL};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_service_worker);

/// Counts the calls of `indexedDB.open` with the worker's database name from now on (the factory's
/// `open` wrapped); returns a reader of the count.
fn count_opens() -> impl Fn() -> u32 {
    let wrap = js_sys::Function::new_with_args(
        "name",
        "const factory = self.indexedDB; const open = factory.open.bind(factory); self.__opens = 0; \
         factory.open = (database, version) => { if (database === name) self.__opens += 1; \
         return version === undefined ? open(database) : open(database, version); };",
    );
    wrap.call1(&JsValue::UNDEFINED, &DATABASE.into()).unwrap();
    || js_sys::Reflect::get(&js_sys::global(), &"__opens".into()).unwrap().as_f64().unwrap() as u32
}

/// Leaves what the shim gives where it leaves it: the connection and the records it read (`null`: not
/// read), or `null` (opened nothing).
fn plant(database: Option<&web_sys::IdbDatabase>, records: &JsValue) {
    let value = match database {
        Some(database) => {
            let opened = js_sys::Object::new();
            js_sys::Reflect::set(&opened, &"database".into(), database).unwrap();
            js_sys::Reflect::set(&opened, &"records".into(), records).unwrap();
            opened.into()
        }
        None => JsValue::NULL,
    };
    let promise = js_sys::Promise::resolve(&value);
    js_sys::Reflect::set(&js_sys::global(), &EARLY_GLOBAL.into(), &promise).unwrap();
}

fn planted() -> JsValue {
    js_sys::Reflect::get(&js_sys::global(), &EARLY_GLOBAL.into()).unwrap()
}

/// A connection opened as the shim opens it: the name and version, no upgrade.
async fn shim_open(name: &str, version: u32) -> web_sys::IdbDatabase {
    cachet_idb::open(name, Some(version), &[]).await.unwrap()
}

#[wasm_bindgen_test]
async fn the_engine_takes_the_connection_the_shim_opened_once_and_only_its_own() {
    let opens = count_opens();

    // Nothing left by a shim (an older shim, the tests): the engine opens and creates its database.
    let own = database::open().await.unwrap();
    assert_eq!(opens(), 1);
    assert!(["entries", "generations", "identity", "queue", "meta"]
        .iter()
        .all(|s| own.object_store_names().contains(s)));
    database::forget_connection();

    // The shim's connection without its records: taken, and the engine opens nothing of its own but
    // reads the records itself (the first open wrote the migration mark; no identity is stored).
    let shim = shim_open(DATABASE, VERSION).await;
    assert_eq!(opens(), 2, "the shim's own open");
    plant(Some(&shim), &JsValue::NULL);
    let taken = database::open().await.unwrap();
    assert_eq!(JsValue::from(&*taken), JsValue::from(&shim), "the shim's connection is the engine's");
    assert_eq!(opens(), 2, "no open of the engine's own");
    assert!(planted().is_undefined(), "taken once: a later open opens its own");
    assert_eq!(database::take_start_identity(), Some(None), "read by the engine: none stored");
    database::forget_connection();
    database::open().await.unwrap();
    assert_eq!(opens(), 3, "a second open of the instance does not look for the shim's again");
    database::forget_connection();

    // With the records the shim read (the mark, an identity, the generations): the engine reads none
    // itself, and its readers get the shim's (an identity the database does not hold shows it).
    let shim = shim_open(DATABASE, VERSION).await;
    let records = js_sys::Array::of3(&1.into(), &"planted".into(), &js_sys::Array::new());
    plant(Some(&shim), &records);
    let taken = database::open().await.unwrap();
    assert_eq!(JsValue::from(&*taken), JsValue::from(&shim));
    assert_eq!(database::take_start_identity(), Some(Some(JsValue::from_str("planted"))));
    assert_eq!(database::take_start_generations().map(|records| records.len()), Some(0));
    database::forget_connection();

    // Records not one per read: read again by the engine.
    let shim = shim_open(DATABASE, VERSION).await;
    plant(Some(&shim), &js_sys::Array::of1(&1.into()));
    database::open().await.unwrap();
    assert_eq!(database::take_start_identity(), Some(None));
    database::forget_connection();

    // The shim opened nothing (an upgrade it left to the engine, an error): the engine opens its own.
    let before = opens();
    plant(None, &JsValue::NULL);
    database::open().await.unwrap();
    assert_eq!(opens(), before + 1);
    database::forget_connection();

    // A connection to another database is not taken, and is closed.
    let other = shim_open("not-cachet", 1).await;
    plant(Some(&other), &JsValue::NULL);
    let taken = database::open().await.unwrap();
    assert_ne!(JsValue::from(&*taken), JsValue::from(&other));
    assert_eq!(opens(), before + 2);
    let closed = other.transaction_with_str("anything").unwrap_err();
    assert_eq!(closed.unchecked_into::<web_sys::DomException>().name(), "InvalidStateError", "closed");
}
