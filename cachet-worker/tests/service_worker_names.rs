//! Request names (`sw::names`) in a real Service Worker: a naming is written as the pointer the shim
//! reads (the entry's cache, its URL, its stored-at mark, the time), a forgetting deletes every name, a
//! naming whose job began before a forgetting is never written, and a malformed hand-over from the start
//! module is refused naming it, writing nothing. (The shim's side, and every change that forgets, are
//! the e2e stories of `served_alone.rs`.)
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::engine::EntryKey;
use cachet_core::protocol::headers::STORED_AT_HEADER;
use cachet_core::protocol::storage::{NAME_ENTRY_CACHE_HEADER, NAME_ENTRY_URL_HEADER, NAME_UNTIL_HEADER};
use cachet_worker::sw::names::{epoch, forget_all, take_handed, write_handed, Naming};
use cachet_worker::sw::RUNTIME_CACHE;
use cachet_worker::Error;
use js_sys::{Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Headers, Response, ResponseInit};

wasm_bindgen_test_configure!(run_in_service_worker);

/// The names cache of an unstamped build (no `self.CACHET_BUILD` here).
const NAMES: &str = "cachet-names-unstamped";

fn origin() -> String {
    Reflect::get(&js_sys::global(), &"origin".into()).unwrap().as_string().unwrap()
}

/// A naming function as the shim's: a promise of `name`'s URL, whatever the body.
fn naming_function(name: &str) -> Function {
    Function::new_with_args("body", &format!("return Promise.resolve({name:?});"))
}

/// A stored answer as the engine stores it: marked with its stored-at time.
fn stored(at: &str) -> Response {
    let headers = Headers::new().unwrap();
    headers.set(STORED_AT_HEADER, at).unwrap();
    headers.set("x-cachet-source", "cache").unwrap();
    let init = ResponseInit::new();
    init.set_headers(&headers);
    Response::new_with_opt_str_and_init(Some("{}"), &init).unwrap()
}

/// The pointer written under `name`, if any.
async fn pointer(name: &str) -> Option<Response> {
    let caches = cachet_worker::sw::store::cache_storage().unwrap();
    let options = web_sys::CacheQueryOptions::new();
    Reflect::set(&options, &"cacheName".into(), &NAMES.into()).unwrap();
    let found = JsFuture::from(caches.match_with_str_and_options(name, &options)).await.unwrap();
    found.dyn_into::<Response>().ok()
}

fn naming(name: &str, url: &str, epoch: u64) -> Naming {
    let entry = EntryKey { cache: RUNTIME_CACHE, url: url.to_owned() };
    Naming::of(&naming_function(name), None, entry, &stored("1000"), 61_000, epoch).unwrap()
}

#[wasm_bindgen_test]
async fn a_naming_is_written_as_the_pointer_the_shim_reads_and_a_forgetting_deletes_it() {
    let (name, url) = (format!("{}/cachet-name/written", origin()), format!("{}/entry/written", origin()));
    naming(&name, &url, epoch()).write().await.unwrap();
    let written = pointer(&name).await.expect("written");
    let header = |header: &str| written.headers().get(header).unwrap();
    assert_eq!(header(NAME_ENTRY_CACHE_HEADER).as_deref(), Some(RUNTIME_CACHE));
    assert_eq!(header(NAME_ENTRY_URL_HEADER), Some(url));
    assert_eq!(header(STORED_AT_HEADER).as_deref(), Some("1000"));
    assert_eq!(header(NAME_UNTIL_HEADER).as_deref(), Some("61000"));
    forget_all().await.unwrap();
    assert!(pointer(&name).await.is_none(), "forgotten");
}

// The race a forgetting closes: a hit's naming made before an invalidation (or an identity written, or
// clear-all) began is never written after it.
#[wasm_bindgen_test]
async fn a_naming_whose_job_began_before_a_forgetting_is_never_written() {
    let (name, url) =
        (format!("{}/cachet-name/overtaken", origin()), format!("{}/entry/overtaken", origin()));
    let overtaken = naming(&name, &url, epoch());
    forget_all().await.unwrap();
    overtaken.write().await.unwrap();
    assert!(pointer(&name).await.is_none(), "not written");
    // A naming begun after the forgetting is.
    naming(&name, &url, epoch()).write().await.unwrap();
    assert!(pointer(&name).await.is_some(), "written");
    forget_all().await.unwrap();
}

#[wasm_bindgen_test]
async fn a_malformed_hand_over_is_refused_naming_it_and_writes_nothing() {
    let name = format!("{}/cachet-name/handed", origin());
    let url = format!("{}/entry/handed", origin());
    let good = || {
        [
            naming_function(&name).into(),
            JsValue::UNDEFINED,
            RUNTIME_CACHE.into(),
            JsValue::from_str(&url),
            stored("2000").into(),
            JsValue::from_f64(62_000.0),
        ]
        .into_iter()
        .collect::<Array>()
    };
    for field in 0..6 {
        let fields = good();
        // A URL is any string: a number is wrong there.
        let garbage = if field == 3 { JsValue::from_f64(7.0) } else { JsValue::from_str("garbage") };
        fields.set(field, garbage);
        // One good naming beside the bad one: nothing of the list is written.
        let list = Array::of2(&good(), &fields);
        let refused = write_handed(&list).await;
        assert!(matches!(refused, Err(Error::HandedStore { field: "named" })), "field {field}: {refused:?}");
        assert!(pointer(&name).await.is_none(), "field {field}: nothing written");
    }
    assert!(matches!(write_handed(&JsValue::from_str("garbage")).await, Err(Error::HandedStore { .. })));
    write_handed(&Array::of1(&good())).await.unwrap();
    let written = pointer(&name).await.expect("the good list is written");
    assert_eq!(written.headers().get(STORED_AT_HEADER).unwrap().as_deref(), Some("2000"));
    // The start module's side: nothing handed over yet in this worker.
    assert_eq!(take_handed().length(), 0);
    forget_all().await.unwrap();
}
