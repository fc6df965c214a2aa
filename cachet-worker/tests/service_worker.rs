//! The strategies, run inside a real Service Worker in headless Chromium.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::CacheBounds;
use cachet_core::engine::EntryKey;
use cachet_core::protocol::SwEvent;
use cachet_worker::sw::invalidate::invalidate_tags;
use cachet_worker::sw::tag_index::TagIndex;
use cachet_worker::sw::{
    broadcast::broadcast, open_cache, respond, Strategy, Target, DOCUMENT_CACHE, RUNTIME_CACHE, SOURCE_HEADER,
};
use cachet_worker::Error;
use js_sys::Promise;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Request, Response};

wasm_bindgen_test_configure!(run_in_service_worker);

mod common;
use common::{listen_for_events, next_event};

/// A URL on the test server (the SW's own script): the network answers it with 200.
fn reachable_url() -> String {
    let location = js_sys::Reflect::get(&js_sys::global(), &"location".into()).unwrap();
    js_sys::Reflect::get(&location, &"href".into()).unwrap().as_string().unwrap()
}

/// Nothing listens on port 9 of 127.0.0.1: fetching it is a network error.
const UNREACHABLE_URL: &str = "http://127.0.0.1:9/unreachable";

/// A response as the worker stores it: with `headers` and a generation stamp that no invalidation in
/// these tests reaches (a response stored without one is never current).
fn stamped(body: &str, headers: &[(&str, &str)]) -> Response {
    use cachet_core::generations::{stamp_header, GENERATION_HEADER, MAX_GENERATION};
    let init = web_sys::ResponseInit::new();
    let all = web_sys::Headers::new().unwrap();
    all.set(GENERATION_HEADER, &stamp_header(MAX_GENERATION, &[])).unwrap();
    for (name, value) in headers {
        all.set(name, value).unwrap();
    }
    init.set_headers(&all);
    Response::new_with_opt_str_and_init(Some(body), &init).unwrap()
}

async fn text(response: Response) -> String {
    JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap()
}

#[wasm_bindgen_test]
async fn network_first_stores_then_cache_only_answers_from_the_cache() {
    open_index().await;
    let url = reachable_url();
    let request = Request::new_with_str(&url).unwrap();
    let fresh =
        respond_settled(&target_in("test-network-first", &request), Strategy::NetworkFirst).await.unwrap();
    assert_eq!(fresh.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("network"));
    let network_body = text(fresh).await;
    assert!(!network_body.is_empty());
    // Stored already marked, so that a hit hands the cache's own response on, unwrapped.
    let cache = open_cache("test-network-first").await.unwrap();
    let stored: Response = JsFuture::from(cache.match_with_str(&url)).await.unwrap().dyn_into().unwrap();
    assert_eq!(stored.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));

    let request = Request::new_with_str(&url).unwrap();
    let cached =
        respond_settled(&target_in("test-network-first", &request), Strategy::CacheOnly).await.unwrap();
    assert_eq!(cached.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    assert_eq!(text(cached).await, network_body);
}

