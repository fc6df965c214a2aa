//! Whether a GraphQL server's answer may be stored as a cached document.

use crate::json::Value;

/// True when `body` is a JSON object with a non-null `data` and no non-empty `errors`: a complete
/// GraphQL result. Anything else (errors, partial results, garbage, a non-object) is never cached, so a
/// failure is not replayed from the cache.
pub fn result_is_cacheable(body: &[u8]) -> bool {
    let Ok(Value::Object(result)) = crate::json::from_slice(body) else {
        return false;
    };
    let has_errors = match result.get("errors") {
        None | Some(Value::Null) => false,
        Some(Value::Array(errors)) => !errors.is_empty(),
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
