//! Persisted queries (`cachet_core::graphql::persisted`): the bodies and URLs sent, how answers are read,
//! what the memory learns, and that every negotiation ends.

use cachet_core::graphql::persisted::{
    next, verdict, Memory, Next, Outgoing, Prepared, Support, Verdict, Way, HELD_MAX, VERDICT_READ_MAX,
};
use serde_json::{json, Value};

const ENDPOINT: &str = "http://127.0.0.1:8080/graphql";
/// Apollo Server's documentation's own example: the hash of `{__typename}`.
const TYPENAME_HASH: &str = "ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38";

fn prepared(body: Value) -> Prepared {
    Prepared::new(body.to_string().as_bytes()).expect("a query body")
}

fn post(outgoing: Option<Outgoing>) -> Value {
    match outgoing {
        Some(Outgoing::Post(body)) => serde_json::from_str(&body).unwrap(),
        other => panic!("a POST, got {other:?}"),
    }
}

fn held(hashes: &[&str]) -> Memory {
    Memory { support: Support::Supported, held: hashes.iter().map(|hash| (*hash).to_owned()).collect() }
}

#[test]
fn the_hash_is_the_protocols_sha256_of_the_query_text() {
    assert_eq!(prepared(json!({"query": "{__typename}"})).hash, TYPENAME_HASH);
    for not_a_query in
        [&b"not json"[..], b"[1]", br#"{"extensions":{"persistedQuery":{}}}"#, br#"{"query":7}"#]
    {
        assert!(Prepared::new(not_a_query).is_none(), "{}", String::from_utf8_lossy(not_a_query));
    }
}

#[test]
fn a_hash_goes_without_the_text_and_a_registration_with_it_other_extensions_kept() {
    let query = prepared(json!({
        "query": "query Q($id: ID!) { todo(id: $id) { id } }",
        "operationName": "Q",
        "variables": {"id": "7"},
        "extensions": {"tracing": true},
    }));
    let extension = json!({"version": 1, "sha256Hash": query.hash});
    let hashed = post(query.outgoing(Way::Hash, ENDPOINT));
    assert_eq!(
        hashed,
        json!({"operationName": "Q", "variables": {"id": "7"},
               "extensions": {"tracing": true, "persistedQuery": extension}})
    );
    let registered = post(query.outgoing(Way::Register, ENDPOINT));
    assert_eq!(registered["query"], json!("query Q($id: ID!) { todo(id: $id) { id } }"));
    assert_eq!(registered["extensions"]["persistedQuery"], extension);
    // Plain and the probe send the page's own body.
    assert_eq!(query.outgoing(Way::Plain, ENDPOINT), None);
    assert_eq!(query.outgoing(Way::Probe, ENDPOINT), None);
}

#[test]
fn a_get_carries_the_hash_in_its_search_read_back_by_form_urlencoded() {
    let query = prepared(json!({
        "query": "query Q($text: String!) { echo(text: $text) }",
        "operationName": "Q",
        "variables": {"text": "a b&c=d/é%"},
    }));
    let Some(Outgoing::Get(url)) = query.outgoing(Way::HashGet, ENDPOINT) else { panic!("a GET") };
    let (endpoint, search) = url.split_once('?').unwrap();
    assert_eq!(endpoint, ENDPOINT);
    let members: Vec<(String, String)> = form_urlencoded::parse(search.as_bytes()).into_owned().collect();
    let names: Vec<&str> = members.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["extensions", "operationName", "variables"]);
    let value = |name: &str| members.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap();
    assert_eq!(value("operationName"), "Q");
    assert_eq!(serde_json::from_str::<Value>(&value("variables")).unwrap(), json!({"text": "a b&c=d/é%"}));
    assert_eq!(
        serde_json::from_str::<Value>(&value("extensions")).unwrap(),
        json!({"persistedQuery": {"version": 1, "sha256Hash": query.hash}})
    );
    // A null member is left out; a member a search cannot carry (variables not an object) makes no GET.
    let anonymous = prepared(json!({"query": "{ a }", "operationName": null, "variables": null}));
    let Some(Outgoing::Get(url)) = anonymous.outgoing(Way::HashGet, ENDPOINT) else { panic!("a GET") };
    assert!(url.starts_with(&format!("{ENDPOINT}?extensions=")) && !url.contains("operationName"), "{url}");
    let odd = prepared(json!({"query": "{ a }", "variables": [1]}));
    assert_eq!(odd.outgoing(Way::HashGet, ENDPOINT), None);
}

