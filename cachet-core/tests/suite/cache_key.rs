//! Cache keys: known-answer vectors (checked with `sha256sum`) and canonicalisation.

use cachet_core::cache_key::{
    auth_fingerprint, cache_key, canonical_json, partition_id, sha256_hex, ANONYMOUS_PARTITION,
};
use cachet_core::engine::key::{document_entry, endpoint_id};
use cachet_core::json::{self, Map};
use cachet_core::partition::Partition;
use serde_json::{json, Value};

/// The test's serde_json value in cachet's JSON tree.
fn j(value: &Value) -> json::Value {
    value.into()
}

fn object(value: Value) -> Map {
    match j(&value) {
        json::Value::Object(map) => map,
        _ => panic!("an object"),
    }
}

fn read_object(text: &str) -> Map {
    json::from_str(text).unwrap().as_object().unwrap().clone()
}

#[test]
fn known_answer_vectors() {
    assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // sha256 of {"operationName":null,"query":"{ notes { id } }","variables":{}}
    assert_eq!(
        cache_key("{ notes { id } }", None, None),
        "c942542dfb29e4c88cd2056992202992f02d5cf02196bc1635a4904bf8ee0e7e"
    );
    // sha256 of {"operationName":"GetNote","query":"query GetNote($id: ID!) { note(id: $id) { id text } }","variables":{"a":[1,{"y":true,"z":null}],"id":"n1"}}
    let variables = object(json!({"id": "n1", "a": [1, {"z": null, "y": true}]}));
    assert_eq!(
        cache_key("query GetNote($id: ID!) { note(id: $id) { id text } }", Some(&variables), Some("GetNote")),
        "08762ef4ed54accdcd0688ed501a16662f20537afe2ab4491163cbe82701f6ce"
    );
    // Escaping: quotes and backslashes in the query, a newline, a control character and non-ASCII in a variable.
    let variables = object(json!({"k": "line\nnext\u{1}é"}));
    assert_eq!(
        cache_key("{ a(s: \"\\\"x\\\"\") }", Some(&variables), None),
        "d2566d8dd01dd14a59bd14bb93d2f46b3692a2b6425aff4b5278c63aeb73dc81"
    );
    assert_eq!(partition_id("user-42"), "06be370dc282def6");
}

#[test]
fn variables_are_canonicalised() {
    let query = "query Q($a: Int, $b: Int) { q(a: $a, b: $b) }";
    let ab = read_object(r#"{"a":1,"b":2}"#);
    let ba = read_object(r#"{ "b" : 2 , "a" : 1 }"#);
    assert_eq!(cache_key(query, Some(&ab), None), cache_key(query, Some(&ba), None));
    let nested_1 = object(json!({"o": {"x": [1, {"q": 1, "p": 2}], "b": null}}));
    let nested_2 = read_object(r#"{"o":{"b":null,"x":[1,{"p":2,"q":1}]}}"#);
    assert_eq!(cache_key(query, Some(&nested_1), None), cache_key(query, Some(&nested_2), None));
    // Absent, null-like and empty variables are one key; empty operationName is no name.
    assert_eq!(cache_key(query, None, None), cache_key(query, Some(&Map::new()), Some("")));
    // What differs gives different keys.
    let different: &[(&str, Value, Option<&str>)] = &[
        (query, json!({"a": 1, "b": 3}), None),
        (query, json!({"a": 1}), None),
        (query, json!({"a": 1.0, "b": 2}), None),
        (query, json!({"a": "1", "b": 2}), None),
        (query, json!({"a": 1, "b": 2}), Some("Q")),
        ("query Q($a: Int, $b: Int) {  q(a: $a, b: $b) }", json!({"a": 1, "b": 2}), None),
    ];
    let base = cache_key(query, Some(&ab), None);
    for (text, variables, name) in different {
        assert_ne!(
            cache_key(text, Some(&object(variables.clone())), *name),
            base,
            "{text} {variables} {name:?}"
        );
    }
    assert_eq!(
        canonical_json(&j(&json!({"b": [3, {"d": 1, "c": 2}], "a": "x\"y"}))),
        r#"{"a":"x\"y","b":[3,{"c":2,"d":1}]}"#
    );
    // Array order matters.
    assert_ne!(canonical_json(&j(&json!([1, 2]))), canonical_json(&j(&json!([2, 1]))));
}

#[test]
fn keys_and_partitions_have_their_shape() {
    let key = cache_key("{ a }", None, None);
    assert_eq!(key.len(), 64);
    assert!(key.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)));
    assert_ne!(partition_id("alice"), partition_id("bob"));
    assert_eq!(partition_id("alice").len(), 16);
    let alice = Partition::User(partition_id("alice"));
    let entry = document_entry("https://a.test", "/graphql", &key, &alice).unwrap();
    let endpoint = endpoint_id("/graphql");
    assert_eq!(entry.url, format!("https://a.test/__cachet/gql/{}/{endpoint}/{key}", partition_id("alice")));
    let shared = document_entry("https://a.test", "/graphql", &key, &Partition::Shared).unwrap();
    assert_eq!(shared.url, format!("https://a.test/__cachet/gql/{ANONYMOUS_PARTITION}/{endpoint}/{key}"));
}

#[test]
fn auth_fingerprint_matches_sha256sum_and_tells_tokens_apart() {
    // printf 'cachet-auth:Bearer t1' | sha256sum | cut -c1-16
    assert_eq!(auth_fingerprint("Bearer t1"), "72948909222da381");
    assert_ne!(auth_fingerprint("Bearer t1"), auth_fingerprint("Bearer t2"));
    assert_eq!(auth_fingerprint("").len(), 16);
}
