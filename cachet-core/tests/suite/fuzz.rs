//! Fuzzing on stable Rust (issue 20): every input cachet-core reads from outside, as property tests.
//! Each target draws both raw input (any text, any bytes) and valid input broken the ways storage and
//! networks break it: a seed (a real record, message, config or body) with JSON values replaced by
//! anything, keys dropped, then the text truncated, cut or spliced. Checked: no panic, every error the
//! typed error of its reader (a stored record's names the record), and what is accepted reads back the
//! same after writing.
//!
//! The two cargo-fuzz targets of `cachet-core/fuzz` (nightly) are `classify_body` and
//! `headers_and_config` here, with the same assertions. Cases per target: `CACHET_FUZZ_CASES` (default
//! 2 000, the smoke run of `cargo xtask test`); `cargo xtask chaos` runs 1 000 000 each, in release.

use cachet_core::classify::{classify_request, GraphqlAction, RequestClass};
use cachet_core::config::Config;
use cachet_core::machines::queue::QueueState;
use cachet_core::partition::Identity;
use cachet_core::protocol::{
    decode_message, encode_message, AgentRequest, AgentResponse, EntryView, Message, PageReply, PageToSw,
    SwEvent, SwToPage,
};
use cachet_core::Error;
use proptest::prelude::*;
use proptest::test_runner::Config as Cases;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};

/// Cases per target: `CACHET_FUZZ_CASES`, else 2 000.
fn cases() -> Cases {
    let cases = std::env::var("CACHET_FUZZ_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(2_000);
    // Shrinking a failure found after a million cases may take long: bounded, the failure is kept anyway.
    Cases { cases, max_shrink_iters: 2_000, failure_persistence: None, ..Cases::default() }
}

/// Any JSON value, nested a little: the replacement a corrupted field gets.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        prop_oneof![Just(String::new()), "[a-z0-9:_.-]{1,8}", "\\PC{0,16}", ".{0,70}"].prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z]{1,10}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// One way to break a text.
#[derive(Debug, Clone)]
enum Cut {
    /// Keep the first part (a torn write).
    Truncate(prop::sample::Index),
    /// Insert a few characters.
    Insert(prop::sample::Index, String),
    /// Remove a span.
    Remove(prop::sample::Index, prop::sample::Index),
}

fn cut() -> impl Strategy<Value = Cut> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Cut::Truncate),
        (any::<prop::sample::Index>(), prop_oneof!["[\\[\\]{}\",:0-9a-z\\\\ ]{1,3}", "\\PC{1,3}"])
            .prop_map(|(at, text)| Cut::Insert(at, text)),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(a, b)| Cut::Remove(a, b)),
    ]
}

fn apply_cut(text: &str, cut: &Cut) -> String {
    let bounds: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
    let at = |index: &prop::sample::Index| bounds[index.index(bounds.len())];
    match cut {
        Cut::Truncate(end) => text[..at(end)].to_owned(),
        Cut::Insert(place, inserted) => format!("{}{inserted}{}", &text[..at(place)], &text[at(place)..]),
        Cut::Remove(a, b) => {
            let (from, to) = (at(a).min(at(b)), at(a).max(at(b)));
            format!("{}{}", &text[..from], &text[to..])
        }
    }
}

/// One way to corrupt a JSON document: the `n`th value (in document order) replaced, or dropped
/// from its object or array.
#[derive(Debug, Clone)]
enum Corrupt {
    Replace(prop::sample::Index, Value),
    Drop(prop::sample::Index),
}

fn corrupt() -> impl Strategy<Value = Corrupt> {
    prop_oneof![
        3 => (any::<prop::sample::Index>(), any_json()).prop_map(|(at, value)| Corrupt::Replace(at, value)),
        1 => any::<prop::sample::Index>().prop_map(Corrupt::Drop),
    ]
}

fn count_values(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_values).sum(),
        Value::Object(fields) => fields.values().map(count_values).sum(),
        _ => 0,
    }
}

