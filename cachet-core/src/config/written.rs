//! Reading back a config cachet wrote ([`Config::from_written_json`]): the inverse of
//! [`Config::to_json`], for what a page reads, which is always a config cachet itself wrote and checked.
//!
//! A page reads two configs: `window.CACHET_CONFIG`, which `cachet generate` writes into
//! `cachet-sw-config.js` from a config the whole reader ([`Config::from_json_str`]) accepted, and its
//! Service Worker's, which the worker's writer writes from the config it runs on. Neither needs the
//! whole reader's rules again (the ranges, the path shapes, the cross-checks and their messages: 6.8 KB
//! of a Yew app's gzipped wasm), only its shape: the keys the writer writes, each of the JSON type it
//! writes. A key missing takes its default (a file written by an older cachet); a key the writer does not
//! write, or a value of another type, is [`ConfigError::Invalid`] naming the key, with the remedy (the
//! file was edited by hand: `cachet generate` names what is wrong, and so does the Service Worker, which
//! reads the same file with the whole reader). The defaults are [`Config::default`]'s, and the names the
//! enumerations' own (`FromStr`): no rule is written twice.
//!
//! Tested against the writer and the whole reader (tests in `write.rs`): every config written and read
//! back is equal, and every text the whole reader accepts reads the same here.

use super::{Config, ConfigError, HeaderRule, JsonFieldRule};
use crate::json::{Map, Value};
use std::str::FromStr;

/// What a [`ConfigError::Invalid`] of this reader says.
const NOT_WRITTEN: &str = "not as cachet writes it: this file was edited by hand; write cachet.config.json \
                           and run `cachet generate`, which names what is wrong";

/// The path of the first key found wrong ([`crate::noted`]): each read notes a wrong key here and goes
/// on with the default, and the config is refused at the end.
#[derive(Default)]
struct Wrong(crate::noted::Noted<String>);

impl Wrong {
    /// Notes `parent.key` (`key` alone at the root), written without the formatting machinery.
    fn note(&self, parent: &str, key: &str) {
        let mut path = String::with_capacity(parent.len() + key.len() + 1);
        if !parent.is_empty() {
            path.push_str(parent);
            path.push('.');
        }
        path.push_str(key);
        self.0.note(path);
    }
}

/// An object the writer writes, at `path`, its keys checked against the known ones.
struct Written<'a> {
    path: &'static str,
    map: Option<&'a Map>,
    wrong: &'a Wrong,
}

impl<'a> Written<'a> {
    /// The object `value` at `path` (`key` of `parent`); absent or not an object: no keys (the latter
    /// noted).
    fn new(
        wrong: &'a Wrong,
        (parent, key, path): (&str, &str, &'static str),
        value: Option<&'a Value>,
        known: &[&str],
    ) -> Self {
        let map = match value {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => {
                wrong.note(parent, key);
                None
            }
        };
        let root = path.is_empty();
        for name in map.into_iter().flat_map(Map::keys) {
            let allowed = known.contains(&name.as_str()) || (root && name == "$schema");
            if !allowed {
                wrong.note(path, name);
            }
        }
        Written { path, map, wrong }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|map| map.get(key))
    }

