//! Crossing the JavaScript boundary: JSON values both ways, options objects, and errors as JavaScript
//! `Error`s that say which stage failed.

use cachet_client::{Error, Strategy};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

/// A JavaScript value as JSON (`undefined`, functions and symbols become `null`).
pub fn to_json(value: &JsValue) -> Value {
    serde_json::from_slice(stringify(value).as_bytes()).unwrap_or(Value::Null)
}

/// A JavaScript value's JSON text, by the browser (`undefined`, functions and symbols: `null`).
pub fn stringify(value: &JsValue) -> String {
    if value.is_undefined() {
        return "null".to_owned();
    }
    js_sys::JSON::stringify(value).ok().and_then(|text| text.as_string()).unwrap_or_else(|| "null".to_owned())
}

/// `value`'s JSON text. Every JSON text the bundle writes goes through this one serializer
/// (`serde_json::to_string`; a `Value`'s `Display`, `to_value` and `to_vec` would each link serde's
/// writing again for another writer: BENCHMARKS.md, session 35).
pub fn text_of<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// JSON as a JavaScript value.
pub fn to_js<T: serde::Serialize + ?Sized>(value: &T) -> JsValue {
    js_sys::JSON::parse(&text_of(value)).unwrap_or(JsValue::NULL)
}

/// A JavaScript object of `fields`, set one by one (no JSON tree written and parsed again for it).
pub fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), value);
    }
    object.into()
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
                    got: text_of(item),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(Error::InvalidArgument {
            what: format!("options.{name}"),
            expected: "an array of strings",
            got: text_of(other),
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
    // Set one by one (no JSON tree built for a handful of fields).
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&js_error, &JsValue::from_str(key), &value);
    };
    set("kind", JsValue::from_str(error.kind()));
    match error {
        Error::Http { url, status, body } => {
            set("status", JsValue::from(*status));
            set("url", JsValue::from_str(url));
            set("body", to_js(body));
        }
        Error::Unauthorized { url, status } => {
            set("status", JsValue::from(*status));
            set("url", JsValue::from_str(url));
        }
        Error::Network { url, .. } => set("url", JsValue::from_str(url)),
        Error::NotQueued { url, reason } => {
            set("status", JsValue::from(cachet_core::machines::queue::NOT_QUEUED_STATUS));
            set("url", JsValue::from_str(url));
            set("reason", JsValue::from_str(reason.as_str()));
        }
        Error::PushUnavailable { name, .. } => set("browserError", JsValue::from_str(name)),
        Error::Graphql { errors, data } => {
            set("errors", to_js(errors));
            set("data", to_js(data));
        }
        _ => {}
    }
    js_error.unchecked_into()
}

/// A thrown JavaScript value as a typed error.
pub fn from_js_error(operation: &'static str, value: JsValue) -> Error {
    Error::js(operation, value)
}
