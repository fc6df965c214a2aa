//! `classify_request`: what the Service Worker does with a request, as a table.

use cachet_core::cache_key::cache_key;
use cachet_core::classify::{classify_request, GraphqlAction, GraphqlCall, RequestClass};
use cachet_core::config::Config;
use cachet_core::strategy::Strategy;
use cachet_core::tags::TagError;
use cachet_core::Error;

fn config() -> Config {
    Config::from_json_str(
        r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true, "endpoints": ["/graphql", "/v2/gql"]}}}"#,
    )
    .unwrap()
}

fn classify(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Result<RequestClass, Error> {
    let owned: Vec<(String, String)> =
        headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let lookup = move |name: &str| owned.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    classify_request(method, path, &lookup, (!body.is_empty()).then_some(body.as_bytes()), &config())
}

fn tags(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// Method, path, headers, body, expected class.
type Row = (&'static str, &'static str, Vec<(&'static str, &'static str)>, &'static str, RequestClass);

#[test]
fn requests_are_classified() {
    let get_notes = r#"{"query": "query GetNotes { notes { id } }"}"#;
    let create_note = r#"{"query": "mutation CreateNote { createNote { id } }", "variables": {}}"#;
    let table: Vec<Row> = vec![
        ("POST", "/api/login", vec![], "{}", RequestClass::AuthRoute),
        ("GET", "/api/me", vec![], "", RequestClass::AuthRoute),
        (
            "GET",
            "/api/notes",
            vec![],
            "",
            RequestClass::Get { strategy: Strategy::NetworkFirst, tags: vec![] },
        ),
        (
            "get",
            "/api/notes",
            vec![("x-sw-strategy", "cache-first")],
            "",
            RequestClass::Get { strategy: Strategy::CacheFirst, tags: vec![] },
        ),
        (
            "GET",
            "/api/notes",
            vec![("x-cachet-tags", "notes, note:1")],
            "",
            RequestClass::Get {
                strategy: Strategy::NetworkFirst,
                tags: vec!["notes".into(), "note:1".into()],
            },
        ),
        // GraphQL over HTTP's GET: the query posted (see `a_query_sent_as_get_is_the_same_query_posted`).
        (
            "GET",
            "/graphql?query={a}",
            vec![],
            "",
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: None,
                action: GraphqlAction::Query {
                    cache_key: cache_key("{a}", None, None),
                    tags: vec![],
                    strategy: Strategy::CacheFirst,
                },
            }),
        ),
        ("POST", "/api/notes", vec![], get_notes, RequestClass::Other),
        ("PUT", "/graphql", vec![], get_notes, RequestClass::Other),
        ("POST", "/graphql", vec![], r#"{"id": "persisted"}"#, RequestClass::Other),
        ("POST", "/graphql", vec![], "", RequestClass::Other),
        (
            "POST",
            "/graphql",
            vec![],
            get_notes,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: Some("GetNotes".into()),
                action: GraphqlAction::Query {
                    cache_key: cache_key("query GetNotes { notes { id } }", None, None),
                    tags: tags(&["getnotes", "notes"]),
                    strategy: Strategy::CacheFirst,
                },
            }),
        ),
        (
            "POST",
            "/v2/gql",
            vec![("x-cachet-tags", "Dashboard, notes"), ("x-sw-strategy", "stale-while-revalidate")],
            get_notes,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 1,
                operation_name: Some("GetNotes".into()),
                action: GraphqlAction::Query {
                    cache_key: cache_key("query GetNotes { notes { id } }", None, None),
                    tags: tags(&["dashboard", "notes"]),
                    strategy: Strategy::StaleWhileRevalidate,
                },
            }),
        ),
        (
            "POST",
            "/graphql",
            vec![("x-cachet-tags", "")],
            r#"{"query": "{ notes { id } }"}"#,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: None,
                action: GraphqlAction::Query {
                    cache_key: cache_key("{ notes { id } }", None, None),
                    tags: vec![],
                    strategy: Strategy::CacheFirst,
                },
            }),
        ),
        (
            "POST",
            "/graphql",
            vec![],
            create_note,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: Some("CreateNote".into()),
                action: GraphqlAction::Mutation { invalidate: tags(&["note", "notes"]) },
            }),
        ),
        (
            "POST",
            "/graphql",
            vec![("x-cachet-invalidate", "dashboard, notes")],
            create_note,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: Some("CreateNote".into()),
                action: GraphqlAction::Mutation { invalidate: tags(&["note", "notes", "dashboard"]) },
            }),
        ),
        (
            "POST",
            "/graphql",
            vec![],
            r#"{"query": "subscription OnNote { n }"}"#,
            RequestClass::Graphql(GraphqlCall {
                endpoint_index: 0,
                operation_name: Some("OnNote".into()),
                action: GraphqlAction::Subscription,
            }),
        ),
    ];
    for (method, path, headers, body, expected) in table {
        assert_eq!(
            classify(method, path, &headers, body),
            Ok(expected),
            "{method} {path} {headers:?} {body}"
        );
    }
}

