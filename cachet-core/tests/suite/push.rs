//! Server push (issue 21): the config that allows it, and what a push payload means, malformed ones
//! included (a fuzz-ish table: each is ignored with a reason, never a panic).

use cachet_core::config::{AuthType, Config, PushRefusal};
use cachet_core::protocol::push::{
    vapid_public_key, PushMessage, VapidKeyError, MAX_PUSH_BYTES, MAX_REFETCH,
};
use cachet_core::protocol::{encode_message, ProtocolError};
use cachet_core::push::{DocumentProblem, PushAction, PushError, Refetch};
use cachet_core::tags::{TagError, MAX_TAGS};

fn config(text: &str) -> Config {
    Config::from_json_str(text).unwrap()
}

/// Cookie auth, GraphQL and push on: what the example app runs.
fn cookie() -> Config {
    config(
        r#"{"features": {"auth": {"enabled": true}, "graphql": {"enabled": true, "endpoints": ["/graphql", "/admin/graphql"]},
                         "push": {"enabled": true}}}"#,
    )
}

/// What a refused payload's error must match.
type Check = Box<dyn Fn(&PushError) -> bool>;

fn decide(payload: &str) -> Result<PushAction, PushError> {
    PushAction::decide(Some(payload.as_bytes()), &cookie())
}