/// Applies `change` to the value numbered `target` under `value` (`value` itself is 0); `Drop` of the
/// root leaves it alone. Returns how many values it walked.
fn corrupt_at(value: &mut Value, target: usize, change: &Corrupt) -> usize {
    if target == 0 {
        if let Corrupt::Replace(_, new) = change {
            *value = new.clone();
        }
        return 1;
    }
    let mut seen = 1;
    let mut dropped = None;
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                if seen == target && matches!(change, Corrupt::Drop(_)) {
                    dropped = Some(index.to_string());
                    break;
                }
                if target < seen + count_values(item) {
                    corrupt_at(item, target - seen, change);
                    return seen;
                }
                seen += count_values(item);
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields.iter_mut() {
                if seen == target && matches!(change, Corrupt::Drop(_)) {
                    dropped = Some(key.clone());
                    break;
                }
                if target < seen + count_values(field) {
                    corrupt_at(field, target - seen, change);
                    return seen;
                }
                seen += count_values(field);
            }
        }
        _ => {}
    }
    match (value, dropped) {
        (Value::Array(items), Some(index)) => {
            items.remove(index.parse::<usize>().unwrap_or_default());
        }
        (Value::Object(fields), Some(key)) => {
            fields.remove(&key);
        }
        _ => {}
    }
    seen
}

/// A seed broken: up to two corruptions of its JSON values, then up to two cuts of its text.
fn broken(seeds: Vec<String>) -> impl Strategy<Value = String> {
    (prop::sample::select(seeds), prop::collection::vec(corrupt(), 0..3), prop::collection::vec(cut(), 0..3))
        .prop_map(|(seed, corruptions, cuts)| {
            let mut text = seed;
            if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
                for corruption in &corruptions {
                    let (Corrupt::Replace(at, _) | Corrupt::Drop(at)) = corruption;
                    let target = at.index(count_values(&value));
                    corrupt_at(&mut value, target, corruption);
                }
                text = value.to_string();
            }
            cuts.iter().fold(text, |text, cut| apply_cut(&text, cut))
        })
}

/// Raw text, or a seed broken.
fn input(seeds: Vec<String>) -> impl Strategy<Value = String> {
    prop_oneof![1 => any::<String>(), 4 => broken(seeds)]
}

/// An error is typed by its reader's signature; it must also say something. Counts as rejected.
fn said(error: &impl std::fmt::Display) -> Outcome {
    assert!(!error.to_string().is_empty());
    Outcome::Rejected
}

/// What a reader made of one input.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Read (and, where it writes back, read back the same).
    Accepted,
    /// Refused with its typed error.
    Rejected,
}

