//! Crossing the JavaScript boundary: JSON values both ways, options objects, and errors as JavaScript
//! `Error`s that say which stage failed.

use cachet_client::{Error, Strategy};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};

/// A JavaScript value as JSON (`undefined`, functions and symbols become `null`).
pub fn to_json(value: &JsValue) -> Value {
    if value.is_undefined() {
        return Value::Null;
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| text.as_string())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// JSON as a JavaScript value.
pub fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// `options[name]` as a boolean (absent: false).
pub fn flag(options: &Value, name: &str) -> bool {
    options.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// `options[name]` as a list of strings; `None` when absent.
pub fn strings(options: &Value, name: &str) -> Result<Option<Vec<String>>, Error> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| Error::InvalidArgument {
                    what: format!("options.{name}"),
                    expected: "strings",
                    got: item.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(Error::InvalidArgument {
            what: format!("options.{name}"),
            expected: "an array of strings",
            got: other.to_string(),
        }),
    }
}

/// `options.strategy`, one of the five names.
pub fn strategy(options: &Value) -> Result<Option<Strategy>, Error> {
    match options.get("strategy").and_then(Value::as_str) {
        None => Ok(None),
        Some(name) => {
            name.parse().map(Some).map_err(|error| Error::Core(cachet_core::Error::Strategy(error)))
        }
    }
}

/// A JavaScript `Error` named `CachetError` with `kind` (see [`Error::kind`]) and, where they apply,
/// `status`, `url`, `errors` and `data`.
pub fn to_js_error(error: &Error) -> JsValue {
    let js_error = js_sys::Error::new(&error.to_string());
    js_error.set_name("CachetError");
    let mut extra = json!({ "kind": error.kind() });
    match error {
        Error::Http { url, status, body } => {
            extra["status"] = json!(status);
            extra["url"] = json!(url);
            extra["body"] = json!(body);
        }
        Error::Unauthorized { url, status } => {
            extra["status"] = json!(status);
            extra["url"] = json!(url);
        }
        Error::Network { url, .. } => extra["url"] = json!(url),
        Error::NotQueued { url, reason } => {
            extra["status"] = json!(cachet_core::machines::queue::NOT_QUEUED_STATUS);
            extra["url"] = json!(url);
            extra["reason"] = json!(reason.as_str());
        }
        Error::PushUnavailable { name, .. } => extra["browserError"] = json!(name),
        Error::Graphql { errors, data } => {
            extra["errors"] = json!(errors);
            extra["data"] = json!(data);
        }
        _ => {}
    }
    if let Some(fields) = extra.as_object() {
        for (key, value) in fields {
            let _ = js_sys::Reflect::set(&js_error, &JsValue::from_str(key), &to_js(value));
        }
    }
    js_error.unchecked_into()
}

/// A thrown JavaScript value as a typed error.
pub fn from_js_error(operation: &'static str, value: JsValue) -> Error {
    Error::js(operation, value)
}
