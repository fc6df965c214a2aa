//! The hand-written scanner against apollo-parser (a spec-compliant parser) as an oracle: over the table
//! corpus, over generated documents, and over mutations of them. Plus: no input makes it panic.

use super::graphql_table::DOCUMENTS;
use apollo_parser::cst::{self, CstNode};
use cachet_core::graphql::{parse_body, scan_operations, GraphqlError, Operation, OperationKind};
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

/// apollo-parser 0.8 accepts a line terminator right after the opening quote of a string (`"\nx"`, while it
/// rejects `"x\ny"`); the spec (`StringCharacter` excludes line terminators) and graphql-js reject both,
/// and so does the scanner. The one known disagreement, checked precisely.
fn is_known_apollo_leniency(source: &str, ours: &Result<Vec<Operation>, GraphqlError>) -> bool {
    let Err(GraphqlError::Lex(error)) = ours else {
        return false;
    };
    if error.message != "unterminated string" {
        return false;
    }
    let mut escaped = false;
    for character in source[error.offset + 1..].chars() {
        match character {
            '\n' | '\r' => return true,
            '"' if !escaped => return false,
            _ => {}
        }
        escaped = character == '\\' && !escaped;
    }
    false
}

/// Where apollo-parser accepts an executable document with operations, the scanner finds the same ones.
fn assert_agrees(source: &str) {
    let ours = scan_operations(source);
    match oracle(source) {
        Oracle::Operations(_) if is_known_apollo_leniency(source, &ours) => {}
        Oracle::Operations(expected) if !expected.is_empty() => {
            assert_eq!(ours, Ok(expected), "document {source:?}");
        }
        Oracle::Operations(_) => assert!(ours.is_err(), "no operation in {source:?}"),
        Oracle::NotExecutable => {
            assert!(ours.is_err(), "type-system document accepted: {source:?}")
        }
        Oracle::Invalid => {}
    }
}

#[test]
fn a_line_break_inside_a_quoted_string_is_the_known_deviation() {
    let source = "{ a(s: \"\nx\") }";
    assert!(matches!(oracle(source), Oracle::Operations(_)), "apollo-parser accepts it");
    let ours = scan_operations(source);
    assert!(is_known_apollo_leniency(source, &ours), "{ours:?}");
    assert!(!is_known_apollo_leniency("{ a(s: \"x\\\"\") } \n", &scan_operations("{ a(s: \"x\\\"\") } \n")));
}

#[test]
fn the_corpus_agrees_with_apollo_parser() {
    for (document, ..) in DOCUMENTS {
        assert!(
            matches!(oracle(document), Oracle::Operations(_)),
            "corpus document rejected by apollo-parser: {document:?}"
        );
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

/// The gap between tokens, written as `\u{1}` and replaced by ignored tokens afterwards. After `...` the
/// generator writes a plain space: apollo-parser 0.8 rejects a comma there (`...,F`), which the spec allows
/// (commas are ignored tokens), and the scanner accepts.
const GAP: &str = "\u{1}";
/// The gap between items of a list (arguments, fields, selections, definitions), where commas also go:
/// apollo-parser 0.8 rejects a comma in some other places the spec allows one (`a,: b`, `...,F`).
const SEP: &str = "\u{2}";

fn string_value() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a", " ", "é", "日本", "✓", "{", "}", "#", "(", "\\\"", "\\\\", "\\n", "\\u00e9", "\\/", "\"\"\"x",
    ]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| {
        // A lone `"""` would close nothing in a quoted string, but `"` must be escaped there.
        let content: String = pieces.concat().replace("\"\"\"x", "x");
        format!("\"{content}\"")
    })
}

fn block_string_value() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a", " ", "\n", "\r\n", "é", "{", "}", "#", "\"x", "\"\"x", "\\\"\"\"", "\\n", "\\",
    ]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| format!("\"\"\"{}x\"\"\"", pieces.concat()))
}

