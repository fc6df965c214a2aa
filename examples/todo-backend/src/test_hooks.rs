//! `/__test/*` routes for end-to-end tests, mounted only when `test_hooks` is on.

use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::app::AppState;
use crate::error::{now_ms, ApiError};

/// The test-hook routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/__test/respond", get(respond).post(respond))
        .route("/__test/expire-tokens", post(expire_tokens))
        .route("/__test/fail-refresh", post(fail_refresh))
        .route("/__test/fail-graphql", post(fail_graphql))
        .route("/__test/next-graphql", post(next_graphql))
        .route("/__test/slow-graphql", post(slow_graphql))
        .route("/__test/hold-static", post(hold_static))
        .route("/__test/release-static", post(release_static))
        .route("/__test/fail-static", post(fail_static))
        .route("/__test/counts", get(counts))
        .route("/__test/reset", post(reset))
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Builds exactly the response a test asked for: `status`, `body`, `content_type`, `header=Name:Value`…
pub fn build_response(query: Option<&str>) -> Result<Response, ApiError> {
    let mut status = StatusCode::OK;
    let mut body = String::new();
    let mut builder = Response::builder();
    for (key, value) in query_pairs(query) {
        match key.as_str() {
            "status" => {
                status =
                    value.parse::<u16>().ok().and_then(|code| StatusCode::from_u16(code).ok()).ok_or_else(
                        || ApiError::bad_request(format!("invalid status `{value}`: expected 100-999")),
                    )?;
            }
            "body" => body = value,
            "content_type" => {
                let ct = HeaderValue::from_str(&value)
                    .map_err(|_| ApiError::bad_request(format!("invalid content_type `{value}`")))?;
                builder = builder.header(header::CONTENT_TYPE, ct);
            }
            "header" => {
                let (name, val) = value.split_once(':').ok_or_else(|| {
                    ApiError::bad_request(format!("invalid header `{value}`: expected Name:Value"))
                })?;
                let name = HeaderName::from_bytes(name.trim().as_bytes())
                    .map_err(|_| ApiError::bad_request(format!("invalid header name in `{value}`")))?;
                let val = HeaderValue::from_str(val.trim_start())
                    .map_err(|_| ApiError::bad_request(format!("invalid header value in `{value}`")))?;
                builder = builder.header(name, val);
            }
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown parameter `{other}` (expected status, body, content_type, header)"
                )))
            }
        }
    }
    builder
        .status(status)
        .body(Body::from(body))
        .map_err(|e| ApiError::bad_request(format!("cannot build response: {e}")))
}

async fn respond(RawQuery(query): RawQuery) -> Result<Response, ApiError> {
    build_response(query.as_deref())
}

async fn expire_tokens(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let expired = state.db.expire_all_sessions(now_ms())?;
    Ok(Json(json!({ "expired": expired })))
}

async fn fail_refresh(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let on = match pairs.iter().find(|(k, _)| k == "on").map(|(_, v)| v.as_str()) {
        Some("true" | "1") => true,
        Some("false" | "0") => false,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid `on` value `{other}`: expected true or false"
            )))
        }
        None => return Err(ApiError::bad_request("missing query parameter `on`")),
    };
    state.fail_refresh.store(on, Ordering::SeqCst);
    Ok(Json(json!({ "failRefresh": on })))
}

/// `POST /__test/fail-graphql?status=422&status=503`: the next GraphQL requests, one per `status` and in
/// that order, are counted, then answered with that status and a GraphQL error body instead of being
/// executed. Replaces what an earlier call asked for.
async fn fail_graphql(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let mut statuses = std::collections::VecDeque::new();
    for (key, value) in query_pairs(query.as_deref()) {
        if key != "status" {
            return Err(ApiError::bad_request(format!("unknown parameter `{key}` (expected status)")));
        }
        let status = value.parse::<u16>().ok().and_then(|code| StatusCode::from_u16(code).ok());
        let status = status
            .ok_or_else(|| ApiError::bad_request(format!("invalid status `{value}`: expected 100-999")))?;
        statuses.push_back(status.as_u16());
    }
    if statuses.is_empty() {
        return Err(ApiError::bad_request("missing query parameter `status`"));
    }
    let answer = json!({ "statuses": statuses });
    *state.fail_graphql.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = statuses;
    Ok(Json(answer))
}

/// `POST /__test/next-graphql?operation=GetTodos&status=200&body=...&header=Name:Value`: the next GraphQL
/// request (of that operation, when `operation` is given) is counted, then answered with exactly this
/// response (the other parameters are those of `/__test/respond`), whatever it asked: a server that
/// answers garbage. Each call adds one answer; answers are used in order.
async fn next_graphql(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let mut operation = None;
    let mut rest = form_urlencoded::Serializer::new(String::new());
    for (key, value) in query_pairs(query.as_deref()) {
        if key == "operation" {
            operation = Some(value);
        } else {
            rest.append_pair(&key, &value);
        }
    }
    let rest = rest.finish();
    build_response(Some(&rest))?;
    let mut responses = state.graphql_responses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    responses.push_back((operation, rest));
    Ok(Json(json!({ "queued": responses.len() })))
}

/// The scripted answer of the current GraphQL request (of `operation`), if `/__test/next-graphql` left one.
pub fn take_graphql_response(state: &AppState, operation: Option<&str>) -> Option<Response> {
    let mut responses = state.graphql_responses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = responses.iter().position(|(only, _)| only.is_none() || only.as_deref() == operation)?;
    let (_, query) = responses.remove(index)?;
    build_response(Some(&query)).ok()
}

