//! The whole engine's `activate()` in a real Service Worker, on a new store: the generations' clock
//! record is written at activation (a stopped worker's start module, which never writes the generations,
//! then finds it, rather than leaving its requests to the whole engine until a routed request of this
//! instance had it written). In its own binary: `install()` sets the worker's engine global.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::generations::CLOCK_KEY;
use cachet_core::protocol::storage::{DATABASE, GENERATIONS};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_service_worker);

/// The clock record of the worker's database, read by hand (`undefined` when absent).
async fn clock_record() -> JsValue {
    let read = Function::new_with_args(
        "name, store, key",
        "return new Promise((resolve, reject) => {
           const open = indexedDB.open(name);
           open.onerror = () => reject(open.error);
           open.onsuccess = () => {
             const db = open.result;
             if (!db.objectStoreNames.contains(store)) { db.close(); resolve(undefined); return; }
             const get = db.transaction(store).objectStore(store).get(key);
             get.onsuccess = () => { db.close(); resolve(get.result); };
             get.onerror = () => { db.close(); reject(get.error); };
           };
         });",
    );
    let promise = read
        .call3(&JsValue::NULL, &DATABASE.into(), &GENERATIONS.into(), &CLOCK_KEY.into())
        .unwrap()
        .dyn_into::<Promise>()
        .unwrap();
    JsFuture::from(promise).await.unwrap()
}

#[wasm_bindgen_test]
async fn activation_writes_a_new_stores_generations_clock() {
    cachet_worker::sw::install();
    let engine = Reflect::get(&js_sys::global(), &"__cachet_engine".into()).unwrap();
    assert!(clock_record().await.is_undefined(), "a new store: no clock before activation");
    let activate = Reflect::get(&engine, &"activate".into()).unwrap().dyn_into::<Function>().unwrap();
    let activated = activate.call0(&engine).unwrap().dyn_into::<Promise>().unwrap();
    JsFuture::from(activated).await.unwrap();
    let clock = clock_record().await;
    assert!(!clock.is_undefined(), "written at activation");
    let field = |name: &str| Reflect::get(&clock, &name.into()).unwrap().as_f64();
    assert_eq!((field("clock"), field("floor")), (Some(0.0), Some(0.0)), "a new store's clock");
}