/// A value; `constant` values (defaults and directives of variable definitions) hold no `$variable`.
fn value(constant: bool) -> impl Strategy<Value = String> {
    let variable = name().prop_map(move |n| if constant { "1.5".to_owned() } else { format!("${GAP}{n}") });
    let leaf = prop_oneof![
        "-?(0|[1-9][0-9]{0,5})",
        "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
        string_value(),
        block_string_value(),
        name().prop_filter("enum values exclude true false null", |n| !["true", "false", "null"]
            .contains(&n.as_str())),
        Just("true".to_owned()),
        Just("null".to_owned()),
        variable,
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|items| format!("[{GAP}{}{GAP}]", items.join(SEP))),
            prop::collection::vec((name(), inner), 0..3).prop_map(|fields| {
                let fields: Vec<String> =
                    fields.into_iter().map(|(k, v)| format!("{k}{GAP}:{GAP}{v}")).collect();
                format!("{{{GAP}{}{GAP}}}", fields.join(SEP))
            }),
        ]
    })
}

fn arguments(constant: bool) -> impl Strategy<Value = String> {
    prop::collection::vec((name(), value(constant)), 0..3).prop_map(|args| {
        if args.is_empty() {
            return String::new();
        }
        let args: Vec<String> = args.into_iter().map(|(k, v)| format!("{k}{GAP}:{GAP}{v}")).collect();
        format!("({GAP}{}{GAP})", args.join(SEP))
    })
}

fn directives(constant: bool) -> impl Strategy<Value = String> {
    prop::collection::vec((name(), arguments(constant)), 0..2)
        .prop_map(|dirs| dirs.into_iter().map(|(n, a)| format!("{GAP}@{GAP}{n}{GAP}{a}")).collect())
}

fn fragment_name() -> impl Strategy<Value = String> {
    name().prop_filter("a fragment is not named on", |n| n != "on")
}

fn selection_set() -> impl Strategy<Value = String> {
    let field = (prop::option::of(name()), name(), arguments(false), directives(false)).prop_map(
        |(alias, n, a, d)| {
            format!("{}{n}{GAP}{a}{d}", alias.map(|al| format!("{al}{GAP}:{GAP}")).unwrap_or_default())
        },
    );
    let leaf = prop::collection::vec(prop_oneof![3 => field, 1 => (fragment_name(), directives(false)).prop_map(|(n, d)| format!("... {n}{d}"))], 1..4)
        .prop_map(|items| format!("{{{GAP}{}{GAP}}}", items.join(SEP)));
    leaf.prop_recursive(3, 16, 3, |inner| {
        let nested_field = (name(), arguments(false), directives(false), inner.clone())
            .prop_map(|(n, a, d, s)| format!("{n}{GAP}{a}{d}{GAP}{s}"));
        let inline = (prop::option::of(name()), directives(false), inner).prop_map(|(t, d, s)| {
            format!("... {}{d}{GAP}{s}", t.map(|t| format!("on{GAP}{t}{GAP}")).unwrap_or_default())
        });
        prop::collection::vec(prop_oneof![nested_field, inline, name()], 1..4)
            .prop_map(|items| format!("{{{GAP}{}{GAP}}}", items.join(SEP)))
    })
}