/// The status the current GraphQL request must be answered with, if `/__test/fail-graphql` asked for one.
pub fn take_graphql_failure(state: &AppState) -> Option<StatusCode> {
    let mut statuses = state.fail_graphql.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    statuses.pop_front().and_then(|status| StatusCode::from_u16(status).ok())
}

/// `POST /__test/slow-graphql?ms=150`: from now on every GraphQL answer waits `ms` milliseconds after
/// its operation ran (applied, but not yet answered: the moment a stopped Service Worker loses the
/// answer); `ms=0` ends it.
async fn slow_graphql(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let value = pairs.iter().find(|(key, _)| key == "ms").map(|(_, value)| value.as_str());
    let ms = match value.map(str::parse::<u64>) {
        Some(Ok(ms)) if ms <= 60_000 => ms,
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "invalid `ms` value `{}`: expected 0 to 60000",
                value.unwrap_or_default()
            )))
        }
        None => return Err(ApiError::bad_request("missing query parameter `ms`")),
    };
    state.graphql_delay_ms.store(ms, Ordering::SeqCst);
    Ok(Json(json!({ "delayMs": ms })))
}

/// Waits as long as `/__test/slow-graphql` asked, after a GraphQL operation ran.
pub async fn delay_graphql_answer(state: &AppState) {
    let ms = state.graphql_delay_ms.load(Ordering::SeqCst);
    if ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// The query parameter `path` of a static-file hook.
fn path_parameter(query: Option<&str>) -> Result<String, ApiError> {
    let pairs = query_pairs(query);
    let path = pairs.into_iter().find(|(key, _)| key == "path").map(|(_, path)| path);
    path.ok_or_else(|| ApiError::bad_request("missing query parameter `path`"))
}

/// `POST /__test/hold-static?path=/file`: from now on a request for the static `path` is held
/// unanswered (at most 60 s) until `/__test/release-static` (several paths may be held at once).
async fn hold_static(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let path = path_parameter(query.as_deref())?;
    state.held_static.send_modify(|held| held.push(path.clone()));
    Ok(Json(json!({ "held": path })))
}

/// `POST /__test/fail-static?path=/file`: from now on a request for the static `path` (or any path it
/// matches, with one `*`: [`matches`]) is answered `503` until `/__test/release-static`.
async fn fail_static(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<serde_json::Value>, ApiError> {
    let path = path_parameter(query.as_deref())?;
    *state.failed_static.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(path.clone());
    Ok(Json(json!({ "failed": path })))
}

/// Whether `path` is the static path answered `503` ([`fail_static`]).
pub fn failed(state: &AppState, path: &str) -> bool {
    let failed = state.failed_static.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    failed.as_deref().is_some_and(|pattern| matches(pattern, path))
}

/// Whether `path` is `pattern`, or matches it where `pattern` holds one `*` (any run of characters:
/// `/cachet-sw*_bg.wasm` names both of the worker's wasm files).
fn matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        Some((before, after)) => {
            path.len() >= before.len() + after.len() && path.starts_with(before) && path.ends_with(after)
        }
        None => pattern == path,
    }
}

/// `POST /__test/release-static`: answers the held requests, holds and fails no more.
/// `POST /__test/release-static?path=/file`: answers the requests for that held path alone, holds it
/// no more (the other held paths stay held, a failed path stays failed).
async fn release_static(State(state): State<AppState>, RawQuery(query): RawQuery) -> StatusCode {
    if let Ok(path) = path_parameter(query.as_deref()) {
        state.held_static.send_modify(|held| held.retain(|held| *held != path));
        return StatusCode::NO_CONTENT;
    }
    state.held_static.send_replace(Vec::new());
    *state.failed_static.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    StatusCode::NO_CONTENT
}

/// Waits while `path` is a held static path ([`hold_static`]), at most 60 s.
pub async fn while_held(state: &AppState, path: &str) {
    let mut held = state.held_static.subscribe();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        held.wait_for(|held| !held.iter().any(|held| held == path)),
    )
    .await;
}

async fn counts(State(state): State<AppState>) -> impl IntoResponse {
    Json(state.counters.snapshot())
}

async fn reset(State(state): State<AppState>) -> StatusCode {
    state.counters.reset();
    StatusCode::NO_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_requested_response() {
        let q = "status=418&body=%7Bbroken&content_type=application/json&header=X-A:%201&header=X-B:2";
        let resp = build_response(Some(q)).expect("response");
        assert_eq!(resp.status(), StatusCode::IM_A_TEAPOT);
        assert_eq!(resp.headers()["content-type"], "application/json");
        assert_eq!(resp.headers()["x-a"], "1");
        assert_eq!(resp.headers()["x-b"], "2");
        assert!(build_response(Some("status=abc")).is_err());
        assert!(build_response(Some("header=nocolon")).is_err());
        assert!(build_response(Some("header=bad%20name:1")).is_err());
        assert!(build_response(Some("what=1")).is_err());
        assert_eq!(build_response(None).expect("default").status(), StatusCode::OK);
    }

    #[test]
    fn a_static_pattern_names_a_path_or_those_around_its_star() {
        assert!(matches("/cachet-sw_bg.wasm", "/cachet-sw_bg.wasm"));
        assert!(!matches("/cachet-sw_bg.wasm", "/cachet-sw-start_bg.wasm"));
        assert!(matches("/cachet-sw*_bg.wasm", "/cachet-sw_bg.wasm"));
        assert!(matches("/cachet-sw*_bg.wasm", "/cachet-sw-start_bg.wasm"));
        assert!(!matches("/cachet-sw*_bg.wasm", "/cachet-sw.js"));
        // The prefix and the suffix may not overlap.
        assert!(!matches("/a*a", "/a"));
    }
}