#[test]
fn push_is_off_by_default_and_allowed_only_with_cookie_auth_or_none() {
    let defaults = Config::default();
    assert!(!defaults.features.push.enabled);
    assert_eq!(defaults.features.push.notification.title, "Updated");
    assert_eq!(defaults.features.push.notification.tag, "cachet-push");
    assert!(!defaults.features.push.notification.silent_when_visible);
    let table: &[(&str, Result<(), PushRefusal>)] = &[
        (r#"{}"#, Err(PushRefusal::Off)),
        (r#"{"features": {"push": {"enabled": true}}}"#, Ok(())),
        (r#"{"features": {"auth": {"enabled": true}, "push": {"enabled": true}}}"#, Ok(())),
        (
            r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "push": {"enabled": true}}}"#,
            Err(PushRefusal::NeedsCookieAuth(AuthType::Bearer)),
        ),
        (
            r#"{"features": {"auth": {"enabled": true, "type": "custom"}, "push": {"enabled": true}}}"#,
            Err(PushRefusal::NeedsCookieAuth(AuthType::Custom)),
        ),
        // Bearer configured but auth off: no token anywhere, nothing to refuse.
        (
            r#"{"features": {"auth": {"enabled": false, "type": "bearer"}, "push": {"enabled": true}}}"#,
            Ok(()),
        ),
        (r#"{"features": {"auth": {"enabled": true, "type": "bearer"}}}"#, Err(PushRefusal::Off)),
    ];
    for (text, expected) in table {
        let config = config(text);
        assert_eq!(config.features.push.allowed(&config.features.auth), *expected, "{text}");
    }
    let why = PushRefusal::NeedsCookieAuth(AuthType::Bearer).to_string();
    assert!(why.starts_with("server push needs cookie auth (SPEC §5.8)"), "{why}");
    assert!(why.contains("features.auth.type is bearer"), "{why}");
}

#[test]
fn the_notification_config_round_trips_and_bad_values_name_their_key() {
    let text = r#"{"features": {"push": {"enabled": true, "notification": {"title": "Todos changed",
        "body": "", "icon": "/icon.png", "tag": "todos", "silentWhenVisible": true}}}}"#;
    let parsed = config(text);
    let notification = &parsed.features.push.notification;
    assert_eq!(
        (notification.title.as_str(), notification.body.as_str(), notification.icon.as_deref()),
        ("Todos changed", "", Some("/icon.png"))
    );
    assert!(notification.silent_when_visible);
    assert_eq!(Config::from_json_str(&parsed.to_json_pretty()), Ok(parsed.clone()));
    let table: &[(&str, &str)] = &[
        (r#"{"features": {"push": {"enabled": 1}}}"#, "features.push.enabled: expected true or false, got 1"),
        (
            r#"{"features": {"push": {"vapid": "x"}}}"#,
            "features.push.vapid: unknown key, expected one of enabled, notification",
        ),
        (
            r#"{"features": {"push": {"notification": {"title": ""}}}}"#,
            r#"features.push.notification.title: expected a string of 1 to 120 characters, got """#,
        ),
        (
            r#"{"features": {"push": {"notification": {"body": 5}}}}"#,
            "features.push.notification.body: expected a string of 0 to 500 characters, got 5",
        ),
        (
            r#"{"features": {"push": {"notification": {"icon": "icon.png"}}}}"#,
            r#"features.push.notification.icon: expected a URL path starting with / (no query, fragment or whitespace), got "icon.png""#,
        ),
        (
            r#"{"features": {"push": {"notification": {"silentWhenVisible": "no"}}}}"#,
            r#"features.push.notification.silentWhenVisible: expected true or false, got "no""#,
        ),
        (
            r#"{"features": {"push": {"notification": {"renotify": true}}}}"#,
            "features.push.notification.renotify: unknown key, expected one of title, body, icon, tag, silentWhenVisible",
        ),
        (r#"{"features": {"pusher": {}}}"#, "features.pusher: unknown key, expected one of auth, graphql, push"),
    ];
    for (text, message) in table {
        assert_eq!(Config::from_json_str(text).unwrap_err().to_string(), *message, "{text}");
    }
}

#[test]
fn a_push_names_tags_and_queries_to_refetch() {
    let wire = encode_message(&PushMessage::invalidate(&["todos", "summary"]));
    assert_eq!(wire, r#"{"v":1,"type":"invalidate","tags":["todos","summary"]}"#);
    assert_eq!(
        decide(&wire),
        Ok(PushAction { tags: vec!["todos".into(), "summary".into()], refetch: vec![] })
    );
    // Tags are normalised and deduplicated, unknown fields ignored.
    let action =
        decide(r#"{"v":1,"type":"invalidate","tags":[" Todos","todos","a:b"],"from":"cron"}"#).unwrap();
    assert_eq!(action.tags, ["todos", "a:b"]);
    // Documents to refetch become the POST body the worker sends, on the endpoint they name.
    let action = decide(
        r#"{"v":1,"type":"invalidate","tags":[],"refetch":[
            {"query":"query GetTodos { todos { id } }"},
            {"query":"query A { a } query B { b }","operationName":"B","variables":{"x":1},"endpointIndex":1}]}"#,
    )
    .unwrap();
    assert!(action.tags.is_empty());
    assert_eq!(
        action.refetch,
        [
            Refetch {
                endpoint: "/graphql".into(),
                body: r#"{"query":"query GetTodos { todos { id } }"}"#.into()
            },
            Refetch {
                endpoint: "/admin/graphql".into(),
                body: r#"{"query":"query A { a } query B { b }","variables":{"x":1},"operationName":"B"}"#
                    .into()
            },
        ]
    );
}

#[test]
fn malformed_payloads_are_refused_with_a_reason_never_a_panic() {
    let many_tags: Vec<String> = (0..=MAX_TAGS).map(|index| format!("t{index}")).collect();
    let many_tags = format!(r#"{{"v":1,"type":"invalidate","tags":{}}}"#, serde_json::json!(many_tags));
    let query = r#"{"query":"{ a }"}"#;
    let many_documents = format!(
        r#"{{"v":1,"type":"invalidate","tags":[],"refetch":[{}]}}"#,
        [query; MAX_REFETCH + 1].join(",")
    );
    let huge =
        format!(r#"{{"v":1,"type":"invalidate","tags":["a"],"pad":"{}"}}"#, "x".repeat(MAX_PUSH_BYTES));
    let table: Vec<(&str, Check)> = vec![
        (
            r#"{"v":2,"type":"invalidate","tags":["a"]}"#,
            Box::new(|e| *e == ProtocolError::UnsupportedVersion { got: 2 }.into()),
        ),
        (
            r#"{"type":"invalidate","tags":["a"]}"#,
            Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_)))),
        ),
        (
            r#"{"v":"1","type":"invalidate","tags":["a"]}"#,
            Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_)))),
        ),
        (
            r#"{"v":1,"type":"purge-everything"}"#,
            Box::new(|e| *e == ProtocolError::UnknownType("purge-everything".into()).into()),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":"todos"}"#,
            Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_)))),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":[1,2]}"#,
            Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_)))),
        ),
        (
            r#"{"v":1,"type":"invalidate"}"#,
            Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_)))),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":["a"],"refetch":{"query":"{ a }"}}"#,
            Box::new(|e| matches!(e, PushError::Protocol(_))),
        ),
        (r#"[1,2]"#, Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_))))),
        ("not json", Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_))))),
        ("", Box::new(|e| matches!(e, PushError::Protocol(ProtocolError::Malformed(_))))),
        (&many_tags, Box::new(|e| *e == PushError::TooManyTags { count: MAX_TAGS + 1 })),
        (&many_documents, Box::new(|e| *e == PushError::TooManyDocuments { count: MAX_REFETCH + 1 })),
        (&huge, Box::new(|e| matches!(e, PushError::TooLarge { len } if *len > MAX_PUSH_BYTES))),
        (
            r#"{"v":1,"type":"invalidate","tags":["ok",""]}"#,
            Box::new(|e| *e == TagError::Empty { index: 1 }.into()),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":["no spaces"]}"#,
            Box::new(|e| matches!(e, PushError::Tag(TagError::InvalidCharacter { .. }))),
        ),
        (r#"{"v":1,"type":"invalidate","tags":[]}"#, Box::new(|e| *e == PushError::Empty)),
        (
            r#"{"v":1,"type":"invalidate","tags":[],"refetch":[{"query":"mutation M { m }"}]}"#,
            Box::new(|e| matches!(e, PushError::Document { index: 0, problem: DocumentProblem::NotAQuery })),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":[],"refetch":[{"query":"{ a }","endpointIndex":2}]}"#,
            Box::new(|e| {
                matches!(
                    e,
                    PushError::Document {
                        index: 0,
                        problem: DocumentProblem::NoSuchEndpoint { index: 2, configured: 2 }
                    }
                ) && e.to_string().contains("endpointIndex 2")
            }),
        ),
        (
            r#"{"v":1,"type":"invalidate","tags":[],"refetch":[{"query":"{ a }"},{"query":"query {"}]}"#,
            Box::new(|e| matches!(e, PushError::Document { index: 1, problem: DocumentProblem::Graphql(_) })),
        ),
    ];
    for (payload, expected) in &table {
        let error = decide(payload).unwrap_err();
        assert!(expected(&error), "{payload:.80}: {error:?}");
        assert!(!error.to_string().is_empty());
    }
    assert_eq!(PushAction::decide(None, &cookie()), Err(PushError::NoPayload));
    assert_eq!(PushAction::decide(Some(&[0xff, 0xfe, b'{']), &cookie()), Err(PushError::NotText));
    // Random bytes of every length up to the limit: an error or an action, never a panic.
    let mut seed = 0x2545_f491_u32;
    for len in (0..MAX_PUSH_BYTES).step_by(97) {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                (seed & 0xff) as u8
            })
            .collect();
        let _ = PushAction::decide(Some(&bytes), &cookie());
    }
}

