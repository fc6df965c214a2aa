//! The config written as compact JSON by hand ([`Config::to_json`]), every key written out, in the order
//! serde's derive writes them: what the page compares with its Service Worker's config
//! ([`Config::differences`]) without linking a serde serializer and serde_json into every page (the
//! derive and serde_json's tree were 9 KB of a Yew app's gzipped wasm). The derive stays for
//! [`Config::to_json_pretty`] (the CLI) and as this writer's oracle: the tests below write random configs
//! both ways and compare the texts.

use super::{AuthConfig, AuthFailureRule, Config, GraphqlConfig, PushConfig};
use crate::json::{self, ObjectWriter};

impl Config {
    /// The config as compact JSON with every key written out (serde's derive's exact text);
    /// [`Config::from_json_str`] reads it back equal.
    pub fn to_json(&self) -> String {
        let mut text = String::with_capacity(1024);
        let mut config = ObjectWriter::start(&mut text);
        let features = config.member("features");
        let mut object = ObjectWriter::start(features);
        write_auth(object.member("auth"), &self.features.auth);
        write_graphql(object.member("graphql"), &self.features.graphql);
        write_push(object.member("push"), &self.features.push);
        object.end();
        let strategy = &self.strategy;
        ObjectWriter::start(config.member("strategy"))
            .string("default", strategy.default.as_str())
            .string("graphql", strategy.graphql.as_str())
            .end();
        let cache = &self.cache;
        ObjectWriter::start(config.member("cache"))
            .number("maxEntries", cache.max_entries.into())
            .number("maxAgeSeconds", cache.max_age_seconds)
            .number("maxBodyBytes", cache.max_body_bytes)
            .number("staleIfErrorSeconds", cache.stale_if_error_seconds)
            .end();
        let queue = &self.queue;
        ObjectWriter::start(config.member("queue"))
            .number("maxItems", queue.max_items.into())
            .number("maxAttempts", queue.max_attempts.into())
            .number("backoffBaseMs", queue.backoff_base_ms)
            .number("backoffMaxMs", queue.backoff_max_ms)
            .end();
        config.end();
        text
    }
}

fn write_auth(text: &mut String, auth: &AuthConfig) {
    let mut object = ObjectWriter::start(text);
    object
        .boolean("enabled", auth.enabled)
        .string("type", auth.kind.as_str())
        .strings("routePaths", &auth.route_paths);
    write_failure(object.member("failure"), &auth.failure);
    object.end();
}

fn write_failure(text: &mut String, failure: &AuthFailureRule) {
    let mut object = ObjectWriter::start(text);
    json::write_list(object.member("statuses"), &failure.statuses, |text, status| {
        json::write_u64(text, (*status).into())
    });
    if let Some(header) = &failure.header {
        ObjectWriter::start(object.member("header"))
            .string("name", &header.name)
            .present("value", header.value.as_deref())
            .end();
    }
    if let Some(field) = &failure.json_field {
        let mut rule = ObjectWriter::start(object.member("jsonField"));
        rule.string("path", &field.path);
        if let Some(value) = &field.value {
            json::write(rule.member("value"), value);
        }
        rule.end();
    }
    object.end();
}

fn write_graphql(text: &mut String, graphql: &GraphqlConfig) {
    let mut object = ObjectWriter::start(text);
    object
        .boolean("enabled", graphql.enabled)
        .strings("endpoints", &graphql.endpoints)
        .boolean("honorNoStore", graphql.honor_no_store);
    let persisted = &graphql.persisted_queries;
    ObjectWriter::start(object.member("persistedQueries"))
        .strings("endpoints", &persisted.endpoints)
        .number("getMaxUrlLength", persisted.get_max_url_length.into())
        .end();
    object.end();
}

