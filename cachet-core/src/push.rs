//! What the Service Worker does with a server push (SPEC §5.8): [`PushAction::decide`] reads a payload
//! (the wire form is [`crate::protocol::push`]) against the worker's config; anything it cannot carry out
//! is a [`PushError`] the worker reports on the console, changing nothing.

use crate::json::{Map, Value};

use crate::config::{Config, PushRefusal};
use crate::graphql::{operation_of, OperationKind};
use crate::protocol::push::{PushMessage, RefetchDocument, MAX_PUSH_BYTES, MAX_REFETCH};
use crate::protocol::ProtocolError;
use crate::tags::{normalize_tags, TagError, MAX_TAGS};

/// What the Service Worker does with one valid push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushAction {
    /// Tags to invalidate (normal form, each once); may be empty when the push only re-fetches.
    pub tags: Vec<String>,
    /// Queries to re-fetch after the invalidation, in order.
    pub refetch: Vec<Refetch>,
}

/// One re-fetch: a GraphQL POST the worker sends as if a page had (network-first, stored with its tags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refetch {
    /// The endpoint path, e.g. `/graphql`.
    pub endpoint: String,
    /// The JSON body to POST.
    pub body: String,
}

/// Why a push was ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// This app's config does not accept pushes.
    #[error(transparent)]
    Refused(#[from] PushRefusal),
    /// The push carried no payload.
    #[error("the push carries no payload")]
    NoPayload,
    /// The payload is larger than [`MAX_PUSH_BYTES`].
    #[error("the push payload is {len} bytes, the limit is {MAX_PUSH_BYTES}")]
    TooLarge {
        /// Its length in bytes.
        len: usize,
    },
    /// The payload is not UTF-8 text.
    #[error("the push payload is not UTF-8 text")]
    NotText,
    /// The payload is not a push message of this protocol (not JSON, another version, unknown type,
    /// a field of the wrong type).
    #[error("push payload: {0}")]
    Protocol(#[from] ProtocolError),
    /// More than [`MAX_TAGS`] tags.
    #[error("the push names {count} tags, the limit is {MAX_TAGS}")]
    TooManyTags {
        /// How many.
        count: usize,
    },
    /// A tag is not a tag.
    #[error("push tags: {0}")]
    Tag(#[from] TagError),
    /// More than [`MAX_REFETCH`] documents to re-fetch.
    #[error("the push asks to re-fetch {count} documents, the limit is {MAX_REFETCH}")]
    TooManyDocuments {
        /// How many.
        count: usize,
    },
    /// A document to re-fetch cannot be re-fetched.
    #[error("push refetch[{index}]: {problem}")]
    Document {
        /// Its position in `refetch`.
        index: usize,
        /// What is wrong.
        problem: DocumentProblem,
    },
    /// Neither a tag nor a document: the push asks for nothing.
    #[error("the push names no tag and no document")]
    Empty,
}

/// Why a document of a push's `refetch` cannot be re-fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentProblem {
    /// `features.graphql` is off in the worker's config.
    #[error("features.graphql is off in the worker's config")]
    GraphqlOff,
    /// `endpointIndex` is past the configured endpoints.
    #[error("endpointIndex {index} is past the {configured} configured endpoints")]
    NoSuchEndpoint {
        /// The index given.
        index: usize,
        /// How many endpoints are configured.
        configured: usize,
    },
    /// The document does not parse, or names no operation it holds.
    #[error(transparent)]
    Graphql(#[from] crate::graphql::GraphqlError),
    /// A mutation or a subscription: a push never runs one.
    #[error("only a query can be re-fetched: a push never runs a mutation or a subscription")]
    NotAQuery,
}

impl PushAction {
    /// Reads a push payload (the bytes of `PushEvent.data`, `None` without one) against the config the
    /// worker runs on: whether pushes are accepted, then the message, its tags and its documents.
    pub fn decide(payload: Option<&[u8]>, config: &Config) -> Result<PushAction, PushError> {
        config.features.push.allowed(&config.features.auth)?;
        let payload = payload.ok_or(PushError::NoPayload)?;
        if payload.len() > MAX_PUSH_BYTES {
            return Err(PushError::TooLarge { len: payload.len() });
        }
        let text = std::str::from_utf8(payload).map_err(|_| PushError::NotText)?;
        let PushMessage::Invalidate { tags, refetch } = crate::protocol::decode_message::<PushMessage>(text)?;
        if tags.len() > MAX_TAGS {
            return Err(PushError::TooManyTags { count: tags.len() });
        }
        let normal = normalize_tags(tags.iter().map(String::as_str), tags.len())?;
        if refetch.len() > MAX_REFETCH {
            return Err(PushError::TooManyDocuments { count: refetch.len() });
        }
        let refetch = refetch
            .iter()
            .enumerate()
            .map(|(index, document)| {
                refetch_of(document, config).map_err(|problem| PushError::Document { index, problem })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if normal.is_empty() && refetch.is_empty() {
            return Err(PushError::Empty);
        }
        Ok(PushAction { tags: normal, refetch })
    }
}

fn refetch_of(document: &RefetchDocument, config: &Config) -> Result<Refetch, DocumentProblem> {
    let graphql = &config.features.graphql;
    if !graphql.enabled {
        return Err(DocumentProblem::GraphqlOff);
    }
    let endpoint = graphql.endpoints.get(document.endpoint_index).ok_or(DocumentProblem::NoSuchEndpoint {
        index: document.endpoint_index,
        configured: graphql.endpoints.len(),
    })?;
    let operation = operation_of(&document.query, document.operation_name.as_deref())?;
    if operation.kind != OperationKind::Query {
        return Err(DocumentProblem::NotAQuery);
    }
    let mut body = Map::new();
    body.insert("query".to_owned(), Value::String(document.query.clone()));
    if let Some(variables) = &document.variables {
        body.insert("variables".to_owned(), Value::Object(variables.clone()));
    }
    if let Some(name) = &document.operation_name {
        body.insert("operationName".to_owned(), Value::String(name.clone()));
    }
    Ok(Refetch { endpoint: endpoint.clone(), body: Value::Object(body).to_string() })
}