#[test]
fn the_operation_name_selects_the_operation_and_is_part_of_the_key() {
    let body = |name: &str| {
        format!(r#"{{"query": "query A {{ a }} mutation B {{ b }}", "operationName": "{name}"}}"#)
    };
    let Ok(RequestClass::Graphql(call)) = classify("POST", "/graphql", &[], &body("A")) else {
        panic!("a query")
    };
    let GraphqlAction::Query { cache_key: key, .. } = call.action else { panic!("a query") };
    assert_eq!(key, cache_key("query A { a } mutation B { b }", None, Some("A")));
    let Ok(RequestClass::Graphql(call)) = classify("POST", "/graphql", &[], &body("B")) else {
        panic!("a mutation")
    };
    assert!(matches!(call.action, GraphqlAction::Mutation { .. }));
}

#[test]
fn bad_hints_and_bodies_are_typed_errors() {
    let get_notes = r#"{"query": "query GetNotes { notes { id } }"}"#;
    assert_eq!(
        classify("POST", "/graphql", &[("x-cachet-tags", "a,,b")], get_notes),
        Err(Error::Tags { header: "x-cachet-tags", source: TagError::Empty { index: 1 } })
    );
    let error =
        classify("POST", "/graphql", &[("x-cachet-invalidate", "a b")], r#"{"query": "mutation M { m }"}"#)
            .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"x-cachet-invalidate: tag "a b" holds " ": tags are made of a-z, 0-9, ':', '_', '.', '-'"#
    );
    assert!(matches!(classify("GET", "/x", &[("x-sw-strategy", "fast")], ""), Err(Error::Strategy(_))));
    assert!(matches!(classify("POST", "/graphql", &[], r#"{"query": "query {"}"#), Err(Error::Graphql(_))));
    // Features off: nothing is GraphQL and no path is an auth route.
    let off = Config::default();
    let none = |_: &str| None;
    assert_eq!(
        classify_request("POST", "/graphql", &none, Some(get_notes.as_bytes()), &off),
        Ok(RequestClass::Other)
    );
    assert_eq!(classify_request("POST", "/api/login", &none, None, &off), Ok(RequestClass::Other));
}

/// GraphQL over HTTP's GET (urql's default for queries): the same class, key and tags as the same query
/// posted; a mutation or a subscription sent as GET is passed through (the server refuses it); a GET of
/// the endpoint without `query`, or of another path, is a plain GET.
#[test]
fn a_query_sent_as_get_is_the_same_query_posted() {
    let posted = classify(
        "POST",
        "/graphql",
        &[("x-cachet-tags", "a")],
        r#"{"query": "query GetNotes($id: ID) { notes(id: $id) { id } }", "variables": {"b": [1, 2], "id": "7"}}"#,
    )
    .unwrap();
    // Encoded as urql and Apollo Client encode it (spaces as `+` or `%20`, variables as JSON text), the
    // variables' keys in another order: the canonical body makes them the same key.
    let searches = [
        "query=query+GetNotes%28%24id%3A+ID%29+%7B+notes%28id%3A+%24id%29+%7B+id+%7D+%7D&variables=%7B%22id%22%3A%227%22%2C%22b%22%3A%5B1%2C2%5D%7D",
        "query=query%20GetNotes(%24id%3A%20ID)%20%7B%20notes(id%3A%20%24id)%20%7B%20id%20%7D%20%7D&variables=%7B%22b%22%3A%5B1%2C2%5D%2C%22id%22%3A%227%22%7D&extensions=%7B%7D",
    ];
    for search in searches {
        let got = classify("GET", &format!("/graphql?{search}"), &[("x-cachet-tags", "a")], "").unwrap();
        assert_eq!(got, posted, "{search}");
    }
    // Without `X-Cachet-Tags`: the auto-tags of the operation name, as posted.
    let auto =
        classify("GET", "/v2/gql?query=query%20GetNotes%20%7B%20notes%20%7B%20id%20%7D%20%7D", &[], "");
    let posted = classify("POST", "/v2/gql", &[], r#"{"query": "query GetNotes { notes { id } }"}"#);
    assert_eq!(auto.unwrap(), posted.unwrap());
    for refused in ["query=mutation%20M%20%7B%20a%20%7D", "query=subscription%20S%20%7B%20a%20%7D"] {
        assert_eq!(classify("GET", &format!("/graphql?{refused}"), &[], "").unwrap(), RequestClass::Other);
    }
    let plain = RequestClass::Get { strategy: Strategy::NetworkFirst, tags: vec![] };
    assert_eq!(classify("GET", "/graphql", &[], "").unwrap(), plain);
    assert_eq!(classify("GET", "/graphql?operationName=x", &[], "").unwrap(), plain);
    assert_eq!(classify("GET", "/other?query=%7B%20a%20%7D", &[], "").unwrap(), plain);
    // Malformed: an error, as a malformed body is (the worker sends it on untouched).
    assert!(classify("GET", "/graphql?query=%7B%20a%20%7D&variables=%5B1%5D", &[], "").is_err());
    assert!(classify("GET", "/graphql?query=%7B%20a%20", &[], "").is_err());
}