#[test]
fn the_config_decides_before_the_payload_is_read() {
    let wire = encode_message(&PushMessage::invalidate(&["todos"]));
    let bearer =
        config(r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "push": {"enabled": true}}}"#);
    assert_eq!(
        PushAction::decide(Some(wire.as_bytes()), &bearer),
        Err(PushRefusal::NeedsCookieAuth(AuthType::Bearer).into())
    );
    assert_eq!(PushAction::decide(Some(wire.as_bytes()), &Config::default()), Err(PushRefusal::Off.into()));
    // GraphQL off: tags still invalidate (nothing is cached under them), documents cannot be re-fetched.
    let no_graphql = config(r#"{"features": {"push": {"enabled": true}}}"#);
    assert!(PushAction::decide(Some(wire.as_bytes()), &no_graphql).is_ok());
    let refetch = r#"{"v":1,"type":"invalidate","tags":[],"refetch":[{"query":"{ a }"}]}"#;
    let error = PushAction::decide(Some(refetch.as_bytes()), &no_graphql).unwrap_err();
    assert!(error.to_string().contains("features.graphql is off"), "{error}");
}

#[test]
fn vapid_public_keys_are_65_byte_points() {
    // A real key (RFC 8292's example format): 65 bytes, 0x04 first.
    let key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    let bytes = vapid_public_key(key).unwrap();
    assert_eq!((bytes.len(), bytes[0]), (65, 4));
    assert_eq!(vapid_public_key("not a key!"), Err(VapidKeyError::NotBase64Url));
    assert_eq!(vapid_public_key("aGVsbG8"), Err(VapidKeyError::NotAPoint { bytes: 5 }));
    assert!(VapidKeyError::NotAPoint { bytes: 5 }.to_string().contains("got 5 bytes"));
}
