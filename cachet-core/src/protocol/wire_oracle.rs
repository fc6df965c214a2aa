//! The hand-written decoders of `wire` against serde's derive, the oracle: every message round-trips,
//! and on arbitrary objects (known and unknown types, every field missing, `null`, or of another type)
//! both accept the same texts, decode them to the same message, and name the same unknown types. The
//! hand-written encoders (of every message cachet sends, each way) write the derive's exact text for
//! every message decoded.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Value};

use super::handover::{HandedEntry, HandedRequest, HandedResponse};
use super::push::PushMessage;
use super::DeadLetterReason;
use super::{
    decode_by_serde, decode_message, encode_by_serde, encode_message, AgentRequest, AgentResponse,
    AuthChangeKind, Message, PageReply, PageToSw, ProtocolError, SnapshotQuery, SwEvent, SwToPage,
};

fn entry() -> HandedEntry {
    HandedEntry {
        request: HandedRequest {
            method: "POST".into(),
            url: "https://app.test/graphql".into(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: Some(r#"{"query":"{ a }"}"#.into()),
            authorization: None,
        },
        response: HandedResponse { status: 200, headers: vec![], body: "{}".into() },
        stored_at: 7,
    }
}

fn every_message() -> Vec<PageToSw> {
    vec![
        PageToSw::ClearAll { request_id: 1 },
        PageToSw::ConnectivityChanged { online: false },
        PageToSw::SetIdentity { request_id: 2, partition: None, authorization: None },
        PageToSw::SetIdentity {
            request_id: 2,
            partition: Some("u1".into()),
            authorization: Some("ab".into()),
        },
        PageToSw::ConfigRequest { request_id: u64::MAX, config: None },
        PageToSw::ConfigRequest { request_id: 1, config: Some("{\"cache\":{}}".into()) },
        PageToSw::SnapshotRequest { request_id: 3, query: SnapshotQuery::default() },
        PageToSw::SnapshotRequest {
            request_id: 3,
            query: SnapshotQuery {
                after: Some("u".into()),
                limit: 5,
                tag: Some("t".into()),
                ..Default::default()
            },
        },
        PageToSw::RetryDeadLetters { request_id: 4, ids: vec![1, 2] },
        PageToSw::DiscardDeadLetters { request_id: 5, ids: vec![] },
        PageToSw::DropEntries { request_id: 6, urls: vec!["https://app.test/a".into()] },
        PageToSw::InvalidateTags { request_id: 7, tags: vec!["todos".into(), "todo:1".into()] },
        PageToSw::ReplayQueue,
        PageToSw::QueueAlarmRequest { request_id: 9, online: false },
        PageToSw::QueueAlarmRequest { request_id: 9, online: true },
        PageToSw::HandOver { request_id: 8, entries: vec![entry(), entry()] },
    ]
}

fn every_event() -> Vec<SwEvent> {
    vec![
        SwEvent::Activated { build: "b1".into() },
        SwEvent::CacheUpdated { url: "https://app.test/a".into() },
        SwEvent::CacheInvalidated { tags: vec!["todos".into()] },
        SwEvent::AuthStateChange { kind: AuthChangeKind::Login },
        SwEvent::AuthStateChange { kind: AuthChangeKind::Logout },
        SwEvent::AuthStateChange { kind: AuthChangeKind::Refresh },
        SwEvent::AuthStateChange { kind: AuthChangeKind::Clear },
        SwEvent::ClearAllDone { request_id: 3 },
        SwEvent::MutationQueued { id: 1, operation_name: Some("AddTodo".into()) },
        SwEvent::MutationQueued { id: 1, operation_name: None },
        SwEvent::MutationReplayed { id: 2, invalidated: vec![] },
        SwEvent::MutationFailed { id: 3, attempts: u32::MAX, retry_at: 99 },
        SwEvent::MutationDeadLettered { id: 4, reason: DeadLetterReason::Rejected { status: 422 } },
        SwEvent::MutationDeadLettered { id: 4, reason: DeadLetterReason::TooManyAttempts },
        SwEvent::MutationDeadLettered { id: 4, reason: DeadLetterReason::Unauthorized },
    ]
}

fn round_trips<M: Message + PartialEq + std::fmt::Debug + Clone>(messages: Vec<M>) {
    for message in messages {
        let wire = encode_message(&message);
        assert_eq!(wire, encode_by_serde(&message), "written as the derive writes it");
        assert_eq!(decode_message::<M>(&wire), Ok(message.clone()), "{wire}");
        assert_eq!(decode_by_serde::<M>(&wire), Ok(message), "{wire}");
    }
}

#[test]
fn every_event_answer_and_agent_message_round_trips_through_both_decoders() {
    let events = every_event();
    round_trips(events.clone());
    let answers = vec![
        SwToPage::RefreshRequest { id: 1, failed: None },
        SwToPage::RefreshRequest { id: 1, failed: Some("ab".into()) },
        SwToPage::Snapshot { request_id: 2, snapshot: json!({"entries": [1, {"a": null}]}).into() },
        SwToPage::Config { request_id: 3, config: "{}".into(), build: String::new(), differences: vec![] },
        SwToPage::Config {
            request_id: 3,
            config: "{}".into(),
            build: "b".into(),
            differences: vec!["cache.maxEntries: 200 here, 50 there".into()],
        },
        SwToPage::QueueAlarm { request_id: 6, check_at: None },
        SwToPage::QueueAlarm { request_id: 6, check_at: Some(u64::MAX) },
        SwToPage::Ack { request_id: 4 },
        SwToPage::Nack { request_id: 5, message: "no".into() },
    ];
    for answer in &answers {
        // serde's tag is the oracle (the hand-written encoder writes `kind` as the type).
        let tag = serde_json::to_value(answer).map(|value| value["type"].clone()).unwrap_or_default();
        assert_eq!(tag, json!(answer.kind()), "the kind is the wire type");
    }
    round_trips(answers);
    round_trips(vec![
        AgentRequest::Subscribe { subscription: 1, tags: vec!["t".into()] },
        AgentRequest::Unsubscribe { subscription: 1 },
        AgentRequest::AuthStateRequest,
        AgentRequest::ReportAuth { authenticated: true },
        AgentRequest::WatchSwEvents,
    ]);
    let mut responses = vec![
        AgentResponse::AuthState { online: true, authenticated: false },
        AgentResponse::Invalidated { subscriptions: vec![1, 2], tags: vec!["t".into()] },
        AgentResponse::OnlineChanged { online: false },
        AgentResponse::CacheUpdated { url: "https://app.test/a".into() },
        AgentResponse::Subscribed { subscription: 9 },
    ];
    responses.extend(events.into_iter().map(|event| AgentResponse::SwEvent { event }));
    round_trips(responses);
}

#[test]
fn every_page_message_and_reply_round_trips_through_both_decoders() {
    round_trips(every_message());
    round_trips(vec![
        PageReply::RefreshReply { id: 1, ok: true, authorization: Some("Bearer x".into()) },
        PageReply::RefreshReply { id: 2, ok: false, authorization: None },
    ]);
    // A hand-over entry with every optional member present, and with none.
    let mut full = entry();
    full.request.authorization = Some("ab".into());
    full.response.headers = vec![("cache-tag".into(), "todos, \"q\"".into()), ("x".into(), String::new())];
    let mut bare = entry();
    bare.request.body = None;
    bare.request.headers = vec![];
    round_trips(vec![PageToSw::HandOver { request_id: 9, entries: vec![full, bare] }]);
    let all = SnapshotQuery {
        after: Some("u".into()),
        limit: 1,
        tag: Some("t".into()),
        operation: Some("Get".into()),
        partition: Some("shared".into()),
    };
    round_trips(vec![PageToSw::SnapshotRequest { request_id: 1, query: all }]);
}

/// A refetch document written as a JSON array (serde's struct-as-sequence, which the derive reads) is
/// refused by the hand decoder: one of the two places the two differ, on purpose.
#[test]
fn a_push_document_as_an_array_is_refused() {
    let wire = r#"{"v":1,"type":"invalidate","tags":[],"refetch":[["query A { a }"]]}"#;
    assert!(decode_by_serde::<PushMessage>(wire).is_ok());
    assert!(matches!(decode_message::<PushMessage>(wire), Err(ProtocolError::Malformed(_))));
}

/// A snapshot query written as a JSON array is refused by the hand decoder (the derive reads `[]` as
/// every default): the same deliberate difference as a push document's (found by the fuzz below).
#[test]
fn a_snapshot_query_as_an_array_is_refused() {
    let wire = r#"{"v":1,"type":"snapshot-request","requestId":0,"query":[]}"#;
    assert!(decode_by_serde::<PageToSw>(wire).is_ok());
    assert!(matches!(decode_message::<PageToSw>(wire), Err(ProtocolError::Malformed(_))));
}

#[test]
fn envelope_faults_are_named_as_before() {
    for decoded in [decode_message::<PageToSw>("[1"), decode_message::<PageToSw>("[]")] {
        assert!(matches!(decoded, Err(ProtocolError::Malformed(_))), "{decoded:?}");
    }
    assert_eq!(
        decode_message::<PageToSw>(r#"{"v":2,"type":"clear-all","requestId":1}"#),
        Err(ProtocolError::UnsupportedVersion { got: 2 })
    );
    assert_eq!(
        decode_message::<PageToSw>(r#"{"v":1,"type":"from-the-future"}"#),
        Err(ProtocolError::UnknownType("from-the-future".into()))
    );
    let missing = decode_message::<PageToSw>(r#"{"v":1,"type":"clear-all"}"#).unwrap_err().to_string();
    assert!(missing.contains("clear-all") && missing.contains("requestId"), "{missing}");
}

/// Every `type` of the six enums, and one nobody knows.
const TYPES: [&str; 38] = [
    "invalidate",
    "clear-all",
    "connectivity-changed",
    "set-identity",
    "config-request",
    "snapshot-request",
    "retry-dead-letters",
    "discard-dead-letters",
    "drop-entries",
    "invalidate-tags",
    "replay-queue",
    "queue-alarm-request",
    "hand-over",
    "refresh-reply",
    "refresh-request",
    "snapshot",
    "config",
    "queue-alarm",
    "ack",
    "nack",
    "activated",
    "cache-updated",
    "cache-invalidated",
    "auth-state-change",
    "clear-all-done",
    "mutation-queued",
    "mutation-replayed",
    "mutation-failed",
    "mutation-dead-lettered",
    "subscribe",
    "unsubscribe",
    "auth-state-request",
    "report-auth",
    "watch-sw-events",
    "auth-state",
    "invalidated",
    "sw-event",
    "from-the-future",
];
/// Every field name of the six enums.
const FIELDS: [&str; 30] = [
    "refetch",
    "requestId",
    "online",
    "partition",
    "authorization",
    "query",
    "ids",
    "urls",
    "tags",
    "entries",
    "id",
    "ok",
    "failed",
    "snapshot",
    "config",
    "build",
    "message",
    "url",
    "kind",
    "operationName",
    "invalidated",
    "attempts",
    "retryAt",
    "reason",
    "subscription",
    "authenticated",
    "subscriptions",
    "event",
    "status",
    "checkAt",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0u64..5).prop_map(Value::from),
        Just(json!(u64::MAX)),
        (-3i64..0).prop_map(Value::from),
        Just(json!(1.5)),
        Just(json!(2.0)),
        "[a-z]{0,3}".prop_map(Value::from),
    ]
}

/// Any field value: scalars, arrays of them, and the nested shapes (valid or not) of `query` and
/// `entries`.
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => scalar(),
        2 => prop::collection::vec(scalar(), 0..3).prop_map(Value::from),
        1 => Just(json!({"limit": 5, "tag": "t"})),
        1 => Just(json!({"limit": -1})),
        1 => Just(json!({})),
        1 => Just(serde_json::to_value(vec![entry()]).unwrap()),
        1 => Just(json!([{"request": {"method": "GET"}}])),
        1 => prop::sample::select(&["login", "logout", "refresh", "clear", "other"][..]).prop_map(Value::from),
        1 => Just(json!({"kind": "rejected", "status": 422})),
        1 => Just(json!({"kind": "rejected", "status": 70000})),
        1 => Just(json!({"kind": "too-many-attempts"})),
        1 => Just(json!({"kind": "unknown"})),
        1 => Just(json!(u64::from(u32::MAX) + 1)),
        1 => Just(json!({"type": "cache-invalidated", "tags": ["t"]})),
        1 => Just(json!({"type": "mutation-failed", "id": 1, "attempts": 2})),
        1 => Just(json!({"type": "from-the-future"})),
        1 => Just(json!([{"query": "q"}])),
        1 => Just(json!([{"query": "q", "variables": {"x": 1}, "operationName": "Q", "endpointIndex": 1}])),
        1 => Just(json!([{"query": "q", "variables": null, "operationName": null}])),
        1 => Just(json!([{"query": 1}])),
        1 => Just(json!([{"query": "q", "variables": []}])),
        1 => Just(json!([{"query": "q", "endpointIndex": -1}])),
        1 => Just(json!([{"query": "q", "endpointIndex": null}])),
        1 => Just(json!([{"variables": {}}])),
    ]
}

/// Both decoders of `M` on `wire`: the same accepted, the same decoded; an unknown `type` named alike.
fn agree<M: Message + PartialEq + std::fmt::Debug>(wire: &str, kind: &str) -> Result<(), TestCaseError> {
    let (ours, oracle) = (decode_message::<M>(wire), decode_by_serde::<M>(wire));
    prop_assert_eq!(ours.is_ok(), oracle.is_ok(), "{} ours {:?} serde {:?}", wire, ours, oracle);
    if let (Ok(ours), Ok(oracle)) = (&ours, &oracle) {
        prop_assert_eq!(ours, oracle);
        prop_assert_eq!(ours.to_wire(), encode_by_serde(ours), "written as the derive writes it");
    }
    // serde calls a bad nested tag ("unknown variant") an unknown type too; ours, a malformed field.
    if kind == "from-the-future" {
        prop_assert_eq!(ours, Err(ProtocolError::UnknownType(kind.to_owned())));
    }
    Ok(())
}

/// A hand-over entry's field (`request` and `response` objects of any of their fields, any values).
fn entry_part() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    const NAMES: [&str; 7] = ["method", "url", "headers", "body", "authorization", "status", "storedAt"];
    let value = prop_oneof![
        3 => scalar(),
        1 => Just(json!([["content-type", "text/plain"]])),
        1 => Just(json!([["a", "b", "c"]])),
        1 => Just(json!([["a", 1]])),
        1 => Just(json!([[]])),
        1 => Just(json!([])),
        1 => Just(json!(200)),
        1 => Just(json!(70000)),
        1 => Just(json!("https://app.test/a")),
    ];
    prop::collection::vec((prop::sample::select(&NAMES[..]), value), 0..6)
        .prop_map(|fields| fields.into_iter().map(|(name, value)| (name.to_owned(), value)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The hand-over's entries, field by field: what their derive reads, the hand decoder reads alike.
    #[test]
    fn hand_over_entries_decode_as_their_derive_does(
        entries in prop::collection::vec(
            (entry_part(), entry_part(), prop::option::of(scalar()), any::<bool>()),
            0..3,
        ),
    ) {
        let entries: Vec<Value> = entries
            .into_iter()
            .map(|(request, response, stored_at, valid)| {
                // Half of them start from a valid entry, so the derive accepts some.
                let mut entry = if valid { serde_json::to_value(entry()).unwrap() } else { json!({}) };
                let Value::Object(entry_fields) = &mut entry else { return entry };
                let mut merge = |name: &str, fields: serde_json::Map<String, Value>| {
                    let part = entry_fields.entry(name).or_insert_with(|| json!({}));
                    if let Value::Object(part) = part {
                        part.extend(fields);
                    }
                };
                merge("request", request);
                merge("response", response);
                if let Some(stored_at) = stored_at {
                    entry_fields.insert("storedAt".into(), stored_at);
                }
                entry
            })
            .collect();
        let wire = json!({"v": 1, "type": "hand-over", "requestId": 1, "entries": entries}).to_string();
        agree::<PageToSw>(&wire, "hand-over")?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6000, ..ProptestConfig::default() })]

    #[test]
    fn the_hand_decoders_accept_and_decode_what_serde_does(
        kind in prop::sample::select(&TYPES[..]),
        fields in prop::collection::vec((prop::sample::select(&FIELDS[..]), field_value()), 0..7),
    ) {
        let mut object = serde_json::Map::new();
        object.insert("v".into(), json!(1));
        object.insert("type".into(), json!(kind));
        for (name, value) in fields {
            object.insert(name.into(), value);
        }
        // A snapshot query written as a JSON array (serde's struct-as-sequence, which the derive reads:
        // `[]` is every default) is refused on purpose, as a push document is (the tests below).
        let query_as_array = kind == "snapshot-request" && object.get("query").is_some_and(Value::is_array);
        let wire = Value::Object(object).to_string();
        if query_as_array {
            prop_assert!(decode_message::<PageToSw>(&wire).is_err(), "{}", wire);
        } else {
            agree::<PageToSw>(&wire, kind)?;
        }
        agree::<PageReply>(&wire, kind)?;
        agree::<SwToPage>(&wire, kind)?;
        agree::<SwEvent>(&wire, kind)?;
        agree::<AgentRequest>(&wire, kind)?;
        agree::<AgentResponse>(&wire, kind)?;
        agree::<PushMessage>(&wire, kind)?;
    }
}

