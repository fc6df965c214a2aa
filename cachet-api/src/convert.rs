//! Crossing the JavaScript boundary: JSON values both ways, options objects, and errors as JavaScript
//! `Error`s that say which stage failed.

use cachet_client::{Error, Strategy};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

/// A JavaScript value as JSON (`undefined`, functions and symbols become `null`): the browser's text,
/// read by the client's reader (`cachet_client::json`: no serde_json reader in the bundle).
pub fn to_json(value: &JsValue) -> Value {
    cachet_client::json::read(stringify(value).as_bytes()).unwrap_or(Value::Null)
}

/// A JavaScript value's JSON text, by the browser (`undefined`, functions and symbols: `null`).
pub fn stringify(value: &JsValue) -> String {
    if value.is_undefined() {
        return "null".to_owned();
    }
    js_sys::JSON::stringify(value).ok().and_then(|text| text.as_string()).unwrap_or_else(|| "null".to_owned())
}

/// `value`'s JSON text, by the client's writer (`cachet_client::json`: no serde serializer in the
/// bundle; a typed value is made a tree by hand first, `AuthData::to_value`).
pub fn text_of(value: &Value) -> String {
    cachet_client::json::text(value)
}

/// JSON as a JavaScript value.
pub fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&text_of(value)).unwrap_or(JsValue::NULL)
}

/// JSON, or `null`, as a JavaScript value.
pub fn option_to_js(value: Option<&Value>) -> JsValue {
    value.map_or(JsValue::NULL, to_js)
}

/// AuthData (its JSON: camelCase, absent fields left out), or `null`, as a JavaScript value.
pub fn auth_to_js(auth: Option<&cachet_client::AuthData>) -> JsValue {
    auth.map_or(JsValue::NULL, |auth| to_js(&auth.to_value()))
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
            set("body", JsValue::from_str(body));
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
            set("errors", to_js(&Value::Array(errors.clone())));
            set("data", option_to_js(data.as_ref()));
        }
        _ => {}
    }
    js_error.unchecked_into()
}

/// A thrown JavaScript value as a typed error.
pub fn from_js_error(operation: &'static str, value: JsValue) -> Error {
    Error::js(operation, value)
}
