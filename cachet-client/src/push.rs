//! Server push from the page's side: subscribe this browser, hand the subscription to the app (which
//! sends it to its server), unsubscribe.
//!
//! A subscription is made on the page's Service Worker registration with the server's VAPID public key
//! and `userVisibleOnly: true` (the only kind browsers grant: every push shows a notification, see
//! `features.push.notification`). The pushes themselves are handled by the worker
//! (`cachet_worker::sw::push`) with no page open, which is why push needs cookie auth (SPEC §5.8): with
//! bearer or custom auth the subscribe call fails with [`Error::PushNeedsCookieAuth`], with push off with
//! [`Error::FeatureOff`], and where the browser cannot subscribe (no Service Worker registration, no Push
//! API, notification permission denied, no push service reachable) with [`Error::PushUnavailable`]
//! carrying the browser's own error name and message. Where the browser's `subscribe` never settles
//! (Chromium with notification permission but no push service: headless Chromium, a closed network) the
//! call gives up after [`SUBSCRIBE_TIMEOUT`] with `TimeoutError`.
//!
//! The subscription belongs to the user who made it: [`Client::clear_auth`] unsubscribes.
//!
//! The calls are built with the cargo feature `push` (cachet-kit's `push` turns it on): they reach the
//! browser through `js/push.js`, which every app linking the feature ships. Without it they fail with
//! [`Error::NotBuilt`], and `clear_auth` has no subscription to end.
//!
//! ```no_run
//! # async fn run(client: cachet_client::Client) -> Result<(), cachet_client::Error> {
//! let vapid_public_key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
//! let subscription = client.subscribe_push(vapid_public_key).await?; // {endpoint, expirationTime, keys}
//! // The app POSTs `subscription` to its server, which sends pushes to it (RFC 8030 + VAPID).
//! let removed = client.unsubscribe_push().await?; // Some(subscription) when there was one
//! # let _ = (subscription, removed); Ok(()) }
//! ```

use cachet_core::config::{Config, PushRefusal};
use cachet_core::protocol::push::vapid_public_key;
use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::{Client, Error};

/// How long [`Client::subscribe_push`] waits for the browser's `pushManager.subscribe`.
pub const SUBSCRIBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl Client {
    /// `subscribePush(vapidPublicKey)`: subscribes this browser to the server's pushes and returns the
    /// subscription as JSON (`{endpoint, expirationTime, keys: {p256dh, auth}}`) for the app to send to
    /// its server. An existing subscription made with the same key is returned as it is; one made with
    /// another key is replaced.
    #[inline(never)]
    pub fn subscribe_push<'a>(
        &'a self,
        vapid_key: &'a str,
    ) -> futures::future::LocalBoxFuture<'a, Result<Value, Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            push_allowed(&self.inner.config())?;
            let key = vapid_public_key(vapid_key)?;
            // With notification permission and no reachable push service, Chromium's `subscribe` never
            // settles (seen in headless Chromium): `js/push.js` gives up after the bound, saying so.
            call(js_sys::Uint8Array::from(&key[..]).into(), crate::locks::timer_ms(SUBSCRIBE_TIMEOUT))
                .await?
                .ok_or_else(|| Error::PushUnavailable {
                    name: "Error".into(),
                    message: "pushManager.subscribe gave no subscription".into(),
                })
        })
    }

    /// `unsubscribePush()`: ends this browser's subscription; returns it (for the app to tell its
    /// server), or `None` when there was none.
    #[inline(never)]
    pub fn unsubscribe_push<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<Value>, Error>> {
        Box::pin(call(JsValue::NULL, 0))
    }

    /// `getPushSubscription()`: this browser's subscription as JSON, `None` when there is none.
    #[inline(never)]
    pub fn push_subscription<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<Value>, Error>> {
        Box::pin(call(JsValue::UNDEFINED, 0))
    }
}

/// `js/push.js`'s `push` (`key`: undefined to read the subscription, null to end it, the VAPID key's
/// bytes to subscribe): the subscription it answered, as JSON.
#[cfg(feature = "push")]
async fn call(key: JsValue, ms: u32) -> Result<Option<Value>, Error> {
    let text = wasm_bindgen_futures::JsFuture::from(crate::js::push(key, ms)).await.map_err(|failed| {
        let failed = js_sys::Array::from(&failed);
        let text = |at| failed.get(at).as_string().unwrap_or_default();
        Error::PushUnavailable { name: text(0), message: text(1) }
    })?;
    text.as_string()
        .map(|text| {
            crate::json::read(text.as_bytes()).map_err(|error| Error::Decode {
                what: "the push subscription".into(),
                message: error.to_string(),
            })
        })
        .transpose()
}

/// Without the cargo feature `push`: [`Error::NotBuilt`].
#[cfg(not(feature = "push"))]
async fn call(_key: JsValue, _ms: u32) -> Result<Option<Value>, Error> {
    Err(Error::NotBuilt {
        call: "subscribePush / unsubscribePush / getPushSubscription",
        feature: "push",
        how: "the `push` feature of cachet-kit (with the worker's push handler), or of cachet-client",
    })
}

/// Whether `config` lets a page subscribe: the core's rule, as the page client's typed errors.
pub(crate) fn push_allowed(config: &Config) -> Result<(), Error> {
    match config.features.push.allowed(&config.features.auth) {
        Ok(()) => Ok(()),
        Err(PushRefusal::NeedsCookieAuth(auth_type)) => Err(Error::PushNeedsCookieAuth { auth_type }),
        Err(_) => Err(Error::FeatureOff {
            call: "subscribePush",
            key: "features.push.enabled",
            enable: "set features.push.enabled to true in cachet.config.json, then `cachet generate`",
        }),
    }
}
