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
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{PushManager, PushSubscription, PushSubscriptionOptionsInit, ServiceWorkerRegistration};

use crate::error::js_name_and_message;
use crate::link::container;
use crate::locks::with_timeout;
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
            let manager = push_manager().await?;
            if let Some(existing) = current(&manager).await? {
                if application_server_key(&existing).as_deref() == Some(&key[..]) {
                    return subscription_json(&existing);
                }
                unsubscribe(&existing).await?;
            }
            let options = PushSubscriptionOptionsInit::new();
            options.set_user_visible_only(true);
            options.set_application_server_key(&js_sys::Uint8Array::from(&key[..]).into());
            let subscribe = manager.subscribe_with_options(&options).map_err(unavailable)?;
            // With notification permission and no reachable push service, Chromium's `subscribe` never
            // settles (seen in headless Chromium): give up after a bound, saying so.
            let subscription = with_timeout(SUBSCRIBE_TIMEOUT, JsFuture::from(subscribe))
                .await
                .ok_or_else(|| Error::PushUnavailable {
                    name: "TimeoutError".into(),
                    message: format!(
                        "pushManager.subscribe did not settle within {} s: the browser's push service is unreachable",
                        SUBSCRIBE_TIMEOUT.as_secs()
                    ),
                })?
                .map_err(unavailable)?;
            subscription_json(&subscription.unchecked_into())
        })
    }

    /// `unsubscribePush()`: ends this browser's subscription; returns it (for the app to tell its
    /// server), or `None` when there was none.
    #[inline(never)]
    pub fn unsubscribe_push<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<Value>, Error>> {
        Box::pin(async move {
            let Ok(manager) = push_manager().await else {
                return Ok(None);
            };
            let Some(subscription) = current(&manager).await? else {
                return Ok(None);
            };
            let json = subscription_json(&subscription)?;
            unsubscribe(&subscription).await?;
            Ok(Some(json))
        })
    }

    /// `getPushSubscription()`: this browser's subscription as JSON, `None` when there is none.
    #[inline(never)]
    pub fn push_subscription<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<Value>, Error>> {
        Box::pin(async move {
            let Ok(manager) = push_manager().await else {
                return Ok(None);
            };
            current(&manager).await?.as_ref().map(subscription_json).transpose()
        })
    }
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

/// The `PushManager` of the page's Service Worker registration.
async fn push_manager() -> Result<PushManager, Error> {
    let missing =
        |message: &str| Error::PushUnavailable { name: "NotSupportedError".into(), message: message.into() };
    let container = container().ok_or_else(|| missing("this page has no navigator.serviceWorker"))?;
    let registration = JsFuture::from(container.get_registration()).await.map_err(unavailable)?;
    let registration: ServiceWorkerRegistration = registration
        .dyn_into()
        .map_err(|_| missing("no Service Worker is registered for this page: push needs cachet's worker"))?;
    if !js_sys::Reflect::has(&registration, &"pushManager".into()).unwrap_or(false) {
        return Err(missing("this browser has no Push API (PushManager)"));
    }
    registration.push_manager().map_err(unavailable)
}

async fn current(manager: &PushManager) -> Result<Option<PushSubscription>, Error> {
    let found =
        JsFuture::from(manager.get_subscription().map_err(unavailable)?).await.map_err(unavailable)?;
    Ok(found.dyn_into::<PushSubscription>().ok())
}

async fn unsubscribe(subscription: &PushSubscription) -> Result<(), Error> {
    let promise = subscription.unsubscribe().map_err(unavailable)?;
    JsFuture::from(promise).await.map_err(unavailable).map(drop)
}

fn application_server_key(subscription: &PushSubscription) -> Option<Vec<u8>> {
    let options = js_sys::Reflect::get(subscription, &"options".into()).ok()?;
    let key = js_sys::Reflect::get(&options, &"applicationServerKey".into()).ok()?;
    key.dyn_into::<js_sys::ArrayBuffer>().ok().map(|buffer| js_sys::Uint8Array::new(&buffer).to_vec())
}

fn subscription_json(subscription: &PushSubscription) -> Result<Value, Error> {
    let text = js_sys::JSON::stringify(subscription).map_err(unavailable)?;
    crate::json_body(String::from(text).as_bytes())
        .map_err(|error| Error::Decode { what: "the push subscription".into(), message: error.to_string() })
}

fn unavailable(value: JsValue) -> Error {
    let (name, message) = js_name_and_message(&value);
    Error::PushUnavailable { name, message }
}
