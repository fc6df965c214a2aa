//! Login, logout, refresh and `/api/me`, plus resolving the caller from a cookie or bearer header.

use std::sync::atomic::Ordering;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use crate::app::AppState;
use crate::config::AuthMode;
use crate::db::{random_hex, verify_password, User};
use crate::error::{now_ms, parse_json, ApiError};

/// Name of the session cookie in cookie mode.
pub const SESSION_COOKIE: &str = "cachet_session";
/// Name of the refresh cookie in bearer mode: httpOnly, sent only to `/api/refresh`, so that a page
/// reloaded with no token in memory can restore its session (`POST /api/refresh` with the cookie alone).
/// The example keeps it simple: the cookie holds the session's current token, rotated with it.
pub const REFRESH_COOKIE: &str = "cachet_refresh";
/// The path the refresh cookie is sent to.
pub const REFRESH_PATH: &str = "/api/refresh";
/// How long after expiry a bearer token may still be refreshed: 24 hours.
pub const REFRESH_GRACE_MS: i64 = 24 * 60 * 60 * 1000;
/// The message of every plain authentication failure.
pub const NOT_AUTHENTICATED: &str = "not authenticated";

/// A caller with a valid, unexpired session or token.
#[derive(Clone, Debug)]
pub struct Authed {
    /// The session cookie value or bearer token.
    pub token: String,
    /// Who they are.
    pub user: User,
    /// When the session/token expires, Unix milliseconds.
    pub expires_at: i64,
}

/// Extracts the raw credential for `mode`: `Ok(None)` when absent, `Err` when malformed.
pub fn credential(mode: AuthMode, headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let malformed = |what: &str| ApiError::unauthorized(format!("{NOT_AUTHENTICATED}: {what}"));
    match mode {
        AuthMode::Bearer => {
            let Some(value) = headers.get(header::AUTHORIZATION) else {
                return Ok(None);
            };
            let value = value.to_str().map_err(|_| malformed("Authorization header is not valid ASCII"))?;
            let token = value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| malformed("Authorization header is not `Bearer <token>`"))?;
            Ok(Some(token.to_owned()))
        }
        AuthMode::Cookie => cookie(headers, SESSION_COOKIE),
    }
}

