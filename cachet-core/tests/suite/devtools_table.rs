//! What a devtools snapshot shows (`cachet_core::devtools`): entry descriptions, partitions, filters and
//! pages, the queue without its headers, the identity without its fingerprints; bad records named.

use cachet_core::devtools::{partition_of, short_variables, EntryDetails};
use cachet_core::machines::queue::{QueueEvent, QueueState, QueuedRequest, SendFailure};
use cachet_core::partition::Identity;
use cachet_core::protocol::{EntryView, IdentityView, QueueView, SnapshotQuery};
use cachet_core::strategy::Strategy;
use serde_json::json;

/// A body, the request and the variables its entry shows.
type Row<'a> = (Option<&'a [u8]>, &'a str, Option<&'a str>);

#[test]
fn an_entry_is_described_by_its_operation_or_url() {
    let body = br#"{"query":"query GetTodos($first: Int) { todos(first: $first) { id } }","variables":{"first":10}}"#;
    let table: [Row<'_>; 4] = [
        (Some(body), "GetTodos", Some(r#"{"first":10}"#)),
        (Some(br#"{"query":"{ me { id } }"}"#), "<anonymous>", None),
        (None, "http://a.test/api/hello", None),
        (Some(b"not json"), "http://a.test/api/hello", None),
    ];
    for (body, request, variables) in table {
        let details = EntryDetails::describe("http://a.test/api/hello", body, 42, Strategy::CacheFirst);
        assert_eq!((details.request.as_str(), details.variables.as_deref()), (request, variables));
        assert_eq!((details.size, details.strategy), (42, "cache-first"));
    }
}

#[test]
fn long_variables_are_cut_at_sixty_characters() {
    let long = json!({ "title": "x".repeat(100) });
    let short = short_variables(cachet_core::json::Value::from(&long).as_object().unwrap()).unwrap();
    assert_eq!(short.chars().count(), 60);
    assert!(short.starts_with(r#"{"title":"xxx"#) && short.ends_with('…'), "{short}");
    assert_eq!(short_variables(&cachet_core::json::Map::new()), None);
    let accents = json!({ "t": "é".repeat(80) });
    assert_eq!(
        short_variables(cachet_core::json::Value::from(&accents).as_object().unwrap())
            .unwrap()
            .chars()
            .count(),
        60,
        "cut on characters"
    );
}

#[test]
fn partitions_come_from_the_cache_url() {
    for (url, partition) in [
        ("http://a.test/__cachet/gql/06be370dc282def6/abcd", "06be370dc282def6"),
        ("http://a.test/__cachet/get/77aa/http%3A%2F%2Fa.test%2Fapi", "77aa"),
        ("http://a.test/api/hello", "shared"),
        ("http://a.test/__cachet/gql//abcd", "shared"),
    ] {
        assert_eq!(partition_of(url), partition, "{url}");
    }
}

#[test]
fn index_records_are_read_old_and_new_and_garbage_is_named() {
    let new = json!({"url": "http://a.test/__cachet/gql/p1/k", "cache": "cachet-graphql-v1", "tags": ["todos"],
                     "storedAt": 5, "usedAt": 6, "request": "GetTodos", "size": 99, "strategy": "cache-first"});
    let entry = EntryView::from_record_json(&new.to_string()).unwrap();
    assert_eq!((entry.partition.as_str(), entry.request.as_str(), entry.size), ("p1", "GetTodos", 99));
    let old = json!({"url": "http://a.test/api/x", "cache": "cachet-runtime-v1", "tags": [], "storedAt": 5, "usedAt": 6});
    let entry = EntryView::from_record_json(&old.to_string()).unwrap();
    assert_eq!((entry.request.as_str(), entry.size, entry.strategy), ("http://a.test/api/x", 0, None));
    for (garbage, names) in [
        ("[1]", "expected an object"),
        (r#"{"cache": "c"}"#, "url"),
        ("{", "end of the text"),
        (r#"{"url": "", "cache": "c"}"#, "url"),
    ] {
        let error = EntryView::from_record_json(garbage).unwrap_err().to_string();
        assert!(error.contains("entry index record") && error.contains(names), "{garbage}: {error}");
    }
}

fn entry(request: &str, partition: &str, tags: &[&str]) -> EntryView {
    EntryView {
        url: format!("u/{request}"),
        request: request.into(),
        partition: partition.into(),
        tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
        ..EntryView::default()
    }
}

#[test]
fn filters_must_all_hold() {
    let todos = entry("GetTodos", "p1", &["todos", "gettodos"]);
    let query = |tag: Option<&str>, operation: Option<&str>, partition: Option<&str>| SnapshotQuery {
        tag: tag.map(str::to_owned),
        operation: operation.map(str::to_owned),
        partition: partition.map(str::to_owned),
        ..SnapshotQuery::default()
    };
    for (filter, expected) in [
        (query(None, None, None), true),
        (query(Some("todos"), None, None), true),
        (query(Some("todo"), None, None), false),
        (query(None, Some("gettodo"), None), true),
        (query(None, Some("Summary"), None), false),
        (query(None, None, Some("p1")), true),
        (query(None, None, Some("shared")), false),
        (query(Some("todos"), Some("get"), Some("p2")), false),
    ] {
        assert_eq!(filter.matches(&todos), expected, "{filter:?}");
    }
}

#[test]
fn page_sizes_are_bounded() {
    for (limit, size) in [(0, 50), (1, 1), (500, 500), (10_000, 500)] {
        assert_eq!(SnapshotQuery { limit, ..SnapshotQuery::default() }.page_size(), size);
    }
}

#[test]
fn the_queue_view_has_no_headers_and_the_identity_no_fingerprints() {
    let request = QueuedRequest {
        method: "POST".into(),
        url: "/graphql".into(),
        headers: vec![("x-cachet-auth".into(), "1".into())],
        body: r#"{"query":"mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }","variables":{"title":"milk"}}"#.into(),
        operation_name: Some("CreateTodo".into()),
        invalidate: vec![],
    };
    let state = QueueState::new(cachet_core::config::QueueBounds::default(), true);
    let state = state.reduce(QueueEvent::Enqueue { request: request.clone(), now: 1, random: 9 }).0;
    let state = state.reduce(QueueEvent::Enqueue { request, now: 2, random: 10 }).0;
    let state = state
        .reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(422), now: 3, random: 0 })
        .0;
    let view = QueueView::of(&state);
    assert_eq!(view.dead_letters.len(), 1);
    assert_eq!(view.dead_letters[0].operation, "CreateTodo");
    assert_eq!(view.dead_letters[0].variables.as_deref(), Some(r#"{"title":"milk"}"#));
    assert_eq!((view.pending.len(), view.in_flight), (1, Some(2)));
    let text = serde_json::to_string(&view).unwrap();
    assert!(!text.contains("idempotency") && !text.contains("x-cachet-auth"), "{text}");
    let identity = Identity { partition: "p1".into(), credentials: vec!["0123456789abcdef".into(); 2] };
    assert_eq!(IdentityView::of(&identity), IdentityView { partition: "p1".into(), vouched: 2 });
}
