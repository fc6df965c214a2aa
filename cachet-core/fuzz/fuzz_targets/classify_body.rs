//! Any bytes as a GraphQL POST body, and any text as a GraphQL document: never a panic, and a body the
//! classifier accepts always yields a 64-hex-character cache key.
#![no_main]

use cachet_core::classify::{classify_request, GraphqlAction, RequestClass};
use cachet_core::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut config = Config::default();
    config.features.graphql.enabled = true;
    let no_headers = |_: &str| None;
    if let Ok(RequestClass::Graphql(call)) = classify_request("POST", "/graphql", &no_headers, Some(data), &config) {
        if let GraphqlAction::Query { cache_key, .. } = call.action {
            assert_eq!(cache_key.len(), 64);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = cachet_core::graphql::scan_operations(text);
        let body = serde_json::json!({ "query": text });
        let _ = cachet_core::graphql::parse_body(body.to_string().as_bytes());
    }
});