/// A refetch document: each member absent, valid, `null` or of another type.
fn refetch_document() -> impl Strategy<Value = Value> {
    let member = |valid: Value| {
        prop_oneof![
            Just(None),
            Just(Some(valid)),
            Just(Some(Value::Null)),
            Just(Some(json!(true))),
            Just(Some(json!(-1)))
        ]
    };
    (member(json!("query A { a }")), member(json!({"x": 1})), member(json!("A")), member(json!(2))).prop_map(
        |(query, variables, operation_name, endpoint_index)| {
            let mut object = serde_json::Map::new();
            for (name, value) in [
                ("query", query),
                ("variables", variables),
                ("operationName", operation_name),
                ("endpointIndex", endpoint_index),
            ] {
                if let Some(value) = value {
                    object.insert(name.into(), value);
                }
            }
            Value::Object(object)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// A server's push, decoded by hand as its derive decodes it.
    #[test]
    fn push_messages_decode_as_their_derive_does(
        tags in prop::option::of(prop_oneof![Just(json!(["a", "b"])), Just(json!([])), Just(json!("a")), Just(json!([1]))]),
        refetch in prop::option::of(prop_oneof![
            4 => prop::collection::vec(refetch_document(), 0..3).prop_map(Value::from),
            1 => Just(Value::Null),
            1 => Just(json!({"query": "q"})),
        ]),
    ) {
        let mut object = serde_json::Map::new();
        object.insert("v".into(), json!(1));
        object.insert("type".into(), json!("invalidate"));
        if let Some(tags) = tags {
            object.insert("tags".into(), tags);
        }
        if let Some(refetch) = refetch {
            object.insert("refetch".into(), refetch);
        }
        agree::<PushMessage>(&Value::Object(object).to_string(), "invalidate")?;
    }
}

/// A snapshot of every shape: each list empty or not, each option present or not.
fn snapshot() -> impl Strategy<Value = super::StateSnapshot> {
    use super::snapshot::{
        DeadLetterView, EntryPage, EntryView, IdentityView, NotStoredView, QueueView, QueuedView, TagCount,
    };
    let text = || "[a-z\"é\u{1}]{0,4}";
    let entry = (text(), prop::option::of(text()), prop::collection::vec(text(), 0..3), any::<u64>())
        .prop_map(|(url, variables, tags, size)| EntryView {
            url,
            cache: "cachet-v1".into(),
            partition: "shared".into(),
            request: "Get".into(),
            variables,
            tags,
            size,
            stored_at: 1,
            used_at: 2,
            strategy: Some("cache-first".into()),
        });
    let reason = prop_oneof![
        any::<u16>().prop_map(|status| DeadLetterReason::Rejected { status }),
        Just(DeadLetterReason::TooManyAttempts),
        Just(DeadLetterReason::Unauthorized),
    ];
    let letter = (any::<u64>(), prop::option::of(text()), any::<u32>(), reason).prop_map(
        |(id, variables, attempts, reason)| DeadLetterView {
            id,
            operation: "Add".into(),
            variables,
            attempts,
            reason,
            at: 3,
        },
    );
    let queued = (any::<u64>(), prop::option::of(text())).prop_map(|(id, variables)| QueuedView {
        id,
        operation: "Add".into(),
        variables,
        attempts: 1,
        enqueued_at: 2,
        next_attempt_at: 3,
    });
    (
        (any::<bool>(), prop::option::of((text(), any::<u32>()))),
        (prop::collection::vec(entry, 0..3), prop::option::of(text()), any::<u32>()),
        prop::collection::vec((text(), any::<u32>()), 0..3),
        (
            prop::collection::vec(queued, 0..3),
            prop::option::of(any::<u64>()),
            prop::collection::vec(letter, 0..3),
        ),
        (prop::collection::vec(text(), 0..3), prop::collection::vec(text(), 0..2)),
    )
        .prop_map(
            |(
                (online, identity),
                (items, next, scanned),
                tags,
                (pending, in_flight, dead_letters),
                (problems, pushes),
            )| {
                super::StateSnapshot {
                    build: "b".into(),
                    config: "{}".into(),
                    online,
                    identity: identity.map(|(partition, vouched)| IdentityView { partition, vouched }),
                    entries: EntryPage { items, next, scanned },
                    tags: tags.into_iter().map(|(tag, entries)| TagCount { tag, entries }).collect(),
                    queue: QueueView { online, pending, in_flight, dead_letters },
                    problems,
                    not_stored: vec![NotStoredView {
                        url: "u".into(),
                        request: "r".into(),
                        reason: "too-large".into(),
                        why: "w".into(),
                        at: 4,
                    }],
                    ignored_pushes: pushes,
                }
            },
        )
}

/// `value` with the member at the end of `path` (indexes into each level's members or items, wrapped)
/// removed, or its value replaced.
fn edit(value: &mut Value, path: &[usize], replacement: Option<Value>) {
    match (value, path) {
        (Value::Object(map), [at, rest @ ..]) if !map.is_empty() => {
            let key = map.keys().nth(at % map.len()).cloned().unwrap();
            if rest.is_empty() {
                match replacement {
                    Some(replacement) => {
                        map.insert(key, replacement);
                    }
                    None => {
                        map.remove(&key);
                    }
                }
            } else {
                edit(map.get_mut(&key).unwrap(), rest, replacement);
            }
        }
        (Value::Array(items), [at, rest @ ..]) if !items.is_empty() => {
            let index = at % items.len();
            match (rest.is_empty(), replacement) {
                (true, Some(replacement)) => items[index] = replacement,
                (true, None) => {
                    items.remove(index);
                }
                (false, replacement) => edit(&mut items[index], rest, replacement),
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The snapshot's hand reader against its derive: every snapshot reads back equal, and with members
    /// removed or replaced at any depth both accept the same texts and read the same snapshot.
    #[test]
    fn snapshots_decode_as_their_derive_does(
        snapshot in snapshot(),
        edits in prop::collection::vec(
            (prop::collection::vec(any::<usize>(), 1..5), prop::option::of(scalar())),
            0..3,
        ),
    ) {
        let mut value: Value = serde_json::from_str(&snapshot.to_json()).unwrap();
        if edits.is_empty() {
            prop_assert_eq!(super::StateSnapshot::from_value(snapshot.to_value()), Ok(snapshot));
        }
        for (path, replacement) in edits {
            edit(&mut value, &path, replacement);
        }
        let ours_value = crate::json::from_str(&value.to_string()).unwrap();
        let ours = super::StateSnapshot::from_value(ours_value.clone());
        let oracle = super::StateSnapshot::from_value_by_serde(&ours_value);
        prop_assert_eq!(ours.is_ok(), oracle.is_ok(), "{} ours {:?} serde {:?}", value, ours, oracle);
        if let (Ok(ours), Ok(oracle)) = (ours, oracle) {
            prop_assert_eq!(ours, oracle);
        }
    }
}
