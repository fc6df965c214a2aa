//! The hand-written scanner against apollo-parser (a spec-compliant parser) as an oracle: over the table
//! corpus, over generated documents, and over mutations of them. Plus: no input makes it panic.

use super::graphql_table::DOCUMENTS;
use apollo_parser::cst::{self, CstNode};
use cachet_core::graphql::{parse_body, scan_operations, Operation, OperationKind};
use proptest::prelude::*;

#[derive(Debug, PartialEq)]
enum Oracle {
    /// apollo-parser reports syntax errors.
    Invalid,
    /// Valid, but holds type-system definitions.
    NotExecutable,
    /// Valid and executable: its operations.
    Operations(Vec<Operation>),
}

fn oracle(source: &str) -> Oracle {
    let tree = apollo_parser::Parser::new(source).parse();
    if tree.errors().len() > 0 {
        return Oracle::Invalid;
    }
    let mut operations = Vec::new();
    for definition in tree.document().definitions() {
        match definition {
            cst::Definition::OperationDefinition(operation) => {
                let kind = match operation.operation_type() {
                    None => OperationKind::Query,
                    Some(kind) if kind.query_token().is_some() => OperationKind::Query,
                    Some(kind) if kind.mutation_token().is_some() => OperationKind::Mutation,
                    Some(_) => OperationKind::Subscription,
                };
                let name = operation.name().map(|name| name.text().to_string());
                operations.push(Operation { kind, name });
            }
            cst::Definition::FragmentDefinition(fragment) => {
                let _ = fragment.syntax();
            }
            _ => return Oracle::NotExecutable,
        }
    }
    Oracle::Operations(operations)
}

/// Where apollo-parser accepts an executable document with operations, the scanner finds the same ones.
fn assert_agrees(source: &str) {
    let ours = scan_operations(source);
    match oracle(source) {
        Oracle::Operations(expected) if !expected.is_empty() => {
            assert_eq!(ours, Ok(expected), "document {source:?}");
        }
        Oracle::Operations(_) => assert!(ours.is_err(), "no operation in {source:?}"),
        Oracle::NotExecutable => assert!(ours.is_err(), "type-system document accepted: {source:?}"),
        Oracle::Invalid => {}
    }
}

#[test]
fn the_corpus_agrees_with_apollo_parser() {
    for (document, ..) in DOCUMENTS {
        assert!(matches!(oracle(document), Oracle::Operations(_)), "corpus document rejected by apollo-parser: {document:?}");
        assert_agrees(document);
    }
    for document in [
        "type Note { id: ID }",
        "\"described\" type Note { id: ID }",
        "schema { query: Q }",
        "query A { a } scalar Date",
        "fragment F on T { a }",
    ] {
        assert_agrees(document);
    }
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[_A-Za-z][_0-9A-Za-z]{0,7}",
        1 => prop::sample::select(vec!["query", "mutation", "subscription", "fragment", "on", "true", "null", "type", "extend", "__typename"]).prop_map(String::from),
    ]
}

/// The gap between tokens, written as `\u{1}` and replaced by ignored tokens afterwards.
const GAP: &str = "\u{1}";

fn string_value() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec!["a", " ", "é", "日本", "✓", "{", "}", "#", "(", "\\\"", "\\\\", "\\n", "\\u00e9", "\\/", "\"\"\"x"]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| {
        // A lone `"""` would close nothing in a quoted string, but `"` must be escaped there.
        let content: String = pieces.concat().replace("\"\"\"x", "x");
        format!("\"{content}\"")
    })
}

fn block_string_value() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec!["a", " ", "\n", "\r\n", "é", "{", "}", "#", "\"x", "\"\"x", "\\\"\"\"", "\\n", "\\"]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| format!("\"\"\"{}x\"\"\"", pieces.concat()))
}

fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "-?(0|[1-9][0-9]{0,5})",
        "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
        string_value(),
        block_string_value(),
        name().prop_filter("enum values exclude true false null", |n| !["true", "false", "null"].contains(&n.as_str())),
        Just("true".to_owned()),
        Just("null".to_owned()),
        name().prop_map(|n| format!("${GAP}{n}")),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|items| format!("[{GAP}{}{GAP}]", items.join(GAP))),
            prop::collection::vec((name(), inner), 0..3).prop_map(|fields| {
                let fields: Vec<String> = fields.into_iter().map(|(k, v)| format!("{k}{GAP}:{GAP}{v}")).collect();
                format!("{{{GAP}{}{GAP}}}", fields.join(GAP))
            }),
        ]
    })
}

fn arguments() -> impl Strategy<Value = String> {
    prop::collection::vec((name(), value()), 0..3).prop_map(|args| {
        if args.is_empty() {
            return String::new();
        }
        let args: Vec<String> = args.into_iter().map(|(k, v)| format!("{k}{GAP}:{GAP}{v}")).collect();
        format!("({GAP}{}{GAP})", args.join(GAP))
    })
}

fn directives() -> impl Strategy<Value = String> {
    prop::collection::vec((name(), arguments()), 0..2)
        .prop_map(|dirs| dirs.into_iter().map(|(n, a)| format!("{GAP}@{GAP}{n}{GAP}{a}")).collect())
}

fn fragment_name() -> impl Strategy<Value = String> {
    name().prop_filter("a fragment is not named on", |n| n != "on")
}

fn selection_set() -> impl Strategy<Value = String> {
    let field = (prop::option::of(name()), name(), arguments(), directives())
        .prop_map(|(alias, n, a, d)| format!("{}{n}{GAP}{a}{d}", alias.map(|al| format!("{al}{GAP}:{GAP}")).unwrap_or_default()));
    let leaf = prop::collection::vec(prop_oneof![3 => field, 1 => (fragment_name(), directives()).prop_map(|(n, d)| format!("...{GAP}{n}{d}"))], 1..4)
        .prop_map(|items| format!("{{{GAP}{}{GAP}}}", items.join(GAP)));
    leaf.prop_recursive(3, 16, 3, |inner| {
        let nested_field = (name(), arguments(), directives(), inner.clone()).prop_map(|(n, a, d, s)| format!("{n}{GAP}{a}{d}{GAP}{s}"));
        let inline = (prop::option::of(name()), directives(), inner)
            .prop_map(|(t, d, s)| format!("...{GAP}{}{d}{GAP}{s}", t.map(|t| format!("on{GAP}{t}{GAP}")).unwrap_or_default()));
        prop::collection::vec(prop_oneof![nested_field, inline, name()], 1..4).prop_map(|items| format!("{{{GAP}{}{GAP}}}", items.join(GAP)))
    })
}

fn variable_definitions() -> impl Strategy<Value = String> {
    let ty = prop::sample::select(vec!["Int", "String!", "[ID!]!", "[[Float]]", "In"]);
    prop::collection::vec((name(), ty, prop::option::of(value()), directives()), 0..3).prop_map(|defs| {
        if defs.is_empty() {
            return String::new();
        }
        let defs: Vec<String> = defs
            .into_iter()
            .map(|(n, t, v, d)| format!("${GAP}{n}{GAP}:{GAP}{t}{}{d}", v.map(|v| format!("{GAP}={GAP}{v}")).unwrap_or_default()))
            .collect();
        format!("({GAP}{}{GAP})", defs.join(GAP))
    })
}

fn kind() -> impl Strategy<Value = OperationKind> {
    prop::sample::select(vec![OperationKind::Query, OperationKind::Mutation, OperationKind::Subscription])
}

fn keyword(kind: OperationKind) -> &'static str {
    match kind {
        OperationKind::Query => "query",
        OperationKind::Mutation => "mutation",
        OperationKind::Subscription => "subscription",
    }
}