    /// The object at `key`, whose own path is `path`.
    fn child(&self, key: &str, path: &'static str, known: &[&str]) -> Written<'a> {
        Written::new(self.wrong, (self.path, key, path), self.get(key), known)
    }

    /// Sets `slot` from the value at `key` through `read`, when there is one; `read` saying `None` notes
    /// the key.
    fn set<T>(&self, key: &str, slot: &mut T, read: impl FnOnce(&'a Value) -> Option<T>) {
        if let Some(value) = self.get(key) {
            match read(value) {
                Some(read) => *slot = read,
                None => self.wrong.note(self.path, key),
            }
        }
    }

    fn bool(&self, key: &str, slot: &mut bool) {
        self.set(key, slot, Value::as_bool);
    }

    fn number(&self, key: &str, slot: &mut u64) {
        self.set(key, slot, Value::as_u64);
    }

    fn small(&self, key: &str, slot: &mut u32) {
        self.set(key, slot, |value| u32::try_from(value.as_u64()?).ok());
    }

    fn string(&self, key: &str, slot: &mut String) {
        self.set(key, slot, |value| value.as_str().map(str::to_owned));
    }

    fn optional_string(&self, key: &str, slot: &mut Option<String>) {
        self.set(key, slot, |value| value.as_str().map(|text| Some(text.to_owned())));
    }

    /// A string `key` that must be there.
    fn required_string(&self, key: &str, slot: &mut String) {
        match self.get(key) {
            None => self.wrong.note(self.path, key),
            Some(_) => self.string(key, slot),
        }
    }

    fn parsed<T: FromStr>(&self, key: &str, slot: &mut T) {
        self.set(key, slot, |value| value.as_str()?.parse().ok());
    }

    fn strings(&self, key: &str, slot: &mut Vec<String>) {
        self.set(key, slot, |value| {
            value.as_array()?.iter().map(|item| item.as_str().map(str::to_owned)).collect()
        });
    }
}

impl Config {
    /// Reads a config cachet wrote ([`Config::to_json`], [`Config::to_json_pretty`], `cachet generate`'s
    /// `cachet-sw-config.js`) with its shape checked but not the whole reader's rules (see the module
    /// docs): what a page reads. Text from anywhere else goes through [`Config::from_json_str`].
    pub fn from_written_json(text: &str) -> Result<Config, ConfigError> {
        let value = crate::json::from_str(text).map_err(|error| super::syntax_error(text, &error))?;
        let mut config = Config::default();
        let wrong = Wrong::default();
        let root = Written::new(
            &wrong,
            ("", "(root)", ""),
            Some(&value),
            &["features", "strategy", "cache", "queue"],
        );
        let features = root.child("features", "features", &["auth", "graphql", "push"]);

        let read = features.child("auth", "features.auth", &["enabled", "type", "routePaths", "failure"]);
        let auth = &mut config.features.auth;
        read.bool("enabled", &mut auth.enabled);
        read.parsed("type", &mut auth.kind);
        read.strings("routePaths", &mut auth.route_paths);
        let read = read.child("failure", "features.auth.failure", &["statuses", "header", "jsonField"]);
        let failure = &mut auth.failure;
        read.set("statuses", &mut failure.statuses, |value| {
            value.as_array()?.iter().map(|item| u16::try_from(item.as_u64()?).ok()).collect()
        });
        let header = read.child("header", "features.auth.failure.header", &["name", "value"]);
        if header.map.is_some() {
            let mut rule = HeaderRule { name: String::new(), value: None };
            header.required_string("name", &mut rule.name);
            header.optional_string("value", &mut rule.value);
            failure.header = Some(rule);
        }
        let field = read.child("jsonField", "features.auth.failure.jsonField", &["path", "value"]);
        if field.map.is_some() {
            let mut rule = JsonFieldRule { path: String::new(), value: field.get("value").cloned() };
            field.required_string("path", &mut rule.path);
            failure.json_field = Some(rule);
        }

        let read = features.child(
            "graphql",
            "features.graphql",
            &["enabled", "endpoints", "honorNoStore", "persistedQueries"],
        );
        let graphql = &mut config.features.graphql;
        read.bool("enabled", &mut graphql.enabled);
        read.strings("endpoints", &mut graphql.endpoints);
        read.bool("honorNoStore", &mut graphql.honor_no_store);
        let read = read.child(
            "persistedQueries",
            "features.graphql.persistedQueries",
            &["endpoints", "getMaxUrlLength"],
        );
        read.strings("endpoints", &mut graphql.persisted_queries.endpoints);
        read.small("getMaxUrlLength", &mut graphql.persisted_queries.get_max_url_length);

        let read = features.child("push", "features.push", &["enabled", "notification"]);
        let push = &mut config.features.push;
        read.bool("enabled", &mut push.enabled);
        let read = read.child(
            "notification",
            "features.push.notification",
            &["title", "body", "icon", "tag", "silentWhenVisible"],
        );
        let shown = &mut push.notification;
        read.string("title", &mut shown.title);
        read.string("body", &mut shown.body);
        read.optional_string("icon", &mut shown.icon);
        read.string("tag", &mut shown.tag);
        read.bool("silentWhenVisible", &mut shown.silent_when_visible);

        let read = root.child("strategy", "strategy", &["default", "graphql"]);
        read.parsed("default", &mut config.strategy.default);
        read.parsed("graphql", &mut config.strategy.graphql);
        let read = root.child(
            "cache",
            "cache",
            &["maxEntries", "maxAgeSeconds", "maxBodyBytes", "staleIfErrorSeconds"],
        );
        let cache = &mut config.cache;
        read.small("maxEntries", &mut cache.max_entries);
        read.number("maxAgeSeconds", &mut cache.max_age_seconds);
        read.number("maxBodyBytes", &mut cache.max_body_bytes);
        read.number("staleIfErrorSeconds", &mut cache.stale_if_error_seconds);
        let read =
            root.child("queue", "queue", &["maxItems", "maxAttempts", "backoffBaseMs", "backoffMaxMs"]);
        let queue = &mut config.queue;
        read.small("maxItems", &mut queue.max_items);
        read.small("maxAttempts", &mut queue.max_attempts);
        read.number("backoffBaseMs", &mut queue.backoff_base_ms);
        read.number("backoffMaxMs", &mut queue.backoff_max_ms);

        wrong.0.result(config).map_err(|path| ConfigError::Invalid { path, message: NOT_WRITTEN.to_owned() })
    }
}
