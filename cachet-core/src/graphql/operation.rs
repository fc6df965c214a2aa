//! Finding the operations of a GraphQL document and choosing the one a request executes.
//!
//! The scanner reads the top level of an *executable* document (GraphQL spec §2.2–2.8) from the tokens of
//! [`super::lexer`] and never recurses into selection sets, so it stays small enough for the Service Worker:
//!
//! - `{ ... }` is the anonymous query shorthand;
//! - `query` / `mutation` / `subscription`, an optional name, optional variable definitions `( ... )`,
//!   optional directives `@name` / `@name( ... )`, then a selection set `{ ... }`;
//! - `fragment Name on Type`, optional directives, then a selection set (skipped, fragments don't choose
//!   the operation);
//! - the bodies of `( ... )`, `[ ... ]` and `{ ... }` are skipped with their brackets balanced.
//!
//! A type-system definition (`type`, `schema`, a description string, ...) makes the document not
//! executable: servers reject it, so it is a [`GraphqlError::NotExecutable`].
//!
//! Choosing the operation ([`select_operation`]) follows the spec's `GetOperation` and the request rules
//! of GraphQL over HTTP: with an `operationName`, the operation of that name; without one, the only
//! operation. An anonymous operation must be alone (`LoneAnonymousOperation`), names must be unique
//! (`OperationNameUniqueness`).

use super::lexer::{Lexer, Token, TokenKind};
use super::GraphqlError;
use serde::{Deserialize, Serialize};

/// The three kinds of GraphQL operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationKind {
    /// `query` or the `{ ... }` shorthand: cacheable.
    Query,
    /// `mutation`: never cached, invalidates tags.
    Mutation,
    /// `subscription`: never cached.
    Subscription,
}

/// One operation definition found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Query, mutation or subscription.
    pub kind: OperationKind,
    /// The operation name; `None` for an anonymous operation.
    pub name: Option<String>,
}

/// Lists the operations of an executable document, in order.
pub fn scan_operations(source: &str) -> Result<Vec<Operation>, GraphqlError> {
    let mut scanner = Scanner { source, lexer: Lexer::new(source) };
    let mut operations = Vec::new();
    while let Some(token) = scanner.next()? {
        if token.kind == TokenKind::Punctuator('{') {
            scanner.skip_balanced(token)?;
            operations.push(Operation { kind: OperationKind::Query, name: None });
            continue;
        }
        let keyword = if token.kind == TokenKind::Name { token.text(source) } else { "" };
        let kind = match keyword {
            "query" => OperationKind::Query,
            "mutation" => OperationKind::Mutation,
            "subscription" => OperationKind::Subscription,
            "fragment" => {
                scanner.expect_name_other_than("on")?;
                scanner.expect_keyword("on")?;
                scanner.expect_name_other_than("")?;
                let brace = scanner.skip_directives()?;
                scanner.skip_balanced(brace)?;
                continue;
            }
            "schema" | "scalar" | "type" | "interface" | "union" | "enum" | "input" | "directive"
            | "extend" => return Err(GraphqlError::NotExecutable { offset: token.start }),
            _ if matches!(token.kind, TokenKind::String | TokenKind::BlockString) => {
                return Err(GraphqlError::NotExecutable { offset: token.start })
            }
            _ => {
                return Err(GraphqlError::Syntax {
                    offset: token.start,
                    expected: "an operation or a fragment",
                })
            }
        };
        let mut next = scanner.next_required("an operation name or `{`")?;
        let mut name = None;
        if next.kind == TokenKind::Name {
            name = Some(next.text(source).to_owned());
            next = scanner.next_required("`(`, `@` or `{`")?;
        }
        if next.kind == TokenKind::Punctuator('(') {
            scanner.skip_balanced(next)?;
            next = scanner.next_required("`@` or `{`")?;
        }
        let brace = scanner.skip_directives_from(next)?;
        scanner.skip_balanced(brace)?;
        operations.push(Operation { kind, name });
    }
    if operations.is_empty() {
        return Err(GraphqlError::NoOperation);
    }
    Ok(operations)
}

