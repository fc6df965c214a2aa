//! Reading a `serde_json::Value` while keeping the JSON path, so every error names where it is.

use super::ConfigError;
use crate::json::{Map, Value};
use std::str::FromStr;

/// The largest integer JavaScript reads exactly (2^53 - 1): every bound must survive `JSON.parse`.
pub(super) const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// The first error a read found ([`crate::noted`]). The reads run in the order the errors are documented
/// to be found, so the first noted is the one a reader stopping at the first would give (200,000 fuzzed
/// configs read to the same results as the reader that returned at each error, before it was replaced).
pub(super) type Noted = crate::noted::Noted<ConfigError>;

/// An object at a path whose keys have been checked against the known ones.
pub(super) struct Object<'a> {
    pub(super) path: String,
    map: Option<&'a Map>,
    noted: &'a Noted,
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
    let mut text = value.to_string();
    if let Some((cut, _)) = text.char_indices().nth(40) {
        text.truncate(cut); // not sliced: see tags::derive::invalidation_tags
        text.push_str("...");
    }
    text
}

impl<'a> Object<'a> {
    /// The object at `path` (absent means empty; not an object is noted, and read as empty); unknown
    /// keys are noted (`$schema` at the root is allowed).
    pub(super) fn new(noted: &'a Noted, path: String, value: Option<&'a Value>, known: &[&str]) -> Self {
        let map = match value {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                noted.note(invalid(&path, format!("expected an object, got {}", show(other))));
                None
            }
        };
        for key in map.into_iter().flat_map(|map| map.keys()) {
            let allowed = known.contains(&key.as_str()) || (path.is_empty() && key == "$schema");
            if !allowed {
                noted.note(invalid(
                    &join(&path, key),
                    format!("unknown key, expected one of {}", known.join(", ")),
                ));
                break;
            }
        }
        Object { path, map, noted }
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|map| map.get(key))
    }

    /// Notes `error` (the first one noted is the reader's).
    pub(super) fn note(&self, error: ConfigError) {
        self.noted.note(error);
    }

    /// Notes `message` about `key` of this object.
    pub(super) fn wrong(&self, key: &str, message: String) {
        self.noted.note(invalid(&join(&self.path, key), message));
    }

    pub(super) fn child(&self, key: &str, known: &[&str]) -> Object<'a> {
        Object::new(self.noted, join(&self.path, key), self.get(key), known)
    }

    pub(super) fn bool(&self, key: &str, slot: &mut bool) {
        match self.get(key) {
            None => {}
            Some(Value::Bool(flag)) => *slot = *flag,
            Some(other) => self.wrong(key, format!("expected true or false, got {}", show(other))),
        }
    }

    /// An integer in `min..=max`.
    pub(super) fn integer(&self, key: &str, slot: &mut u64, min: u64, max: u64) {
        if let Some(value) = self.get(key) {
            match integer_in(&join(&self.path, key), value, min, max) {
                Ok(number) => *slot = number,
                Err(error) => self.noted.note(error),
            }
        }
    }

    /// An integer in `min..=max` (at most `u32::MAX`).
    pub(super) fn small(&self, key: &str, slot: &mut u32, min: u64, max: u64) {
        let mut number = u64::from(*slot);
        self.integer(key, &mut number, min, max);
        *slot = u32::try_from(number).unwrap_or(u32::MAX);
    }

    /// A string naming one of the values of a `FromStr` type, listed in `allowed`.
    pub(super) fn one_of<T: FromStr>(&self, key: &str, slot: &mut T, allowed: &[&str]) {
        let Some(value) = self.get(key) else { return };
        match value.as_str().filter(|text| allowed.contains(text)).and_then(|text| text.parse().ok()) {
            Some(parsed) => *slot = parsed,
            None => self.wrong(key, format!("expected one of {}, got {}", allowed.join(", "), show(value))),
        }
    }

    /// An array of strings, each checked by `check` (which returns what was expected when it fails).
    pub(super) fn strings(
        &self,
        key: &str,
        slot: &mut Vec<String>,
        check: fn(&str) -> Result<(), &'static str>,
    ) {
        let Some(value) = self.get(key) else { return };
        let path = join(&self.path, key);
        let Some(items) = value.as_array() else {
            self.noted.note(invalid(&path, format!("expected an array of strings, got {}", show(value))));
            return;
        };
        let mut strings: Vec<String> = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let wrong = |message: String| self.noted.note(invalid(&format!("{path}[{index}]"), message));
            let Some(text) = item.as_str() else {
                return wrong(format!("expected a string, got {}", show(item)));
            };
            if let Err(expected) = check(text) {
                return wrong(format!("expected {expected}, got {}", show(item)));
            }
            if strings.iter().any(|earlier| earlier == text) {
                return wrong(format!("duplicate entry {}", show(item)));
            }
            strings.push(text.to_owned());
        }
        *slot = strings;
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
