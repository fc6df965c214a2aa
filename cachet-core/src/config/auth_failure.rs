//! What counts as an auth failure (SPEC §5.5): `features.auth.failure` in `cachet.config.json`, and the
//! one check that the Service Worker and the page client both run.
//!
//! A response is an auth failure when **any** of these holds:
//!
//! | Key | Default | Holds when |
//! |---|---|---|
//! | `statuses` | `[401]` | the HTTP status is in the list |
//! | `header` `{ "name": "...", "value": "..."? }` | none | the response has that header, and, when `value` is given, its value trimmed equals `value` |
//! | `jsonField` `{ "path": "...", "value": ... ? }` | none | the JSON body has a value at `path` that equals `value` (any value other than `null` when `value` is omitted) |
//!
//! `path` is either a JSON pointer (RFC 6901, starts with `/`: `/error/code`) or a dotted path whose
//! segments are object keys or array indexes, where `*` matches every element or member
//! (`errors.*.extensions.code` with value `"UNAUTHENTICATED"` reads GraphQL errors).
//!
//! # The app's own check
//!
//! An app that needs more than the rule gives one function of type [`FailureCheck`] to both sides:
//! `cachet_client::ClientBuilder::failure_check` in the page and `cachet_worker::sw::install_with` in
//! the Service Worker binary. `cachet add auth` creates it as `src/cachet/auth/check.rs`, starting from
//! [`rule_check`] (the rule above); without one, both sides run [`rule_check`].

use super::read::{integer_in, show, Object};
use super::ConfigError;
use crate::json::Value;
use serde::Serialize;

/// The rule deciding whether a response is an auth failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthFailureRule {
    /// HTTP statuses that are auth failures.
    pub statuses: Vec<u16>,
    /// A response header that marks an auth failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<HeaderRule>,
    /// A JSON body field that marks an auth failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_field: Option<JsonFieldRule>,
}

/// `features.auth.failure.header`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderRule {
    /// Header name (case-insensitive, as HTTP has it).
    pub name: String,
    /// The value it must have; any value when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// `features.auth.failure.jsonField`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JsonFieldRule {
    /// JSON pointer or dotted path (see the module docs).
    pub path: String,
    /// The value it must have; any non-null value when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// A response as an auth-failure check sees it, the same in the page and in the Service Worker.
pub struct FailureResponse<'a> {
    /// The HTTP status.
    pub status: u16,
    /// The body (empty when there is none).
    pub body: &'a [u8],
    headers: &'a dyn Fn(&str) -> Option<String>,
}

/// An auth-failure check (SPEC §5.5 `isAuthFailureResponse`): the configured rule and the response in,
/// whether it is an auth failure out. A plain `fn`, so that the page client and the Service Worker can
/// each be handed the very same function.
pub type FailureCheck = fn(&AuthFailureRule, &FailureResponse<'_>) -> bool;

/// The default [`FailureCheck`]: `rule` alone ([`AuthFailureRule::check`]).
pub fn rule_check(rule: &AuthFailureRule, response: &FailureResponse<'_>) -> bool {
    rule.check(response)
}

impl<'a> FailureResponse<'a> {
    /// A response of `status` with `body`; `headers` returns a header's value by its lowercase name.
    pub fn new(status: u16, headers: &'a dyn Fn(&str) -> Option<String>, body: &'a [u8]) -> Self {
        FailureResponse { status, body, headers }
    }

    /// A response header by name (any case).
    pub fn header(&self, name: &str) -> Option<String> {
        (self.headers)(&name.to_ascii_lowercase())
    }

    /// The body parsed as JSON; `None` when it is not JSON.
    pub fn json(&self) -> Option<Value> {
        crate::json::from_slice(self.body).ok()
    }
}

impl std::fmt::Debug for FailureResponse<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("FailureResponse").field("status", &self.status).finish_non_exhaustive()
    }
}

impl Default for AuthFailureRule {
    fn default() -> Self {
        AuthFailureRule { statuses: vec![401], header: None, json_field: None }
    }
}

impl AuthFailureRule {
    /// Whether a response is an auth failure. `header_lookup` returns a response header by its
    /// lowercase name; `json_body` is the parsed body when the caller has one (it need only parse the
    /// body when [`AuthFailureRule::needs_body`] says so).
    pub fn is_failure(
        &self,
        status: u16,
        header_lookup: impl Fn(&str) -> Option<String>,
        json_body: Option<&Value>,
    ) -> bool {
        if self.statuses.contains(&status) {
            return true;
        }
        if let Some(rule) = &self.header {
            if let Some(found) = header_lookup(&rule.name.to_ascii_lowercase()) {
                if rule.value.as_deref().is_none_or(|wanted| found.trim() == wanted) {
                    return true;
                }
            }
        }
        if let (Some(rule), Some(body)) = (&self.json_field, json_body) {
            let mut found = Vec::new();
            collect(body, &segments(&rule.path), &mut found);
            return found.iter().any(|value| match &rule.value {
                Some(wanted) => *value == wanted,
                None => !value.is_null(),
            });
        }
        false
    }

