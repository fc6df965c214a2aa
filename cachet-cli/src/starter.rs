//! The files `cachet` creates once and then leaves to the app: `src/cachet/auth/adapter.rs` and
//! `src/cachet/auth/check.rs` (SPEC §9: "only the auth adapter and the failure-check file are meant to be
//! edited"). Neither `generate` nor `--check` ever reads them back; a missing one is created again.

use cachet_core::config::{AuthType, Config};

/// The first line of a created-once file: it is the app's.
pub const STARTER_HEADER: &str =
    "// Created by `cachet add auth`, and yours from now on: cachet never overwrites this file.";

/// `src/cachet/auth/adapter.rs`: the default adapter of the configured auth type.
pub fn render_adapter(config: &Config) -> String {
    let mut out = format!(
        "{STARTER_HEADER}\n\
         //! The app's auth adapter (SPEC §2): how the page client gets, sends, refreshes and fetches the\n\
         //! auth. It starts as cachet's default for `features.auth.type` = `{}`; edit [`adapter()`] to\n\
         //! change it (routes, headers, refresh, where the user comes from).\n\
         \n\
         /// The auth of the current user: `token`, `user` (the backend's user object, as JSON) and\n\
         /// `expires_at`. Read the user as your own type with `cachet_kit::serde_json::from_value`.\n\
         pub type AuthData = cachet_kit::client::AuthData;\n\
         \n",
        type_name(config.features.auth.kind)
    );
    out.push_str(match config.features.auth.kind {
        AuthType::Cookie => COOKIE,
        AuthType::Bearer => BEARER,
        AuthType::Custom => CUSTOM,
    });
    out
}

/// `src/cachet/auth/check.rs`: the config's rule, ready to extend.
pub fn render_check() -> String {
    format!("{STARTER_HEADER}\n{CHECK}")
}

fn type_name(kind: AuthType) -> &'static str {
    match kind {
        AuthType::Cookie => "cookie",
        AuthType::Bearer => "bearer",
        AuthType::Custom => "custom",
    }
}

const COOKIE: &str = r#"/// The adapter the page client uses: an httpOnly session cookie the browser sends by itself, and the
/// user from `GET /api/me` (change `me_path` for another route). For anything else, implement
/// `cachet_kit::client::AuthAdapter` on a type of your own and return it here.
pub fn adapter() -> impl cachet_kit::client::AuthAdapter + 'static {
    cachet_kit::client::CookieAdapter::default()
}
"#;

const BEARER: &str = r#"/// The adapter the page client uses: `Authorization: Bearer <token>` with the token in page memory
/// only, `POST /api/refresh` to renew it and `GET /api/me` for the user (change `refresh_path` and
/// `me_path` for other routes). For anything else, implement `cachet_kit::client::AuthAdapter` on a type of
/// your own and return it here.
pub fn adapter() -> impl cachet_kit::client::AuthAdapter + 'static {
    cachet_kit::client::BearerAdapter::default()
}
"#;

const CUSTOM: &str = r#"use cachet_kit::client::AuthAdapter;
use cachet_kit::core::config::AuthType;

/// The adapter the page client uses.
pub fn adapter() -> impl AuthAdapter + 'static {
    AppAdapter
}

/// The app's own auth (`custom`). Every member but `auth_type` has a default: `get_auth` none,
/// `get_headers` the bearer header, `refresh` a `POST /api/refresh` with the token, `fetch_user`
/// `GET /api/me` with credentials. Override the ones your backend needs (see `cachet_kit::client::adapter`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AppAdapter;

impl AuthAdapter for AppAdapter {
    fn auth_type(&self) -> AuthType {
        AuthType::Custom
    }
}
"#;

const CHECK: &str = r#"//! What the page client and the Service Worker treat as an auth failure (SPEC §5.5
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
"#;