/// The value of cookie `name`: `Ok(None)` when absent, `Err` when the header is malformed.
pub fn cookie(headers: &HeaderMap, name: &str) -> Result<Option<String>, ApiError> {
    for value in headers.get_all(header::COOKIE) {
        let value = value.to_str().map_err(|_| {
            ApiError::unauthorized(format!("{NOT_AUTHENTICATED}: Cookie header is not valid ASCII"))
        })?;
        let found = value
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// Resolves the caller; any missing, unknown, revoked or expired credential is a 401.
pub fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Authed, ApiError> {
    let token =
        credential(state.auth_mode, headers)?.ok_or_else(|| ApiError::unauthorized(NOT_AUTHENTICATED))?;
    match state.db.session(&token)? {
        Some(s) if !s.revoked && s.expires_at > now_ms() => {
            Ok(Authed { token, user: s.user, expires_at: s.expires_at })
        }
        _ => Err(ApiError::unauthorized(NOT_AUTHENTICATED)),
    }
}

#[derive(Deserialize)]
struct LoginBody {
    username: String,
    password: String,
}

fn session_cookie(value: &str, clear: bool) -> Result<HeaderValue, ApiError> {
    let extra = if clear { "; Max-Age=0" } else { "" };
    HeaderValue::from_str(&format!("{SESSION_COOKIE}={value}; HttpOnly; SameSite=Lax; Path=/{extra}"))
        .map_err(|e| ApiError::internal(format!("building cookie: {e}")))
}

/// The bearer mode's refresh cookie holding `token` (cleared when `clear`).
fn refresh_cookie(token: &str, clear: bool) -> Result<HeaderValue, ApiError> {
    let extra = if clear { "; Max-Age=0" } else { "" };
    HeaderValue::from_str(&format!(
        "{REFRESH_COOKIE}={token}; HttpOnly; SameSite=Strict; Path={REFRESH_PATH}{extra}"
    ))
    .map_err(|e| ApiError::internal(format!("building cookie: {e}")))
}

/// `POST /api/login`: checks the password and opens a session (cookie) or issues a token (bearer).
pub async fn login(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let LoginBody { username, password } = parse_json(&body)?;
    let db = state.db.clone();
    let user = tokio::task::spawn_blocking(move || -> anyhow::Result<Option<User>> {
        Ok(db
            .user_with_hash(&username)?
            .filter(|(_, hash)| verify_password(&password, hash))
            .map(|(user, _)| user))
    })
    .await
    .map_err(|e| ApiError::internal(format!("login task failed: {e}")))??
    .ok_or_else(|| ApiError::unauthorized("invalid username or password"))?;

    let token = random_hex(32);
    let expires_at = now_ms().saturating_add(state.token_ttl_ms);
    state.db.insert_session(&token, user.id, expires_at)?;
    let mut body = json!({ "user": user, "expiresAt": expires_at });
    let mut headers = HeaderMap::new();
    match state.auth_mode {
        AuthMode::Bearer => {
            state.counters.record_token(&token);
            body["token"] = json!(token);
            headers.insert(header::SET_COOKIE, refresh_cookie(&token, false)?);
        }
        AuthMode::Cookie => {
            headers.insert(header::SET_COOKIE, session_cookie(&token, false)?);
        }
    }
    Ok((headers, Json(body)).into_response())
}

/// `POST /api/logout`: revokes the presented session/token (if any) and clears the cookie.
pub async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    if let Ok(Some(token)) = credential(state.auth_mode, &headers) {
        state.db.revoke_session(&token)?;
        // The session's push subscriptions belong to the user who is leaving.
        crate::push::forget_session(&state.db, &token)?;
    }
    let mut out = HeaderMap::new();
    let cleared = match state.auth_mode {
        AuthMode::Cookie => session_cookie("", true)?,
        AuthMode::Bearer => refresh_cookie("", true)?,
    };
    out.insert(header::SET_COOKIE, cleared);
    Ok((StatusCode::NO_CONTENT, out).into_response())
}

/// `POST /api/refresh`: bearer rotates the token (expired is fine, within 24 h), the old one from
/// `Authorization`, else from the refresh cookie (a page reloaded with no token in memory restores its
/// session so), and sets the refresh cookie to the new one; cookie extends a still-valid session.
pub async fn refresh(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    if state.fail_refresh.load(Ordering::SeqCst) {
        return Err(ApiError::unauthorized("refresh refused (forced by /__test/fail-refresh)"));
    }
    let now = now_ms();
    let expires_at = now.saturating_add(state.token_ttl_ms);
    match state.auth_mode {
        AuthMode::Cookie => {
            let authed = authenticate(&state, &headers)?;
            state.db.set_session_expiry(&authed.token, expires_at)?;
            Ok(Json(json!({ "user": authed.user, "expiresAt": expires_at })).into_response())
        }
        AuthMode::Bearer => {
            let old = match credential(state.auth_mode, &headers)? {
                Some(token) => token,
                None => cookie(&headers, REFRESH_COOKIE)?
                    .ok_or_else(|| ApiError::unauthorized(NOT_AUTHENTICATED))?,
            };
            let session = state
                .db
                .session(&old)?
                .filter(|s| !s.revoked)
                .ok_or_else(|| ApiError::unauthorized("token is unknown or revoked"))?;
            if session.expires_at.saturating_add(REFRESH_GRACE_MS) <= now {
                return Err(ApiError::unauthorized("token expired too long ago to refresh"));
            }
            let token = random_hex(32);
            if !state.db.rotate_token(&old, &token, expires_at)? {
                return Err(ApiError::unauthorized("token is unknown or revoked"));
            }
            state.counters.record_token(&token);
            let mut out = HeaderMap::new();
            out.insert(header::SET_COOKIE, refresh_cookie(&token, false)?);
            let body = json!({ "token": token, "expiresAt": expires_at, "user": session.user });
            Ok((out, Json(body)).into_response())
        }
    }
}

/// `GET /api/me`: the caller and their session's expiry.
pub async fn me(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let authed = authenticate(&state, &headers)?;
    Ok(Json(json!({ "user": authed.user, "expiresAt": authed.expires_at })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: header::HeaderName, value: &'static str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(name, HeaderValue::from_static(value));
        map
    }

    #[test]
    fn reads_credentials_by_mode() {
        let cookie = headers(header::COOKIE, "a=1; cachet_session=abc ; b=2");
        assert_eq!(credential(AuthMode::Cookie, &cookie).expect("ok"), Some("abc".into()));
        assert_eq!(credential(AuthMode::Bearer, &cookie).expect("ok"), None);
        let bearer = headers(header::AUTHORIZATION, "Bearer tok");
        assert_eq!(credential(AuthMode::Bearer, &bearer).expect("ok"), Some("tok".into()));
        assert_eq!(credential(AuthMode::Cookie, &bearer).expect("ok"), None);
        let basic = headers(header::AUTHORIZATION, "Basic dXNlcg==");
        let err = credential(AuthMode::Bearer, &basic).expect_err("malformed");
        assert_eq!(err.status, StatusCode::UNAUTHORIZED);
        assert!(err.message.contains("Bearer <token>"));
        let empty = headers(header::COOKIE, "cachet_session=");
        assert_eq!(credential(AuthMode::Cookie, &empty).expect("ok"), None);
    }
}
