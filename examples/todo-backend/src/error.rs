//! The JSON error type every REST handler returns: `{"error": "..."}` with a 4xx/5xx status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// An HTTP error with a human-readable message naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// Status code sent to the client.
    pub status: StatusCode,
    /// Message placed in the `error` field of the JSON body.
    pub message: String,
}

impl ApiError {
    /// An error with an explicit status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into() }
    }

    /// 400 Bad Request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 500 Internal Server Error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        ApiError::internal(format!("internal error: {err:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

/// Parses a JSON request body, turning any failure into a 400 that says what was wrong.
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("malformed JSON body: the request body is empty"));
    }
    serde_json::from_slice(body).map_err(|err| ApiError::bad_request(format!("malformed JSON body: {err}")))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Body {
        #[allow(dead_code)]
        name: String,
    }

    #[test]
    fn parse_json_names_the_problem() {
        let err = parse_json::<Body>(b"{not json").expect_err("bad json");
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.message.starts_with("malformed JSON body"));
        let err = parse_json::<Body>(b"{}").expect_err("missing field");
        assert!(err.message.contains("missing field `name`"), "{}", err.message);
        let err = parse_json::<Body>(b"  ").expect_err("empty");
        assert!(err.message.contains("empty"));
    }
}
