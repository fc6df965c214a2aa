//! Refresh-and-retry (SPEC §3, §5.5–5.6), as the engine plugin [`AuthRetry`]: every network send of a
//! request the page marked as authenticated (`X-Cachet-Auth: 1`) runs it, with the configured failure
//! check's verdict (`features.auth.failure`, default: status 401) on the answer.
//!
//! | Auth type | On an auth failure |
//! |---|---|
//! | bearer, custom | the core's refresh machine decides (`page_auth::after_auth_failure`, the single flight the page client runs too): one question to the page that made the request for all concurrent failures; with fresh auth, send the request once more with the new `Authorization` and answer with that; without it (refused, failed, no page, timeout), answer with the original failure and broadcast `sw-auth-state-change {type: 'logout'}` once |
//! | cookie | no refresh (the server owns the session): answer with the failure and broadcast `logout` |
//!
//! A request is retried at most once; a retry that fails again is answered as it is. The new header
//! rides on the retried request only and is dropped with it. Requests that are not marked, or sent while
//! `features.auth` is off, go to the network as they are.
//!
//! The check is the app's [`FailureCheck`] when the SW binary started the engine with
//! [`super::install_with`] (the same function the page client was given), else the rule alone.

use std::cell::{Cell, RefCell};

use cachet_core::config::{rule_check, AuthFailureRule, Config, FailureCheck, FailureResponse};
use cachet_core::engine::plugin::{AfterFetch, Call, Later, Plugin};
use cachet_core::engine::Fetched;
use web_sys::{Request, Response};

use super::page_auth::{after_auth_failure, generation};

/// Refresh-and-retry for one authenticated request, as an engine plugin
/// ([`cachet_core::engine::plugin`]): `fetch_did_succeed` sees the auth-failure check's verdict, asks the
/// page for fresh auth and asks for the one retry; `request_will_fetch` puts the fresh `Authorization` on
/// it.
#[derive(Debug)]
pub struct AuthRetry {
    /// `FetchEvent.clientId`: the page that made the request, asked first.
    pub client_id: String,
    /// Whether the auth type refreshes (bearer, custom).
    pub refreshes: bool,
    /// The `Authorization` the request was sent with, if any.
    sent: Option<String>,
    /// The auth generation it was sent with ([`generation`]).
    generation: u64,
    /// The `Authorization` a refresh gave, for the retry.
    fresh: RefCell<Option<String>>,
}

impl AuthRetry {
    /// The handling for `request` from `client_id`, when auth is enabled and the request is marked;
    /// `None` otherwise.
    pub fn for_request(config: &Config, marked: bool, request: &Request, client_id: String) -> Option<Self> {
        let auth = &config.features.auth;
        Self::applies(config, marked).then(|| AuthRetry {
            client_id,
            refreshes: auth.kind.refreshes(),
            sent: request.headers().get("authorization").ok().flatten(),
            generation: generation(),
            fresh: RefCell::new(None),
        })
    }

    /// Whether a request (`marked` or not) gets refresh-and-retry under `config`: the one rule, for
    /// [`Self::for_request`] and for the start module, which leaves such a request's auth failure to the
    /// whole engine (`crate::Error::AuthFailureLeft`).
    pub fn applies(config: &Config, marked: bool) -> bool {
        config.features.auth.enabled && marked
    }
}

impl Plugin<Response> for AuthRetry {
    fn request_will_fetch(&self, _call: &Call<'_>, headers: &mut Vec<(String, String)>) {
        if let Some(authorization) = self.fresh.borrow().clone() {
            headers.push(("authorization".to_owned(), authorization));
        }
    }

    fn fetch_did_succeed<'a>(
        &'a self,
        _call: &'a Call<'a>,
        fetched: &'a Fetched<Response>,
        retried: bool,
    ) -> Later<'a, AfterFetch> {
        Box::pin(async move {
            if !fetched.auth_failure {
                return AfterFetch::Keep;
            }
            let sent = self.sent.as_deref();
            match after_auth_failure(self.refreshes, Some(&self.client_id), sent, retried, self.generation)
                .await
            {
                // A retried request's second failure is the machine's `AlreadyRetried`: never a loop.
                Ok(authorization) => {
                    *self.fresh.borrow_mut() = authorization;
                    AfterFetch::Retry
                }
                Err(_) => AfterFetch::Keep,
            }
        })
    }

    /// It only sends and retries: a stored answer never reaches it.
    fn shapes_cached_answers(&self) -> bool {
        false
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
