//! Two tabs: two clients with the same channel, lock and database names in one page.

use cachet_client::{AuthChangeKind, AuthData, Client, ClientEvent, FetchOptions};
use futures::future::join;
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{config, fresh_database, next_event, options, FakeServer, Reply};

fn login(token: &str) -> AuthData {
    AuthData { token: Some(token.into()), user: Some(json!({"id": 5})), expires_at: Some(4_000_000_000_000) }
}

fn auth_change(kind: AuthChangeKind) -> impl Fn(&ClientEvent) -> bool {
    move |event| *event == ClientEvent::AuthStateChange { kind }
}

/// Rotates `t<n>` to `t<n+1>` on refresh; `/data` wants the newest token, and none while `expired`
/// (until the next refresh).
fn rotating_server(expired: bool) -> FakeServer {
    let newest = std::rc::Rc::new(std::cell::Cell::new(1));
    let expired = std::rc::Rc::new(std::cell::Cell::new(expired));
    FakeServer::new(move |seen| {
        let current = format!("Bearer t{}", newest.get());
        match seen.path.as_str() {
            "/api/refresh" if seen.header("authorization") == Some(current.as_str()) => {
                newest.set(newest.get() + 1);
                expired.set(false);
                Reply::json(200, json!({"token": format!("t{}", newest.get())})).after(30)
            }
            "/api/refresh" => Reply::json(401, json!({"error": "token is unknown or revoked"})),
            _ if !expired.get() && seen.header("authorization") == Some(current.as_str()) => {
                Reply::json(200, json!({"ok": true}))
            }
            _ => Reply::json(401, json!({})).after(10),
        }
    })
}

#[wasm_bindgen_test]
async fn login_refresh_and_clear_in_one_tab_reach_the_other() {
    fresh_database("two-tabs").await;
    let server = rotating_server(false);
    let tab = || {
        Client::builder()
            .config(config("bearer"))
            .options(options("two-tabs"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let (first, second) = (tab(), tab());
    second.ready().await;
    let mut second_events = second.events();
    let mut first_events = first.events();

    first.set_auth(login("t1")).await.unwrap();
    next_event(&mut first_events, auth_change(AuthChangeKind::Login)).await;
    next_event(&mut second_events, auth_change(AuthChangeKind::Login)).await;
    let seen_there = second.auth_state();
    assert!(seen_there.authenticated);
    assert_eq!(seen_there.auth.unwrap().token.as_deref(), Some("t1"), "the token travels in memory");

    first.refresh_auth().await.unwrap();
    next_event(&mut second_events, auth_change(AuthChangeKind::Refresh)).await;
    assert_eq!(second.auth_state().auth.unwrap().token.as_deref(), Some("t2"));
    let answer = second.fetch_with_cache("/data", FetchOptions::new().auth(true)).await.unwrap();
    assert_eq!(answer.response.status, 200, "the other tab uses the refreshed token without refreshing");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1);

    second.clear_auth().await.unwrap();
    next_event(&mut first_events, auth_change(AuthChangeKind::Clear)).await;
    assert!(!first.auth_state().authenticated && first.auth_state().auth.is_none());
    assert!(!second.auth_state().authenticated);
}

#[wasm_bindgen_test]
async fn one_refresh_serves_every_tab() {
    fresh_database("shared-refresh").await;
    let server = rotating_server(true);
    let tab = || {
        Client::builder()
            .config(config("bearer"))
            .options(options("shared-refresh"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let (first, second) = (tab(), tab());
    second.ready().await;
    let mut second_events = second.events();
    first.set_auth(login("t1")).await.unwrap();
    next_event(&mut second_events, auth_change(AuthChangeKind::Login)).await;
    // Both tabs' requests fail with t1 at the same time; only one may refresh (t1 is then revoked, and a
    // second refresh with it would end the session).
    let (one, two) = join(
        first.fetch_with_cache("/data?a", FetchOptions::new().auth(true)),
        second.fetch_with_cache("/data?b", FetchOptions::new().auth(true)),
    )
    .await;
    assert_eq!((one.unwrap().response.status, two.unwrap().response.status), (200, 200));
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1, "one refresh for both tabs");
    assert!(first.auth_state().authenticated && second.auth_state().authenticated);
}

#[wasm_bindgen_test]
async fn a_reloaded_bearer_tab_gets_the_token_from_an_open_tab() {
    fresh_database("reload").await;
    // This server keeps no refresh cookie: a refresh without a token is refused.
    let server = FakeServer::new(|seen| match seen.path.as_str() {
        "/api/refresh" => Reply::json(401, json!({"error": "no refresh cookie"})),
        _ => Reply::json(200, json!({})),
    });
    let tab = || {
        Client::builder()
            .config(config("bearer"))
            .options(options("reload"))
            .http(server.http())
            .build()
            .unwrap()
    };
    let open = tab();
    open.set_auth(login("t1")).await.unwrap();
    let reloaded = tab();
    let state = reloaded.get_auth_state().await;
    assert!(state.authenticated, "the open tab answered");
    assert_eq!(state.auth.unwrap().token.as_deref(), Some("t1"));
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 0, "lent by the tab: the server not asked");
    drop(open);
    drop(reloaded);
    let alone = tab();
    let state = alone.get_auth_state().await;
    assert!(!state.authenticated, "no open tab holds the token and the server restores nothing: signed out");
    let refreshes: Vec<_> = server.seen().into_iter().filter(|seen| seen.path == "/api/refresh").collect();
    assert_eq!(refreshes.len(), 1, "the server asked once");
    assert_eq!(refreshes[0].header("authorization"), None, "with no token: a refresh cookie is all it has");
    assert_eq!(alone.get_auth().await.unwrap(), None, "the session ended: the record is gone");
}
