//! Data calls without a Service Worker: the in-page cache, tags and invalidation, dedup, typed errors.

use cachet_client::{Client, ClientEvent, Error, FetchOptions, GqlOptions, Strategy};
use futures::future::join_all;
use serde_json::{json, Value};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{config, fresh_database, next_event, options, FakeServer, Reply, WindowEvents};

const GET_TODOS: &str = "query GetTodos { todos { id } }";
const CREATE_TODO: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";

/// A GraphQL server answering by operation name, slowly enough for calls to overlap.
fn graphql_server() -> FakeServer {
    FakeServer::new(|seen| match seen.operation().as_str() {
        "GetTodos" => Reply::json(200, json!({"data": {"todos": [{"id": 1}]}})).after(30),
        "CreateTodo" => Reply::json(200, json!({"data": {"createTodo": {"id": 2}}})),
        "Dashboard" => Reply::json(200, json!({"data": {"stats": 3}})),
        "Broken" => {
            Reply::json(200, json!({"data": null, "errors": [{"message": "boom", "path": ["todos"]}]}))
        }
        "Down" => Reply::text(503, "maintenance"),
        // As the worker answers a `queueOffline` mutation it can neither send nor queue.
        "Refused" => Reply {
            headers: vec![("x-cachet-not-queued".into(), "storage-full".into())],
            ..Reply::json(507, json!({"data": null, "errors": [{"message": "not queued, not sent"}]}))
        },
        // A server's own 507, without cachet's header: an HTTP error like any other.
        "Insufficient" => Reply::text(507, "disk full"),
        "Garbled" => Reply::text(200, "<html>not json</html>"),
        "Unreachable" => Reply::network_failure(),
        _ => Reply::json(200, json!({"data": {"anonymous": true}})),
    })
}

fn client(test: &str, server: &FakeServer) -> Client {
    Client::builder().config(config("cookie")).options(options(test)).http(server.http()).build().unwrap()
}

#[wasm_bindgen_test]
async fn a_read_asked_after_an_invalidation_never_shares_a_read_sent_before_it() {
    fresh_database("dedup-invalidated").await;
    // The first GetTodos is slow and answers the list before the change; later ones answer after it.
    let calls = std::rc::Rc::new(std::cell::Cell::new(0));
    let counted = calls.clone();
    // Told when the server holds the first read: a barrier, not a guess at how long the send takes.
    let (arrived, first_arrived) = futures::channel::oneshot::channel::<()>();
    let arrived = std::cell::RefCell::new(Some(arrived));
    let server = FakeServer::new(move |_seen| {
        counted.set(counted.get() + 1);
        if let Some(arrived) = arrived.borrow_mut().take() {
            let _ = arrived.send(());
        }
        match counted.get() {
            1 => Reply::json(200, json!({"data": {"todos": []}})).after(200),
            _ => Reply::json(200, json!({"data": {"todos": [{"id": 1}]}})),
        }
    });
    let client = client("dedup-invalidated", &server);
    let before = client.query_gql::<Value>(GET_TODOS, None, GqlOptions::default());
    let after = async {
        // What a hook does when it hears `cache-invalidated {todos}` while the first read is on its way.
        first_arrived.await.unwrap();
        client.forget_cached(&["todos".to_owned()]);
        client.query_gql::<Value>(GET_TODOS, None, GqlOptions::default()).await
    };
    let (before, after) = futures::join!(before, after);
    assert_eq!(before.unwrap().data, json!({"todos": []}));
    assert_eq!(after.unwrap().data, json!({"todos": [{"id": 1}]}), "not the answer of the read sent before");
    assert_eq!(calls.get(), 2);
}

#[wasm_bindgen_test]
async fn concurrent_identical_queries_share_one_request() {
    fresh_database("dedup").await;
    let server = graphql_server();
    let client = client("dedup", &server);
    let network_only = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    let results =
        join_all((0..5).map(|_| client.query_gql::<Value>(GET_TODOS, None, network_only.clone()))).await;
    assert_eq!(server.count(|seen| seen.operation() == "GetTodos"), 1, "five callers, one request");
    for result in results {
        assert_eq!(result.unwrap().data, json!({"todos": [{"id": 1}]}));
    }
    assert_eq!(client.reads_in_flight(), 0, "the key is free once the request settled");
    client.query_gql::<Value>(GET_TODOS, None, network_only.clone()).await.unwrap();
    assert_eq!(server.count(|seen| seen.operation() == "GetTodos"), 2, "a later call sends again");
    let other_variables =
        client.query_gql::<Value>(GET_TODOS, Some(json!({"page": 2})), network_only.clone());
    let same = client.query_gql::<Value>(GET_TODOS, None, network_only);
    let _ = futures::join!(other_variables, same);
    assert_eq!(server.count(|seen| seen.operation() == "GetTodos"), 4, "other variables, another request");
    let gets = join_all((0..3).map(|_| client.fetch_with_cache("/api/list", FetchOptions::new()))).await;
    assert!(gets.iter().all(Result::is_ok));
    assert_eq!(server.count(|seen| seen.path == "/api/list"), 1, "GETs share too");
}

