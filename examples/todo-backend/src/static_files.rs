//! Serves the built app with an `index.html` SPA fallback; API paths get JSON 404s instead.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tower_http::services::{ServeDir, ServeFile};

use crate::error::ApiError;

/// Path prefixes that belong to the API and never fall back to `index.html`.
const API_PREFIXES: [&str; 3] = ["/api", "/graphql", "/__test"];

fn is_api_path(path: &str) -> bool {
    API_PREFIXES
        .iter()
        .any(|prefix| path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
}

/// Whether a response must not be kept by the HTTP cache (the Service Worker manages these).
pub fn wants_no_cache(path: &str, content_type: Option<&HeaderValue>) -> bool {
    let is_html = content_type.and_then(|v| v.to_str().ok()).is_some_and(|ct| ct.starts_with("text/html"));
    is_html || path.ends_with(".js") || path.ends_with(".wasm") || path.ends_with(".html")
}

/// The fallback handler: static files when configured, JSON 404/405 otherwise.
#[derive(Clone, Debug)]
pub struct StaticFiles {
    dir: Option<PathBuf>,
}

impl StaticFiles {
    /// Serves `dir` (if any).
    pub fn new(dir: Option<&Path>) -> Self {
        StaticFiles { dir: dir.map(Path::to_path_buf) }
    }

    /// Answers a request no API route matched.
    pub async fn serve(&self, request: Request) -> Response {
        let path = request.uri().path().to_owned();
        let method = request.method().clone();
        if is_api_path(&path) {
            return ApiError::not_found(format!("no route for {method} {path}")).into_response();
        }
        let Some(dir) = &self.dir else {
            return ApiError::not_found(format!(
                "no route for {method} {path} (no static directory configured)"
            ))
            .into_response();
        };
        if method != Method::GET && method != Method::HEAD {
            return ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("method {method} not allowed for static path {path}"),
            )
            .into_response();
        }
        let index = ServeFile::new(dir.join("index.html"));
        let mut service = ServeDir::new(dir).fallback(index);
        let mut response = match service.try_call(request).await {
            Ok(response) => response.map(Body::new),
            Err(err) => {
                return ApiError::internal(format!("reading {path}: {err}")).into_response();
            }
        };
        if (response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED)
            && wants_no_cache(&path, response.headers().get(header::CONTENT_TYPE))
        {
            response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        assert!(is_api_path("/api/x"));
        assert!(is_api_path("/graphql"));
        assert!(is_api_path("/__test/counts"));
        assert!(!is_api_path("/apiary"));
        assert!(!is_api_path("/todos/3"));
        assert!(wants_no_cache("/app.js", None));
        assert!(wants_no_cache("/app_bg.wasm", None));
        assert!(wants_no_cache("/", Some(&HeaderValue::from_static("text/html"))));
        assert!(!wants_no_cache("/style.css", Some(&HeaderValue::from_static("text/css"))));
    }
}
