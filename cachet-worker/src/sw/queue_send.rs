//! One send of a queued mutation, for the queue's edge (`queue`): the `Authorization` a page gives
//! a bearer mutation for that send only, the stored request rebuilt without cachet's headers, and the
//! outcome as an event for the reducer; and the refresh asked of a page after an auth failure.

use cachet_core::config::Config;
use cachet_core::machines::queue::{QueueEvent, QueuedRequest, SendFailure};
use cachet_core::protocol::headers::{marker_is_set, AUTH_HEADER};
use wasm_bindgen::JsValue;
use web_sys::{Headers, Request, RequestInit};

use super::auth_retry::is_auth_failure;
use super::clock::{now_ms, random};
use super::http::{body_bytes, fetch_raw, without_cachet_headers};
use super::page_auth::{after_auth_failure, ask_page_for_auth, generation};
use crate::Error;

/// The auth one send carried: the `Authorization` a page gave for it, at the worker's auth generation
/// then ([`generation`]); a refresh after its auth failure names both to the refresh machine.
#[derive(Debug, Default)]
pub(crate) struct SentWith {
    authorization: Option<String>,
    generation: u64,
}

/// Sends one queued mutation and says how it went, as an event for the reducer, with the auth it
/// carried. A mutation marked `X-Cachet-Auth: 1` under bearer (or custom) auth carries the header a
/// page gives for it; with no page to ask, or a page without auth, it is not sent
/// ([`SendFailure::NotSent`]: SPEC §5.8, a token lives in a page only).
pub(crate) async fn send(id: u64, queued: &QueuedRequest, config: &Config) -> (QueueEvent, SentWith) {
    let now = now_ms();
    let generation = generation();
    let failed = |failure| QueueEvent::SendFailed { id, failure, now: now_ms(), random: random() };
    let auth = &config.features.auth;
    let marked = queued.headers.iter().any(|(name, value)| name == AUTH_HEADER && marker_is_set(Some(value)));
    let authorization = if auth.enabled && auth.kind.refreshes() && marked {
        match ask_page_for_auth(None, None).await {
            Ok(Some(authorization)) => Some(authorization),
            Ok(None) => return (failed(SendFailure::NotSent), SentWith::default()),
            Err(error) => {
                web_sys::console::warn_1(
                    &format!("cachet: queued mutation {id} waits for a page: {error}").into(),
                );
                return (failed(SendFailure::NotSent), SentWith::default());
            }
        }
    } else {
        None
    };
    let sent = |authorization| SentWith { authorization, generation };
    let request = match build_request(queued, authorization.as_deref()) {
        Ok(request) => request,
        Err(error) => {
            // A stored request the browser refuses to build can never be sent: given up as rejected.
            web_sys::console::error_1(&format!("cachet: queued mutation {id} unusable: {error}").into());
            return (failed(SendFailure::Status(400)), sent(None));
        }
    };
    let Ok(response) = fetch_raw(&request).await else {
        return (failed(SendFailure::Network), sent(authorization));
    };
    let status = response.status();
    if cachet_core::engine::mutation::applied(status) {
        return (QueueEvent::SendSucceeded { id, now }, sent(authorization));
    }
    let bytes = if auth.enabled && auth.failure.needs_body() {
        body_bytes(&response).await.unwrap_or_default()
    } else {
        Vec::new()
    };
    let outcome = if auth.enabled && is_auth_failure(&auth.failure, &response, &bytes) {
        SendFailure::AuthFailure
    } else {
        SendFailure::Status(status)
    };
    (failed(outcome), sent(authorization))
}

/// After a replay met an auth failure: whether fresh auth is there to send it once more. The core's
/// refresh machine decides, as for the worker's other requests (`page_auth::after_auth_failure`): bearer
/// (and custom) auth asks a page to refresh the token that failed; cookie auth has no refresh (the server
/// owns the session), so the reducer backs off and a second auth failure is final.
pub(crate) async fn refresh(config: &Config, sent: SentWith) -> bool {
    let refreshes = config.features.auth.kind.refreshes();
    after_auth_failure(refreshes, None, sent.authorization.as_deref(), false, sent.generation).await.is_ok()
}

fn build_request(queued: &QueuedRequest, authorization: Option<&str>) -> Result<Request, Error> {
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in &queued.headers {
        headers.append(name, value).map_err(|e| Error::js("Headers.append", e))?;
    }
    if let Some(authorization) = authorization {
        headers.set("authorization", authorization).map_err(|e| Error::js("Headers.set", e))?;
    }
    let init = RequestInit::new();
    init.set_method(&queued.method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&queued.body));
    let request =
        Request::new_with_str_and_init(&queued.url, &init).map_err(|e| Error::js("new Request", e))?;
    without_cachet_headers(&request, Some(queued.body.as_bytes()), &[])
}