/// Chooses the operation a request executes, given the request's `operationName`.
pub fn select_operation(
    operations: &[Operation],
    operation_name: Option<&str>,
) -> Result<Operation, GraphqlError> {
    if operations.len() > 1 {
        if operations.iter().any(|operation| operation.name.is_none()) {
            return Err(GraphqlError::AnonymousNotAlone);
        }
        for (index, operation) in operations.iter().enumerate() {
            if operations[..index].iter().any(|earlier| earlier.name == operation.name) {
                return Err(GraphqlError::DuplicateOperationName(operation.name.clone().unwrap_or_default()));
            }
        }
    }
    match operation_name {
        Some(wanted) => operations
            .iter()
            .find(|operation| operation.name.as_deref() == Some(wanted))
            .cloned()
            .ok_or_else(|| GraphqlError::UnknownOperationName(wanted.to_owned())),
        None => match operations {
            [only] => Ok(only.clone()),
            [] => Err(GraphqlError::NoOperation),
            _ => Err(GraphqlError::AmbiguousOperation),
        },
    }
}

struct Scanner<'a> {
    source: &'a str,
    lexer: Lexer<'a>,
}

impl Scanner<'_> {
    fn next(&mut self) -> Result<Option<Token>, GraphqlError> {
        match self.lexer.next() {
            None => Ok(None),
            Some(Ok(token)) => Ok(Some(token)),
            Some(Err(error)) => Err(GraphqlError::Lex(error)),
        }
    }

    fn next_required(&mut self, expected: &'static str) -> Result<Token, GraphqlError> {
        let offset = self.source.len();
        self.next()?.ok_or(GraphqlError::Syntax { offset, expected })
    }

    fn expect_name_other_than(&mut self, forbidden: &str) -> Result<(), GraphqlError> {
        let token = self.next_required("a name")?;
        if token.kind != TokenKind::Name || token.text(self.source) == forbidden {
            return Err(GraphqlError::Syntax { offset: token.start, expected: "a name" });
        }
        Ok(())
    }

    fn expect_keyword(&mut self, keyword: &'static str) -> Result<(), GraphqlError> {
        let token = self.next_required(keyword)?;
        if token.kind != TokenKind::Name || token.text(self.source) != keyword {
            return Err(GraphqlError::Syntax { offset: token.start, expected: keyword });
        }
        Ok(())
    }

    fn skip_directives(&mut self) -> Result<Token, GraphqlError> {
        let next = self.next_required("`@` or `{`")?;
        self.skip_directives_from(next)
    }

    /// Skips `@name` and `@name( ... )` starting at `token`; returns the `{` that follows them.
    fn skip_directives_from(&mut self, mut token: Token) -> Result<Token, GraphqlError> {
        while token.kind == TokenKind::Punctuator('@') {
            let name = self.next_required("a directive name")?;
            if name.kind != TokenKind::Name {
                return Err(GraphqlError::Syntax { offset: name.start, expected: "a directive name" });
            }
            token = self.next_required("`@` or `{`")?;
            if token.kind == TokenKind::Punctuator('(') {
                self.skip_balanced(token)?;
                token = self.next_required("`@` or `{`")?;
            }
        }
        if token.kind != TokenKind::Punctuator('{') {
            return Err(GraphqlError::Syntax { offset: token.start, expected: "`{`" });
        }
        Ok(token)
    }

    /// Skips past the bracket that closes `open` (already read), checking that every bracket pairs up.
    fn skip_balanced(&mut self, open: Token) -> Result<(), GraphqlError> {
        let mut stack = vec![closer(open.kind)];
        let mut empty_group_at = Some(open.start);
        while let Some(expected_closer) = stack.last().copied() {
            let token = self
                .next()?
                .ok_or(GraphqlError::Syntax { offset: self.source.len(), expected: "a closing bracket" })?;
            match token.kind {
                TokenKind::Punctuator(open_char @ ('(' | '[' | '{')) => {
                    stack.push(closer(TokenKind::Punctuator(open_char)));
                    // Nested `{}` is a valid empty input object and `[]` an empty list; `()` is never valid.
                    empty_group_at = (open_char == '(').then_some(token.start);
                }
                TokenKind::Punctuator(close_char @ (')' | ']' | '}')) => {
                    if close_char != expected_closer {
                        return Err(GraphqlError::Syntax {
                            offset: token.start,
                            expected: "a matching closing bracket",
                        });
                    }
                    // An empty selection set, variable list or argument list is never valid GraphQL.
                    if let Some(offset) = empty_group_at {
                        return Err(GraphqlError::Syntax { offset, expected: "a non-empty group" });
                    }
                    stack.pop();
                }
                _ => empty_group_at = None,
            }
            if matches!(token.kind, TokenKind::Punctuator(')' | ']' | '}')) {
                empty_group_at = None;
            }
        }
        Ok(())
    }
}

fn closer(open: TokenKind) -> char {
    match open {
        TokenKind::Punctuator('(') => ')',
        TokenKind::Punctuator('[') => ']',
        _ => '}',
    }
}
