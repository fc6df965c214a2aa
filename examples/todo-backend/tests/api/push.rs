//! Server push (issue 21): a change made by one session is pushed, encrypted and VAPID-signed, to the
//! user's subscriptions made by other sessions, through a fake push service on 127.0.0.1.

use std::time::Duration;

use axum::http::StatusCode;
use cachet_core::protocol::decode_message;
use cachet_core::protocol::push::PushMessage;
use cachet_core::push::PushAction;
use serde_json::{json, Value};
use todo_backend::fake_push_service::FakePushService;
use todo_backend::AuthMode;

use super::{get, gql, login, post_json, send, server};

const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";

#[tokio::test]
async fn a_change_is_pushed_to_the_other_sessions_of_the_user_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(dir.path(), AuthMode::Cookie).await;
    let addr = server.addr();
    let key = get(addr, "/api/push/key", &[]).await;
    assert_eq!(key.status, 200);
    let key = key.text();
    assert_eq!(cachet_core::protocol::push::vapid_public_key(&key).expect("a VAPID key").len(), 65);
    assert_eq!(get(addr, "/api/push/key", &[]).await.text(), key, "one key per database");

    // alice's browser subscribes with its session; alice's phone (another session) changes a todo.
    let push_service = FakePushService::start().await.expect("fake push service");
    let browser = login(addr, AuthMode::Cookie, "alice").await;
    let subscribed = post_json(
        addr,
        "/api/push/subscription",
        &[(&browser.0, &browser.1)],
        &push_service.subscription_json(),
    )
    .await;
    assert_eq!(subscribed.status, 201, "{}", subscribed.text());
    let phone = login(addr, AuthMode::Cookie, "alice").await;
    let created = gql(addr, &phone, CREATE, json!({ "title": "milk" })).await;
    assert_eq!(created.status, 200, "{}", created.text());

    let received = push_service.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 1);
    let message = &received[0];
    assert_eq!(message.ttl.as_deref(), Some("86400"));
    assert_eq!(message.content_encoding.as_deref(), Some("aes128gcm"));
    let vapid = message.authorization.as_deref().unwrap_or_default();
    assert!(vapid.starts_with("vapid t=") && vapid.ends_with(&format!("k={key}")), "{vapid}");
    let payload = message.payload.clone().expect("the browser's keys decrypt it");
    assert_eq!(payload, r#"{"v":1,"type":"invalidate","tags":["todo","todos","summary"]}"#);
    assert_eq!(
        decode_message::<PushMessage>(&payload),
        Ok(PushMessage::invalidate(&["todo", "todos", "summary"]))
    );
    // What the worker of the example app (cookie auth, push on) does with it.
    let app_config =
        cachet_core::config::Config::from_json_str(include_str!("../../../todo-app/cachet.config.json"))
            .expect("the app's config");
    let action = PushAction::decide(Some(payload.as_bytes()), &app_config).expect("accepted");
    assert_eq!(action.tags, ["todo", "todos", "summary"]);

    // The browser's own change is not pushed back to it; a failed mutation, a query, bob's change neither.
    gql(addr, &browser, CREATE, json!({ "title": "bread" })).await;
    gql(addr, &phone, CREATE, json!({ "title": "  " })).await;
    gql(addr, &phone, "query GetTodos { todos { id } }", json!({})).await;
    let bob = login(addr, AuthMode::Cookie, "bob").await;
    gql(addr, &bob, CREATE, json!({ "title": "eggs" })).await;
    gql(addr, &phone, CREATE, json!({ "title": "tea" })).await;
    let received = push_service.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 2, "only the phone's two successful mutations");
    assert_eq!(server.counts().get("push sent"), Some(&2));

    // The push service says the subscription is gone: it is forgotten, and never sent to again.
    push_service.answer_with(StatusCode::GONE);
    gql(addr, &phone, CREATE, json!({ "title": "jam" })).await;
    push_service.wait_for(3, Duration::from_secs(10)).await;
    wait_for_count(&server, "push gone", 1).await;
    gql(addr, &phone, CREATE, json!({ "title": "oil" })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(push_service.received().len(), 3);
}