    /// [`AuthFailureRule::is_failure`] of a [`FailureResponse`]: the body is parsed only when the rule
    /// reads it; a body that is not JSON matches no JSON field.
    pub fn check(&self, response: &FailureResponse<'_>) -> bool {
        let body = if self.needs_body() { response.json() } else { None };
        self.is_failure(response.status, |name| response.header(name), body.as_ref())
    }

    /// Whether the check reads the JSON body (so the caller must clone and parse the response).
    pub fn needs_body(&self) -> bool {
        self.json_field.is_some()
    }

    /// Reads `features.auth.failure` into `rule` (the default rule), noting the first error.
    pub(super) fn read(object: &Object<'_>, rule: &mut AuthFailureRule) {
        if let Some(value) = object.get("statuses") {
            let path = format!("{}.statuses", object.path);
            match value.as_array() {
                None => object
                    .wrong("statuses", format!("expected an array of HTTP statuses, got {}", show(value))),
                Some(items) => {
                    let statuses: Result<Vec<u16>, ConfigError> = items
                        .iter()
                        .enumerate()
                        .map(|(index, item)| {
                            let status = integer_in(&format!("{path}[{index}]"), item, 100, 599)?;
                            Ok(u16::try_from(status).unwrap_or(401))
                        })
                        .collect();
                    match statuses {
                        Ok(statuses) => rule.statuses = statuses,
                        Err(error) => object.note(error),
                    }
                }
            }
        }
        if object.get("header").is_some() {
            let header = object.child("header", &["name", "value"]);
            let name = required_string(&header, "name", |name| {
                !name.is_empty()
                    && name
                        .bytes()
                        .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
            });
            let value = optional_string(&header, "value");
            rule.header = Some(HeaderRule { name, value });
        }
        if object.get("jsonField").is_some() {
            let field = object.child("jsonField", &["path", "value"]);
            let path = required_string(&field, "path", |path| !path.is_empty() && path != "/");
            rule.json_field = Some(JsonFieldRule { path, value: field.get("value").cloned() });
        }
    }
}

/// The string `key` that `valid` accepts; a missing or refused one is noted (and read as empty).
fn required_string(object: &Object<'_>, key: &str, valid: fn(&str) -> bool) -> String {
    match object.get(key) {
        Some(Value::String(text)) if valid(text) => text.clone(),
        Some(other) => {
            object.wrong(key, format!("expected a non-empty name, got {}", show(other)));
            String::new()
        }
        None => {
            object.wrong(key, "required key is missing".to_owned());
            String::new()
        }
    }
}

/// The string `key`, when there is one (`null` is none); another value is noted.
fn optional_string(object: &Object<'_>, key: &str) -> Option<String> {
    match object.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            object.wrong(key, format!("expected a string, got {}", show(other)));
            None
        }
    }
}

/// A JSON pointer's segment unescaped (RFC 6901: `~1` is `/`, then `~0` is `~`), in one pass over its
/// characters: `str::replace` with a text pattern links the two-way string searcher (2 KB of every
/// wasm), for two two-byte patterns. Tested against `replace("~1", "/").replace("~0", "~")`.
pub(crate) fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.clone().next() {
            Some('1') => out.push('/'),
            Some('0') => out.push('~'),
            _ => {
                out.push('~');
                continue;
            }
        }
        chars.next();
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    match path.strip_prefix('/') {
        Some(pointer) => pointer.split('/').map(unescape).collect(),
        None => path.split('.').map(str::to_owned).collect(),
    }
}

fn collect<'a>(value: &'a Value, segments: &[String], found: &mut Vec<&'a Value>) {
    let Some((first, rest)) = segments.split_first() else {
        found.push(value);
        return;
    };
    match value {
        Value::Object(map) if first == "*" => map.values().for_each(|member| collect(member, rest, found)),
        Value::Object(map) => {
            if let Some(member) = map.get(first) {
                collect(member, rest, found);
            }
        }
        Value::Array(items) if first == "*" => items.iter().for_each(|item| collect(item, rest, found)),
        Value::Array(items) => {
            if let Some(item) = first.parse::<usize>().ok().and_then(|index| items.get(index)) {
                collect(item, rest, found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The oracle: the two `str::replace` calls RFC 6901 describes, in its order.
        #[test]
        fn a_segment_unescapes_as_the_two_replaces_do(part in "[~01/a\u{e9}\u{1f600}]{0,16}") {
            prop_assert_eq!(super::unescape(&part), part.replace("~1", "/").replace("~0", "~"));
        }
    }
}