#[wasm_bindgen_test]
async fn queries_are_cached_by_tags_and_mutations_invalidate_them() {
    fresh_database("tags").await;
    let server = graphql_server();
    let client = client("tags", &server);
    let invalidated = WindowEvents::listen("cache-invalidated");
    let first = client.query_gql::<Value>(GET_TODOS, None, GqlOptions::default()).await.unwrap();
    let second = client.query_gql::<Value>(GET_TODOS, None, GqlOptions::default()).await.unwrap();
    assert!(!first.from_cache && second.from_cache, "cache-first: the second answer is the cached document");
    assert_eq!(second.data, first.data);
    let anonymous = "{ anonymous }";
    client.query_gql::<Value>(anonymous, None, GqlOptions::default()).await.unwrap();
    let tagged = GqlOptions { tags: Some(vec!["Dashboard".into()]), ..GqlOptions::default() };
    client.query_gql::<Value>("query Dashboard { stats }", None, tagged.clone()).await.unwrap();
    // Answers are stored after they are given (in the background, as in the worker): let it run.
    gloo::timers::future::TimeoutFuture::new(0).await;
    assert_eq!(client.memory_cache_len(), 3);

    let mut events = client.events();
    let created = client
        .mutate_gql::<Value>(CREATE_TODO, Some(json!({"title": "x"})), GqlOptions::default())
        .await
        .unwrap();
    assert_eq!(created.data, Some(json!({"createTodo": {"id": 2}})));
    let event = next_event(&mut events, |event| matches!(event, ClientEvent::CacheInvalidated { .. })).await;
    assert_eq!(event, ClientEvent::CacheInvalidated { tags: vec!["todo".into(), "todos".into()] });
    assert_eq!(invalidated.details(), [json!({"tags": ["todo", "todos"]})], "fired on window too");
    let third = client.query_gql::<Value>(GET_TODOS, None, GqlOptions::default()).await.unwrap();
    assert!(!third.from_cache, "the whole entry was removed");
    assert!(
        client.query_gql::<Value>(anonymous, None, GqlOptions::default()).await.unwrap().from_cache,
        "no tags, kept"
    );
    assert!(
        client
            .query_gql::<Value>("query Dashboard { stats }", None, tagged.clone())
            .await
            .unwrap()
            .from_cache
    );

    client.invalidate_by_tag(&["dashboard"]).await.unwrap();
    assert!(!client.query_gql::<Value>("query Dashboard { stats }", None, tagged).await.unwrap().from_cache);
    let explicit = GqlOptions { invalidate: vec!["anything".into()], ..GqlOptions::default() };
    client.mutate_gql::<Value>(CREATE_TODO, Some(json!({"title": "y"})), explicit).await.unwrap();
    assert_eq!(invalidated.details().last(), Some(&json!({"tags": ["todo", "todos", "anything"]})));
    let bad = client.invalidate_by_tag(&["no spaces"]).await;
    assert!(matches!(bad, Err(Error::Core(_))), "tags follow the core's rules: {bad:?}");
}

#[wasm_bindgen_test]
async fn strategies_work_in_the_page_as_in_the_service_worker() {
    fresh_database("strategies").await;
    let server = FakeServer::new(|seen| match seen.path.as_str() {
        "/offline" if seen.header("x-test-fail").is_some() => Reply::network_failure(),
        _ => Reply::json(200, json!({"n": 1})),
    });
    let client = client("strategies", &server);
    let cache_only =
        client.fetch_with_cache("/offline", FetchOptions::new().strategy(Strategy::CacheOnly)).await;
    assert!(
        matches!(cache_only, Err(Error::Network { .. })),
        "cache-only with nothing cached: {cache_only:?}"
    );
    let first = client.fetch_with_cache("/offline", FetchOptions::new()).await.unwrap();
    assert!(!first.from_cache, "network-first is the default for GETs");
    let fallback =
        client.fetch_with_cache("/offline", FetchOptions::new().header("x-test-fail", "1")).await.unwrap();
    assert!(fallback.from_cache, "network-first falls back to the cache when the network fails");
    assert_eq!(fallback.data::<Value>().unwrap(), json!({"n": 1}));
    let swr =
        client.fetch_with_cache("/offline", FetchOptions::new().strategy(Strategy::StaleWhileRevalidate));
    assert!(swr.await.unwrap().from_cache);
    let network_only =
        client.fetch_with_cache("/offline", FetchOptions::new().strategy(Strategy::NetworkOnly)).await;
    assert!(!network_only.unwrap().from_cache);
}

