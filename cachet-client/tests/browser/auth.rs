//! The auth API in one tab, without a Service Worker: headers, refresh-and-retry, purge, persistence.

use std::cell::Cell;
use std::rc::Rc;

use cachet_client::{
    AuthChangeKind, AuthData, Client, ClientEvent, Config, Error, FetchOptions, GqlOptions, HttpRequest,
    HttpResponse,
};
use futures::future::join_all;
use serde_json::{json, Value};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{config, fresh_database, next_event, options, FakeServer, Reply, WindowEvents};

fn login(token: &str) -> AuthData {
    AuthData::from_json(
        json!({"token": token, "user": {"id": 7, "username": "ada"}, "expiresAt": 4_000_000_000_000_u64}),
    )
    .unwrap()
}

/// `/data*` answers 200 only to `Bearer <valid>`; `/api/refresh` rotates to `t2`, counted.
fn rotating_server(valid: &'static str) -> FakeServer {
    FakeServer::new(move |seen| match seen.path.as_str() {
        "/api/refresh" if seen.header("authorization") == Some("Bearer t1") => {
            Reply::json(200, json!({"token": "t2", "expiresAt": 4_000_000_000_000_u64})).after(20)
        }
        "/api/refresh" => Reply::json(401, json!({"error": "refused"})),
        path if path.starts_with("/data")
            && seen.header("authorization") == Some(&format!("Bearer {valid}")) =>
        {
            Reply::json(200, json!({"ok": path}))
        }
        _ => Reply::json(401, json!({"error": "not authenticated"})),
    })
}

#[wasm_bindgen_test]
async fn headers_are_injected_only_with_auth_true_and_cachet_headers_never_reach_the_network() {
    fresh_database("headers").await;
    let server = FakeServer::new(|_| Reply::json(200, json!({})));
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("headers"))
        .http(server.http())
        .build()
        .unwrap();
    client.set_auth(login("t1")).await.unwrap();
    client
        .fetch_with_cache("/plain", FetchOptions::new().strategy(cachet_client::Strategy::NetworkOnly))
        .await
        .unwrap();
    client.fetch_with_cache("/authed", FetchOptions::new().auth(true).tags(["me"])).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].header("authorization"), None, "no auth: no header");
    assert_eq!(seen[1].header("authorization"), Some("Bearer t1"));
    for request in &seen {
        let cachet: Vec<_> = request
            .headers
            .iter()
            .filter(|(name, _)| name.starts_with("x-cachet") || name == "x-sw-strategy")
            .collect();
        assert!(cachet.is_empty(), "without a Service Worker cachet's headers stay in the page: {cachet:?}");
    }
    assert!(!client.auth_with_credentials(), "AUTH_WITH_CREDENTIALS is false for bearer");
    let marked = client.with_auth_headers(&HttpRequest::get("/elsewhere"));
    assert_eq!(marked.header("authorization"), Some("Bearer t1"));
    assert_eq!(marked.header("x-cachet-auth"), Some("1"));
    assert!(client.is_auth_url("/api/refresh") && client.is_auth_url("/api/me/avatar"));
    assert!(!client.is_auth_url("/api/todos") && !client.is_auth_url("https://elsewhere.example/api/me"));
}

#[wasm_bindgen_test]
async fn an_auth_failure_is_refreshed_once_and_every_waiting_request_retried() {
    fresh_database("retry").await;
    let server = rotating_server("t2");
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("retry"))
        .http(server.http())
        .build()
        .unwrap();
    client.set_auth(login("t1")).await.unwrap();
    let refreshes = WindowEvents::listen("sw-auth-state-change");
    let urls: Vec<String> = (1..=3).map(|n| format!("/data?{n}")).collect();
    let calls = urls.iter().map(|url| client.fetch_with_cache(url, FetchOptions::new().auth(true)));
    let answers = join_all(calls).await;
    for (n, answer) in answers.into_iter().enumerate() {
        let answer = answer.unwrap();
        assert_eq!(answer.response.status, 200, "request {n} sees only the successful answer");
    }
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1, "one refresh for three failures");
    assert_eq!(
        server.count(|seen| seen.path.starts_with("/data")),
        6,
        "each sent twice: once failing, once retried"
    );
    assert_eq!(client.auth_state().auth.unwrap().token.as_deref(), Some("t2"));
    assert_eq!(refreshes.details(), [json!({"type": "refresh"})]);
}

