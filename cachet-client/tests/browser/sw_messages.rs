//! The page's side of the Service Worker protocol, with the worker's messages dispatched by hand on
//! `navigator.serviceWorker` (no Service Worker runs in this page): refresh requests answered as the
//! table of `SwToPage::RefreshRequest` says, connectivity, and the adapter-first lookup of `get_auth`.

use cachet_client::{AuthAdapter, AuthData, AuthType, Client, ClientEvent, Error};
use cachet_core::cache_key::auth_fingerprint;
use cachet_core::protocol::{Message, PageReply, SwToPage};
use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use serde_json::json;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{config, fresh_database, next_event, options, FakeServer, Reply};

/// Dispatches `refresh-request {id, failed}` as the Service Worker would post it, and returns the page's
/// reply from the port sent along.
async fn refresh_request(id: u64, failed: Option<String>) -> PageReply {
    let channel = web_sys::MessageChannel::new().unwrap();
    let (sender, reply) = oneshot::channel::<String>();
    let sender = std::cell::RefCell::new(Some(sender));
    let on_reply = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        if let Some(sender) = sender.borrow_mut().take() {
            let _ = sender.send(event.data().as_string().unwrap());
        }
    });
    channel.port1().set_onmessage(Some(on_reply.as_ref().unchecked_ref()));
    let init = web_sys::MessageEventInit::new();
    init.set_data(&JsValue::from_str(&SwToPage::RefreshRequest { id, failed }.to_wire()));
    init.set_ports(&js_sys::Array::of1(&channel.port2()));
    let event = web_sys::MessageEvent::new_with_event_init_dict("message", &init).unwrap();
    let container = web_sys::window().unwrap().navigator().service_worker();
    container.dispatch_event(&event).unwrap();
    let text = reply.await.unwrap();
    drop(on_reply);
    PageReply::from_wire(&text).unwrap()
}

fn reply(id: u64, ok: bool, authorization: Option<&str>) -> PageReply {
    PageReply::RefreshReply { id, ok, authorization: authorization.map(str::to_owned) }
}

#[wasm_bindgen_test]
async fn refresh_requests_are_answered_as_the_protocol_table_says() {
    fresh_database("responder").await;
    let server = FakeServer::new(|seen| match seen.header("authorization") {
        Some("Bearer t1") => Reply::json(200, json!({"token": "t2"})),
        _ => Reply::json(401, json!({})),
    });
    let client = Client::builder()
        .config(config("bearer"))
        .options(options("responder"))
        .http(server.http())
        .build()
        .unwrap();
    assert_eq!(refresh_request(1, None).await, reply(1, false, None), "nobody logged in");
    client.set_auth(AuthData { token: Some("t1".into()), ..AuthData::default() }).await.unwrap();

    let other = Some(auth_fingerprint("Bearer t0"));
    assert_eq!(refresh_request(2, other).await, reply(2, true, Some("Bearer t1")), "an older token failed");
    assert_eq!(refresh_request(3, None).await, reply(3, true, Some("Bearer t1")), "a replay asks for auth");
    assert_eq!(server.seen().len(), 0, "neither refreshes");

    let mine = Some(auth_fingerprint("Bearer t1"));
    assert_eq!(refresh_request(4, mine.clone()).await, reply(4, true, Some("Bearer t2")), "my token failed");
    assert_eq!(server.count(|seen| seen.path == "/api/refresh"), 1);
    assert_eq!(refresh_request(5, mine).await, reply(5, true, Some("Bearer t2")), "already refreshed");

    let mut events = client.events();
    let refused = refresh_request(6, Some(auth_fingerprint("Bearer t2"))).await;
    assert_eq!(refused, reply(6, false, None), "t2 is refused: the session is over");
    next_event(&mut events, |event| matches!(event, ClientEvent::AuthStateChange { .. })).await;
    assert!(!client.auth_state().authenticated, "purged");
}

#[wasm_bindgen_test]
async fn connectivity_follows_the_window_events() {
    fresh_database("online").await;
    let client = Client::builder().config(config("cookie")).options(options("online")).build().unwrap();
    client.ready().await;
    let mut events = client.events();
    let window = web_sys::window().unwrap();
    window.dispatch_event(&web_sys::Event::new("offline").unwrap()).unwrap();
    let offline = next_event(&mut events, |event| matches!(event, ClientEvent::StateChanged(_))).await;
    assert!(matches!(offline, ClientEvent::StateChanged(state) if !state.online));
    assert!(!client.get_auth_state().await.online);
    window.dispatch_event(&web_sys::Event::new("online").unwrap()).unwrap();
    next_event(&mut events, |event| matches!(event, ClientEvent::StateChanged(state) if state.online)).await;
}

/// `custom` auth from an identity provider: `get_auth` answers first.
struct Provider;

impl AuthAdapter for Provider {
    fn auth_type(&self) -> AuthType {
        AuthType::Custom
    }

    fn get_auth(&self) -> LocalBoxFuture<'_, Result<Option<AuthData>, Error>> {
        Box::pin(async { Ok(Some(AuthData { token: Some("from-provider".into()), ..AuthData::default() })) })
    }
}

#[wasm_bindgen_test]
async fn get_auth_asks_the_adapter_first_and_custom_auth_needs_one() {
    fresh_database("custom").await;
    let without = Client::builder().config(config("custom")).options(options("custom")).build();
    assert!(matches!(without, Err(Error::NoAuthAdapter)), "custom auth without an adapter");
    let server = FakeServer::new(|_| Reply::json(200, json!({})));
    let client = Client::builder()
        .config(config("custom"))
        .options(options("custom"))
        .http(server.http())
        .adapter(Provider)
        .build()
        .unwrap();
    let found = client.get_auth().await.unwrap().unwrap();
    assert_eq!(found.token.as_deref(), Some("from-provider"));
    assert!(client.get_auth_state().await.authenticated, "the provider's auth became the current auth");
    assert!(client.auth_with_credentials(), "custom auth sends credentials");
    assert_eq!(server.seen().len(), 0, "fetch_user was not needed");
}
