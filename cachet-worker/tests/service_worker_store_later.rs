//! A store the start module hands to the whole engine (`sw::store_later`), read and run by the whole
//! engine's side in a real Service Worker: a well-formed job is stored in Cache Storage, marked as the
//! engine marks its own entries; a job with any field missing, or of the wrong kind, is refused with an
//! error naming that field, and stores nothing. (The hand-over itself, through the shim, is the e2e
//! story `start_module::a_miss_answered_by_the_start_module_is_stored_by_the_whole_engine_before_its_next_lookup`.)
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_worker::sw::engine::store_handed;
use cachet_worker::sw::store_later::read;
use cachet_worker::sw::{open_cache, RUNTIME_CACHE, SOURCE_HEADER};
use cachet_worker::Error;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::Response;

wasm_bindgen_test_configure!(run_in_service_worker);

fn origin() -> String {
    Reflect::get(&js_sys::global(), &"origin".into()).unwrap().as_string().unwrap()
}

/// A job as the start module writes it, for a GET of `url`.
fn job(url: &str) -> Object {
    let job = Object::new();
    let set = |name: &str, value: &JsValue| {
        Reflect::set(&job, &name.into(), value).unwrap();
    };
    let body = br#"{"handed": true}"#;
    set("cache", &RUNTIME_CACHE.into());
    set("url", &url.into());
    set("announce", &url.into());
    set("tags", &Array::of1(&"handed".into()));
    set("keep", &100.0.into());
    set("now", &js_sys::Date::now().into());
    set("generation", &1.0.into());
    set("requestUrl", &url.into());
    set("strategy", &"cache-first".into());
    set("response", &Response::new_with_opt_str(Some("read by the page")).unwrap());
    set("body", &Uint8Array::from(&body[..]));
    job
}

#[wasm_bindgen_test]
fn a_handed_store_with_a_field_missing_or_of_the_wrong_kind_is_refused_naming_it() {
    let url = format!("{}/handed/refused", origin());
    assert!(read(&job(&url)).is_ok());
    let fields = [
        "cache",
        "url",
        "announce",
        "tags",
        "keep",
        "now",
        "generation",
        "requestUrl",
        "strategy",
        "response",
        "body",
    ];
    for field in fields {
        let missing = job(&url);
        Reflect::delete_property(&missing, &field.into()).unwrap();
        assert_eq!(read(&missing).err(), Some(Error::HandedStore { field }), "{field} missing");
    }
    let wrong: [(&'static str, JsValue); 10] = [
        ("cache", "another-cache".into()),
        ("url", 7.into()),
        ("tags", Array::of1(&3.into()).into()),
        ("keep", (-1.0).into()),
        ("keep", 1.5.into()),
        ("keep", 5_000_000_000.0.into()),
        ("now", 1e300.into()),
        ("strategy", "fastest".into()),
        ("response", "not a response".into()),
        ("requestBody", "not bytes".into()),
    ];
    for (field, value) in wrong {
        let bad = job(&url);
        Reflect::set(&bad, &field.into(), &value).unwrap();
        assert_eq!(read(&bad).err(), Some(Error::HandedStore { field }), "{field}: {value:?}");
    }
}

#[wasm_bindgen_test]
async fn a_handed_store_is_stored_as_the_engine_stores_its_own_and_a_refused_one_stores_nothing() {
    let cache = open_cache(RUNTIME_CACHE).await.unwrap();
    let stored = format!("{}/handed/stored", origin());
    JsFuture::from(store_handed(&job(&stored)).unwrap()).await.unwrap();
    let found: Response = JsFuture::from(cache.match_with_str(&stored)).await.unwrap().into();
    assert_eq!(found.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    let text = JsFuture::from(found.text().unwrap()).await.unwrap();
    assert_eq!(text.as_string().unwrap(), r#"{"handed": true}"#, "the handed bytes, not the answer's stream");

    let refused = format!("{}/handed/refused-whole", origin());
    let bad = job(&refused);
    Reflect::set(&bad, &"strategy".into(), &"fastest".into()).unwrap();
    assert_eq!(store_handed(&bad).err(), Some(Error::HandedStore { field: "strategy" }));
    assert!(JsFuture::from(cache.match_with_str(&refused)).await.unwrap().is_undefined());
}

/// A handed store's request began before the whole engine took any event: an invalidation of its tags
/// that the whole engine ran before the store (a page's message, which the shim gives it first)
/// overtakes it, and it is not kept (its tag is the test's own: the other handed stores here are not
/// covered).
#[wasm_bindgen_test]
async fn a_handed_store_that_an_invalidation_overtook_is_not_kept() {
    use cachet_worker::sw::invalidate::invalidate_tags;
    use cachet_worker::sw::tag_index::TagIndex;
    let index = TagIndex::open().await.unwrap();
    let tag = "handed-overtaken".to_owned();
    invalidate_tags(&index, std::slice::from_ref(&tag), &|promise| drop(promise)).await.unwrap();
    let url = format!("{}/handed/overtaken", origin());
    let handed = job(&url);
    Reflect::set(&handed, &"tags".into(), &Array::of1(&tag.as_str().into())).unwrap();
    JsFuture::from(store_handed(&handed).unwrap()).await.unwrap();
    let cache = open_cache(RUNTIME_CACHE).await.unwrap();
    assert!(JsFuture::from(cache.match_with_str(&url)).await.unwrap().is_undefined(), "not kept");
    assert!(!index.beyond(RUNTIME_CACHE, 0).await.unwrap().contains(&url), "no record either");
}

#[wasm_bindgen_test]
fn marks_of_use_handed_over_are_read_as_pairs_and_anything_else_is_refused() {
    use cachet_worker::sw::store_later::read_touches;
    let pair = |url: &str, at: f64| Array::of2(&url.into(), &at.into());
    let good = Array::of2(&pair("https://a.test/x", 5.0), &pair("https://a.test/y", 6.0));
    assert_eq!(
        read_touches(&good).unwrap(),
        [("https://a.test/x".to_owned(), 5), ("https://a.test/y".to_owned(), 6)]
    );
    assert_eq!(read_touches(&Array::new()).unwrap(), []);
    let refused = Some(Error::HandedStore { field: "touched" });
    for bad in [
        JsValue::from("not a list"),
        Array::of1(&"not a pair".into()).into(),
        Array::of1(&pair("https://a.test/x", -1.0)).into(),
        Array::of1(&pair("https://a.test/x", 0.5)).into(),
        Array::of1(&Array::of2(&5.into(), &5.into())).into(),
    ] {
        assert_eq!(read_touches(&bad).err(), refused, "{bad:?}");
    }
}