/// A generated executable document and the operations it holds.
fn document() -> impl Strategy<Value = (String, Vec<Operation>)> {
    let named_operation = (kind(), variable_definitions(), directives(), selection_set());
    let fragment = (fragment_name(), name(), directives(), selection_set())
        .prop_map(|(n, t, d, s)| format!("fragment{GAP}{n}{GAP}on{GAP}{t}{d}{GAP}{s}"));
    let several = (prop::collection::vec(named_operation, 1..4), prop::collection::vec(fragment, 0..3), name()).prop_map(
        |(operations, fragments, base)| {
            let mut definitions = fragments;
            let mut expected = Vec::new();
            for (index, (kind, vars, dirs, selections)) in operations.into_iter().enumerate() {
                let op_name = format!("{base}{index}");
                definitions.insert(index.min(definitions.len()), format!("{}{GAP}{op_name}{GAP}{vars}{dirs}{GAP}{selections}", keyword(kind)));
                expected.push(Operation { kind, name: Some(op_name) });
            }
            (definitions.join(GAP), expected)
        },
    );
    let anonymous = (prop::option::of(kind()), directives(), selection_set()).prop_map(|(kind, dirs, selections)| match kind {
        None => (selections, vec![Operation { kind: OperationKind::Query, name: None }]),
        Some(kind) => (format!("{}{dirs}{GAP}{selections}", keyword(kind)), vec![Operation { kind, name: None }]),
    });
    let single_keyword_named = (kind(), name(), selection_set())
        .prop_map(|(kind, n, s)| (format!("{}{GAP}{n}{GAP}{s}", keyword(kind)), vec![Operation { kind, name: Some(n) }]));
    prop_oneof![3 => several, 1 => anonymous, 1 => single_keyword_named]
}

fn fill_gaps(text: &str, gaps: &[&str]) -> String {
    let mut filled = String::with_capacity(text.len() * 2);
    for (index, part) in text.split(GAP).enumerate() {
        if index > 0 {
            filled.push_str(gaps[index % gaps.len()]);
        }
        filled.push_str(part);
    }
    filled
}

fn gaps() -> impl Strategy<Value = Vec<&'static str>> {
    let gap = prop::sample::select(vec!["", "", " ", "  ", "\n", "\r\n", "\r", "\t", ",", " , ", " # a { comment \"\n", "\u{FEFF}"]);
    prop::collection::vec(gap, 1..8)
}

/// Tokens that must stay apart: a gap that is empty between two names would merge them.
fn separate(text: &str, gaps: &[&str]) -> String {
    let fixed: Vec<&str> = gaps.iter().map(|gap| if gap.is_empty() { " " } else { *gap }).collect();
    fill_gaps(text, &fixed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn generated_documents_agree_with_the_generator_and_apollo_parser((text, expected) in document(), gaps in gaps()) {
        let source = separate(&text, &gaps);
        prop_assert_eq!(oracle(&source), Oracle::Operations(expected.clone()), "generator produced {:?}", source);
        prop_assert_eq!(scan_operations(&source), Ok(expected), "document {:?}", source);
    }

    #[test]
    fn mutated_documents_never_disagree_with_apollo_parser(
        (text, _) in document(),
        gaps in gaps(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, prop::sample::select(vec!["", "{", "}", "(", ")", "\"", "\"\"\"", "#", "\n", "query", "mutation X", "...", "@d", "$", "1", "é", "\\"])), 1..4),
    ) {
        let mut source = separate(&text, &gaps);
        for (at, delete, insert) in edits {
            let mut start = at.index(source.len() + 1);
            while !source.is_char_boundary(start) { start -= 1; }
            let mut end = (start + delete).min(source.len());
            while !source.is_char_boundary(end) { end += 1; }
            source.replace_range(start..end, insert);
        }
        assert_agrees(&source);
    }

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        let _ = scan_operations(&source);
        assert_agrees(&source);
    }

    #[test]
    fn arbitrary_bodies_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), query in "\\PC{0,60}") {
        let _ = parse_body(&bytes);
        let body = serde_json::json!({ "query": query, "operationName": query, "variables": { "q": query } });
        let _ = parse_body(body.to_string().as_bytes());
    }
}