#[wasm_bindgen_test]
async fn a_retry_that_fails_again_is_final_and_a_refused_refresh_purges_and_signals_logout() {
    fresh_database("refused").await;
    let server = rotating_server("never");
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("refused"))
        .http(server.http())
        .build()
        .unwrap();
    client.set_auth(login("t1")).await.unwrap();
    let answer = client.fetch_with_cache("/data", FetchOptions::new().auth(true)).await.unwrap();
    assert_eq!(answer.response.status, 401, "the second failure is the answer: no refresh loop");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1);
    assert!(client.auth_state().authenticated, "the refresh itself succeeded");

    let mut events = client.events();
    let error = client.query_gql::<Value>("query Me { me { id } }", None, GqlOptions::with_auth(true)).await;
    assert!(matches!(error, Err(Error::Unauthorized { status: 401, .. })), "{error:?}");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 2, "t2 failed, refresh with t2 is refused");
    next_event(&mut events, |event| *event == ClientEvent::AuthStateChange { kind: AuthChangeKind::Logout })
        .await;
    let state = client.get_auth_state().await;
    assert!(!state.authenticated && state.auth.is_none());
    assert_eq!(client.get_auth().await.unwrap(), None, "purged: memory, IndexedDB, and /api/me says nobody");
}

#[wasm_bindgen_test]
async fn no_token_at_rest_after_a_bearer_session() {
    fresh_database("at-rest").await;
    let server = FakeServer::new(|seen| match seen.path.as_str() {
        "/api/refresh" => {
            Reply::json(200, json!({"token": "secret-two", "expiresAt": 4_000_000_000_000_u64}))
        }
        _ => Reply::json(200, json!({"data": {"todos": [{"id": 1}]}})),
    });
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("at-rest"))
        .http(server.http())
        .build()
        .unwrap();
    client.set_auth(login("secret-one")).await.unwrap();
    client
        .query_gql::<Value>("query GetTodos { todos { id } }", None, GqlOptions::with_auth(true))
        .await
        .unwrap();
    client.refresh_auth().await.unwrap();
    assert_eq!(client.auth_state().auth.unwrap().token.as_deref(), Some("secret-two"));
    let stored = everything_stored("cachet-test-at-rest").await;
    assert!(stored.contains("ada"), "the user is persisted: {stored}");
    assert!(!stored.contains("secret"), "a token reached storage: {stored}");
}

/// Every value of the test's IndexedDB store, every Cache Storage body, all of localStorage and
/// sessionStorage, as one text.
async fn everything_stored(database: &str) -> String {
    let mut found = String::new();
    let db = rexie::Rexie::builder(database).build().await.unwrap();
    for store_name in db.store_names() {
        let transaction = db.transaction(&[&store_name], rexie::TransactionMode::ReadOnly).unwrap();
        let store = transaction.store(&store_name).unwrap();
        for (_, value) in store.scan(None, None, None, None).await.unwrap() {
            found.push_str(&js_sys::JSON::stringify(&value).unwrap().as_string().unwrap());
        }
    }
    db.close();
    let window = web_sys::window().unwrap();
    let caches = window.caches().unwrap();
    let names = js_sys::Array::from(&JsFuture::from(caches.keys()).await.unwrap());
    for name in names.iter() {
        let cache: web_sys::Cache =
            JsFuture::from(caches.open(&name.as_string().unwrap())).await.unwrap().unchecked_into();
        for request in js_sys::Array::from(&JsFuture::from(cache.keys()).await.unwrap()).iter() {
            let request: web_sys::Request = request.unchecked_into();
            let response: web_sys::Response =
                JsFuture::from(cache.match_with_request(&request)).await.unwrap().unchecked_into();
            found.push_str(&JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap());
        }
    }
    for storage in [window.local_storage().unwrap().unwrap(), window.session_storage().unwrap().unwrap()] {
        for index in 0..storage.length().unwrap() {
            let key = storage.key(index).unwrap().unwrap();
            found.push_str(&format!("{key}={}", storage.get_item(&key).unwrap().unwrap_or_default()));
        }
    }
    found
}

