//! Operation kind and name of GraphQL documents and request bodies, as tables.

use cachet_core::graphql::{operation_of, parse_body, GraphqlError, Operation, OperationKind};
use OperationKind::{Mutation, Query, Subscription};

fn op(kind: OperationKind, name: Option<&str>) -> Operation {
    Operation { kind, name: name.map(str::to_owned) }
}

/// (document, operationName, expected)
pub const DOCUMENTS: &[(&str, Option<&str>, OperationKind, Option<&str>)] = &[
    ("{ notes { id } }", None, Query, None),
    ("query { notes { id } }", None, Query, None),
    ("query GetNotes { notes { id } }", None, Query, Some("GetNotes")),
    ("mutation CreateNote($t: String!) { createNote(text: $t) { id } }", None, Mutation, Some("CreateNote")),
    ("subscription OnNote { noteAdded { id } }", None, Subscription, Some("OnNote")),
    ("query query { query }", None, Query, Some("query")),
    ("mutation subscription { a }", None, Mutation, Some("subscription")),
    ("query fragment { a }", None, Query, Some("fragment")),
    ("query Q @live { a }", None, Query, Some("Q")),
    (
        "query Q($a: [Int!]! = [1, 2] @d(x: {y: \"}\"}), $b: In = {k: [{}]}) @a @b(c: 1) { a }",
        None,
        Query,
        Some("Q"),
    ),
    ("mutation @dir { a }", None, Mutation, None),
    ("fragment F on Note { id } query GetNote { note { ...F } }", None, Query, Some("GetNote")),
    ("query A { a } mutation B { b }", Some("B"), Mutation, Some("B")),
    ("query A { a } mutation B { b }", Some("A"), Query, Some("A")),
    ("# mutation Evil { x }\nquery Safe { a }", None, Query, Some("Safe")),
    ("query Q { a(s: \"mutation M { } # {\") }", None, Query, Some("Q")),
    ("query Q { a(s: \"\"\"block } mutation \\\"\"\" {\"\"\") }", None, Query, Some("Q")),
    ("query Q { a(s: \"日本 ✓ \\u00e9 \\u{1F600}\") } # ✓ {", None, Query, Some("Q")),
    ("\u{FEFF}query Q,,{,a,}", None, Query, Some("Q")),
    ("query\r\nQ\r{\ta\n}", None, Query, Some("Q")),
    ("query Q { ... on Note { id } ... @include(if: true) { b } ...F }", None, Query, Some("Q")),
];

#[test]
fn documents_give_their_operation_kind_and_name() {
    for (document, operation_name, kind, name) in DOCUMENTS {
        assert_eq!(operation_of(document, *operation_name), Ok(op(*kind, *name)), "document {document:?}");
    }
}

#[test]
fn unusable_documents_are_typed_errors() {
    let table: &[(&str, Option<&str>, GraphqlError)] = &[
        ("", None, GraphqlError::NoOperation),
        ("# only a comment", None, GraphqlError::NoOperation),
        ("fragment F on T { a }", None, GraphqlError::NoOperation),
        ("query A { a } query B { b }", None, GraphqlError::AmbiguousOperation),
        ("query A { a } query B { b }", Some(""), GraphqlError::AmbiguousOperation),
        ("query A { a } query B { b }", Some("C"), GraphqlError::UnknownOperationName("C".into())),
        ("query A { a }", Some("B"), GraphqlError::UnknownOperationName("B".into())),
        ("{ a } query B { b }", Some("B"), GraphqlError::AnonymousNotAlone),
        ("query A { a } query A { b }", Some("A"), GraphqlError::DuplicateOperationName("A".into())),
        ("type Note { id: ID }", None, GraphqlError::NotExecutable { offset: 0 }),
        ("query A { a } extend type Q { b: Int }", None, GraphqlError::NotExecutable { offset: 14 }),
        ("\"doc\" query A { a }", None, GraphqlError::NotExecutable { offset: 0 }),
        ("query A", None, GraphqlError::Syntax { offset: 7, expected: "`(`, `@` or `{`" }),
        ("query A { a", None, GraphqlError::Syntax { offset: 11, expected: "a closing bracket" }),
        (
            "query A { a ) }",
            None,
            GraphqlError::Syntax { offset: 12, expected: "a matching closing bracket" },
        ),
        ("query A { }", None, GraphqlError::Syntax { offset: 8, expected: "a non-empty group" }),
        ("query A($a: Int) }", None, GraphqlError::Syntax { offset: 17, expected: "`{`" }),
        (
            "query A { a } }",
            None,
            GraphqlError::Syntax { offset: 14, expected: "an operation or a fragment" },
        ),
        ("fragment on on T { a }", None, GraphqlError::Syntax { offset: 9, expected: "a name" }),
        ("fragment F T { a }", None, GraphqlError::Syntax { offset: 11, expected: "on" }),
        ("query A @ { a }", None, GraphqlError::Syntax { offset: 10, expected: "a directive name" }),
        ("notes { id }", None, GraphqlError::Syntax { offset: 0, expected: "an operation or a fragment" }),
    ];
    for (document, operation_name, expected) in table {
        assert_eq!(operation_of(document, *operation_name).as_ref(), Err(expected), "document {document:?}");
    }
    assert!(matches!(operation_of("query A { a(s: \"x) }", None), Err(GraphqlError::Lex(_))));
}

#[test]
fn request_bodies_are_graphql_or_not() {
    let not_graphql: &[&[u8]] = &[
        b"",
        b"not json",
        b"[{\"query\": \"{ a }\"}]",
        b"{\"mutation\": \"{ a }\"}",
        b"{\"query\": 42}",
        b"{\"extensions\": {\"persistedQuery\": {\"sha256Hash\": \"ab\"}}}",
        b"\xff\xfe",
    ];
    for body in not_graphql {
        assert_eq!(parse_body(body), Ok(None), "body {:?}", String::from_utf8_lossy(body));
    }
    let request = parse_body(
        br#"{"query": "query A { a } mutation B { b }", "variables": {"x": 1}, "operationName": "B"}"#,
    )
    .unwrap()
    .unwrap();
    assert_eq!(request.operation, op(Mutation, Some("B")));
    assert_eq!(request.operation_name.as_deref(), Some("B"));
    assert_eq!(request.variables.get("x"), Some(&serde_json::json!(1).into()));
    let request =
        parse_body(br#"{"query": "{ a }", "variables": null, "operationName": null}"#).unwrap().unwrap();
    assert!(request.variables.is_empty());
    assert_eq!(request.operation_name, None);

    let errors: &[(&[u8], GraphqlError)] = &[
        (
            br#"{"query": "{ a }", "variables": [1]}"#,
            GraphqlError::BadMember { member: "variables", expected: "an object or null" },
        ),
        (
            br#"{"query": "{ a }", "operationName": 3}"#,
            GraphqlError::BadMember { member: "operationName", expected: "a string or null" },
        ),
        (br#"{"query": "{ a"}"#, GraphqlError::Syntax { offset: 3, expected: "a closing bracket" }),
        (br#"{"query": "{ a }", "operationName": "B"}"#, GraphqlError::UnknownOperationName("B".into())),
    ];
    for (body, expected) in errors {
        assert_eq!(parse_body(body).as_ref(), Err(expected), "body {:?}", String::from_utf8_lossy(body));
    }
}
