//! `cachet.config.json`: defaults, round trips, errors that name the JSON path, the auth-failure rule.

use cachet_core::config::{AuthFailureRule, AuthType, Config, ConfigError, HeaderRule, JsonFieldRule};
use cachet_core::strategy::Strategy;
use serde_json::json;

#[test]
fn an_empty_file_is_the_default_config_with_both_features_off() {
    let config = Config::from_json_str("{}").unwrap();
    assert_eq!(config, Config::default());
    assert!(!config.features.auth.enabled);
    assert!(!config.features.graphql.enabled);
    assert_eq!(config.features.auth.kind, AuthType::Cookie);
    assert_eq!(config.features.auth.route_paths, ["/api/login", "/api/logout", "/api/refresh", "/api/me"]);
    assert_eq!(config.features.auth.failure.statuses, [401]);
    assert_eq!(config.features.graphql.endpoints, ["/graphql"]);
    assert_eq!(
        (config.strategy.default, config.strategy.graphql),
        (Strategy::NetworkFirst, Strategy::CacheFirst)
    );
    assert_eq!(
        (config.cache.max_entries, config.cache.max_age_seconds, config.cache.max_body_bytes),
        (200, 86_400, 1_048_576)
    );
    let queue = config.queue;
    assert_eq!(
        (queue.max_items, queue.max_attempts, queue.backoff_base_ms, queue.backoff_max_ms),
        (100, 5, 1_000, 60_000)
    );
    // `cachet add auth` writes only `enabled: true`: cookie auth.
    let config = Config::from_json_str(r#"{"features": {"auth": {"enabled": true}}}"#).unwrap();
    assert_eq!(config.features.auth.kind, AuthType::Cookie);
    assert!(config.features.auth.kind.with_credentials());
    assert!(!AuthType::Bearer.with_credentials());
    assert!(AuthType::Bearer.refreshes() && AuthType::Custom.refreshes() && !AuthType::Cookie.refreshes());
}

#[test]
fn configs_round_trip_through_pretty_json() {
    let full = r#"{
        "$schema": "./cachet.schema.json",
        "features": {
            "auth": {
                "enabled": true, "type": "bearer", "routePaths": ["/auth/login", "/auth/logout/"],
                "failure": {
                    "statuses": [401, 419],
                    "header": {"name": "X-Auth-Expired", "value": "1"},
                    "jsonField": {"path": "errors.*.extensions.code", "value": "UNAUTHENTICATED"}
                }
            },
            "graphql": {"enabled": true, "endpoints": ["/graphql", "/admin/graphql"],
                "persistedQueries": {"endpoints": ["/admin/graphql"], "getMaxUrlLength": 2048}}
        },
        "strategy": {"default": "stale-while-revalidate", "graphql": "network-first"},
        "cache": {"maxEntries": 10, "maxAgeSeconds": 60, "maxBodyBytes": 1024, "staleIfErrorSeconds": 300},
        "queue": {"maxItems": 3, "maxAttempts": 2, "backoffBaseMs": 10, "backoffMaxMs": 10}
    }"#;
    for text in [
        "{}",
        r#"{"features": {"auth": {"enabled": true, "type": "custom", "failure": {"statuses": []}}}}"#,
        full,
    ] {
        let config = Config::from_json_str(text).unwrap();
        let pretty = config.to_json_pretty();
        assert_eq!(Config::from_json_str(&pretty), Ok(config.clone()), "{pretty}");
        let via_serde: Config = serde_json::from_str(&pretty).unwrap();
        assert_eq!(via_serde, config);
    }
    let config = Config::from_json_str(full).unwrap();
    assert_eq!(
        config.features.auth.failure.header,
        Some(HeaderRule { name: "X-Auth-Expired".into(), value: Some("1".into()) })
    );
    let pretty: serde_json::Value = serde_json::from_str(&Config::default().to_json_pretty()).unwrap();
    assert_eq!(
        pretty["features"]["auth"]["routePaths"],
        json!(["/api/login", "/api/logout", "/api/refresh", "/api/me"])
    );
    assert_eq!(pretty["features"]["auth"]["type"], json!("cookie"));
    assert_eq!(pretty["queue"]["backoffMaxMs"], json!(60_000));
}

