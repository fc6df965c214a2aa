//! The hand-written decoders of `wire` against serde's derive, the oracle: every message round-trips,
//! and on arbitrary objects (known and unknown types, every field missing, `null`, or of another type)
//! both accept the same texts, decode them to the same message, and name the same unknown types.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{
    decode_by_serde, decode_message, encode_message, PageReply, PageToSw, ProtocolError, SnapshotQuery,
};
use crate::handover::{HandedEntry, HandedRequest, HandedResponse};

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
        PageToSw::ConfigRequest { request_id: u64::MAX },
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
        PageToSw::HandOver { request_id: 8, entries: vec![entry(), entry()] },
    ]
}

#[test]
fn every_page_message_and_reply_round_trips_through_both_decoders() {
    for message in every_message() {
        let wire = encode_message(&message);
        assert_eq!(decode_message::<PageToSw>(&wire), Ok(message.clone()), "{wire}");
        assert_eq!(decode_by_serde::<PageToSw>(&wire), Ok(message), "{wire}");
    }
    for reply in [
        PageReply::RefreshReply { id: 1, ok: true, authorization: Some("Bearer x".into()) },
        PageReply::RefreshReply { id: 2, ok: false, authorization: None },
    ] {
        let wire = encode_message(&reply);
        assert_eq!(decode_message::<PageReply>(&wire), Ok(reply.clone()), "{wire}");
    }
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

const TYPES: [&str; 13] = [
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
    "hand-over",
    "refresh-reply",
    "from-the-future",
];
const FIELDS: [&str; 11] = [
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
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn the_hand_decoders_accept_and_decode_what_serde_does(
        kind in prop::sample::select(&TYPES[..]),
        fields in prop::collection::vec((prop::sample::select(&FIELDS[..]), field_value()), 0..6),
    ) {
        let mut object = serde_json::Map::new();
        object.insert("v".into(), json!(1));
        object.insert("type".into(), json!(kind));
        for (name, value) in fields {
            object.insert(name.into(), value);
        }
        let wire = Value::Object(object).to_string();
        let (ours, oracle) = (decode_message::<PageToSw>(&wire), decode_by_serde::<PageToSw>(&wire));
        prop_assert_eq!(ours.is_ok(), oracle.is_ok(), "{} ours {:?} serde {:?}", wire, ours, oracle);
        if let (Ok(ours), Ok(oracle)) = (&ours, &oracle) {
            prop_assert_eq!(ours, oracle);
        }
        if let Err(ProtocolError::UnknownType(unknown)) = &oracle {
            prop_assert_eq!(ours, Err(ProtocolError::UnknownType(unknown.clone())));
        }
        let (ours, oracle) = (decode_message::<PageReply>(&wire), decode_by_serde::<PageReply>(&wire));
        prop_assert_eq!(ours.is_ok(), oracle.is_ok(), "{} ours {:?} serde {:?}", wire, ours, oracle);
        if let (Ok(ours), Ok(oracle)) = (&ours, &oracle) {
            prop_assert_eq!(ours, oracle);
        }
    }
}
