//! GraphQL requests: is a request body GraphQL, which operation does it run, and what is it called.
//!
//! The wire body is the standard GraphQL-over-HTTP JSON object
//! `{"query": "...", "variables": {...}, "operationName": "..."}`; cachet uses the name `variables`, as
//! every GraphQL server and client does. A body is GraphQL when it is a JSON object whose `query` member
//! is a string. Anything else (not JSON, a JSON array such as a batched request, an object without a
//! string `query`, for example an automatic-persisted-query hash) is *not GraphQL*: [`parse_body`]
//! returns `Ok(None)` and the Service Worker passes the request through untouched.
//!
//! A body that is GraphQL but wrong (a lexically or structurally malformed document, `variables` that
//! is not an object or null, an `operationName` that is not a string or null or names no operation) is a
//! [`GraphqlError`]. Nothing here panics on any input: see the property tests and the fuzz target.
//!
//! `operationName: ""` is treated like an absent name, as most servers do.

pub mod lexer;
pub mod operation;
pub mod persisted;
mod result;

use crate::json::{Map, Value};
pub use lexer::LexError;
pub use operation::{scan_operations, select_operation, Operation, OperationKind};
pub use result::result_is_cacheable;

/// A GraphQL body that is GraphQL but cannot be executed as sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphqlError {
    /// The document is not lexically valid.
    #[error(transparent)]
    Lex(#[from] LexError),
    /// The document's structure is wrong at `offset`.
    #[error("GraphQL syntax error at byte {offset}: expected {expected}")]
    Syntax {
        /// Byte offset in the query text.
        offset: usize,
        /// What the scanner expected there.
        expected: &'static str,
    },
    /// The document holds type-system definitions, which a request cannot execute.
    #[error("GraphQL document is not executable: type-system definition at byte {offset}")]
    NotExecutable {
        /// Byte offset of the first type-system definition.
        offset: usize,
    },
    /// The document holds no operation (only fragments, or nothing).
    #[error("GraphQL document holds no operation")]
    NoOperation,
    /// Several operations and no `operationName` to choose one.
    #[error("GraphQL document holds several operations: operationName is required")]
    AmbiguousOperation,
    /// `operationName` names no operation of the document.
    #[error("GraphQL document holds no operation named {}", crate::json::quoted(.0))]
    UnknownOperationName(String),
    /// An anonymous operation next to other operations.
    #[error("an anonymous GraphQL operation must be the only operation of its document")]
    AnonymousNotAlone,
    /// Two operations share a name.
    #[error("GraphQL document holds two operations named {}", crate::json::quoted(.0))]
    DuplicateOperationName(String),
    /// A member of the JSON body has the wrong type.
    #[error("GraphQL request member `{member}`: expected {expected}")]
    BadMember {
        /// `variables` or `operationName`.
        member: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

/// A GraphQL request body, decoded and its operation chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphqlRequest {
    /// The GraphQL text, exactly as sent.
    pub query: String,
    /// The `variables` object; an absent or `null` member becomes the empty object.
    pub variables: Map,
    /// The `operationName` member as sent (`None` when absent, `null` or empty).
    pub operation_name: Option<String>,
    /// The operation the request executes.
    pub operation: Operation,
}

/// Reads a request body: `Ok(None)` when it is not GraphQL, the decoded request when it is.
pub fn parse_body(body: &[u8]) -> Result<Option<GraphqlRequest>, GraphqlError> {
    let Ok(Value::Object(object)) = crate::json::from_slice(body) else {
        return Ok(None);
    };
    from_members(object)
}

/// The request of a body's members (or a GET's parameters as the same members): `Ok(None)` without a
/// string `query`.
fn from_members(mut object: Map) -> Result<Option<GraphqlRequest>, GraphqlError> {
    let Some(Value::String(query)) = object.remove("query") else {
        return Ok(None);
    };
    let variables = match object.remove("variables") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(variables)) => variables,
        Some(_) => {
            return Err(GraphqlError::BadMember { member: "variables", expected: "an object or null" })
        }
    };
    let operation_name = match object.remove("operationName") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if name.is_empty() => None,
        Some(Value::String(name)) => Some(name),
        Some(_) => {
            return Err(GraphqlError::BadMember { member: "operationName", expected: "a string or null" })
        }
    };
    let operations = scan_operations(&query)?;
    let operation = select_operation(&operations, operation_name.as_deref())?;
    Ok(Some(GraphqlRequest { query, variables, operation_name, operation }))
}

/// Reads the search of a GET (without its `?`), as GraphQL over HTTP sends a query: `query`,
/// `variables` (JSON text), `operationName` (`extensions` is not part of the key). `Ok(None)` when it has
/// no `query` parameter; the decoded request, as [`parse_body`] would decode the same members posted,
/// when it has.
pub fn parse_search(search: &str) -> Result<Option<GraphqlRequest>, GraphqlError> {
    let mut body = Map::new();
    for (name, value) in form_pairs(search) {
        let member = match &*name {
            "query" | "operationName" => Value::String(value),
            "variables" => crate::json::from_str(&value).map_err(|_| GraphqlError::BadMember {
                member: "variables",
                expected: "an object or null",
            })?,
            _ => continue,
        };
        body.insert(name, member);
    }
    // The members themselves, not a JSON text of them: serialising a `Value` would link serde_json's
    // writer and formatting into every wasm.
    from_members(body)
}

/// The name-value pairs of an `application/x-www-form-urlencoded` text (a URL's search, without its
/// `?`), as the URL standard's parser reads them: split at `&` (empty pieces skipped), each at its first
/// `=`, `+` read as a space, percent-escapes decoded, then UTF-8 with every invalid sequence replaced
/// (U+FFFD). By hand, for the worker's size: the `form_urlencoded` crate's parser was 2 KB of a
/// stopped worker's wasm; that crate is the oracle of its tests.
pub fn form_pairs(text: &str) -> impl Iterator<Item = (String, String)> + '_ {
    text.split('&').filter(|piece| !piece.is_empty()).map(|piece| {
        let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
        (form_decode(name), form_decode(value))
    })
}

/// One name or value of [`form_pairs`], decoded.
fn form_decode(text: &str) -> String {
    let hex = |byte: u8| char::from(byte).to_digit(16);
    let mut decoded = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(byte) = bytes.next() {
        match byte {
            b'+' => decoded.push(b' '),
            b'%' => {
                let mut ahead = bytes.clone();
                match (ahead.next().and_then(hex), ahead.next().and_then(hex)) {
                    (Some(high), Some(low)) => {
                        // Two hex digits: at most 0xff.
                        decoded.push((high * 16 + low) as u8);
                        bytes = ahead;
                    }
                    _ => decoded.push(b'%'),
                }
            }
            _ => decoded.push(byte),
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The operation a GraphQL text runs, given an optional `operationName`: a shorthand for
/// [`scan_operations`] then [`select_operation`].
pub fn operation_of(query: &str, operation_name: Option<&str>) -> Result<Operation, GraphqlError> {
    select_operation(&scan_operations(query)?, operation_name.filter(|name| !name.is_empty()))
}
