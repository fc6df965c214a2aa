//! Server push on `window.cachet` (SPEC §5.8; cookie auth only): `subscribePush(vapidPublicKey)`,
//! `unsubscribePush()`, `getPushSubscription()`, over `cachet_client::push`.
//!
//! ```js
//! const key = await (await fetch('/api/push/key')).text();       // the server's VAPID public key
//! try {
//!   const subscription = await cachet.subscribePush(key);          // {endpoint, expirationTime, keys}
//!   await fetch('/api/push/subscription', { method: 'POST', body: JSON.stringify(subscription),
//!                                           headers: { 'content-type': 'application/json' } });
//! } catch (error) {
//!   // error.kind: 'push-needs-cookie-auth' (bearer or custom auth), 'feature-off' (features.push off),
//!   // 'push-unavailable' (no push service, permission denied; error.browserError names the browser's error)
//! }
//! ```

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::convert::to_js;
use crate::{client, fail, promise};

/// `subscribePush(vapidPublicKey)`: the subscription as JSON, for the app to send to its server.
#[wasm_bindgen(js_name = subscribePush)]
pub fn subscribe_push(vapid_public_key: String) -> js_sys::Promise {
    promise(async move {
        let subscription = client()?.subscribe_push(&vapid_public_key).await.map_err(fail)?;
        Ok(to_js(&subscription))
    })
}

/// `unsubscribePush()`: the subscription that was ended (for the app to tell its server), or `null`.
#[wasm_bindgen(js_name = unsubscribePush)]
pub fn unsubscribe_push() -> js_sys::Promise {
    promise(async move {
        let removed = client()?.unsubscribe_push().await.map_err(fail)?;
        Ok(to_js(&removed.unwrap_or(Value::Null)))
    })
}

/// `getPushSubscription()`: this browser's subscription, or `null`.
#[wasm_bindgen(js_name = getPushSubscription)]
pub fn get_push_subscription() -> js_sys::Promise {
    promise(async move {
        let current = client()?.push_subscription().await.map_err(fail)?;
        Ok(to_js(&current.unwrap_or(Value::Null)))
    })
}
