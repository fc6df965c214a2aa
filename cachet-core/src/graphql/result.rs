//! Whether a GraphQL server's answer may be stored as a cached document.

/// True when `body` is a JSON object with a non-null `data` and no non-empty `errors`: a complete
/// GraphQL result. Anything else (errors, partial results, garbage, a non-object) is never cached, so a
/// failure is not replayed from the cache.
pub fn result_is_cacheable(body: &[u8]) -> bool {
    let Ok(serde_json::Value::Object(result)) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let has_errors = match result.get("errors") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Array(errors)) => !errors.is_empty(),
        Some(_) => true,
    };
    !has_errors && result.get("data").is_some_and(|data| !data.is_null())
}

#[cfg(test)]
mod tests {
    use super::result_is_cacheable;

    #[test]
    fn only_complete_results_are_cacheable() {
        let table: [(&str, bool); 10] = [
            (r#"{"data":{"todos":[]}}"#, true),
            (r#"{"data":{"todos":[]},"errors":[]}"#, true),
            (r#"{"data":{"todos":[]},"errors":null}"#, true),
            (r#"{"data":{"todos":null},"errors":[{"message":"boom"}]}"#, false),
            (r#"{"errors":[{"message":"not authenticated"}]}"#, false),
            (r#"{"data":null}"#, false),
            (r#"{"data":{},"errors":"weird"}"#, false),
            (r#"[{"data":{}}]"#, false),
            (r#"{"data": {"#, false),
            ("", false),
        ];
        for (body, expected) in table {
            assert_eq!(result_is_cacheable(body.as_bytes()), expected, "{body}");
        }
    }
}
