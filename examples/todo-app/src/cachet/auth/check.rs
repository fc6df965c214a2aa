// Created by `cachet add auth`, and yours from now on: cachet never overwrites this file.
//! What the page client and the Service Worker treat as an auth failure (SPEC §5.5
//! `isAuthFailureResponse`). `src/cachet/mod.rs` gives [`is_auth_failure_response`] to the page client
//! and `src/bin/cachet-sw.rs` compiles this file into the Service Worker, so both run this very function.
//! Keep it free of page-only code: it may use `cachet_kit::core`, `cachet_kit::serde_json` and `std`
//! only.

use cachet_kit::core::config::{AuthFailureRule, FailureResponse};

/// Whether `response` is an auth failure. Default: the rule of `features.auth.failure` in
/// `cachet.config.json` (status 401 unless configured). To also treat, say, a 403 whose JSON body says
/// `"reason": "expired"` as one, return
/// `rule.check(response) || (response.status == 403 && response.json().is_some_and(|body| body["reason"] == "expired"))`.
pub fn is_auth_failure_response(rule: &AuthFailureRule, response: &FailureResponse<'_>) -> bool {
    rule.check(response)
}
