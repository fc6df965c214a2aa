//! Server push from the page (issue 21): the typed refusals, and the calls against the Push API, here a
//! stand-in registration (the test page has no Service Worker, and headless Chromium no push service):
//! objects of the real `ServiceWorkerRegistration` / `PushSubscription` prototypes whose `pushManager`
//! records what the client asked.

use cachet_client::{Client, Error};
use cachet_core::protocol::push::VapidKeyError;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use super::support::{fresh_database, options};

const KEY: &str = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";

fn client(test: &str, config: &str) -> Client {
    Client::builder().config_json(config).unwrap().options(options(test)).build().unwrap()
}

fn run(code: &str) -> JsValue {
    js_sys::Function::new_no_args(code).call0(&JsValue::NULL).unwrap()
}

fn log() -> Value {
    let text = js_sys::JSON::stringify(&run("return window.__push;")).unwrap();
    serde_json::from_str(&String::from(text)).unwrap()
}

/// Replaces `navigator.serviceWorker.getRegistration` with a registration whose push manager holds a
/// subscription made with `key` (none when `null`); every call is logged in `window.__push`.
fn stand_in(key: Option<&str>) {
    run(&format!(
        "const fromKey = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='), (c) => c.charCodeAt(0)).buffer;
         window.__push = {{ unsubscribed: [], subscribed: [] }};
         const subscription = (endpoint, key) => Object.create(PushSubscription.prototype, {{
           options: {{ value: {{ applicationServerKey: key, userVisibleOnly: true }} }},
           toJSON: {{ value: () => ({{ endpoint, expirationTime: null, keys: {{ p256dh: 'p', auth: 'a' }} }}) }},
           unsubscribe: {{ value: () => {{ window.__push.unsubscribed.push(endpoint); current = null; return Promise.resolve(true); }} }},
         }});
         let current = {key} === null ? null : subscription('https://push.example.invalid/old', fromKey({key}));
         const manager = {{
           getSubscription: () => Promise.resolve(current),
           subscribe: (options) => {{
             window.__push.subscribed.push({{ userVisibleOnly: options.userVisibleOnly, keyBytes: options.applicationServerKey.byteLength }});
             current = subscription('https://push.example.invalid/new', options.applicationServerKey.buffer);
             return Promise.resolve(current);
           }},
         }};
         const registration = Object.create(ServiceWorkerRegistration.prototype, {{
           pushManager: {{ value: manager }}, active: {{ value: null }}, installing: {{ value: null }}, waiting: {{ value: null }},
         }});
         window.__realGetRegistration = window.__realGetRegistration || navigator.serviceWorker.getRegistration;
         navigator.serviceWorker.getRegistration = () => Promise.resolve(registration);",
        key = json!(key),
    ));
}

fn restore() {
    run("if (window.__realGetRegistration) navigator.serviceWorker.getRegistration = window.__realGetRegistration;");
}

#[wasm_bindgen_test]
async fn subscribing_is_refused_with_a_typed_error_where_push_cannot_work() {
    fresh_database("push-refused").await;
    let bearer = client(
        "push-refused",
        r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "push": {"enabled": true}}}"#,
    );
    let error = bearer.subscribe_push(KEY).await.unwrap_err();
    assert!(matches!(error, Error::PushNeedsCookieAuth { .. }), "{error:?}");
    assert_eq!(error.kind(), "push-needs-cookie-auth");
    assert!(error.to_string().starts_with("server push needs cookie auth (SPEC §5.8)"), "{error}");
    let off = client("push-refused", r#"{"features": {"auth": {"enabled": true}}}"#);
    let error = off.subscribe_push(KEY).await.unwrap_err();
    assert!(matches!(error, Error::FeatureOff { key: "features.push.enabled", .. }), "{error:?}");
    let cookie =
        client("push-refused", r#"{"features": {"auth": {"enabled": true}, "push": {"enabled": true}}}"#);
    let error = cookie.subscribe_push("not a key").await.unwrap_err();
    assert!(matches!(error, Error::VapidKey(VapidKeyError::NotBase64Url)), "{error:?}");
    // This test page has no Service Worker registration: nothing to subscribe with, nothing to end.
    let error = cookie.subscribe_push(KEY).await.unwrap_err();
    assert_eq!(error.kind(), "push-unavailable");
    assert!(error.to_string().contains("no Service Worker is registered"), "{error}");
    assert_eq!(cookie.unsubscribe_push().await, Ok(None));
    assert_eq!(cookie.push_subscription().await, Ok(None));
}

#[wasm_bindgen_test]
async fn subscribe_asks_for_user_visible_pushes_with_the_key_and_clear_auth_unsubscribes() {
    fresh_database("push-calls").await;
    let cookie =
        client("push-calls", r#"{"features": {"auth": {"enabled": true}, "push": {"enabled": true}}}"#);
    // None yet: a subscription is made, user-visible, with the key's 65 bytes.
    stand_in(None);
    let made = cookie.subscribe_push(KEY).await.unwrap();
    assert_eq!(made["endpoint"], json!("https://push.example.invalid/new"));
    assert_eq!(log()["subscribed"], json!([{ "userVisibleOnly": true, "keyBytes": 65 }]));
    // One with the same key is kept; one with another key is replaced.
    stand_in(Some(KEY));
    assert_eq!(
        cookie.subscribe_push(KEY).await.unwrap()["endpoint"],
        json!("https://push.example.invalid/old")
    );
    assert_eq!(log()["subscribed"], json!([]));
    let other = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM";
    stand_in(Some(other));
    assert_eq!(
        cookie.subscribe_push(KEY).await.unwrap()["endpoint"],
        json!("https://push.example.invalid/new")
    );
    assert_eq!(log()["unsubscribed"], json!(["https://push.example.invalid/old"]));
    // The subscription belongs to the user who made it: clearAuth ends it.
    stand_in(Some(KEY));
    assert_eq!(
        cookie.push_subscription().await.unwrap().unwrap()["endpoint"],
        json!("https://push.example.invalid/old")
    );
    cookie.clear_auth().await.unwrap();
    assert_eq!(log()["unsubscribed"], json!(["https://push.example.invalid/old"]));
    assert_eq!(cookie.unsubscribe_push().await, Ok(None), "nothing left to end");
    restore();
}
