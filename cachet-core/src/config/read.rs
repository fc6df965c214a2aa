//! Reading a `serde_json::Value` while keeping the JSON path, so every error names where it is.

use super::ConfigError;
use crate::json::{Map, Value};
use std::str::FromStr;

/// The largest integer JavaScript reads exactly (2^53 - 1): every bound must survive `JSON.parse`.
pub(super) const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// An object at a path whose keys have been checked against the known ones.
pub(super) struct Object<'a> {
    pub(super) path: String,
    map: Option<&'a Map>,
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

pub(super) fn invalid(path: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: if path.is_empty() { "(root)".to_owned() } else { path.to_owned() },
        message,
    }
}

/// `value` shown the way the error messages quote it: compact JSON, cut at 40 characters.
pub(super) fn show(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

impl<'a> Object<'a> {
    /// The object at `path` (absent means empty); unknown keys are errors (`$schema` at the root is allowed).
    pub(super) fn new(path: String, value: Option<&'a Value>, known: &[&str]) -> Result<Self, ConfigError> {
        let map = match value {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => return Err(invalid(&path, format!("expected an object, got {}", show(other)))),
        };
        for key in map.into_iter().flat_map(|map| map.keys()) {
            let allowed = known.contains(&key.as_str()) || (path.is_empty() && key == "$schema");
            if !allowed {
                return Err(invalid(
                    &join(&path, key),
                    format!("unknown key, expected one of {}", known.join(", ")),
                ));
            }
        }
        Ok(Object { path, map })
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|map| map.get(key))
    }

    pub(super) fn child(&self, key: &str, known: &[&str]) -> Result<Object<'a>, ConfigError> {
        Object::new(join(&self.path, key), self.get(key), known)
    }

    pub(super) fn bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => {
                Err(invalid(&join(&self.path, key), format!("expected true or false, got {}", show(other))))
            }
        }
    }

    /// An integer in `min..=max`.
    pub(super) fn integer(&self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        match self.get(key) {
            None => Ok(default),
            Some(value) => integer_in(&join(&self.path, key), value, min, max),
        }
    }

    /// A string naming one of the values of a `FromStr` type, listed in `allowed`.
    pub(super) fn one_of<T: FromStr>(
        &self,
        key: &str,
        default: T,
        allowed: &[&str],
    ) -> Result<T, ConfigError> {
        match self.get(key) {
            None => Ok(default),
            Some(value) => {
                let path = join(&self.path, key);
                let wrong =
                    || invalid(&path, format!("expected one of {}, got {}", allowed.join(", "), show(value)));
                let text = value.as_str().ok_or_else(wrong)?;
                if !allowed.contains(&text) {
                    return Err(wrong());
                }
                text.parse().map_err(|_| wrong())
            }
        }
    }

    /// An array of strings, each checked by `check` (which returns what was expected when it fails).
    pub(super) fn strings(
        &self,
        key: &str,
        default: &[&str],
        check: fn(&str) -> Result<(), &'static str>,
    ) -> Result<Vec<String>, ConfigError> {
        let path = join(&self.path, key);
        let Some(value) = self.get(key) else {
            return Ok(default.iter().map(|item| (*item).to_owned()).collect());
        };
        let items = value
            .as_array()
            .ok_or_else(|| invalid(&path, format!("expected an array of strings, got {}", show(value))))?;
        let mut strings: Vec<String> = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{index}]");
            let text = item
                .as_str()
                .ok_or_else(|| invalid(&item_path, format!("expected a string, got {}", show(item))))?;
            check(text).map_err(|expected| {
                invalid(&item_path, format!("expected {expected}, got {}", show(item)))
            })?;
            if strings.iter().any(|earlier| earlier == text) {
                return Err(invalid(&item_path, format!("duplicate entry {}", show(item))));
            }
            strings.push(text.to_owned());
        }
        Ok(strings)
    }
}

pub(super) fn integer_in(path: &str, value: &Value, min: u64, max: u64) -> Result<u64, ConfigError> {
    value
        .as_u64()
        .filter(|number| (min..=max).contains(number))
        .ok_or_else(|| invalid(path, format!("expected an integer from {min} to {max}, got {}", show(value))))
}

/// A URL path: starts with `/`, holds no whitespace, no `?` and no `#`.
pub(super) fn check_path(text: &str) -> Result<(), &'static str> {
    let clean = text.starts_with('/') && !text.chars().any(|c| c.is_whitespace() || c == '?' || c == '#');
    if clean {
        Ok(())
    } else {
        Err("a URL path starting with / (no query, fragment or whitespace)")
    }
}