fn variable_definitions() -> impl Strategy<Value = String> {
    let ty = prop::sample::select(vec!["Int", "String!", "[ID!]!", "[[Float]]", "In"]);
    prop::collection::vec((name(), ty, prop::option::of(value(true)), directives(true)), 0..3).prop_map(
        |defs| {
            if defs.is_empty() {
                return String::new();
            }
            let defs: Vec<String> = defs
                .into_iter()
                .map(|(n, t, v, d)| {
                    format!(
                        "${GAP}{n}{GAP}:{GAP}{t}{}{d}",
                        v.map(|v| format!("{GAP}={GAP}{v}")).unwrap_or_default()
                    )
                })
                .collect();
            format!("({GAP}{}{GAP})", defs.join(SEP))
        },
    )
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
    let named_operation = (kind(), variable_definitions(), directives(false), selection_set());
    let fragment = (fragment_name(), name(), directives(false), selection_set())
        .prop_map(|(n, t, d, s)| format!("fragment{GAP}{n}{GAP}on{GAP}{t}{d}{GAP}{s}"));
    let several =
        (prop::collection::vec(named_operation, 1..4), prop::collection::vec(fragment, 0..3), name())
            .prop_map(|(operations, fragments, base)| {
                let mut definitions = fragments;
                let mut expected = Vec::new();
                for (index, (kind, vars, dirs, selections)) in operations.into_iter().enumerate() {
                    let op_name = format!("{base}{index}");
                    definitions.insert(
                        index.min(definitions.len()),
                        format!("{}{GAP}{op_name}{GAP}{vars}{dirs}{GAP}{selections}", keyword(kind)),
                    );
                    expected.push(Operation { kind, name: Some(op_name) });
                }
                (definitions.join(SEP), expected)
            });
    let anonymous = (prop::option::of(kind()), directives(false), selection_set()).prop_map(
        |(kind, dirs, selections)| match kind {
            None => (selections, vec![Operation { kind: OperationKind::Query, name: None }]),
            Some(kind) => {
                (format!("{}{dirs}{GAP}{selections}", keyword(kind)), vec![Operation { kind, name: None }])
            }
        },
    );
    let single_keyword_named = (kind(), name(), selection_set()).prop_map(|(kind, n, s)| {
        (format!("{}{GAP}{n}{GAP}{s}", keyword(kind)), vec![Operation { kind, name: Some(n) }])
    });
    prop_oneof![3 => several, 1 => anonymous, 1 => single_keyword_named]
}

fn fill_gaps(text: &str, gaps: &[&str], separators: &[&str]) -> String {
    let mut filled = String::with_capacity(text.len() * 2);
    for (index, character) in text.chars().enumerate() {
        match character {
            '\u{1}' => filled.push_str(gaps[index % gaps.len()]),
            '\u{2}' => filled.push_str(separators[index % separators.len()]),
            other => filled.push(other),
        }
    }
    filled
}

fn gaps() -> impl Strategy<Value = (Vec<&'static str>, Vec<&'static str>)> {
    let gap = prop::sample::select(vec![
        "",
        "",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        " # a { comment \"\n",
        "\u{FEFF}",
    ]);
    let separator = prop::sample::select(vec![" ", ",", " , ", ",,", "\n,", " # c ,\n"]);
    (prop::collection::vec(gap, 1..8), prop::collection::vec(separator, 1..4))
}

/// Tokens that must stay apart: a gap that is empty between two names would merge them.
fn separate(text: &str, (gaps, separators): &(Vec<&str>, Vec<&str>)) -> String {
    let fixed: Vec<&str> = gaps.iter().map(|gap| if gap.is_empty() { " " } else { *gap }).collect();
    fill_gaps(text, &fixed, separators)
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

/// [`cachet_core::graphql::form_pairs`] (by hand, for the worker's size) against the `form_urlencoded`
/// crate's parser.
fn form_oracle(text: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(text.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

#[test]
fn form_pairs_read_a_search_as_the_form_urlencoded_crate_does() {
    let table = [
        "",
        "&",
        "query=%7B%20a%20%7D&operationName=A",
        "query={+a+}&variables=%7B%22x%22%3A1%7D",
        "a=1&&b=2&=3&c",
        "a=%&b=%2&c=%zz&d=%41%4a%4A",
        "a==b&=&%=%",
        "%C3%A9t%C3%A9=%E2%82%AC",
        "bad=%C3%28&lone=%ED%A0%80&cut=%E2%82",
        "é=ü&日本=語",
    ];
    for text in table {
        assert_eq!(cachet_core::graphql::form_pairs(text).collect::<Vec<_>>(), form_oracle(text), "{text:?}");
    }
}

proptest! {
    #[test]
    fn form_pairs_agree_with_the_form_urlencoded_crate(text in "([a-zA-Z0-9é日=&+%]|%[0-9a-fA-F]{2}|%[C-F][0-9A-F]){0,24}") {
        prop_assert_eq!(cachet_core::graphql::form_pairs(&text).collect::<Vec<_>>(), form_oracle(&text));
    }
}