fn write_push(text: &mut String, push: &PushConfig) {
    let mut object = ObjectWriter::start(text);
    object.boolean("enabled", push.enabled);
    let notification = &push.notification;
    ObjectWriter::start(object.member("notification"))
        .string("title", &notification.title)
        .string("body", &notification.body)
        .present("icon", notification.icon.as_deref())
        .string("tag", &notification.tag)
        .boolean("silentWhenVisible", notification.silent_when_visible)
        .end();
    object.end();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::{
        AuthType, CacheBounds, Features, HeaderRule, JsonFieldRule, PersistedQueries, PushNotification,
        QueueBounds, StrategyConfig,
    };
    use crate::strategy::Strategy as CacheStrategy;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[\\\\\"\u{0}-\u{1f}\u{7f}\u{1f600}a/.*]{0,12}"]
    }

    fn texts() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(text(), 0..4)
    }

    /// A JSON field rule's value, as serde_json writes it (integers, strings, arrays of them).
    fn value() -> impl Strategy<Value = json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            text().prop_map(serde_json::Value::String),
        ];
        prop_oneof![leaf.clone(), prop::collection::vec(leaf, 0..4).prop_map(serde_json::Value::Array)]
            .prop_map(|value| json::from_str(&value.to_string()).unwrap())
    }

    fn config() -> impl Strategy<Value = Config> {
        let strategy = prop::sample::select(CacheStrategy::ALL.to_vec());
        let auth = (
            any::<bool>(),
            prop::sample::select(vec![AuthType::Cookie, AuthType::Bearer, AuthType::Custom]),
            texts(),
            prop::collection::vec(any::<u16>(), 0..4),
            prop::option::of((text(), prop::option::of(text()))),
            prop::option::of((text(), prop::option::of(value()))),
        )
            .prop_map(|(enabled, kind, route_paths, statuses, header, field)| AuthConfig {
                enabled,
                kind,
                route_paths,
                failure: AuthFailureRule {
                    statuses,
                    header: header.map(|(name, value)| HeaderRule { name, value }),
                    json_field: field.map(|(path, value)| JsonFieldRule { path, value }),
                },
            });
        let graphql = (any::<bool>(), texts(), any::<bool>(), texts(), any::<u32>()).prop_map(
            |(enabled, endpoints, honor_no_store, persisted, get_max_url_length)| GraphqlConfig {
                enabled,
                endpoints,
                honor_no_store,
                persisted_queries: PersistedQueries { endpoints: persisted, get_max_url_length },
            },
        );
        let push = (any::<bool>(), text(), text(), prop::option::of(text()), text(), any::<bool>()).prop_map(
            |(enabled, title, body, icon, tag, silent_when_visible)| PushConfig {
                enabled,
                notification: PushNotification { title, body, icon, tag, silent_when_visible },
            },
        );
        let bounds = (any::<[u32; 4]>(), any::<[u64; 5]>());
        (auth, graphql, push, strategy.clone(), strategy, bounds).prop_map(
            |(auth, graphql, push, default, graphql_strategy, (small, large))| Config {
                features: Features { auth, graphql, push },
                strategy: StrategyConfig { default, graphql: graphql_strategy },
                cache: CacheBounds {
                    max_entries: small[0],
                    max_age_seconds: large[0],
                    max_body_bytes: large[1],
                    stale_if_error_seconds: large[2],
                },
                queue: QueueBounds {
                    max_items: small[1],
                    max_attempts: small[2],
                    backoff_base_ms: large[3],
                    backoff_max_ms: large[4],
                },
            },
        )
    }

    #[test]
    fn the_default_config_is_written_as_the_derive_writes_it() {
        let config = Config::default();
        assert_eq!(config.to_json(), serde_json::to_string(&config).unwrap());
        assert_eq!(Config::from_json_str(&config.to_json()), Ok(config));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The oracle: serde's derive writes every config to the same text, key for key.
        #[test]
        fn every_config_is_written_as_the_derive_writes_it(config in config()) {
            prop_assert_eq!(config.to_json(), serde_json::to_string(&config).unwrap());
        }

        /// `Config`'s `eq`, written by hand (one function in a page's wasm, not one copy per caller), says
        /// what the derive's writing says: two configs are equal when every key is written the same. The
        /// second config is the first with some of its parts taken from another, so that both answers
        /// come up.
        #[test]
        fn configs_are_equal_exactly_when_written_the_same(
            first in config(),
            other in config(),
            taken in proptest::collection::vec(any::<bool>(), 4),
        ) {
            let mut second = first.clone();
            if taken[0] { second.features = other.features.clone(); }
            if taken[1] { second.strategy = other.strategy; }
            if taken[2] { second.cache = other.cache; }
            if taken[3] { second.queue = other.queue; }
            let written_the_same = serde_json::to_string(&first).unwrap() == serde_json::to_string(&second).unwrap();
            prop_assert_eq!(first == second, written_the_same);
        }

        /// What a page reads ([`Config::from_written_json`]) is what was written, compact or pretty.
        #[test]
        fn every_config_written_reads_back_equal(config in config()) {
            prop_assert_eq!(Config::from_written_json(&config.to_json()), Ok(config.clone()));
            prop_assert_eq!(Config::from_written_json(&config.to_json_pretty()), Ok(config));
        }
    }
}