#[wasm_bindgen_test]
async fn errors_say_which_stage_failed() {
    fresh_database("errors").await;
    let server = graphql_server();
    let client = client("errors", &server);
    let query = |name: &str| format!("query {name} {{ todos {{ id }} }}");
    match client.query_gql::<Value>(&query("Unreachable"), None, GqlOptions::default()).await {
        Err(error @ Error::Network { .. }) => assert_eq!(error.kind(), "network"),
        other => panic!("expected a network error, got {other:?}"),
    }
    match client.query_gql::<Value>(&query("Down"), None, GqlOptions::default()).await {
        Err(Error::Http { status: 503, body, .. }) => assert_eq!(body, "maintenance"),
        other => panic!("expected HTTP 503, got {other:?}"),
    }
    let mutation = |name: &str| format!("mutation {name} {{ createTodo {{ id }} }}");
    let queued = GqlOptions { queue_offline: true, ..GqlOptions::default() };
    match client.mutate_gql::<Value>(&mutation("Refused"), None, queued.clone()).await {
        Err(error @ Error::NotQueued { .. }) => {
            assert_eq!(error.kind(), "not-queued");
            assert!(error.to_string().contains("storage-full"), "{error}");
        }
        other => panic!("expected a typed not-queued refusal, got {other:?}"),
    }
    match client.mutate_gql::<Value>(&mutation("Insufficient"), None, queued).await {
        Err(Error::Http { status: 507, body, .. }) => assert_eq!(body, "disk full"),
        other => panic!("expected HTTP 507, got {other:?}"),
    }
    match client.query_gql::<Value>(&query("Broken"), None, GqlOptions::default()).await {
        Err(error @ Error::Graphql { .. }) => {
            assert_eq!(error.to_string(), "GraphQL errors: boom");
            let Error::Graphql { errors, data } = error else { unreachable!() };
            assert_eq!((errors.len(), data), (1, None));
        }
        other => panic!("expected GraphQL errors, got {other:?}"),
    }
    let raw = client.fetch_with_gql(&query("Broken"), None, &GqlOptions::default()).await.unwrap();
    assert_eq!(raw.result["errors"][0]["message"], "boom", "fetch_with_gql returns the result whole");
    assert!(matches!(
        client.query_gql::<Value>(&query("Garbled"), None, GqlOptions::default()).await,
        Err(Error::Decode { .. })
    ));
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Wrong {
        users: Vec<String>,
    }
    match client.query_gql::<Wrong>(GET_TODOS, None, GqlOptions::default()).await {
        Err(error @ Error::Decode { .. }) => assert!(error.to_string().contains("users"), "{error}"),
        other => panic!("expected a decode error, got {other:?}"),
    }
    let past_the_list = GqlOptions { endpoint_index: 1, ..GqlOptions::default() };
    assert!(matches!(
        client.query_gql::<Value>(GET_TODOS, None, past_the_list).await,
        Err(Error::NoSuchEndpoint { index: 1, .. })
    ));
    assert_eq!(server.count(|seen| seen.operation() == "Broken"), 2, "GraphQL errors are never cached");
}

