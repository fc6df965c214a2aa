//! Every protocol message round-trips, with its exact wire form; unknown and newer messages are typed errors.

use cachet_core::machines::queue::DeadLetterReason;
use cachet_core::protocol::{
    decode_message, decode_sw_event, encode_message, AgentRequest, AgentResponse, AuthChangeKind,
    IdentityView, Message, PageReply, PageToSw, ProtocolError, SnapshotQuery, StateSnapshot, SwEvent,
    SwToPage,
};
use std::fmt::Debug;

fn check<M: Message + Debug + PartialEq>(table: Vec<(M, &str)>) {
    for (message, wire) in table {
        assert_eq!(encode_message(&message), wire);
        assert_eq!(message.to_wire(), wire);
        // The name read off the wire text is the `type` a JSON parser reads.
        let value: serde_json::Value = serde_json::from_str(wire).unwrap();
        assert_eq!(Some(message.type_name().as_str()), value["type"].as_str(), "{wire}");
        assert_eq!(decode_message::<M>(wire), Ok(message), "{wire}");
    }
}

#[test]
fn sw_events() {
    check(vec![
        (SwEvent::Activated { build: "b1".into() }, r#"{"v":1,"type":"activated","build":"b1"}"#),
        (
            SwEvent::CacheUpdated { url: "/api/notes".into() },
            r#"{"v":1,"type":"cache-updated","url":"/api/notes"}"#,
        ),
        (
            SwEvent::CacheInvalidated { tags: vec!["note".into(), "notes".into()] },
            r#"{"v":1,"type":"cache-invalidated","tags":["note","notes"]}"#,
        ),
        (
            SwEvent::AuthStateChange { kind: AuthChangeKind::Login },
            r#"{"v":1,"type":"auth-state-change","kind":"login"}"#,
        ),
        (
            SwEvent::AuthStateChange { kind: AuthChangeKind::Logout },
            r#"{"v":1,"type":"auth-state-change","kind":"logout"}"#,
        ),
        (
            SwEvent::AuthStateChange { kind: AuthChangeKind::Refresh },
            r#"{"v":1,"type":"auth-state-change","kind":"refresh"}"#,
        ),
        (
            SwEvent::AuthStateChange { kind: AuthChangeKind::Clear },
            r#"{"v":1,"type":"auth-state-change","kind":"clear"}"#,
        ),
        (SwEvent::ClearAllDone { request_id: 3 }, r#"{"v":1,"type":"clear-all-done","requestId":3}"#),
        (
            SwEvent::MutationQueued { id: 1, operation_name: Some("CreateNote".into()) },
            r#"{"v":1,"type":"mutation-queued","id":1,"operationName":"CreateNote"}"#,
        ),
        (
            SwEvent::MutationQueued { id: 2, operation_name: None },
            r#"{"v":1,"type":"mutation-queued","id":2,"operationName":null}"#,
        ),
        (
            SwEvent::MutationReplayed { id: 1, invalidated: vec!["note".into()] },
            r#"{"v":1,"type":"mutation-replayed","id":1,"invalidated":["note"]}"#,
        ),
        (
            SwEvent::MutationFailed { id: 1, attempts: 2, retry_at: 1_700_000_000_000 },
            r#"{"v":1,"type":"mutation-failed","id":1,"attempts":2,"retryAt":1700000000000}"#,
        ),
        (
            SwEvent::MutationDeadLettered { id: 1, reason: DeadLetterReason::Rejected { status: 422 } },
            r#"{"v":1,"type":"mutation-dead-lettered","id":1,"reason":{"kind":"rejected","status":422}}"#,
        ),
        (
            SwEvent::MutationDeadLettered { id: 1, reason: DeadLetterReason::TooManyAttempts },
            r#"{"v":1,"type":"mutation-dead-lettered","id":1,"reason":{"kind":"too-many-attempts"}}"#,
        ),
        (
            SwEvent::MutationDeadLettered { id: 1, reason: DeadLetterReason::Unauthorized },
            r#"{"v":1,"type":"mutation-dead-lettered","id":1,"reason":{"kind":"unauthorized"}}"#,
        ),
    ]);
}

#[test]
fn a_snapshot_round_trips_through_its_json_and_garbage_is_named() {
    let snapshot =
        StateSnapshot { build: "b1".into(), problems: vec!["x".into()], ..StateSnapshot::default() };
    assert_eq!(StateSnapshot::from_value(snapshot.to_value()), Ok(snapshot));
    let error = StateSnapshot::from_value(serde_json::json!({"build": 3}).into()).unwrap_err().to_string();
    assert!(error.contains("snapshot: field `build`: expected a string"), "{error}");
}

/// The devtools' list of answers not stored keeps the newest `MAX_NOT_STORED`, oldest first, and a
/// snapshot of a worker without the list (an older build) still decodes, with an empty one.
#[test]
fn the_not_stored_list_keeps_the_newest_and_an_older_snapshot_still_decodes() {
    use cachet_core::protocol::snapshot::MAX_NOT_STORED;
    use cachet_core::protocol::NotStoredView;
    let view = |at: u64| NotStoredView {
        url: "https://a.test/graphql".into(),
        request: "GetTodos".into(),
        reason: "server-no-store".into(),
        why: "the server said Cache-Control: no-store".into(),
        at,
    };
    let mut list = Vec::new();
    for at in 0..(MAX_NOT_STORED as u64 + 5) {
        NotStoredView::remember(&mut list, view(at));
    }
    assert_eq!(list.len(), MAX_NOT_STORED);
    assert_eq!((list[0].at, list[MAX_NOT_STORED - 1].at), (5, MAX_NOT_STORED as u64 + 4));
    let snapshot = StateSnapshot { not_stored: list, ..StateSnapshot::default() };
    assert_eq!(StateSnapshot::from_value(snapshot.to_value()), Ok(snapshot));
    let mut older = StateSnapshot::default().to_value();
    older.as_object_mut().unwrap().remove("notStored");
    assert_eq!(StateSnapshot::from_value(older).unwrap().not_stored, Vec::new());
}

/// The list of ignored pushes keeps the newest `MAX_IGNORED_PUSHES` too, and is optional on the wire.
#[test]
fn the_ignored_pushes_keep_the_newest_and_an_older_snapshot_still_decodes() {
    use cachet_core::protocol::snapshot::MAX_IGNORED_PUSHES;
    let mut list = Vec::new();
    for at in 0..(MAX_IGNORED_PUSHES + 3) {
        StateSnapshot::push_ignored(&mut list, format!("push {at} is off"));
    }
    assert_eq!(list.len(), MAX_IGNORED_PUSHES);
    assert_eq!(
        (list[0].as_str(), list[MAX_IGNORED_PUSHES - 1].as_str()),
        ("push 3 is off", "push 22 is off")
    );
    let snapshot = StateSnapshot { ignored_pushes: list, ..StateSnapshot::default() };
    let value = snapshot.to_value();
    assert_eq!(value["ignoredPushes"][0], "push 3 is off");
    assert_eq!(StateSnapshot::from_value(value), Ok(snapshot));
    let mut older = StateSnapshot::default().to_value();
    older.as_object_mut().unwrap().remove("ignoredPushes");
    assert_eq!(StateSnapshot::from_value(older).unwrap().ignored_pushes, Vec::<String>::new());
}

#[test]
fn page_and_sw_messages() {
    let snapshot = StateSnapshot {
        build: "b1".into(),
        online: true,
        identity: Some(IdentityView { partition: "06be370dc282def6".into(), vouched: 1 }),
        ..StateSnapshot::default()
    };
    check(vec![
        (PageToSw::ClearAll { request_id: 1 }, r#"{"v":1,"type":"clear-all","requestId":1}"#),
        (
            PageToSw::ConnectivityChanged { online: false },
            r#"{"v":1,"type":"connectivity-changed","online":false}"#,
        ),
        (
            PageToSw::SetIdentity { request_id: 4, partition: Some("ab12".into()), authorization: None },
            r#"{"v":1,"type":"set-identity","requestId":4,"partition":"ab12"}"#,
        ),
        (
            PageToSw::SetIdentity {
                request_id: 6,
                partition: Some("ab12".into()),
                authorization: Some("0123456789abcdef".into()),
            },
            r#"{"v":1,"type":"set-identity","requestId":6,"partition":"ab12","authorization":"0123456789abcdef"}"#,
        ),
        (
            PageToSw::SetIdentity { request_id: 5, partition: None, authorization: None },
            r#"{"v":1,"type":"set-identity","requestId":5,"partition":null}"#,
        ),
        (
            PageToSw::ConfigRequest { request_id: 9, config: None },
            r#"{"v":1,"type":"config-request","requestId":9}"#,
        ),
        (
            PageToSw::ConfigRequest { request_id: 9, config: Some("{}".into()) },
            r#"{"v":1,"type":"config-request","requestId":9,"config":"{}"}"#,
        ),
        (
            PageToSw::SnapshotRequest { request_id: 2, query: SnapshotQuery::default() },
            r#"{"v":1,"type":"snapshot-request","requestId":2,"query":{}}"#,
        ),
        (
            PageToSw::SnapshotRequest {
                request_id: 3,
                query: SnapshotQuery { tag: Some("todos".into()), limit: 20, ..SnapshotQuery::default() },
            },
            r#"{"v":1,"type":"snapshot-request","requestId":3,"query":{"limit":20,"tag":"todos"}}"#,
        ),
        (
            PageToSw::RetryDeadLetters { request_id: 4, ids: vec![3, 1] },
            r#"{"v":1,"type":"retry-dead-letters","requestId":4,"ids":[3,1]}"#,
        ),
        (
            PageToSw::DiscardDeadLetters { request_id: 5, ids: vec![2] },
            r#"{"v":1,"type":"discard-dead-letters","requestId":5,"ids":[2]}"#,
        ),
        (
            PageToSw::DropEntries { request_id: 6, urls: vec!["http://a.test/api/x".into()] },
            r#"{"v":1,"type":"drop-entries","requestId":6,"urls":["http://a.test/api/x"]}"#,
        ),
        (
            PageToSw::InvalidateTags { request_id: 3, tags: vec!["dashboard".into()] },
            r#"{"v":1,"type":"invalidate-tags","requestId":3,"tags":["dashboard"]}"#,
        ),
        (PageToSw::ReplayQueue, r#"{"v":1,"type":"replay-queue"}"#),
        (
            PageToSw::HandOver {
                request_id: 9,
                entries: vec![cachet_core::handover::HandedEntry {
                    request: cachet_core::handover::HandedRequest {
                        method: "GET".into(),
                        url: "http://a.test/api/x".into(),
                        headers: vec![("x-cachet-tags".into(), "x".into())],
                        body: None,
                        authorization: Some("0123456789abcdef".into()),
                    },
                    response: cachet_core::handover::HandedResponse {
                        status: 200,
                        headers: vec![("content-type".into(), "application/json".into())],
                        body: "{}".into(),
                    },
                    stored_at: 5,
                }],
            },
            r#"{"v":1,"type":"hand-over","requestId":9,"entries":[{"request":{"method":"GET","url":"http://a.test/api/x","headers":[["x-cachet-tags","x"]],"authorization":"0123456789abcdef"},"response":{"status":200,"headers":[["content-type","application/json"]],"body":"{}"},"storedAt":5}]}"#,
        ),
    ]);
    check(vec![
        (
            SwToPage::RefreshRequest { id: 7, failed: None },
            r#"{"v":1,"type":"refresh-request","id":7,"failed":null}"#,
        ),
        (
            SwToPage::RefreshRequest { id: 8, failed: Some("0123456789abcdef".into()) },
            r#"{"v":1,"type":"refresh-request","id":8,"failed":"0123456789abcdef"}"#,
        ),
        (
            SwToPage::Snapshot { request_id: 2, snapshot: snapshot.to_value() },
            r#"{"v":1,"type":"snapshot","requestId":2,"snapshot":{"build":"b1","config":"","online":true,"identity":{"partition":"06be370dc282def6","vouched":1},"entries":{"items":[],"next":null,"scanned":0},"tags":[],"queue":{"online":false,"pending":[],"inFlight":null,"deadLetters":[]},"problems":[],"notStored":[],"ignoredPushes":[]}}"#,
        ),
        (
            SwToPage::Config { request_id: 9, config: "{}".into(), build: "b1".into(), differences: vec![] },
            r#"{"v":1,"type":"config","requestId":9,"config":"{}","build":"b1","differences":[]}"#,
        ),
        (
            SwToPage::Config {
                request_id: 9,
                config: "{}".into(),
                build: "b1".into(),
                differences: vec!["cache.maxEntries: 200 here, 50 there".into()],
            },
            r#"{"v":1,"type":"config","requestId":9,"config":"{}","build":"b1","differences":["cache.maxEntries: 200 here, 50 there"]}"#,
        ),
        (SwToPage::Ack { request_id: 1 }, r#"{"v":1,"type":"ack","requestId":1}"#),
        (
            SwToPage::Nack { request_id: 1, message: "no".into() },
            r#"{"v":1,"type":"nack","requestId":1,"message":"no"}"#,
        ),
    ]);
    check(vec![
        (
            PageReply::RefreshReply { id: 7, ok: true, authorization: Some("Bearer t2".into()) },
            r#"{"v":1,"type":"refresh-reply","id":7,"ok":true,"authorization":"Bearer t2"}"#,
        ),
        (
            PageReply::RefreshReply { id: 8, ok: false, authorization: None },
            r#"{"v":1,"type":"refresh-reply","id":8,"ok":false,"authorization":null}"#,
        ),
    ]);
}

#[test]
fn agent_messages() {
    check(vec![
        (
            AgentRequest::Subscribe { subscription: 1, tags: vec!["notes".into()] },
            r#"{"v":1,"type":"subscribe","subscription":1,"tags":["notes"]}"#,
        ),
        (AgentRequest::Unsubscribe { subscription: 1 }, r#"{"v":1,"type":"unsubscribe","subscription":1}"#),
        (AgentRequest::AuthStateRequest, r#"{"v":1,"type":"auth-state-request"}"#),
        (
            AgentRequest::ReportAuth { authenticated: true },
            r#"{"v":1,"type":"report-auth","authenticated":true}"#,
        ),
        (AgentRequest::WatchSwEvents, r#"{"v":1,"type":"watch-sw-events"}"#),
    ]);
    check(vec![
        (
            AgentResponse::AuthState { online: true, authenticated: true },
            r#"{"v":1,"type":"auth-state","online":true,"authenticated":true}"#,
        ),
        (
            AgentResponse::Invalidated { subscriptions: vec![1, 2], tags: vec!["notes".into()] },
            r#"{"v":1,"type":"invalidated","subscriptions":[1,2],"tags":["notes"]}"#,
        ),
        (AgentResponse::OnlineChanged { online: false }, r#"{"v":1,"type":"online-changed","online":false}"#),
        (AgentResponse::CacheUpdated { url: "/x".into() }, r#"{"v":1,"type":"cache-updated","url":"/x"}"#),
        (AgentResponse::Subscribed { subscription: 3 }, r#"{"v":1,"type":"subscribed","subscription":3}"#),
        (
            AgentResponse::SwEvent { event: SwEvent::CacheInvalidated { tags: vec!["notes".into()] } },
            r#"{"v":1,"type":"sw-event","event":{"type":"cache-invalidated","tags":["notes"]}}"#,
        ),
    ]);
}

#[test]
fn unknown_newer_and_malformed_messages_are_typed_errors() {
    let table: &[(&str, ProtocolError)] = &[
        (r#"{"v":2,"type":"activated","build":"b"}"#, ProtocolError::UnsupportedVersion { got: 2 }),
        (r#"{"v":0,"type":"activated","build":"b"}"#, ProtocolError::UnsupportedVersion { got: 0 }),
        (r#"{"v":1,"type":"teleport"}"#, ProtocolError::UnknownType("teleport".into())),
        // A message of another direction is unknown here.
        (r#"{"v":1,"type":"clear-all","requestId":1}"#, ProtocolError::UnknownType("clear-all".into())),
    ];
    for (wire, expected) in table {
        assert_eq!(decode_sw_event(wire).as_ref(), Err(expected), "{wire}");
    }
    for wire in [
        "",
        "null",
        "[]",
        "{}",
        r#"{"v":"1","type":"activated"}"#,
        r#"{"v":1}"#,
        r#"{"v":1,"type":"activated"}"#,
        r#"{"v":1,"type":"activated","build":5}"#,
    ] {
        assert!(matches!(decode_sw_event(wire), Err(ProtocolError::Malformed(_))), "{wire}");
    }
    // Extra fields from a newer minor change are ignored.
    assert_eq!(
        decode_sw_event(r#"{"v":1,"type":"cache-updated","url":"/x","extra":true}"#),
        Ok(SwEvent::CacheUpdated { url: "/x".into() })
    );
    assert!(matches!(
        decode_message::<PageReply>(
            r#"{"v":1,"type":"refresh-reply","id":-1,"ok":true,"authorization":null}"#
        ),
        Err(ProtocolError::Malformed(_))
    ));
}

/// `protocol` is the wire, which every other module may use: it uses none of them (issue 33), so that a
/// message's form never depends on a decision's code. Read from the source: no `crate::` path in code
/// that leaves `crate::protocol` (doc links may point anywhere), but for `crate::json`, the JSON reader
/// and writer, which decides nothing and uses no module of the core either.
#[test]
fn the_protocol_module_depends_on_no_other_module_of_the_core() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocol");
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                let after = &rest[at + "crate::".len()..];
                if !after.starts_with("protocol") && !after.starts_with("json") {
                    offenders.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
                }
                rest = after;
            }
        }
    }
    assert!(offenders.is_empty(), "protocol uses other modules: {offenders:#?}");
}

/// The snapshot the worker writes by hand is the derive's exact text, every field filled or empty.
#[test]
fn a_snapshot_is_written_as_its_derive_writes_it() {
    use cachet_core::protocol::snapshot::{EntryPage, NotStoredView, TagCount};
    use cachet_core::protocol::{DeadLetterView, EntryView, QueueView, QueuedView};
    let entry = |variables: Option<&str>, strategy: Option<&str>| EntryView {
        url: "http://a.test/__cachet/gql/p/k".into(),
        cache: "cachet-graphql-v2".into(),
        partition: "p".into(),
        request: "Get\"Todos\"\n".into(),
        variables: variables.map(str::to_owned),
        tags: vec!["todos".into(), "é".into()],
        size: 99,
        stored_at: 5,
        used_at: u64::MAX,
        strategy: strategy.map(str::to_owned),
    };
    let full = StateSnapshot {
        build: "b1".into(),
        config: "{\"a\":1}".into(),
        online: true,
        identity: Some(IdentityView { partition: "06be370dc282def6".into(), vouched: 2 }),
        entries: EntryPage {
            items: vec![entry(Some("{\"x\":1}"), Some("cache-first")), entry(None, None)],
            next: Some("u/next".into()),
            scanned: 7,
        },
        tags: vec![TagCount { tag: "todos".into(), entries: 3 }],
        queue: QueueView {
            online: false,
            pending: vec![QueuedView {
                id: 1,
                operation: "AddTodo".into(),
                variables: None,
                attempts: 2,
                enqueued_at: 3,
                next_attempt_at: 4,
            }],
            in_flight: Some(1),
            dead_letters: vec![
                DeadLetterView {
                    id: 2,
                    operation: "X".into(),
                    variables: Some("{}".into()),
                    attempts: 5,
                    reason: DeadLetterReason::Rejected { status: 422 },
                    at: 6,
                },
                DeadLetterView {
                    id: 3,
                    operation: "Y".into(),
                    variables: None,
                    attempts: 1,
                    reason: DeadLetterReason::Unauthorized,
                    at: 7,
                },
            ],
        },
        problems: vec!["a \u{1} problem".into()],
        not_stored: vec![NotStoredView {
            url: "u".into(),
            request: "r".into(),
            reason: "too-large".into(),
            why: "w".into(),
            at: 8,
        }],
        ignored_pushes: vec!["push 1".into()],
    };
    for snapshot in [full, StateSnapshot::default()] {
        assert_eq!(snapshot.to_json(), serde_json::to_string(&snapshot).unwrap());
        assert_eq!(StateSnapshot::from_value(snapshot.to_value()), Ok(snapshot));
    }
}

#[test]
fn a_snapshot_query_given_alone_is_read_as_its_derive_reads_it() {
    let texts = [
        r#"{}"#,
        r#"{"limit":5}"#,
        r#"{"after":"u","tag":"t","operation":"Op","partition":"p","other":[1,2]}"#,
        r#"{"after":null,"tag":null}"#,
        r#"{"limit":null}"#,
        r#"{"limit":-1}"#,
        r#"{"limit":4294967296}"#,
        r#"{"limit":2.5}"#,
        r#"{"tag":5}"#,
        r#"[1]"#,
        r#""text""#,
        r#"7"#,
    ];
    for text in texts {
        let ours = cachet_core::protocol::SnapshotQuery::read(
            &cachet_core::json::from_str(text).unwrap_or_default(),
        )
        .ok();
        let derived = serde_json::from_str::<cachet_core::protocol::SnapshotQuery>(text).ok();
        assert_eq!(ours, derived, "{text}");
    }
}