#[test]
fn bad_files_get_errors_naming_the_json_path() {
    let table: &[(&str, &str)] = &[
        (
            r#"{"features": {"auth": {"type": "jwt"}}}"#,
            r#"features.auth.type: expected one of cookie, bearer, custom, got "jwt""#,
        ),
        (
            r#"{"features": {"auth": {"enabled": "yes"}}}"#,
            r#"features.auth.enabled: expected true or false, got "yes""#,
        ),
        (
            r#"{"features": {"auth": {"routepaths": []}}}"#,
            "features.auth.routepaths: unknown key, expected one of enabled, type, routePaths, failure",
        ),
        (r#"{"feature": {}}"#, "feature: unknown key, expected one of features, strategy, cache, queue"),
        (
            r#"{"features": {"auth": {"routePaths": ["/a", "api/me"]}}}"#,
            r#"features.auth.routePaths[1]: expected a URL path starting with / (no query, fragment or whitespace), got "api/me""#,
        ),
        (
            r#"{"features": {"auth": {"routePaths": ["/a", "/a"]}}}"#,
            r#"features.auth.routePaths[1]: duplicate entry "/a""#,
        ),
        (
            r#"{"features": {"auth": {"routePaths": "/a"}}}"#,
            r#"features.auth.routePaths: expected an array of strings, got "/a""#,
        ),
        (
            r#"{"features": {"graphql": {"endpoints": [1]}}}"#,
            "features.graphql.endpoints[0]: expected a string, got 1",
        ),
        (
            r#"{"features": {"graphql": {"endpoints": []}}}"#,
            "features.graphql.endpoints: expected at least one endpoint path, got []",
        ),
        (
            r#"{"features": {"graphql": {"endpoints": ["/graphql?x=1"]}}}"#,
            r#"features.graphql.endpoints[0]: expected a URL path starting with / (no query, fragment or whitespace), got "/graphql?x=1""#,
        ),
        (r#"{"features": {"graphql": true}}"#, "features.graphql: expected an object, got true"),
        (r#"[]"#, "(root): expected an object, got []"),
        (
            r#"{"strategy": {"default": "cache-last"}}"#,
            r#"strategy.default: expected one of cache-first, network-first, stale-while-revalidate, network-only, cache-only, cache-and-network, got "cache-last""#,
        ),
        (r#"{"cache": {"maxEntries": 0}}"#, "cache.maxEntries: expected an integer from 1 to 1000000, got 0"),
        (
            r#"{"cache": {"maxAgeSeconds": -5}}"#,
            "cache.maxAgeSeconds: expected an integer from 1 to 9007199254740991, got -5",
        ),
        (
            r#"{"cache": {"maxBodyBytes": 1.5}}"#,
            "cache.maxBodyBytes: expected an integer from 1 to 9007199254740991, got 1.5",
        ),
        (
            r#"{"features": {"graphql": {"persistedQueries": {"endpoints": ["/gql"]}}}}"#,
            "features.graphql.persistedQueries.endpoints[0]: expected one of features.graphql.endpoints (/graphql), got \"/gql\"",
        ),
        (
            r#"{"features": {"graphql": {"persistedQueries": {"getMaxUrlLength": 100000}}}}"#,
            "features.graphql.persistedQueries.getMaxUrlLength: expected an integer from 0 to 65536, got 100000",
        ),
        (
            r#"{"features": {"graphql": {"persistedQueries": {"get": true}}}}"#,
            "features.graphql.persistedQueries.get: unknown key, expected one of endpoints, getMaxUrlLength",
        ),
        (
            r#"{"cache": {"staleIfErrorSeconds": -1}}"#,
            "cache.staleIfErrorSeconds: expected an integer from 0 to 9007199254740991, got -1",
        ),
        (r#"{"queue": {"maxAttempts": 0}}"#, "queue.maxAttempts: expected an integer from 1 to 1000, got 0"),
        (
            r#"{"queue": {"backoffBaseMs": 500, "backoffMaxMs": 100}}"#,
            "queue.backoffMaxMs: expected at least queue.backoffBaseMs (500), got 100",
        ),
        (
            r#"{"features": {"auth": {"failure": {"statuses": [401, 99]}}}}"#,
            "features.auth.failure.statuses[1]: expected an integer from 100 to 599, got 99",
        ),
        (
            r#"{"features": {"auth": {"failure": {"header": {}}}}}"#,
            "features.auth.failure.header.name: required key is missing",
        ),
        (
            r#"{"features": {"auth": {"failure": {"header": {"name": "X Bad"}}}}}"#,
            r#"features.auth.failure.header.name: expected a non-empty name, got "X Bad""#,
        ),
        (
            r#"{"features": {"auth": {"failure": {"header": {"name": "x", "value": 1}}}}}"#,
            "features.auth.failure.header.value: expected a string, got 1",
        ),
        (
            r#"{"features": {"auth": {"failure": {"jsonField": {"value": 1}}}}}"#,
            "features.auth.failure.jsonField.path: required key is missing",
        ),
        (
            r#"{"features": {"auth": {"failure": {"jsonField": {"path": "a", "equals": 1}}}}}"#,
            "features.auth.failure.jsonField.equals: unknown key, expected one of path, value",
        ),
    ];
    for (text, message) in table {
        let error = Config::from_json_str(text).unwrap_err();
        assert_eq!(error.to_string(), *message, "config {text}");
        assert!(matches!(error, ConfigError::Invalid { .. }));
    }
    let long = format!(r#"{{"features": {{"auth": {{"type": "{}"}}}}}}"#, "x".repeat(100));
    assert!(Config::from_json_str(&long).unwrap_err().to_string().ends_with("xxx..."));
    let error = Config::from_json_str("{\n  \"features\": ,\n}").unwrap_err();
    assert!(matches!(error, ConfigError::Syntax { line: 2, column: 15, .. }), "{error:?}");
    assert!(error.to_string().starts_with("cachet.config.json is not valid JSON (line 2, column 15)"));
}

/// What a page reads is a config cachet wrote: the written reader reads every text the whole reader
/// accepts to the same config (missing keys take the same defaults), and refuses a hand edit the whole
/// reader refuses for its shape, naming the first key it broke.
#[test]
fn the_written_reader_reads_what_the_whole_reader_accepts_and_names_a_broken_key() {
    let accepted = [
        "{}",
        r#"{"features": {"auth": {"enabled": true}}}"#,
        r#"{"$schema": "./cachet.schema.json", "features": {"auth": {"enabled": true, "type": "bearer",
            "failure": {"statuses": [401, 419], "header": {"name": "X-Expired"},
            "jsonField": {"path": "errors.*.extensions.code", "value": "UNAUTHENTICATED"}}},
            "graphql": {"enabled": true, "endpoints": ["/graphql", "/admin/graphql"],
            "persistedQueries": {"endpoints": ["/admin/graphql"], "getMaxUrlLength": 2048}},
            "push": {"enabled": false, "notification": {"title": "T", "icon": "/i.png", "silentWhenVisible": true}}},
            "strategy": {"default": "stale-while-revalidate"}, "cache": {"staleIfErrorSeconds": 300},
            "queue": {"backoffBaseMs": 10, "backoffMaxMs": 10}}"#,
        include_str!("../../../examples/todo-app/cachet.config.json"),
        include_str!("../../../examples/quick-start/cachet.config.json"),
        include_str!("../../../bench/cachet.config.json"),
    ];
    for text in accepted {
        let config = Config::from_json_str(text).unwrap();
        assert_eq!(Config::from_written_json(text), Ok(config.clone()), "{text}");
        assert_eq!(Config::from_written_json(&config.to_json_pretty()), Ok(config));
    }
    let broken: &[(&str, &str)] = &[
        (r#"{"features": {"auth": {"type": "jwt"}}}"#, "features.auth.type"),
        (r#"{"features": {"auth": {"enabled": "yes", "type": "jwt"}}}"#, "features.auth.enabled"),
        (r#"{"features": {"auth": {"routepaths": []}}}"#, "features.auth.routepaths"),
        (r#"{"feature": {}}"#, "feature"),
        (r#"{"features": {"auth": {"routePaths": "/a"}}}"#, "features.auth.routePaths"),
        (r#"{"features": {"graphql": {"endpoints": [1]}}}"#, "features.graphql.endpoints"),
        (r#"{"features": {"graphql": true}}"#, "features.graphql"),
        ("[]", "(root)"),
        (r#"{"strategy": {"default": "cache-last"}}"#, "strategy.default"),
        (r#"{"cache": {"maxAgeSeconds": -5}}"#, "cache.maxAgeSeconds"),
        (r#"{"cache": {"maxBodyBytes": 1.5}}"#, "cache.maxBodyBytes"),
        (r#"{"cache": {"maxEntries": 4294967296}}"#, "cache.maxEntries"),
        (
            r#"{"features": {"graphql": {"persistedQueries": {"get": true}}}}"#,
            "features.graphql.persistedQueries.get",
        ),
        (
            r#"{"features": {"auth": {"failure": {"statuses": [401, 70000]}}}}"#,
            "features.auth.failure.statuses",
        ),
        (r#"{"features": {"auth": {"failure": {"header": {}}}}}"#, "features.auth.failure.header.name"),
        (
            r#"{"features": {"auth": {"failure": {"header": {"name": "x", "value": 1}}}}}"#,
            "features.auth.failure.header.value",
        ),
        (
            r#"{"features": {"auth": {"failure": {"jsonField": {"value": 1}}}}}"#,
            "features.auth.failure.jsonField.path",
        ),
        (
            r#"{"features": {"auth": {"failure": {"jsonField": {"path": "a", "equals": 1}}}}}"#,
            "features.auth.failure.jsonField.equals",
        ),
        (r#"{"features": {"push": {"notification": {"title": 7}}}}"#, "features.push.notification.title"),
        (r#"{"queue": {"maxItems": 3, "size": 1}}"#, "queue.size"),
    ];
    for (text, path) in broken {
        assert!(Config::from_json_str(text).is_err(), "the whole reader refuses {text}");
        let error = Config::from_written_json(text).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{path}: not as cachet writes it: this file was edited by hand; write cachet.config.json and run `cachet generate`, which names what is wrong"),
            "{text}"
        );
    }
    let error = Config::from_written_json("{\n  \"features\": ,\n}").unwrap_err();
    assert!(matches!(error, ConfigError::Syntax { line: 2, column: 15, .. }), "{error:?}");
    // The whole reader's rules (ranges, path shapes, cross-checks) were passed by what cachet wrote: the
    // written reader does not run them again.
    let ranged = Config::from_written_json(
        r#"{"cache": {"maxEntries": 0}, "queue": {"backoffBaseMs": 500, "backoffMaxMs": 100}}"#,
    )
    .unwrap();
    assert_eq!((ranged.cache.max_entries, ranged.queue.backoff_max_ms), (0, 100));
}

#[test]
fn persisted_queries_are_off_unless_an_endpoint_is_listed() {
    let off = Config::from_json_str(r#"{"features": {"graphql": {"enabled": true}}}"#).unwrap();
    assert_eq!(off.features.graphql.persisted(0), None);
    let on = Config::from_json_str(
        r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql", "/b"],
            "persistedQueries": {"endpoints": ["/b"], "getMaxUrlLength": 100}}}}"#,
    )
    .unwrap();
    assert_eq!(on.features.graphql.persisted(0), None);
    assert_eq!(on.features.graphql.persisted(1).map(|settings| settings.get_max_url_length), Some(100));
    assert_eq!(on.features.graphql.persisted(2), None);
}

#[test]
fn auth_routes_and_endpoints_match_paths() {
    let mut config = Config::default();
    assert!(!config.is_auth_route("/api/login"), "auth disabled: no bypass");
    config.features.auth.enabled = true;
    config.features.graphql.enabled = true;
    let table: &[(&str, bool)] = &[
        ("/api/login", true),
        ("/api/login?next=/", true),
        ("/api/me/avatar", true),
        ("/api/meeting", false),
        ("/api/logins", false),
        ("/api", false),
        ("/api/notes", false),
    ];
    for (path, expected) in table {
        assert_eq!(config.is_auth_route(path), *expected, "path {path}");
    }
    assert_eq!(config.graphql_endpoint_index("/graphql"), Some(0));
    assert_eq!(config.graphql_endpoint_index("/graphql?op=x"), Some(0));
    assert_eq!(config.graphql_endpoint_index("/graphql/"), None);
}

#[test]
fn the_auth_failure_rule_is_shared_by_sw_and_page() {
    let no_headers = |_: &str| None;
    let default = AuthFailureRule::default();
    assert!(default.is_failure(401, no_headers, None));
    assert!(!default.is_failure(403, no_headers, None));
    assert!(!default.needs_body());

    let rule = AuthFailureRule {
        statuses: vec![401, 419],
        header: Some(HeaderRule { name: "X-Auth-Expired".into(), value: Some("1".into()) }),
        json_field: Some(JsonFieldRule {
            path: "errors.*.extensions.code".into(),
            value: Some(json!("UNAUTHENTICATED").into()),
        }),
    };
    assert!(rule.needs_body());
    let header = |value: &'static str| move |name: &str| (name == "x-auth-expired").then(|| value.to_owned());
    let gql_error: cachet_core::json::Value =
        json!({"data": null, "errors": [{"message": "a"}, {"extensions": {"code": "UNAUTHENTICATED"}}]})
            .into();
    let other_error: cachet_core::json::Value =
        json!({"errors": [{"extensions": {"code": "FORBIDDEN"}}]}).into();
    assert!(rule.is_failure(419, no_headers, None));
    assert!(rule.is_failure(200, header(" 1 "), None));
    assert!(!rule.is_failure(200, header("0"), None));
    assert!(rule.is_failure(200, no_headers, Some(&gql_error)));
    assert!(!rule.is_failure(200, no_headers, Some(&other_error)));
    assert!(!rule.is_failure(200, no_headers, None));

    let paths: &[(&str, Option<serde_json::Value>, serde_json::Value, bool)] = &[
        ("/error/code", Some(json!("expired")), json!({"error": {"code": "expired"}}), true),
        ("/a~1b/0", Some(json!(1)), json!({"a/b": [1]}), true),
        ("error.code", None, json!({"error": {"code": "x"}}), true),
        ("error.code", None, json!({"error": {"code": null}}), false),
        ("items.1.ok", Some(json!(false)), json!({"items": [{"ok": true}, {"ok": false}]}), true),
        ("items.5.ok", Some(json!(false)), json!({"items": []}), false),
        ("*.auth", Some(json!(true)), json!({"x": {"auth": true}}), true),
        ("a.b", Some(json!(1)), json!("scalar"), false),
    ];
    for (path, value, body, expected) in paths {
        let rule = AuthFailureRule {
            statuses: vec![],
            header: None,
            json_field: Some(JsonFieldRule { path: (*path).into(), value: value.clone().map(Into::into) }),
        };
        let read = cachet_core::json::Value::from(body);
        assert_eq!(rule.is_failure(200, no_headers, Some(&read)), *expected, "path {path} body {body}");
    }
    let header_any = AuthFailureRule {
        statuses: vec![],
        header: Some(HeaderRule { name: "WWW-Authenticate".into(), value: None }),
        json_field: None,
    };
    assert!(header_any.is_failure(
        200,
        |name: &str| (name == "www-authenticate").then(|| "Bearer".to_owned()),
        None
    ));
}

#[test]
fn a_failure_check_sees_status_headers_and_body_the_same_way_on_both_sides() {
    use cachet_core::config::{rule_check, FailureCheck, FailureResponse};
    let rule = AuthFailureRule {
        statuses: vec![401],
        header: Some(HeaderRule { name: "X-Session".into(), value: Some("expired".into()) }),
        json_field: Some(JsonFieldRule { path: "/error".into(), value: Some(json!("auth").into()) }),
    };
    let headers = |name: &str| (name == "x-session").then(|| "expired".to_owned());
    let none = |_: &str| None;
    type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;
    let table: &[(u16, Lookup<'_>, &[u8], bool)] = &[
        (401, &none, b"", true),
        (200, &headers, b"", true),
        (200, &none, br#"{"error": "auth"}"#, true),
        (200, &none, br#"{"error": "other"}"#, false),
        (200, &none, b"not json", false),
        (403, &none, b"", false),
    ];
    for (status, lookup, body, expected) in table {
        let response = FailureResponse::new(*status, lookup, body);
        assert_eq!(rule_check(&rule, &response), *expected, "status {status} body {body:?}");
        assert_eq!(rule.check(&response), *expected);
    }
    let response = FailureResponse::new(200, &headers, b"");
    assert_eq!(response.header("X-SESSION").as_deref(), Some("expired"), "any case");
    assert_eq!(FailureResponse::new(200, &none, br#"{"a": 1}"#).json(), Some(json!({"a": 1}).into()));

    // An app's own check: a 403 with a JSON body naming an expired session, besides the rule.
    fn app_check(rule: &AuthFailureRule, response: &FailureResponse<'_>) -> bool {
        rule.check(response)
            || (response.status == 403 && response.json().is_some_and(|body| body["reason"] == "expired"))
    }
    let check: FailureCheck = app_check;
    assert!(check(
        &AuthFailureRule::default(),
        &FailureResponse::new(403, &none, br#"{"reason":"expired"}"#)
    ));
    assert!(!check(&AuthFailureRule::default(), &FailureResponse::new(403, &none, b"{}")));
}