#[wasm_bindgen_test]
async fn network_first_falls_back_to_the_cache_and_fails_typed_without_one() {
    open_index().await;
    let cache = open_cache("test-fallback").await.unwrap();
    let request = Request::new_with_str(UNREACHABLE_URL).unwrap();
    let error =
        respond_settled(&target_in("test-fallback", &request), Strategy::NetworkFirst).await.unwrap_err();
    assert!(matches!(error, Error::Network { ref url, .. } if url == UNREACHABLE_URL), "{error:?}");

    let stored = stamped("kept", &[]);
    JsFuture::from(cache.put_with_str(UNREACHABLE_URL, &stored)).await.unwrap();
    let request = Request::new_with_str(UNREACHABLE_URL).unwrap();
    let answer =
        respond_settled(&target_in("test-fallback", &request), Strategy::NetworkFirst).await.unwrap();
    assert_eq!(answer.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    assert_eq!(text(answer).await, "kept");
}

/// A navigation's preloaded answer (`FetchEvent.preloadResponse`) is its network step's answer: used and
/// stored as a fetch's would be, with no request of the worker's own (the URL here is unreachable).
#[wasm_bindgen_test]
async fn a_preloaded_answer_is_the_network_steps_and_is_stored_without_a_fetch() {
    open_index().await;
    let request = Request::new_with_str(UNREACHABLE_URL).unwrap();
    let mut target = target_in("test-preload", &request);
    let preloaded: wasm_bindgen::JsValue = Response::new_with_opt_str(Some("preloaded")).unwrap().into();
    target.preload = Some(Promise::resolve(&preloaded));
    let answer = respond_settled(&target, Strategy::NetworkFirst).await.unwrap();
    assert_eq!(answer.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("network"));
    assert_eq!(text(answer).await, "preloaded");
    let cache = open_cache("test-preload").await.unwrap();
    let stored: Response =
        JsFuture::from(cache.match_with_str(UNREACHABLE_URL)).await.unwrap().dyn_into().unwrap();
    assert_eq!(text(stored).await, "preloaded");
}

/// A preload that resolves to nothing (the browser made none) leaves the step to a fetch; one that fails
/// is the network's failure, after which network-first serves the stored answer.
#[wasm_bindgen_test]
async fn without_a_preload_the_step_fetches_and_a_failed_preload_falls_back_to_the_cache() {
    open_index().await;
    let url = reachable_url();
    let request = Request::new_with_str(&url).unwrap();
    let mut target = target_in("test-preload-none", &request);
    target.preload = Some(Promise::resolve(&wasm_bindgen::JsValue::UNDEFINED));
    let fetched = respond_settled(&target, Strategy::NetworkFirst).await.unwrap();
    assert_eq!(fetched.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("network"));
    assert!(!text(fetched).await.is_empty());

    // Stored under a URL of its own: a hit marks its URL used, which another test's hit must not see.
    let stored_at = "https://t.invalid/preload-failed";
    let cache = open_cache("test-preload-failed").await.unwrap();
    JsFuture::from(cache.put_with_str(stored_at, &stamped("kept", &[]))).await.unwrap();
    let mut target = at(stored_at, target_in("test-preload-failed", &request));
    target.preload = Some(Promise::reject(&"preload failed".into()));
    let answer = respond_settled(&target, Strategy::NetworkFirst).await.unwrap();
    assert_eq!(answer.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    assert_eq!(text(answer).await, "kept");
}

#[wasm_bindgen_test]
async fn cache_only_without_an_entry_is_a_typed_not_cached_error() {
    open_index().await;
    let request = Request::new_with_str(UNREACHABLE_URL).unwrap();
    let error =
        respond_settled(&target_in("test-cache-only", &request), Strategy::CacheOnly).await.unwrap_err();
    assert_eq!(error, Error::NotCached { url: UNREACHABLE_URL.to_owned() });
}

#[wasm_bindgen_test]
async fn stale_while_revalidate_answers_stale_and_refreshes_in_the_background() {
    open_index().await;
    let cache = open_cache("test-swr").await.unwrap();
    let url = reachable_url();
    let stale = stamped("stale copy", &[]);
    JsFuture::from(cache.put_with_str(&url, &stale)).await.unwrap();

    let updates = listen_for_events();
    let background: Rc<RefCell<Vec<Promise>>> = Rc::default();
    let collector = background.clone();
    let request = Request::new_with_str(&url).unwrap();
    let mut swr = target_in("test-swr", &request);
    swr.job.strategy = Strategy::StaleWhileRevalidate;
    let answer = respond(swr, Rc::new(move |promise| collector.borrow_mut().push(promise))).await.unwrap();
    assert_eq!(text(answer).await, "stale copy");
    let pending = background.borrow_mut().drain(..).collect::<Vec<_>>();
    assert_eq!(pending.len(), 2, "marking the hit used, and one background re-fetch");
    for promise in pending {
        JsFuture::from(promise).await.unwrap();
    }
    let request = Request::new_with_str(&url).unwrap();
    let refreshed = respond_settled(&target_in("test-swr", &request), Strategy::CacheOnly).await.unwrap();
    assert_ne!(text(refreshed).await, "stale copy", "the background re-fetch replaced the entry");
    let event = next_event(&updates).await;
    assert_eq!(event, SwEvent::CacheUpdated { url });
}

#[wasm_bindgen_test]
async fn broadcast_reaches_another_channel_of_the_origin() {
    let events = listen_for_events();
    broadcast(&SwEvent::Activated { build: "test-build".into() }).unwrap();
    assert_eq!(next_event(&events).await, SwEvent::Activated { build: "test-build".into() });
}

/// Bounds that never bind, unless a test narrows them.
fn roomy() -> CacheBounds {
    CacheBounds {
        max_entries: 1_000,
        max_age_seconds: 86_400,
        max_body_bytes: 1_000,
        stale_if_error_seconds: 0,
    }
}

thread_local! {
    static INDEX: RefCell<Option<Rc<TagIndex>>> = const { RefCell::new(None) };
}

/// The index opened by the first test that asks (the helpers are synchronous).
fn index() -> Rc<TagIndex> {
    INDEX.with(|cell| cell.borrow().clone()).expect("open_index().await first")
}

async fn open_index() -> Rc<TagIndex> {
    let index = Rc::new(TagIndex::open().await.unwrap());
    INDEX.with(|cell| *cell.borrow_mut() = Some(index.clone()));
    index
}

/// A GET of `request` stored by its URL in the cache named `cache`, with no body bound.
fn target_in(cache: &'static str, request: &Request) -> Target {
    let mut target = Target::get(request, Strategy::CacheFirst, roomy(), index());
    target.job.bounds.max_body_bytes = u64::MAX;
    target.job.entry = Some(EntryKey { cache, url: request.url() });
    target
}

/// `target` stored at `url` instead of its request's URL.
fn at(url: &str, mut target: Target) -> Target {
    target.job.entry = target.job.entry.map(|entry| EntryKey { url: url.to_owned(), ..entry });
    target
}

/// The URLs of the entries carrying one of `tags`.
async fn urls_tagged(index: &TagIndex, tags: &[String]) -> Vec<String> {
    index.entries_tagged(tags).await.unwrap().into_iter().map(|(url, _)| url).collect()
}

/// A request whose network answer is `body` (a `data:` URL: no server needed).
fn answering(body: &str) -> Request {
    let encoded = String::from(js_sys::encode_uri_component(body));
    Request::new_with_str(&format!("data:application/json,{encoded}")).unwrap()
}

fn graphql_target(body: &str, cache_url: &str, index: &Rc<TagIndex>, tags: &[&str]) -> Target {
    let mut target = Target::get(&answering(body), Strategy::CacheFirst, roomy(), index.clone());
    target.job.entry = Some(EntryKey { cache: DOCUMENT_CACHE, url: cache_url.to_owned() });
    target.job.document = true;
    target.job.tags = tags.iter().map(|tag| (*tag).to_owned()).collect();
    target
}

#[wasm_bindgen_test]
async fn the_tag_index_finds_entries_by_any_tag_and_forgets_them() {
    let index = TagIndex::open().await.unwrap();
    let (one, two, three) = ("https://t.invalid/1", "https://t.invalid/2", "https://t.invalid/3");
    index.record(one, "c", &["notes".into(), "getnotes".into()], 1).await.unwrap();
    index.record(two, "c", &["notes".into()], 2).await.unwrap();
    index.record(three, "c", &["dashboard".into()], 3).await.unwrap();
    let mut found = urls_tagged(&index, &["notes".into()]).await;
    found.sort();
    assert_eq!(found, [one, two]);
    let mut found = urls_tagged(&index, &["getnotes".into(), "dashboard".into(), "notes".into()]).await;
    found.sort();
    assert_eq!(found, [one, two, three], "each entry once");
    assert!(urls_tagged(&index, &["user".into(), "users".into()]).await.is_empty());
    index.remove(&[one.to_owned(), two.to_owned(), three.to_owned()]).await.unwrap();
    assert!(urls_tagged(&index, &["notes".into(), "dashboard".into()]).await.is_empty());
}

#[wasm_bindgen_test]
async fn only_complete_graphql_results_within_the_bound_are_stored_with_their_tags() {
    let cache = open_cache(DOCUMENT_CACHE).await.unwrap();
    let index = Rc::new(TagIndex::open().await.unwrap());
    let table = [
        ("https://t.invalid/__cachet/gql/anonymous/ok", r#"{"data":{"notes":[]}}"#, true),
        ("https://t.invalid/__cachet/gql/anonymous/errors", r#"{"errors":[{"message":"no"}]}"#, false),
        ("https://t.invalid/__cachet/gql/anonymous/garbage", r#"{"data": {"#, false),
        (
            "https://t.invalid/__cachet/gql/anonymous/big",
            &format!(r#"{{"data":{{"x":"{}"}}}}"#, "x".repeat(2_000)),
            false,
        ),
    ];
    for (cache_url, body, stored) in table {
        let target = graphql_target(body, cache_url, &index, &["store-test"]);
        let answer = respond_settled(&target, Strategy::CacheFirst).await.unwrap();
        assert_eq!(answer.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("network"));
        assert_eq!(text(answer).await, body, "the caller always gets the server's answer");
        let hit = JsFuture::from(cache.match_with_str(cache_url)).await.unwrap();
        assert_eq!(!hit.is_undefined(), stored, "{cache_url} stored?");
    }
    assert_eq!(
        urls_tagged(&index, &["store-test".into()]).await,
        ["https://t.invalid/__cachet/gql/anonymous/ok"],
        "only the stored entry is indexed"
    );
    index.remove(&["https://t.invalid/__cachet/gql/anonymous/ok".to_owned()]).await.unwrap();
}

#[wasm_bindgen_test]
async fn an_invalidated_entry_is_absent_at_once_and_swept_after() {
    let cache = open_cache(DOCUMENT_CACHE).await.unwrap();
    let index = Rc::new(TagIndex::open().await.unwrap());
    let notes = "https://t.invalid/__cachet/gql/anonymous/notes";
    let note = "https://t.invalid/__cachet/gql/anonymous/note";
    let dashboard = "https://t.invalid/__cachet/gql/anonymous/dashboard";
    let entries =
        [(notes, &["notes", "getnotes"][..]), (note, &["note"][..]), (dashboard, &["dashboard"][..])];
    for (url, tags) in entries {
        let target = graphql_target(r#"{"data":{"x":1}}"#, url, &index, tags);
        respond_settled(&target, Strategy::CacheFirst).await.unwrap();
    }
    let events = listen_for_events();
    // CreateNote invalidates note and notes; the dashboard entry is untouched.
    let sweeps: Rc<RefCell<Vec<Promise>>> = Rc::default();
    let collector = sweeps.clone();
    let background = move |promise: Promise| collector.borrow_mut().push(promise);
    invalidate_tags(&index, &["note".into(), "notes".into()], &background).await.unwrap();
    assert_eq!(
        next_event(&events).await,
        SwEvent::CacheInvalidated { tags: vec!["note".into(), "notes".into()] }
    );
    assert_eq!(sweeps.borrow().len(), 1, "the sweep is handed to waitUntil, not awaited");
    // Absent to the reader at once: cache-only finds nothing, while the stored copies wait for the sweep.
    for (url, tags) in entries {
        let target = graphql_target(r#"{"data":{"x":2}}"#, url, &index, tags);
        let answer = respond_settled(&target, Strategy::CacheOnly).await;
        assert_eq!(answer.is_ok(), url == dashboard, "{url}");
    }
    let pending: Vec<Promise> = sweeps.borrow_mut().drain(..).collect();
    for promise in pending {
        JsFuture::from(promise).await.unwrap();
    }
    for (url, present) in [(notes, false), (note, false), (dashboard, true)] {
        let hit = JsFuture::from(cache.match_with_str(url)).await.unwrap();
        assert_eq!(!hit.is_undefined(), present, "{url} after the sweep");
    }
    assert!(urls_tagged(&index, &["note".into(), "notes".into()]).await.is_empty(), "their records too");
    assert_eq!(urls_tagged(&index, &["dashboard".into()]).await, [dashboard]);
    // Stored again, the next answer is current.
    let again = graphql_target(r#"{"data":{"x":3}}"#, notes, &index, &["notes"]);
    respond_settled(&again, Strategy::CacheFirst).await.unwrap();
    let hit = respond_settled(&again, Strategy::CacheOnly).await.unwrap();
    assert_eq!(text(hit).await, r#"{"data":{"x":3}}"#);
    index.remove(&[dashboard.to_owned(), notes.to_owned()]).await.unwrap();
}

#[wasm_bindgen_test]
async fn clear_all_purges_cachets_caches_and_index_but_keeps_the_wasm_and_foreign_caches() {
    use cachet_worker::sw::messages::clear_all;
    use cachet_worker::sw::RUNTIME_CACHE;
    let storage: web_sys::CacheStorage =
        js_sys::Reflect::get(&js_sys::global(), &"caches".into()).unwrap().unchecked_into();
    let index = Rc::new(TagIndex::open().await.unwrap());
    let runtime = open_cache(RUNTIME_CACHE).await.unwrap();
    JsFuture::from(runtime.put_with_str("https://t.invalid/a", &Response::new().unwrap())).await.unwrap();
    let target =
        graphql_target(r#"{"data":{"x":1}}"#, "https://t.invalid/__cachet/gql/anonymous/k", &index, &["x"]);
    respond_settled(&target, Strategy::CacheFirst).await.unwrap();
    for kept in ["cachet-sw-wasm-test", "the-apps-own-cache"] {
        open_cache(kept).await.unwrap();
    }
    cachet_worker::sw::identity::set(Some("partition-of-someone".into()), None).await.unwrap();
    assert_eq!(
        cachet_worker::sw::identity::current().await.unwrap().map(|identity| identity.partition).as_deref(),
        Some("partition-of-someone")
    );

    clear_all().await.unwrap();
    assert_eq!(cachet_worker::sw::identity::current().await.unwrap(), None, "the identity is forgotten");
    for (name, present) in [
        (RUNTIME_CACHE, false),
        (DOCUMENT_CACHE, false),
        ("cachet-sw-wasm-test", true),
        ("the-apps-own-cache", true),
    ] {
        let has = JsFuture::from(storage.has(name)).await.unwrap();
        assert_eq!(has.as_bool(), Some(present), "{name}");
    }
    assert!(urls_tagged(&index, &["x".into()]).await.is_empty(), "the tag index is empty");
}

/// A query answered while a clear-all is deleting the caches (its job begun after the purge did, so
/// not a stale answer) is stored whole once the purge is done: its record with its entry. Found by
/// `chaos_killed_mid_write` on CI (a record without its entry after a completed clear-all): the store
/// opened its cache before it waited for the clear-all's writes, and put its answer into the cache the
/// purge then deleted, while its record went into the index. Here the clear-all's deletion of the
/// document cache is held until the store's first steps have run.
#[wasm_bindgen_test]
async fn an_answer_that_arrives_during_a_clear_all_is_stored_whole_after_it() {
    use cachet_worker::sw::messages::clear_all;
    let global = js_sys::global();
    let index = open_index().await;
    let url = "https://t.invalid/__cachet/gql/anonymous/during-clear-all";
    let deleting = js_sys::Function::new_with_args(
        "name",
        "const proto = self.CacheStorage.prototype; const del = proto.delete;
         return new Promise((resolve) => { proto.delete = function (asked) {
           if (asked !== name) return del.call(this, asked);
           proto.delete = del; resolve(true);
           return new Promise((done) => { self.__releaseDelete = () => done(del.call(this, asked)); }); }; });",
    )
    .call1(&global, &DOCUMENT_CACHE.into())
    .unwrap();
    let (cleared_tx, cleared) = futures::channel::oneshot::channel();
    wasm_bindgen_futures::spawn_local(async move {
        let _ = cleared_tx.send(clear_all().await);
    });
    JsFuture::from(Promise::from(deleting)).await.unwrap();
    // The purge holds the writes and is deleting the caches: a query's answer arrives.
    let mut target = graphql_target(r#"{"data":{"x":1}}"#, url, &index, &["x"]);
    target.job.strategy = Strategy::NetworkFirst;
    let background: Rc<RefCell<Vec<Promise>>> = Rc::default();
    let collector = background.clone();
    let answer = respond(target, Rc::new(move |promise| collector.borrow_mut().push(promise))).await;
    assert_eq!(answer.unwrap().status(), 200);
    // The store begins a task after the answer (`after_answer`, its timer set once the microtasks
    // after the answer have run): a task queued after a first one runs after the store's first steps,
    // which end in Cache Storage or in the wait for the purge's writes.
    let task = js_sys::Function::new_no_args("return new Promise((r) => setTimeout(r, 0));");
    for _ in 0..2 {
        JsFuture::from(Promise::from(task.call0(&global).unwrap())).await.unwrap();
    }
    js_sys::Function::new_no_args("self.__releaseDelete();").call0(&global).unwrap();
    cleared.await.unwrap().unwrap();
    let pending = background.borrow_mut().drain(..).collect::<Vec<_>>();
    for promise in pending {
        JsFuture::from(promise).await.unwrap();
    }

    let recorded = index.beyond(DOCUMENT_CACHE, 0).await.unwrap();
    let cache = open_cache(DOCUMENT_CACHE).await.unwrap();
    let entry = !JsFuture::from(cache.match_with_str(url)).await.unwrap().is_undefined();
    assert_eq!((recorded, entry), (vec![url.to_owned()], true), "its record, and its entry");
    index.remove(&[url.to_owned()]).await.unwrap();
    JsFuture::from(cache.delete_with_str(url)).await.unwrap();
}

/// The shim's copy of an answer it gave the page itself (a script, a document: `handsOver`) has its job
/// run once the worker is quiet, up to a second later. A clear-all begun in between covers it as it
/// covers an answer on its way (`Target::begun`, the count the shim noted as the copy arrived): nothing
/// is stored after the purge. The same copy with no count noted (its job's own, after the purge) is.
#[wasm_bindgen_test]
async fn a_copy_received_before_a_clear_all_is_not_stored_after_it() {
    use cachet_worker::sw::messages::clear_all;
    use cachet_worker::sw::store::invalidations_begun;
    let index = open_index().await;
    let url = "https://t.invalid/copy-before-clear-all.js";
    let received = invalidations_begun();
    clear_all().await.unwrap();
    let stored = |begun: Option<u64>| {
        let index = index.clone();
        async move {
            let mut target = at(url, target_in(RUNTIME_CACHE, &answering("unused")));
            target.index = index.clone();
            let copy: wasm_bindgen::JsValue = Response::new_with_opt_str(Some("copied")).unwrap().into();
            target.preload = Some(Promise::resolve(&copy));
            target.begun = begun;
            let answer = respond_settled(&target, Strategy::NetworkFirst).await.unwrap();
            assert_eq!(text(answer).await, "copied");
            let recorded = index.beyond(RUNTIME_CACHE, 0).await.unwrap().contains(&url.to_owned());
            let cache = open_cache(RUNTIME_CACHE).await.unwrap();
            let entry = !JsFuture::from(cache.match_with_str(url)).await.unwrap().is_undefined();
            (recorded, entry)
        }
    };
    assert_eq!(stored(Some(received)).await, (false, false), "received before the clear-all: not stored");
    assert_eq!(stored(None).await, (true, true), "counted from its job: stored");
    let cache = open_cache(RUNTIME_CACHE).await.unwrap();
    index.remove(&[url.to_owned()]).await.unwrap();
    JsFuture::from(cache.delete_with_str(url)).await.unwrap();
}

/// Answers `respond` and runs its background work to the end.
async fn respond_settled(target: &Target, strategy: Strategy) -> Result<Response, Error> {
    let background: Rc<RefCell<Vec<Promise>>> = Rc::default();
    let collector = background.clone();
    let mut target = target.clone();
    target.job.strategy = strategy;
    let answer = respond(target, Rc::new(move |promise| collector.borrow_mut().push(promise))).await;
    let pending = background.borrow_mut().drain(..).collect::<Vec<_>>();
    for promise in pending {
        JsFuture::from(promise).await.unwrap();
    }
    answer
}

#[wasm_bindgen_test]
async fn entries_older_than_the_max_age_count_as_absent() {
    let index = open_index().await;
    let cache = open_cache("test-max-age").await.unwrap();
    let url = "https://t.invalid/aged";
    let two_hours_ago = (js_sys::Date::now() as u64 - 7_200_000).to_string();
    let old = stamped("old", &[("x-cachet-stored-at", &two_hours_ago)]);
    JsFuture::from(cache.put_with_str(url, &old)).await.unwrap();
    let mut aged = at(url, target_in("test-max-age", &answering(r#"{"fresh":true}"#)));
    aged.index = index;
    aged.job.bounds.max_age_seconds = 3_600;
    let error = respond_settled(&aged, Strategy::CacheOnly).await.unwrap_err();
    assert_eq!(error, Error::NotCached { url: url.to_owned() });
    let fresh = respond_settled(&aged, Strategy::CacheFirst).await.unwrap();
    assert_eq!(text(fresh).await, r#"{"fresh":true}"#, "an expired entry is re-fetched");
    aged.job.bounds.max_age_seconds = 86_400;
    let kept = respond_settled(&aged, Strategy::CacheOnly).await.unwrap();
    assert_eq!(text(kept).await, r#"{"fresh":true}"#, "and the fresh copy replaced it");
}

#[wasm_bindgen_test]
async fn beyond_max_entries_the_least_recently_used_entry_is_evicted() {
    let index = open_index().await;
    let cache = open_cache("test-lru").await.unwrap();
    let entry = |name: &str| {
        let mut target =
            at(&format!("https://t.invalid/lru/{name}"), target_in("test-lru", &answering("{}")));
        target.job.bounds.max_entries = 2;
        target.index = index.clone();
        target
    };
    respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    respond_settled(&entry("b"), Strategy::CacheFirst).await.unwrap();
    // `a` is used again, so `b` is now the least recently used: storing `c` evicts `b`, not `a`.
    let hit = respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    assert_eq!(hit.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    respond_settled(&entry("c"), Strategy::CacheFirst).await.unwrap();
    for (name, present) in [("a", true), ("b", false), ("c", true)] {
        let found =
            JsFuture::from(cache.match_with_str(&format!("https://t.invalid/lru/{name}"))).await.unwrap();
        assert_eq!(!found.is_undefined(), present, "{name}");
    }
    assert_eq!(index.beyond("test-lru", 0).await.unwrap().len(), 2, "the index holds exactly the two kept");
}

#[wasm_bindgen_test]
async fn a_hit_marks_its_entry_used_at_most_once_per_window() {
    let index = open_index().await;
    let entry = |name: &str| {
        let mut target =
            at(&format!("https://t.invalid/touch/{name}"), target_in("test-touch", &answering("{}")));
        target.index = index.clone();
        target
    };
    let order = || async { index.beyond("test-touch", 0).await.unwrap() };
    respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    respond_settled(&entry("b"), Strategy::CacheFirst).await.unwrap();
    // A first hit on `a` marks it: `b` is now the least recently used.
    respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    let url_of = |target: Target| target.job.entry.map(|entry| entry.url).unwrap_or_default();
    let (a, b) = (url_of(entry("a")), url_of(entry("b")));
    assert_eq!(order().await, [b.clone(), a.clone()]);
    // `b` is hit and marked; `a` is hit again within the window and not marked again, so the order is
    // that of the marks (each hit still answered from the cache).
    respond_settled(&entry("b"), Strategy::CacheFirst).await.unwrap();
    let hit = respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    assert_eq!(hit.headers().get(SOURCE_HEADER).unwrap().as_deref(), Some("cache"));
    assert_eq!(order().await, [a, b]);
}

#[wasm_bindgen_test]
async fn the_entry_count_kept_between_stores_follows_removals_and_clears() {
    // The index counts a cache once, then keeps the count by itself (`TagIndex` docs). A count kept too
    // low would skip an eviction: each step below would then leave one entry too many.
    let index = open_index().await;
    let cache = open_cache("test-count").await.unwrap();
    let url = |name: &str| format!("https://t.invalid/count/{name}");
    let entry = |name: &str| {
        let mut target = at(&url(name), target_in("test-count", &answering("{}")));
        target.job.bounds.max_entries = 2;
        target.index = index.clone();
        target
    };
    let present = |names: &'static [&'static str]| {
        let cache = cache.clone();
        async move {
            let mut found = Vec::new();
            for name in ["a", "b", "c", "d", "e", "f", "g"] {
                let hit = JsFuture::from(cache.match_with_str(&url(name))).await.unwrap();
                if !hit.is_undefined() {
                    found.push(name);
                }
            }
            assert_eq!(found, names);
        }
    };
    respond_settled(&entry("a"), Strategy::CacheFirst).await.unwrap();
    respond_settled(&entry("b"), Strategy::CacheFirst).await.unwrap();
    // Removing an entry the index never held must not lower the count; removing `a` must.
    JsFuture::from(cache.delete_with_str(&url("a"))).await.unwrap();
    index.remove(&[url("never-stored"), url("a")]).await.unwrap();
    respond_settled(&entry("c"), Strategy::CacheFirst).await.unwrap();
    present(&["b", "c"]).await;
    respond_settled(&entry("d"), Strategy::CacheFirst).await.unwrap();
    present(&["c", "d"]).await;
    // Storing a URL again is no new entry.
    respond_settled(&entry("d"), Strategy::NetworkFirst).await.unwrap();
    respond_settled(&entry("e"), Strategy::CacheFirst).await.unwrap();
    present(&["d", "e"]).await;
    // After a clear the count is taken again.
    index.clear().await.unwrap();
    for name in ["c", "d", "e"] {
        JsFuture::from(cache.delete_with_str(&url(name))).await.unwrap();
    }
    for name in ["f", "g"] {
        respond_settled(&entry(name), Strategy::CacheFirst).await.unwrap();
    }
    present(&["f", "g"]).await;
    assert_eq!(index.beyond("test-count", 0).await.unwrap().len(), 2);
}

#[wasm_bindgen_test]
async fn caches_of_earlier_versions_are_dropped_with_their_index_records() {
    use cachet_worker::sw::store::retire_old_caches;
    let index = open_index().await;
    let storage: web_sys::CacheStorage =
        js_sys::Reflect::get(&js_sys::global(), &"caches".into()).unwrap().unchecked_into();
    let old_url = "https://t.invalid/__cachet/gql/anonymous/0123";
    let old = open_cache("cachet-graphql-v1").await.unwrap();
    JsFuture::from(old.put_with_str(old_url, &Response::new().unwrap())).await.unwrap();
    index.record(old_url, "cachet-graphql-v1", &["retired".into()], 1).await.unwrap();
    let kept_url = "https://t.invalid/__cachet/gql/anonymous/e1234abcd/0123";
    index.record(kept_url, DOCUMENT_CACHE, &["retired".into()], 2).await.unwrap();

    retire_old_caches(&index).await.unwrap();
    let has = JsFuture::from(storage.has("cachet-graphql-v1")).await.unwrap();
    assert_eq!(has.as_bool(), Some(false), "the v1 cache is gone");
    assert_eq!(urls_tagged(&index, &["retired".into()]).await, [kept_url], "and its records, only them");
    retire_old_caches(&index).await.unwrap();
    index.remove(&[kept_url.to_owned()]).await.unwrap();
}

/// Makes every later `IDBObjectStore.put` abort its transaction as soon as the put succeeded (as
/// IndexedDB aborts a transaction at commit when storage is full: every request succeeded, the
/// transaction fires `abort` and nothing is kept); `false` restores `put`.
fn abort_after_puts(on: bool) {
    let code = if on {
        "const proto = self.IDBObjectStore.prototype; self.__cachetPut = self.__cachetPut || proto.put;
         proto.put = function (...args) { const request = self.__cachetPut.apply(this, args);
           request.addEventListener('success', () => this.transaction.abort()); return request; };"
    } else {
        "if (self.__cachetPut) { self.IDBObjectStore.prototype.put = self.__cachetPut; }"
    };
    js_sys::Function::new_no_args(code).call0(&js_sys::global()).unwrap();
}

/// A tag-index write whose transaction aborted after its put is an error naming the write, never a
/// success: nothing was kept, and the index's kept count does not move (issue 20).
#[wasm_bindgen_test]
async fn a_tag_index_write_aborted_after_its_put_is_an_error_and_keeps_nothing() {
    let index = TagIndex::open().await.unwrap();
    let url = "https://t.invalid/aborted";
    abort_after_puts(true);
    let outcome = index.record(url, "test-aborted", &["aborted".into()], 1).await;
    abort_after_puts(false);
    let error = outcome.unwrap_err();
    assert!(matches!(&error, Error::Js { operation: "commit tags", .. }), "{error:?}");
    assert!(urls_tagged(&index, &["aborted".into()]).await.is_empty(), "nothing of it was kept");
    // The kept count of the cache is 0: with one entry stored, nothing lies beyond 1.
    index.record(url, "test-aborted", &["aborted".into()], 2).await.unwrap();
    assert!(index.beyond("test-aborted", 1).await.unwrap().is_empty());
    assert_eq!(index.beyond("test-aborted", 0).await.unwrap(), [url]);
    index.remove(&[url.to_owned()]).await.unwrap();
}

/// A store writes the entry's index record before the cache entry: a worker stopped between the two
/// leaves a record without an entry (a miss next time), never an entry that no invalidation can find
/// (issue 20, found by `chaos_killed_mid_write`). Here `cache.put` hangs, as in a worker stopped in
/// the middle of it: the record is already there.
#[wasm_bindgen_test]
async fn a_store_records_the_entry_in_the_index_before_writing_it() {
    let index = open_index().await;
    let put_called = js_sys::Function::new_no_args(
        "const proto = self.Cache.prototype; const put = proto.put;
         return new Promise((resolve) => { proto.put = function (...args) {
           proto.put = put; resolve(true);
           return new Promise((done) => { self.__releasePut = () => done(put.apply(this, args)); }); }; });",
    )
    .call0(&js_sys::global())
    .unwrap();
    let url = "https://t.invalid/recorded-first";
    let mut target = at(url, target_in("test-recorded-first", &answering("{}")));
    target.index = index.clone();
    target.job.strategy = Strategy::NetworkFirst;
    wasm_bindgen_futures::spawn_local(async move {
        let _ = respond(target, Rc::new(|_| {})).await;
    });
    JsFuture::from(Promise::from(put_called)).await.unwrap();
    let recorded = index.beyond("test-recorded-first", 0).await.unwrap();
    // The store goes on (and lets the other writes of this worker go on): its answer is written.
    js_sys::Function::new_no_args("self.__releasePut();").call0(&js_sys::global()).unwrap();
    assert_eq!(recorded, [url]);
    let cache = open_cache("test-recorded-first").await.unwrap();
    while JsFuture::from(cache.match_with_str(url)).await.unwrap().is_undefined() {
        let tick = js_sys::Function::new_no_args("return new Promise((r) => setTimeout(r, 10));");
        JsFuture::from(Promise::from(tick.call0(&js_sys::global()).unwrap())).await.unwrap();
    }
    index.remove(&[url.to_owned()]).await.unwrap();
}

#[wasm_bindgen_test]
async fn an_unreadable_generation_record_is_named_and_only_its_tag_counts_as_invalidated() {
    use cachet_worker::sw::generations;
    let index = open_index().await;
    let broken = "https://t.invalid/__cachet/gql/anonymous/corrupt-a";
    let kept = "https://t.invalid/__cachet/gql/anonymous/corrupt-b";
    for (url, tag) in [(broken, "corrupt-a"), (kept, "corrupt-b")] {
        let target = graphql_target(r#"{"data":{"x":1}}"#, url, &index, &[tag]);
        respond_settled(&target, Strategy::CacheFirst).await.unwrap();
    }
    // A record of `corrupt-a`'s generation that does not decode, written as something else might.
    let database = rexie::Rexie::builder(cachet_core::protocol::storage::DATABASE).build().await.unwrap();
    let transaction = database.transaction(&["generations"], rexie::TransactionMode::ReadWrite).unwrap();
    let record = js_sys::JSON::parse(r#"{"tag": "corrupt-a", "at": "garbage"}"#).unwrap();
    transaction.store("generations").unwrap().put(&record, None).await.unwrap();
    transaction.done().await.unwrap();
    database.close();

    let problems = generations::reload(&index).await.unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].key, "corrupt-a");
    assert!(problems[0].to_string().contains("\"corrupt-a\""), "{}", problems[0]);
    // Its entries count as invalidated (a miss); nothing else is lost.
    let cache_only = |url: &str, tag: &str| graphql_target(r#"{"data":{"x":2}}"#, url, &index, &[tag]);
    let missing = respond_settled(&cache_only(broken, "corrupt-a"), Strategy::CacheOnly).await;
    assert_eq!(missing.unwrap_err(), Error::NotCached { url: broken.to_owned() });
    let hit = respond_settled(&cache_only(kept, "corrupt-b"), Strategy::CacheOnly).await.unwrap();
    assert_eq!(text(hit).await, r#"{"data":{"x":1}}"#);
    assert_eq!(urls_tagged(&index, &["corrupt-b".into()]).await, [kept]);
    // Repaired in place: read again, nothing is unreadable.
    assert!(generations::reload(&index).await.unwrap().is_empty());
    index.remove(&[broken.to_owned(), kept.to_owned()]).await.unwrap();
}

/// The start-up pass heals a record whose entry is gone only once its entry cannot still be landing: a
/// `cache.put` a stopped worker issued after writing the record completes after the worker is gone, and
/// healing a fresh record would leave that entry without one (no invalidation would find it).
#[wasm_bindgen_test]
async fn the_start_pass_leaves_a_fresh_record_without_entry_for_its_entry_may_still_land() {
    use cachet_worker::sw::sweep::{sweep, LANDING_MS};
    use cachet_worker::sw::RUNTIME_CACHE;
    let index = TagIndex::open().await.unwrap();
    let now = js_sys::Date::now() as u64;
    let tag = vec!["landing-test".to_owned()];
    let (fresh, old) = ("https://t.invalid/landing/fresh", "https://t.invalid/landing/old");
    index.record(fresh, RUNTIME_CACHE, &tag, now).await.unwrap();
    index.record(old, RUNTIME_CACHE, &tag, now - LANDING_MS - 1_000).await.unwrap();
    let report = sweep(None).await.unwrap();
    assert_eq!(urls_tagged(&index, &tag).await, [fresh], "the old record healed, the fresh one kept");
    assert!(!report.complete, "a record left as landing leaves the pass incomplete");
}

/// The start-up pass reads cachet's caches without creating one: a clear-all that deleted them while a
/// pass ran would otherwise find them back, empty.
#[wasm_bindgen_test]
async fn the_start_pass_creates_no_cache_that_is_not_there() {
    use cachet_core::engine::key::CACHES;
    use cachet_worker::sw::sweep::sweep;
    let storage = cachet_worker::sw::store::cache_storage().unwrap();
    for name in CACHES {
        JsFuture::from(storage.delete(name)).await.unwrap();
    }
    sweep(None).await.unwrap();
    for name in CACHES {
        let there = JsFuture::from(storage.has(name)).await.unwrap();
        assert!(!there.is_truthy(), "{name} created by the pass");
    }
}

/// Counts the `readwrite` transactions on the entry index (`entries`) opened from now on, until dropped
/// (which puts `IDBDatabase.prototype.transaction` back, also when a test fails).
struct EntryIndexWrites;

impl EntryIndexWrites {
    fn count() -> Self {
        js_sys::Function::new_no_args(
            "const proto = self.IDBDatabase.prototype; self.__cachetTransaction = proto.transaction;
             self.__entryIndexWrites = 0;
             proto.transaction = function (stores, mode, ...rest) {
               const names = typeof stores === 'string' ? [stores] : Array.from(stores);
               if (mode === 'readwrite' && names.includes('entries')) self.__entryIndexWrites += 1;
               return self.__cachetTransaction.call(this, stores, mode, ...rest);
             };",
        )
        .call0(&js_sys::global())
        .unwrap();
        EntryIndexWrites
    }

    fn so_far(&self) -> f64 {
        js_sys::Reflect::get(&js_sys::global(), &"__entryIndexWrites".into()).unwrap().as_f64().unwrap()
    }
}

impl Drop for EntryIndexWrites {
    fn drop(&mut self) {
        js_sys::Function::new_no_args("self.IDBDatabase.prototype.transaction = self.__cachetTransaction;")
            .call0(&js_sys::global())
            .unwrap();
    }
}

/// A store that evicts nothing writes the entry index once (its record): no second, empty `readwrite`
/// transaction for the evictions, which would wait its turn behind every other write of the index.
#[wasm_bindgen_test]
async fn a_store_that_evicts_nothing_writes_the_entry_index_once() {
    let index = open_index().await;
    let mut target = at("https://t.invalid/one-write", target_in("test-one-write", &answering("{}")));
    target.index = index.clone();
    let writes = EntryIndexWrites::count();
    respond_settled(&target, Strategy::CacheFirst).await.unwrap();
    let stored = writes.so_far();
    drop(writes);
    assert_eq!(index.beyond("test-one-write", 0).await.unwrap(), ["https://t.invalid/one-write"], "stored");
    assert_eq!(stored, 1.0, "readwrite transactions on the entry index during the store");
    index.remove(&["https://t.invalid/one-write".to_owned()]).await.unwrap();
}