#[wasm_bindgen_test]
async fn cookie_auth_is_restored_after_a_reload_and_clear_memory_auth_keeps_it_stored() {
    fresh_database("cookie").await;
    let server = FakeServer::new(|_| Reply::json(401, json!({})));
    let build = || {
        Client::builder()
            .config(config("cookie"))
            .options(options("cookie"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let first = build();
    first
        .set_auth(
            AuthData::from_json(json!({"user": {"id": 9}, "expiresAt": 4_000_000_000_000_u64})).unwrap(),
        )
        .await
        .unwrap();
    assert!(first.auth_with_credentials(), "AUTH_WITH_CREDENTIALS is true for cookie");
    first.fetch_with_cache("/private", FetchOptions::new().auth(true)).await.unwrap();
    assert_eq!(server.seen()[0].credentials, "Include");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 0, "cookie auth never refreshes");
    drop(first);

    let reloaded = build();
    let state = reloaded.get_auth_state().await;
    assert!(state.authenticated, "the session cookie is the browser's; the user came back from IndexedDB");
    assert_eq!(state.auth.unwrap().user, Some(json!({"id": 9})));
    reloaded.clear_memory_auth().await;
    assert!(!reloaded.get_auth_state().await.authenticated);
    let stored = reloaded.get_auth().await.unwrap().unwrap();
    assert_eq!(stored.user, Some(json!({"id": 9})), "clearMemoryAuth leaves IndexedDB alone");
}

/// A cookie record past its expiry cannot vouch for the session alone (issue 36): the start asks the
/// server who is signed in; a user keeps the session (with the server's expiry), a 401 ends it.
#[wasm_bindgen_test]
async fn an_expired_cookie_record_is_confirmed_by_the_server_or_ends_the_session() {
    fresh_database("cookie-expired").await;
    let alive = Rc::new(Cell::new(true));
    let server = {
        let alive = alive.clone();
        FakeServer::new(move |seen| match (seen.path.as_str(), alive.get()) {
            ("/api/me", true) => {
                Reply::json(200, json!({"user": {"id": 9}, "expiresAt": 4_000_000_000_000_u64}))
            }
            _ => Reply::json(401, json!({})),
        })
    };
    let build = || {
        Client::builder()
            .config(config("cookie"))
            .options(options("cookie-expired"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let expired = || AuthData::from_json(json!({"user": {"id": 9}, "expiresAt": 1})).unwrap();
    let first = build();
    first.set_auth(expired()).await.unwrap();
    drop(first);

    let reloaded = build();
    let state = reloaded.get_auth_state().await;
    assert!(state.authenticated, "the server vouched for the session");
    assert_eq!(state.auth.unwrap().expires_at, Some(4_000_000_000_000), "with the server's expiry");
    assert_eq!(server.count(|seen| seen.path == "/api/me"), 1);
    assert_eq!(server.seen()[0].credentials, "Include");
    reloaded.set_auth(expired()).await.unwrap();
    drop(reloaded);

    alive.set(false);
    let ended = build();
    assert!(!ended.get_auth_state().await.authenticated, "the server said nobody: signed out");
    assert_eq!(server.count(|seen| seen.path == "/api/me"), 2);
    drop(ended);
    let after = build();
    assert!(!after.get_auth_state().await.authenticated);
    assert_eq!(server.count(|seen| seen.path == "/api/me"), 2, "the record was purged: nobody to ask about");
}

#[wasm_bindgen_test]
async fn ensure_valid_auth_refreshes_only_an_expiring_token() {
    fresh_database("ensure").await;
    let server = rotating_server("t2");
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("ensure"))
        .http(server.http())
        .build()
        .unwrap();
    assert_eq!(client.ensure_valid_auth().await, Ok(None), "no auth, nothing to refresh");
    client.set_auth(login("t1")).await.unwrap();
    assert!(client.is_auth_valid());
    assert_eq!(client.ensure_valid_auth().await.unwrap().unwrap().token.as_deref(), Some("t1"));
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 0, "far from expiry: no refresh");
    let soon = js_sys::Date::now() as u64 + 5_000;
    client.set_auth(AuthData { expires_at: Some(soon), ..login("t1") }).await.unwrap();
    assert!(client.is_auth_valid(), "still valid for 5 s");
    let fresh = client.ensure_valid_auth().await.unwrap().unwrap();
    assert_eq!(fresh.token.as_deref(), Some("t2"), "within the 30 s margin: refreshed");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1);
}

#[wasm_bindgen_test]
async fn the_one_failure_check_is_the_configs_and_can_read_the_body() {
    fresh_database("rule").await;
    let config = Config::from_json_str(
        r#"{"features":{"auth":{"enabled":true,"type":"bearer","failure":{"statuses":[401,419],
            "jsonField":{"path":"errors.*.extensions.code","value":"UNAUTHENTICATED"}}},"graphql":{"enabled":true}}}"#,
    )
    .unwrap();
    let refreshed = Rc::new(Cell::new(false));
    let seen_refresh = refreshed.clone();
    let server = FakeServer::new(move |seen| match seen.path.as_str() {
        "/api/refresh" => {
            seen_refresh.set(true);
            Reply::json(200, json!({"token": "t2"}))
        }
        _ if seen.header("authorization") == Some("Bearer t2") => {
            Reply::json(200, json!({"data": {"me": {"id": 7}}}))
        }
        _ => Reply::json(
            200,
            json!({"errors": [{"message": "who?", "extensions": {"code": "UNAUTHENTICATED"}}]}),
        ),
    });
    let client =
        Client::builder().config(config).options(options("rule")).http(server.http()).build().unwrap();
    let answer = |status: u16, body: &str| HttpResponse {
        url: String::new(),
        status,
        headers: Vec::new(),
        body: body.into(),
    };
    assert!(client.is_auth_failure_response(&answer(419, "")));
    assert!(!client.is_auth_failure_response(&answer(403, "")));
    assert!(client
        .is_auth_failure_response(&answer(200, r#"{"errors":[{"extensions":{"code":"UNAUTHENTICATED"}}]}"#)));
    client.set_auth(login("t1")).await.unwrap();
    let me =
        client.query_gql::<Value>("query Me { me { id } }", None, GqlOptions::with_auth(true)).await.unwrap();
    assert_eq!(
        me.data,
        json!({"me": {"id": 7}}),
        "a 200 with the configured error code was refreshed and retried"
    );
    assert!(refreshed.get());
}

/// An app's own check (its `src/cachet/auth/check.rs`): the rule, or a 403 whose body says the session
/// expired.
fn app_check(
    rule: &cachet_core::config::AuthFailureRule,
    response: &cachet_core::config::FailureResponse<'_>,
) -> bool {
    rule.check(response)
        || (response.status == 403 && response.json().is_some_and(|body| body["reason"] == "expired"))
}

#[wasm_bindgen_test]
async fn the_apps_failure_check_replaces_the_rule_for_refresh_and_retry() {
    fresh_database("app-check").await;
    let server = FakeServer::new(move |seen| match seen.path.as_str() {
        "/api/refresh" => Reply::json(200, json!({"token": "t2"})),
        _ if seen.header("authorization") == Some("Bearer t2") => Reply::json(200, json!({"ok": true})),
        _ => Reply::json(403, json!({"reason": "expired"})),
    });
    let client = Client::builder()
        .config(config("bearer"))
        .failure_check(app_check)
        .options(options("app-check"))
        .http(server.http())
        .build()
        .unwrap();
    let answer = |status: u16, body: &str| HttpResponse {
        url: String::new(),
        status,
        headers: Vec::new(),
        body: body.into(),
    };
    assert!(client.is_auth_failure_response(&answer(401, "")), "the rule still holds");
    assert!(client.is_auth_failure_response(&answer(403, r#"{"reason":"expired"}"#)));
    assert!(!client.is_auth_failure_response(&answer(403, r#"{"reason":"forbidden"}"#)));
    client.set_auth(login("t1")).await.unwrap();
    let result = client.fetch_with_cache("/data", FetchOptions::new().auth(true)).await.unwrap();
    assert_eq!(result.response.status, 200, "the 403 was refreshed and retried");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1);
}