#[tokio::test]
async fn an_unreachable_push_service_is_logged_and_nothing_else_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(dir.path(), AuthMode::Cookie).await;
    let addr = server.addr();
    let push_service = FakePushService::start().await.expect("fake push service");
    let subscription = push_service.subscription_json();
    drop(push_service); // its port now refuses connections
    tokio::time::sleep(Duration::from_millis(50)).await;
    let browser = login(addr, AuthMode::Cookie, "alice").await;
    let subscribed =
        post_json(addr, "/api/push/subscription", &[(&browser.0, &browser.1)], &subscription).await;
    assert_eq!(subscribed.status, 201);
    let phone = login(addr, AuthMode::Cookie, "alice").await;
    let created = gql(addr, &phone, CREATE, json!({ "title": "milk" })).await;
    assert_eq!(created.status, 200, "the answer does not wait for the push");
    wait_for_count(&server, "push failed", 1).await;
    // The server still serves.
    let todos = gql(addr, &phone, "query GetTodos { todos { title } }", json!({})).await;
    assert_eq!(todos.json()["data"]["todos"], json!([{ "title": "milk" }]));
}

#[tokio::test]
async fn subscriptions_are_checked_need_a_session_and_end_at_logout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = server(dir.path(), AuthMode::Cookie).await;
    let addr = server.addr();
    let push_service = FakePushService::start().await.expect("fake push service");
    let good = push_service.subscription_json();
    assert_eq!(post_json(addr, "/api/push/subscription", &[], &good).await.status, 401);
    let browser = login(addr, AuthMode::Cookie, "alice").await;
    let auth = [(browser.0.as_str(), browser.1.as_str())];
    let mut short_auth = good.clone();
    short_auth["keys"]["auth"] = json!("AAAA"); // 3 bytes: would panic a naive decoder
    let mut not_a_point = good.clone();
    not_a_point["keys"]["p256dh"] = json!("AAAA");
    let mut plain_http = good.clone();
    plain_http["endpoint"] = json!("http://push.example.invalid/x");
    let table: [(Value, &str); 4] = [
        (short_auth, "keys.auth must be 16 bytes, got 3"),
        (not_a_point, "keys.p256dh is not a P-256 public key"),
        (plain_http, "endpoint must be an https:// URL (http:// only on loopback)"),
        (
            json!({ "endpoint": "https://push.example.invalid/x" }),
            "field keys.p256dh is missing or not a string",
        ),
    ];
    for (body, message) in table {
        let answer = post_json(addr, "/api/push/subscription", &auth, &body).await;
        assert_eq!(answer.status, 400, "{body}");
        assert!(answer.text().contains(message), "{}", answer.text());
    }
    assert_eq!(post_json(addr, "/api/push/subscription", &auth, &good).await.status, 201);
    // Logging out forgets the session's subscription: a change by another session pushes nothing.
    let logout = send(addr, "POST", "/api/logout", &auth, Some("")).await.expect("logout");
    assert_eq!(logout.status, 204);
    let phone = login(addr, AuthMode::Cookie, "alice").await;
    gql(addr, &phone, CREATE, json!({ "title": "milk" })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(push_service.received().is_empty());

    // Bearer mode refuses push: SPEC §5.8.
    let dir = tempfile::tempdir().expect("tempdir");
    let bearer = super::server(dir.path(), AuthMode::Bearer).await;
    let token = login(bearer.addr(), AuthMode::Bearer, "alice").await;
    let refused = post_json(bearer.addr(), "/api/push/subscription", &[(&token.0, &token.1)], &good).await;
    assert_eq!(refused.status, 409);
    assert!(refused.text().contains("server push needs cookie auth"), "{}", refused.text());
}

async fn wait_for_count(server: &todo_backend::RunningServer, key: &str, count: u64) {
    let started = std::time::Instant::now();
    while server.counts().get(key).copied().unwrap_or(0) < count {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{key} never reached {count}: {:?}",
            server.counts()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