#[test]
fn the_first_way_depends_on_what_the_endpoint_is_known_to_hold() {
    let query = prepared(json!({"query": "{__typename}"}));
    let Some(Outgoing::Get(url)) = query.outgoing(Way::HashGet, ENDPOINT) else { panic!("a GET") };
    let long_enough = url.len();
    let cases = [
        // (memory, getMaxUrlLength, first way)
        (Memory::default(), 4096, Way::Hash),
        (held(&[]), 4096, Way::Hash),
        (held(&[TYPENAME_HASH]), 4096, Way::HashGet),
        (held(&[TYPENAME_HASH]), long_enough, Way::HashGet),
        (held(&[TYPENAME_HASH]), long_enough - 1, Way::Hash),
        (held(&[TYPENAME_HASH]), 0, Way::Hash),
        (Memory { support: Support::NotSupported, held: Vec::new() }, 4096, Way::Plain),
        // Known hashes of an endpoint not known to support the protocol never go as GET.
        (Memory { support: Support::Unknown, held: vec![TYPENAME_HASH.to_owned()] }, 4096, Way::Hash),
    ];
    for (memory, limit, way) in cases {
        let (first, outgoing) = query.first(&memory, ENDPOINT, limit);
        assert_eq!(first, way, "{memory:?}, limit {limit}");
        assert_eq!(outgoing, query.outgoing(way, ENDPOINT), "{memory:?}, limit {limit}");
    }
}