/// Runs `check` on [`cases`] inputs drawn from `inputs`, and prints one `FUZZ` line with the figures
/// (`cargo xtask chaos` collects them into RELIABILITY.md). A panic or a failed check is shrunk to a
/// smallest input and fails the test with it.
fn fuzz<S: Strategy>(target: &str, inputs: S, check: impl Fn(S::Value) -> Outcome)
where
    S::Value: std::fmt::Debug,
{
    let (accepted, rejected) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut runner = proptest::test_runner::TestRunner::new(cases());
    let started = std::time::Instant::now();
    let result = runner.run(&inputs, |input| {
        let counter = match check(input) {
            Outcome::Accepted => &accepted,
            Outcome::Rejected => &rejected,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("fuzz target {target}: {failure}");
    }
    println!(
        "FUZZ target={target} cases={} accepted={} rejected={} panics=0 seconds={:.1}",
        runner.config().cases,
        accepted.load(Ordering::Relaxed),
        rejected.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
}

/// A stored record's error names the record.
fn names_record(error: &Error, record: &str) -> Outcome {
    match error {
        Error::StoredState { what, message } => {
            assert_eq!(*what, record);
            assert!(!message.is_empty());
        }
        other => panic!("{record}: expected StoredState, got {other:?}"),
    }
    Outcome::Rejected
}

fn graphql_config() -> Config {
    let mut config = Config::default();
    config.features.graphql.enabled = true;
    config
}

fn graphql_seeds() -> Vec<String> {
    let documents = [
        "query GetTodos { todos { id title done } }",
        "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }",
        "query A { a } mutation B { b } subscription C { c }",
        "fragment F on Todo { id } query Q($id: ID = 1) @cached { todo(id: $id) { ...F ... on Todo { title } } }",
        "{ anonymous(arg: [1, 2.5e3, \"s\\u00e9\", {k: null}]) }",
    ];
    let mut seeds: Vec<String> = documents
        .iter()
        .map(|query| {
            serde_json::json!({ "query": query, "variables": { "id": 1, "title": "t" } }).to_string()
        })
        .collect();
    seeds.push(
        serde_json::json!({ "query": documents[2], "operationName": "B", "extensions": { "persistedQuery": {} } })
            .to_string(),
    );
    seeds
}

fn protocol_seeds() -> Vec<String> {
    // Every wire form of the protocol table (`r#"{"v":1,...}"#`), so that a new message is fuzzed too.
    let table = include_str!("protocol_table.rs");
    table
        .split("r#\"")
        .skip(1)
        .filter_map(|rest| rest.split_once("\"#"))
        .map(|(wire, _)| wire.to_owned())
        .collect()
}

fn config_seeds() -> Vec<String> {
    let mut all_on = Config::default();
    all_on.features.graphql.enabled = true;
    all_on.features.auth.enabled = true;
    vec![
        Config::default().to_json_pretty(),
        all_on.to_json_pretty(),
        include_str!("../../../examples/todo-app/cachet.config.json").to_owned(),
        r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#.to_owned(),
    ]
}

fn queue_seeds() -> Vec<String> {
    crate::machines_queue::varied_states().iter().map(QueueState::to_json).collect()
}

fn identity_seeds() -> Vec<String> {
    let mut identity = Identity { partition: "u-1f2e3d".into(), credentials: Vec::new() };
    let empty = identity.to_json();
    identity.vouch("0123abcd".repeat(8));
    identity.vouch("ff".into());
    vec![empty, identity.to_json()]
}

fn index_record_seeds() -> Vec<String> {
    vec![
        r#"{"url":"http://127.0.0.1:8080/__cachet/gql/u-1f/graphql/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","cache":"cachet-graphql-v2","tags":["todos","gettodos"],"storedAt":1763900000000,"usedAt":1763900000500,"request":"query GetTodos","variables":"{\"id\":1}","size":120,"strategy":"cache-first"}"#.to_owned(),
        r#"{"url":"http://127.0.0.1:8080/api/todos","cache":"cachet-runtime-v1","tags":[],"storedAt":1,"usedAt":2}"#.to_owned(),
    ]
}

/// The protocol: decoding never panics, errors are `ProtocolError`s, and what decodes re-encodes to a
/// text that decodes to the same message.
fn round_trips<M: Message + PartialEq + std::fmt::Debug>(text: &str) -> Outcome {
    match decode_message::<M>(text) {
        Ok(message) => {
            let again = decode_message::<M>(&encode_message(&message)).expect("what was decoded re-encodes");
            // Opaque JSON fields (a snapshot) may carry floats, which serde_json reads back to within
            // one unit in the last place: equal but for that.
            let (before, after) = (serde_json::to_value(&message).ok(), serde_json::to_value(&again).ok());
            assert!(same_but_float_rounding(&before, &after), "{message:?} became {again:?}");
            Outcome::Accepted
        }
        Err(error) => said(&error),
    }
}

fn same_but_float_rounding(a: &Option<Value>, b: &Option<Value>) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
                let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
                x == y || (x - y).abs() <= f64::EPSILON * 4.0 * x.abs().max(y.abs())
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| same(x, y)))
            }
            _ => a == b,
        }
    }
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        _ => a == b,
    }
}

/// The cargo-fuzz target `classify_body`: any bytes as a GraphQL POST body, any text as a document.
#[test]
fn classify_body() {
    let bodies = prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256),
        4 => input(graphql_seeds()).prop_map(String::into_bytes),
    ];
    let config = graphql_config();
    fuzz("classify_body", bodies, |body| {
        let no_headers = |_: &str| None;
        if let Ok(text) = std::str::from_utf8(&body) {
            if let Err(error) = cachet_core::graphql::scan_operations(text) {
                said(&error);
            }
            let wrapped = serde_json::json!({ "query": text }).to_string();
            if let Err(error) = cachet_core::graphql::parse_body(wrapped.as_bytes()) {
                said(&error);
            }
        }
        match classify_request("POST", "/graphql", &no_headers, Some(&body), &config) {
            Ok(RequestClass::Graphql(call)) => {
                if let GraphqlAction::Query { cache_key, .. } = call.action {
                    assert_eq!(cache_key.len(), 64);
                    assert!(cache_key.bytes().all(|byte| byte.is_ascii_hexdigit()));
                }
                Outcome::Accepted
            }
            Ok(_) => Outcome::Accepted,
            Err(error) => said(&error),
        }
    });
}