#[wasm_bindgen_test]
async fn an_auth_call_on_a_config_without_auth_or_graphql_is_refused_never_sent_unmarked() {
    fresh_database("feature-off").await;
    let server = graphql_server();
    let off = |json: &str| {
        Client::builder()
            .config_json(json)
            .unwrap()
            .options(options("feature-off"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let no_graphql = off(r#"{"features": {"auth": {"enabled": true}}}"#);
    let no_auth = off(r#"{"features": {"graphql": {"enabled": true}}}"#);
    let warnings = ConsoleWarnings::record();
    let cases = [
        (&no_graphql, "features.graphql.enabled", "cachet add graphql"),
        (&no_auth, "features.auth.enabled", "cachet add auth"),
    ];
    for (client, key, enable) in cases {
        let error =
            client.query_gql::<Value>(GET_TODOS, None, GqlOptions::with_auth(true)).await.unwrap_err();
        match &error {
            Error::FeatureOff { key: named, .. } => assert_eq!(*named, key),
            other => panic!("{key}: not FeatureOff: {other:?}"),
        }
        assert_eq!(error.kind(), "feature-off");
        assert!(error.to_string().contains(enable), "{error}");
        let mutation = GqlOptions { queue_offline: true, ..GqlOptions::with_auth(true) };
        let refused = client.mutate_gql::<Value>(CREATE_TODO, Some(json!({"title": "x"})), mutation).await;
        assert!(matches!(refused, Err(Error::FeatureOff { .. })), "{refused:?}");
    }
    let rest = no_auth.fetch_with_cache("/api/list", FetchOptions::new().auth(true)).await.unwrap_err();
    assert!(matches!(rest, Error::FeatureOff { key: "features.auth.enabled", .. }), "{rest:?}");
    assert_eq!(server.seen().len(), 0, "nothing reached the network unmarked");
    // A mutation to queue offline needs GraphQL on (the worker's queue), auth or not.
    let queue_only = GqlOptions { queue_offline: true, ..GqlOptions::default() };
    let refused = no_graphql.mutate_gql::<Value>(CREATE_TODO, Some(json!({"title": "x"})), queue_only).await;
    assert!(matches!(refused, Err(Error::FeatureOff { key: "features.graphql.enabled", .. })), "{refused:?}");
    assert_eq!(server.seen().len(), 0, "nothing reached the network unmarked");
    // Without auth the same calls go through (the worker decides their partition).
    no_auth.query_gql::<Value>(GET_TODOS, None, GqlOptions::default()).await.unwrap();
    assert_eq!(server.count(|seen| seen.operation() == "GetTodos"), 1);
    // Each refused call (two queries, two mutations, one fetch, one queued mutation) said so once on
    // the console, with the error's words; the calls that went through said nothing.
    let lines = warnings.stop();
    assert_eq!(lines.len(), 6, "one warning per refused call: {lines:?}");
    assert!(lines.iter().all(|line| line.starts_with("cachet: ") && line.contains("features.")), "{lines:?}");
}

/// An answer one of cachet's bounds declines is named on the console as a warning, with the bound's
/// config key (issue 36: an app's wasm over `cache.maxBodyBytes` was silently missing offline); a
/// strategy's own choice not to store stays at debug level.
#[wasm_bindgen_test]
async fn an_answer_over_max_body_bytes_is_not_stored_and_a_console_warning_names_the_bound() {
    fresh_database("too-large").await;
    let server = FakeServer::new(|_| Reply::text(200, "0123456789abcdef"));
    let mut small = config("cookie");
    small.cache.max_body_bytes = 8;
    let client =
        Client::builder().config(small).options(options("too-large")).http(server.http()).build().unwrap();
    let warnings = ConsoleWarnings::record();
    let first = client.fetch_with_cache("/app_bg.wasm", FetchOptions::new()).await;
    let second = client.fetch_with_cache("/app_bg.wasm", FetchOptions::new()).await;
    let quiet = client.fetch_with_cache("/quiet", FetchOptions::new().strategy(Strategy::NetworkOnly)).await;
    let lines = warnings.stop();
    let (first, second) = (first.unwrap(), second.unwrap());
    assert!(quiet.is_ok());
    assert_eq!(first.response.header("x-cachet-not-stored"), Some("too-large"));
    assert!(!second.from_cache, "never stored: asked again");
    assert_eq!(server.count(|seen| seen.path == "/app_bg.wasm"), 2);
    assert_eq!(lines.len(), 2, "one warning per answer declined, none for network-only: {lines:?}");
    assert!(lines[0].contains("/app_bg.wasm") && lines[0].contains("cache.maxBodyBytes"), "{lines:?}");
}

/// Records what `console.warn` is given, until [`ConsoleWarnings::stop`] puts the browser's back.
struct ConsoleWarnings {
    original: wasm_bindgen::JsValue,
    lines: js_sys::Array,
    _recorder: wasm_bindgen::closure::Closure<dyn Fn(wasm_bindgen::JsValue)>,
}

impl ConsoleWarnings {
    fn record() -> Self {
        let original = js_sys::Reflect::get(&console(), &"warn".into()).unwrap();
        let lines = js_sys::Array::new();
        let kept = lines.clone();
        let recorder = wasm_bindgen::closure::Closure::<dyn Fn(wasm_bindgen::JsValue)>::new(move |line| {
            kept.push(&line);
        });
        js_sys::Reflect::set(&console(), &"warn".into(), recorder.as_ref()).unwrap();
        ConsoleWarnings { original, lines, _recorder: recorder }
    }

    fn stop(self) -> Vec<String> {
        js_sys::Reflect::set(&console(), &"warn".into(), &self.original).unwrap();
        self.lines.iter().filter_map(|line| line.as_string()).collect()
    }
}

fn console() -> wasm_bindgen::JsValue {
    js_sys::Reflect::get(&js_sys::global(), &"console".into()).unwrap()
}