#[test]
fn answers_are_read_as_the_servers_say_them() {
    let apollo_not_found = json!({"errors": [{"message": "PersistedQueryNotFound",
        "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}]});
    let async_graphql_not_found = json!({"data": null, "errors": [{"message": "PersistedQueryNotFound"}]});
    let apollo_not_supported = json!({"errors": [{"message": "PersistedQueryNotSupported",
        "extensions": {"code": "PERSISTED_QUERY_NOT_SUPPORTED"}}]});
    let code_only =
        json!({"errors": [{"message": "nope", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}]});
    let no_query = json!({"errors": [{"message": "Must provide query string."}]});
    let data = json!({"data": {"a": 1}});
    let partial = json!({"data": {"a": null}, "errors": [{"message": "a failed"}]});
    let big = format!("{{\"errors\":[{{\"message\":\"{}\"}}]}}", "x".repeat(VERDICT_READ_MAX));
    let cases: Vec<(u16, String, Verdict)> = vec![
        (200, apollo_not_found.to_string(), Verdict::NotFound),
        (400, apollo_not_found.to_string(), Verdict::NotFound),
        (200, async_graphql_not_found.to_string(), Verdict::NotFound),
        (200, code_only.to_string(), Verdict::NotFound),
        (400, apollo_not_supported.to_string(), Verdict::NotSupported),
        (200, apollo_not_supported.to_string(), Verdict::NotSupported),
        (400, no_query.to_string(), Verdict::Refused),
        (405, String::new(), Verdict::Refused),
        (415, "not json".to_owned(), Verdict::Refused),
        (200, no_query.to_string(), Verdict::Refused),
        (200, data.to_string(), Verdict::Data),
        (200, partial.to_string(), Verdict::Data),
        // Longer than the protocol's errors: an answer, not parsed.
        (200, big, Verdict::Data),
        (200, "not json".to_owned(), Verdict::Data),
        (401, no_query.to_string(), Verdict::Other),
        (403, String::new(), Verdict::Other),
        (429, String::new(), Verdict::Other),
        (500, no_query.to_string(), Verdict::Other),
        (503, String::new(), Verdict::Other),
    ];
    for (status, body, expected) in cases {
        assert_eq!(verdict(status, body.as_bytes()), expected, "{status} {body}");
    }
}

#[test]
fn what_each_answer_teaches_and_what_follows() {
    let h = TYPENAME_HASH;
    let other = "0".repeat(64);
    let unknown = Memory::default;
    let not_supported = || Memory { support: Support::NotSupported, held: Vec::new() };
    // (memory before, way sent, verdict, next, memory after)
    let cases: Vec<(Memory, Way, Verdict, Next, Memory)> = vec![
        (unknown(), Way::Hash, Verdict::Data, Next::Done, held(&[h])),
        (unknown(), Way::Hash, Verdict::NotFound, Next::Send(Way::Register), held(&[])),
        (held(&[]), Way::Register, Verdict::Data, Next::Done, held(&[h])),
        // The server forgot a hash it held: forgotten here, registered again.
        (held(&[h, &other]), Way::HashGet, Verdict::NotFound, Next::Send(Way::Register), held(&[&other])),
        (held(&[h, &other]), Way::Hash, Verdict::NotFound, Next::Send(Way::Register), held(&[&other])),
        // Confirmed again: nothing learnt (the memory is written only when it changes).
        (held(&[h, &other]), Way::HashGet, Verdict::Data, Next::Done, held(&[h, &other])),
        (unknown(), Way::Hash, Verdict::NotSupported, Next::Send(Way::Plain), not_supported()),
        (held(&[h]), Way::Register, Verdict::NotSupported, Next::Send(Way::Plain), not_supported()),
        // A refusal on an endpoint not known to speak it: tried plain; answered plain, not supported.
        (unknown(), Way::Hash, Verdict::Refused, Next::Send(Way::Probe), unknown()),
        (unknown(), Way::Probe, Verdict::Data, Next::Done, not_supported()),
        (unknown(), Way::Probe, Verdict::Refused, Next::Done, unknown()),
        // On an endpoint that speaks it, a refusal is the query's own error.
        (held(&[]), Way::Hash, Verdict::Refused, Next::Done, held(&[])),
        (held(&[h]), Way::HashGet, Verdict::Refused, Next::Send(Way::Hash), held(&[h])),
        (held(&[]), Way::Register, Verdict::Refused, Next::Done, held(&[])),
        (held(&[]), Way::Register, Verdict::NotFound, Next::Done, held(&[])),
        // A 5xx or an auth failure teaches nothing.
        (unknown(), Way::Hash, Verdict::Other, Next::Done, unknown()),
        (held(&[h]), Way::HashGet, Verdict::Other, Next::Done, held(&[h])),
        (not_supported(), Way::Plain, Verdict::Refused, Next::Done, not_supported()),
    ];
    for (before, way, answered, expected, after) in cases {
        let mut memory = before.clone();
        assert_eq!(next(&mut memory, h, way, answered), expected, "{before:?} {way:?} {answered:?}");
        assert_eq!(memory, after, "{before:?} {way:?} {answered:?}");
    }
}

#[test]
fn every_negotiation_ends_within_four_sends_moving_forward() {
    const VERDICTS: [Verdict; 5] =
        [Verdict::Data, Verdict::NotFound, Verdict::NotSupported, Verdict::Refused, Verdict::Other];
    let memories = [Memory::default(), held(&[]), held(&[TYPENAME_HASH])];
    // Every first way and every sequence of four answers.
    for memory in memories {
        for first in [Way::HashGet, Way::Hash, Way::Plain] {
            for sequence in 0..VERDICTS.len().pow(4) {
                let mut memory = memory.clone();
                let mut way = first;
                let mut sends = 1;
                let mut code = sequence;
                loop {
                    let answered = VERDICTS[code % VERDICTS.len()];
                    code /= VERDICTS.len();
                    match next(&mut memory, TYPENAME_HASH, way, answered) {
                        Next::Done => break,
                        Next::Send(then) => {
                            assert!(then > way, "{way:?} then {then:?}");
                            way = then;
                            sends += 1;
                        }
                    }
                }
                assert!(sends <= 4, "{first:?}, sequence {sequence}: {sends} sends");
            }
        }
    }
}

#[test]
fn the_memory_keeps_the_newest_hashes_and_a_corrupt_record_says_what_was_wrong() {
    let mut memory = Memory::default();
    for index in 0..HELD_MAX + 3 {
        next(&mut memory, &format!("{index:064}"), Way::Hash, Verdict::Data);
    }
    assert_eq!(memory.held.len(), HELD_MAX);
    assert_eq!(memory.held[0], format!("{:064}", 3));
    assert_eq!(Memory::from_text(&memory.to_text()), Ok(memory));
    for support in [Support::Unknown, Support::NotSupported] {
        let memory = Memory { support, held: Vec::new() };
        assert_eq!(Memory::from_text(&memory.to_text()), Ok(memory));
    }
    let corrupt = Memory::from_text("maybe").unwrap_err();
    assert_eq!(corrupt, r#"persisted-query memory: unknown support "maybe""#);
    let corrupt = Memory::from_text("supported\nabc").unwrap_err();
    assert_eq!(corrupt, r#"persisted-query memory: not a SHA-256 hash: "abc""#);
    assert!(Memory::from_text("").is_err());
}
