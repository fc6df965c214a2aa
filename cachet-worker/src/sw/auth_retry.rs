//! Refresh-and-retry (SPEC §3, §5.5–5.6): every network send of a request the page marked as
//! authenticated (`X-Cachet-Auth: 1`) goes through [`send`], which applies the configured failure check
//! (`features.auth.failure`, default: status 401) to the answer.
//!
//! | Auth type | On an auth failure |
//! |---|---|
//! | bearer, custom | ask the page that made the request for fresh auth ([`page_auth::refresh_shared`]: one question for all concurrent failures of the same token); with it, send the request once more with the new `Authorization` and answer with that; without it (refused, failed, no page, timeout), answer with the original failure and broadcast `sw-auth-state-change {type: 'logout'}` once |
//! | cookie | no refresh (the server owns the session): answer with the failure and broadcast `logout` |
//!
//! A request is retried at most once; a retry that fails again is answered as it is. The new header
//! rides on the retried request only and is dropped with it. Requests that are not marked, or sent while
//! `features.auth` is off, go to the network as they are.
//!
//! The check is the app's [`FailureCheck`] when the SW binary started the engine with
//! [`super::install_with`] (the same function the page client was given), else the rule alone.

use cachet_core::cache_key::auth_fingerprint;
use std::cell::Cell;

use cachet_core::config::{rule_check, AuthFailureRule, Config, FailureCheck, FailureResponse};
use cachet_core::protocol::AuthChangeKind;
use web_sys::{Headers, Request, RequestInit, Response};

use super::http::fetch_network;
use super::page_auth::{announce, refresh_shared, PageAnswer};
use crate::Error;

/// How one authenticated request is handled when it meets an auth failure.
#[derive(Debug, Clone)]
pub struct AuthRetry {
    /// `FetchEvent.clientId`: the page that made the request, asked first.
    pub client_id: String,
    /// Whether the auth type refreshes (bearer, custom).
    pub refreshes: bool,
    /// What counts as an auth failure.
    pub rule: AuthFailureRule,
}

impl AuthRetry {
    /// The handling for a request from `client_id`, when auth is enabled; `None` otherwise.
    pub fn for_request(config: &Config, marked: bool, client_id: String) -> Option<Self> {
        let auth = &config.features.auth;
        (auth.enabled && marked).then(|| AuthRetry {
            client_id,
            refreshes: auth.kind.refreshes(),
            rule: auth.failure.clone(),
        })
    }
}

/// Sends `request` (its body must still be unread) and returns the answer as
/// [`fetch_network`] does, after refresh-and-retry when `auth` is given.
pub async fn send(
    request: &Request,
    auth: Option<&AuthRetry>,
) -> Result<(Response, Vec<u8>, Response), Error> {
    let Some(auth) = auth else {
        return fetch_network(request).await;
    };
    // Keep a copy to send again: a request's body can be read once.
    let spare = request.clone().map_err(|e| Error::js("Request.clone", e))?;
    let first = fetch_network(request).await?;
    if !is_auth_failure(&auth.rule, &first.0, &first.1) {
        return Ok(first);
    }
    if !auth.refreshes {
        announce(AuthChangeKind::Logout);
        return Ok(first);
    }
    let sent = request.headers().get("authorization").ok().flatten().unwrap_or_default();
    match refresh_shared(&auth.client_id, auth_fingerprint(&sent)).await {
        Ok(PageAnswer { ok: true, authorization }) => {
            let retry = with_authorization(&spare, authorization.as_deref())?;
            fetch_network(&retry).await
        }
        Ok(_) => Ok(first),
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: no fresh auth for {}: {error}", request.url()).into());
            Ok(first)
        }
    }
}

thread_local! {
    /// The check [`super::install_with`] was given (one SW, one thread).
    static FAILURE_CHECK: Cell<FailureCheck> = Cell::new(rule_check);
}

/// Makes `check` the auth-failure check of this Service Worker.
pub(crate) fn set_failure_check(check: FailureCheck) {
    FAILURE_CHECK.with(|current| current.set(check));
}

/// Whether `response` (with body `bytes`) is an auth failure: the installed [`FailureCheck`] with `rule`
/// (by default the rule alone, which parses the body only when it reads it; a body that is not JSON
/// matches no JSON field).
pub fn is_auth_failure(rule: &AuthFailureRule, response: &Response, bytes: &[u8]) -> bool {
    let headers = response.headers();
    let lookup = |name: &str| headers.get(name).ok().flatten();
    let check = FAILURE_CHECK.with(Cell::get);
    check(rule, &FailureResponse::new(response.status(), &lookup, bytes))
}

/// `request` with `Authorization: authorization` (unchanged when `None`), as a new request: the headers
/// of a request may be immutable.
fn with_authorization(request: &Request, authorization: Option<&str>) -> Result<Request, Error> {
    let Some(value) = authorization else {
        return Ok(Clone::clone(request));
    };
    let headers = Headers::new_with_headers(&request.headers()).map_err(|e| Error::js("new Headers", e))?;
    headers.set("authorization", value).map_err(|e| Error::js("Headers.set", e))?;
    let init = RequestInit::new();
    init.set_headers(&headers);
    Request::new_with_request_and_init(request, &init).map_err(|e| Error::js("new Request", e))
}
