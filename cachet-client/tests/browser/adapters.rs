//! The default adapters of SPEC §2's table, against the fake server.

use cachet_client::{default_adapter, AuthAdapter, AuthData, AuthType, BearerAdapter, CookieAdapter, Error};
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{FakeServer, Reply};

fn bearer(token: &str) -> AuthData {
    AuthData { token: Some(token.into()), user: Some(json!({"id": 1})), expires_at: Some(1) }
}

#[wasm_bindgen_test]
fn headers_and_credentials_follow_the_auth_type() {
    let cookie = CookieAdapter::default();
    let bearer_adapter = BearerAdapter::default();
    assert_eq!(cookie.auth_type(), AuthType::Cookie);
    assert!(cookie.get_headers(Some(&bearer("t1"))).is_empty(), "cookie auth never sends a header");
    assert_eq!(
        bearer_adapter.get_headers(Some(&bearer("t1"))),
        [("Authorization".to_owned(), "Bearer t1".to_owned())]
    );
    assert!(bearer_adapter.get_headers(None).is_empty());
    assert!(bearer_adapter.get_headers(Some(&AuthData::default())).is_empty(), "no token, no header");
    assert!(AuthType::Cookie.with_credentials() && !AuthType::Bearer.with_credentials());
    assert!(default_adapter(AuthType::Custom).is_none(), "custom auth needs the app's adapter");
    assert_eq!(default_adapter(AuthType::Bearer).unwrap().auth_type(), AuthType::Bearer);
}

#[wasm_bindgen_test]
async fn bearer_refresh_posts_the_current_token_and_reads_the_new_one() {
    let server = FakeServer::new(|seen| match seen.header("authorization") {
        Some("Bearer t1") => Reply::json(200, json!({"token": "t2", "expiresAt": 99})),
        _ => Reply::json(401, json!({"error": "token is unknown or revoked"})),
    });
    let adapter = BearerAdapter::default();
    let fresh = adapter.refresh(&server.http(), &bearer("t1")).await.unwrap().unwrap();
    assert_eq!(fresh.token.as_deref(), Some("t2"));
    assert_eq!(fresh.expires_at, Some(99));
    assert_eq!(fresh.user, Some(json!({"id": 1})), "the user is kept when the answer has none");
    let seen = &server.seen()[0];
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/api/refresh"));
    assert_eq!(seen.header("x-sw-strategy"), Some("network-only"), "no Service Worker stores it");
    assert_eq!(seen.credentials, "SameOrigin", "a refresh cookie may go with it");
    assert_eq!(adapter.refresh(&server.http(), &bearer("old")).await, Ok(None), "a refusal is null");
    assert_eq!(CookieAdapter::default().refresh(&server.http(), &bearer("t1")).await, Ok(None));
    assert_eq!(server.seen().len(), 2, "cookie refresh asks nobody");
}

/// A page reloaded with no token in memory restores its session through the same `refresh` (issue 36):
/// the request carries no `Authorization`, only the browser's cookies; a server error is an error (the
/// session goes on), a 4xx the end of the session.
#[wasm_bindgen_test]
async fn bearer_refresh_without_a_token_sends_the_cookies_alone_and_a_server_error_is_no_refusal() {
    let server = FakeServer::new(|seen| match seen.header("authorization") {
        None => Reply::json(200, json!({"token": "t9", "expiresAt": 7, "user": {"id": 2}})),
        Some(_) => Reply::json(401, json!({"error": "token is unknown or revoked"})),
    });
    let adapter = BearerAdapter::default();
    let record = AuthData { user: Some(json!({"id": 2})), expires_at: Some(1), ..AuthData::default() };
    let restored = adapter.refresh(&server.http(), &record).await.unwrap().unwrap();
    assert_eq!((restored.token.as_deref(), restored.user), (Some("t9"), Some(json!({"id": 2}))));
    let seen = &server.seen()[0];
    assert_eq!((seen.path.as_str(), seen.header("authorization")), ("/api/refresh", None));
    assert_eq!(seen.credentials, "SameOrigin");
    let down = FakeServer::new(|_| Reply::text(503, "maintenance"));
    match adapter.refresh(&down.http(), &record).await {
        Err(Error::Http { status: 503, body, .. }) => assert_eq!(body, "maintenance"),
        other => panic!("a 503 is an error, not a refusal: {other:?}"),
    }
    let busy = FakeServer::new(|_| Reply::text(429, ""));
    assert!(matches!(adapter.refresh(&busy.http(), &record).await, Err(Error::Http { status: 429, .. })));
    assert_eq!(adapter.refresh(&server.http(), &bearer("revoked")).await, Ok(None), "a 401 ends it");
}

#[wasm_bindgen_test]
async fn fetch_user_sends_the_bearer_header_or_the_cookie() {
    let server = FakeServer::new(|seen| match seen.path.as_str() {
        "/api/me" => Reply::json(200, json!({"user": {"id": 3, "username": "ada"}, "expiresAt": 42})),
        _ => Reply::text(404, ""),
    });
    let found =
        BearerAdapter::default().fetch_user(&server.http(), Some(&bearer("t1"))).await.unwrap().unwrap();
    assert_eq!(found.user, Some(json!({"id": 3, "username": "ada"})));
    assert_eq!(found.token.as_deref(), Some("t1"), "bearer keeps its token");
    assert_eq!(server.seen()[0].header("authorization"), Some("Bearer t1"));
    assert_eq!(server.seen()[0].credentials, "SameOrigin", "bearer does not need cookies");
    let cookie = CookieAdapter::default().fetch_user(&server.http(), None).await.unwrap().unwrap();
    assert_eq!(cookie.expires_at, Some(42));
    let seen = &server.seen()[1];
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str(), seen.header("authorization")),
        ("GET", "/api/me", None)
    );
    assert_eq!(seen.credentials, "Include");
    assert_eq!(BearerAdapter::default().fetch_user(&server.http(), None).await, Ok(None), "no token: nobody");
}

#[wasm_bindgen_test]
fn auth_data_reads_what_set_auth_is_given() {
    let full = AuthData::from_json(json!({"token": "t", "user": {"id": 7}, "expiresAt": 5.5})).unwrap();
    assert_eq!((full.token.as_deref(), full.expires_at), (Some("t"), Some(5)));
    let user_only = AuthData::from_json(json!({"id": 7, "username": "ada"})).unwrap();
    assert_eq!(user_only.user, Some(json!({"id": 7, "username": "ada"})));
    assert_eq!(AuthData::from_json(serde_json::Value::Null), None);
    // The identity: user.id, as text, so 7 and "7" are one user; else the canonical user object.
    assert_eq!(full.identity().as_deref(), Some("7"));
    assert_eq!(AuthData::from_json(json!({"user": {"id": "7"}})).unwrap().partition(), full.partition());
    let no_id = AuthData::from_json(json!({"user": {"name": "b", "age": 3}})).unwrap();
    assert_eq!(no_id.identity().as_deref(), Some(r#"{"age":3,"name":"b"}"#));
    assert_eq!(AuthData { token: Some("t".into()), ..AuthData::default() }.partition(), None);
    assert!(!format!("{full:?}").contains("\"t\""), "Debug never shows the token: {full:?}");
}