/// The cargo-fuzz target `headers_and_config`'s header half: `X-SW-Cache-Tags` (and the other tag
/// headers) as the engine reads them, and `X-SW-Strategy`. Its config and protocol half are
/// `config_files`, `protocol_messages` and `queue_records`.
#[test]
fn tag_and_strategy_headers() {
    let tag = prop_oneof![9 => "[a-z0-9:_.-]{1,8}", 1 => "[a-zA-Z0-9:_.-]{60,70}"];
    let headers = prop_oneof![
        1 => any::<String>(),
        1 => "[a-zA-Z0-9:_.,\\- ]{0,40}",
        2 => prop::collection::vec(tag, 0..40).prop_map(|tags| tags.join(", ")),
    ];
    fuzz("tag_and_strategy_headers", headers, |text| {
        if let Err(error) = text.parse::<cachet_core::strategy::Strategy>() {
            said(&error);
        }
        match cachet_core::tags::parse_tag_list(&text) {
            Ok(tags) => {
                assert!(tags.len() <= cachet_core::tags::MAX_TAGS);
                assert!(tags
                    .iter()
                    .all(|tag| !tag.is_empty() && tag.len() <= cachet_core::tags::MAX_TAG_LEN));
                assert_eq!(cachet_core::tags::parse_tag_list(&tags.join(",")), Ok(tags));
                Outcome::Accepted
            }
            Err(error) => said(&error),
        }
    });
}

/// `cachet.config.json`: what is accepted writes back to itself; the rest is a `ConfigError`. The
/// reader of what cachet wrote (what a page reads) reads every accepted text to the same config, and
/// whatever it accepts writes back to itself too.
#[test]
fn config_files() {
    fuzz("config_files", input(config_seeds()), |text| {
        let written = Config::from_written_json(&text);
        if let Ok(config) = &written {
            assert_eq!(Config::from_written_json(&config.to_json()).as_ref(), Ok(config));
        }
        match Config::from_json_str(&text) {
            Ok(config) => {
                assert_eq!(Config::from_json_str(&config.to_json_pretty()), Ok(config.clone()));
                assert_eq!(written, Ok(config), "the written reader reads {text}");
                Outcome::Accepted
            }
            Err(error) => said(&error),
        }
    });
}

/// Protocol messages in each direction; accepted when one direction reads it.
#[test]
fn protocol_messages() {
    fuzz("protocol_messages", input(protocol_seeds()), |text| {
        let outcomes = [
            round_trips::<SwEvent>(&text),
            round_trips::<PageToSw>(&text),
            round_trips::<SwToPage>(&text),
            round_trips::<PageReply>(&text),
            round_trips::<AgentRequest>(&text),
            round_trips::<AgentResponse>(&text),
        ];
        match outcomes.contains(&Outcome::Accepted) {
            true => Outcome::Accepted,
            false => Outcome::Rejected,
        }
    });
}

/// The stored mutation queue, torn and corrupted.
#[test]
fn queue_records() {
    fuzz("queue_records", input(queue_seeds()), |text| {
        match QueueState::from_json_as_written(&text) {
            Ok(state) => {
                assert_eq!(QueueState::from_json_as_written(&state.to_json()), Ok(state));
                Outcome::Accepted
            }
            Err(error) => {
                // What a torn record salvages is a state that writes and reads back whole.
                if let Some((state, left_out)) = QueueState::salvage_json(&text) {
                    assert_eq!(QueueState::from_json_as_written(&state.to_json()), Ok(state.clone()));
                    assert!(state.items.iter().all(|item| item.id < state.next_id));
                    for error in &left_out {
                        names_record(error, "mutation queue");
                    }
                }
                names_record(&error, "mutation queue")
            }
        }
    });
}

/// The stored identity (partition and credential fingerprints).
#[test]
fn identity_records() {
    fuzz("identity_records", input(identity_seeds()), |text| match Identity::from_json(&text) {
        Ok(identity) => {
            assert_eq!(Identity::from_json(&identity.to_json()), Ok(identity));
            Outcome::Accepted
        }
        Err(error) => names_record(&error, "identity"),
    });
}

/// A record of the worker's entry index.
#[test]
fn index_records() {
    fuzz("index_records", input(index_record_seeds()), |text| match EntryView::from_record_json(&text) {
        Ok(entry) => {
            assert!(!entry.url.is_empty());
            Outcome::Accepted
        }
        Err(error) => names_record(&error, "entry index record"),
    });
}

/// A stored number as IndexedDB may hold it after a corruption: whole, fractional, negative, huge, NaN,
/// infinite, or missing.
fn stored_number() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        4 => (0u64..50).prop_map(|n| Some(n as f64)),
        1 => Just(None),
        1 => prop_oneof![Just(-1.0), Just(0.5), Just(f64::NAN), Just(f64::INFINITY), Just(1e300)].prop_map(Some),
        1 => any::<f64>().prop_map(Some),
    ]
}

/// The worker's generation records (`cachet_core::generations`): any set of clock and tag records, any
/// newest entry. Never stale: every existing entry (begun at or before the newest entry, or before the
/// clock the records say) carrying a tag whose record is unreadable is not current after the load, and no
/// entry is current below the loaded floor; each problem names a record that was read. Stamps: any header
/// text is read without a panic, and a stamp written is read as the generations say.
#[test]
fn generation_records() {
    use cachet_core::generations::{stamp_header, Generations, StoredRecord, CLOCK_KEY, MAX_GENERATION};
    let record = (
        prop::sample::select(vec!["", "todos", "todo:1", "user"]),
        stored_number(),
        stored_number(),
        stored_number(),
    )
        .prop_map(|(key, at, clock, floor)| StoredRecord { key: key.to_owned(), at, clock, floor });
    // One record per key, as an object store keeps them.
    let records = prop::collection::vec(record, 0..6).prop_map(|mut records| {
        let mut seen = Vec::new();
        records.retain(|record| {
            !seen.contains(&record.key) && {
                seen.push(record.key.clone());
                true
            }
        });
        records
    });
    let inputs = (records, 0u64..60, ".{0,24}", 0u64..60);
    fuzz("generation_records", inputs, |(records, newest_entry, header, stamped)| {
        let loaded = Generations::load(&records, newest_entry);
        let generations = &loaded.generations;
        assert!(generations.clock() >= newest_entry, "the clock is never behind an entry");
        for problem in &loaded.problems {
            assert!(problem.key == CLOCK_KEY || records.iter().any(|record| record.key == problem.key));
            assert!(!problem.to_string().is_empty());
        }
        let readable_clock =
            records.iter().filter_map(StoredRecord::readable_clock).map(|(clock, _)| clock).max();
        let existing = newest_entry.max(readable_clock.unwrap_or(0));
        if generations.clock() < MAX_GENERATION {
            for record in records.iter().filter(|record| record.key != CLOCK_KEY) {
                let unreadable = record.at.and_then(cachet_core::generations::generation_of).is_none();
                if unreadable {
                    for begun in [0, newest_entry, existing] {
                        assert!(!generations.is_current(Some(begun), [record.key.as_str()]), "{records:?}");
                    }
                }
            }
        }
        if generations.floor() > 0 {
            assert!(!generations.is_current(Some(generations.floor() - 1), ["any"]));
        }
        let _ = generations.is_current_stamp(Some(&header));
        let tags = ["todos".to_owned(), "user".to_owned()];
        assert_eq!(
            generations.is_current_stamp(Some(&stamp_header(stamped, &tags))),
            generations.is_current(Some(stamped), tags.iter().map(String::as_str))
        );
        if loaded.problems.is_empty() {
            Outcome::Accepted
        } else {
            Outcome::Rejected
        }
    });
}
