//! Server push (SPEC §5.8): what a push's payload may say, and what the Service Worker does with it.
//!
//! A server sends a push to the browsers of a user when data changed elsewhere (another user, another
//! device, a back-office job). Its payload is one [`PushMessage`], JSON in the protocol's envelope:
//!
//! ```json
//! {"v":1,"type":"invalidate","tags":["todos","summary"],
//!  "refetch":[{"query":"query GetTodos { todos { id title done } }"}]}
//! ```
//!
//! | Field | Type | Meaning |
//! |---|---|---|
//! | `v` | `1` | the protocol version ([`super::PROTOCOL_VERSION`]); another is ignored |
//! | `type` | `"invalidate"` | the only kind so far |
//! | `tags` | array of tags, at most [`MAX_TAGS`] | every cached GraphQL document carrying one is removed and `cache-invalidated {tags}` is broadcast, as a mutation does: open tabs' hooks re-run |
//! | `refetch` | array, at most [`MAX_REFETCH`] (optional) | GraphQL queries `{query, variables?, operationName?, endpointIndex?}` the worker re-fetches afterwards, in the background, and stores (network-first, with the user's cookie): the next page to open finds them fresh |
//!
//! The whole payload is at most [`MAX_PUSH_BYTES`] (the Web Push record size). [`PushAction::decide`]
//! reads it against the worker's config; anything else is a [`PushError`] that the worker reports on the
//! console, changing nothing. A refetch document must be a query: a push never makes the worker run a
//! mutation. Unknown fields are ignored (a later minor addition), an unknown `type` or another `v` is
//! refused.
//!
//! Pushes are accepted only with cookie auth or no auth ([`crate::config::PushRefusal`]): the worker
//! handles a push with no page open, and holds no token.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ProtocolError;
use crate::config::{Config, PushRefusal};
use crate::graphql::{operation_of, OperationKind};
use crate::tags::{normalize_tag, TagError, MAX_TAGS};

/// The largest push payload read, in bytes (RFC 8291 records are 4096 bytes).
pub const MAX_PUSH_BYTES: usize = 4096;
/// The most documents one push may ask to re-fetch.
pub const MAX_REFETCH: usize = 4;

/// A push payload, as a server sends it (see the module docs for the wire form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum PushMessage {
    /// Data changed on the server: drop what carries `tags`, then re-fetch `refetch`.
    Invalidate {
        /// Tags to invalidate.
        tags: Vec<String>,
        /// Queries to re-fetch in the background afterwards.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refetch: Vec<RefetchDocument>,
    },
}

/// A GraphQL query a push asks the worker to re-fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefetchDocument {
    /// The GraphQL text, exactly as the app sends it (the cache key hashes it).
    pub query: String,
    /// Its variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    /// Its `operationName`, for a document of several operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_name: Option<String>,
    /// The index of the endpoint in `features.graphql.endpoints` (default 0).
    #[serde(default)]
    pub endpoint_index: usize,
}

impl PushMessage {
    /// An `invalidate` push of `tags`, nothing to re-fetch: what a server usually sends.
    pub fn invalidate(tags: &[&str]) -> Self {
        PushMessage::Invalidate {
            tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
            refetch: Vec::new(),
        }
    }
}

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
    #[error("push refetch[{index}]: {message}")]
    Document {
        /// Its position in `refetch`.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// Neither a tag nor a document: the push asks for nothing.
    #[error("the push names no tag and no document")]
    Empty,
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
        let PushMessage::Invalidate { tags, refetch } = super::decode::<PushMessage>(text)?;
        if tags.len() > MAX_TAGS {
            return Err(PushError::TooManyTags { count: tags.len() });
        }
        let mut normal: Vec<String> = Vec::with_capacity(tags.len());
        for (index, tag) in tags.iter().enumerate() {
            let tag = normalize_tag(tag).map_err(|error| match error {
                TagError::Empty { .. } => TagError::Empty { index },
                other => other,
            })?;
            if !normal.contains(&tag) {
                normal.push(tag);
            }
        }
        if refetch.len() > MAX_REFETCH {
            return Err(PushError::TooManyDocuments { count: refetch.len() });
        }
        let refetch = refetch
            .iter()
            .enumerate()
            .map(|(index, document)| {
                refetch_of(document, config).map_err(|message| PushError::Document { index, message })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if normal.is_empty() && refetch.is_empty() {
            return Err(PushError::Empty);
        }
        Ok(PushAction { tags: normal, refetch })
    }
}

fn refetch_of(document: &RefetchDocument, config: &Config) -> Result<Refetch, String> {
    let graphql = &config.features.graphql;
    if !graphql.enabled {
        return Err("features.graphql is off in the worker's config".to_owned());
    }
    let endpoint = graphql.endpoints.get(document.endpoint_index).ok_or_else(|| {
        format!(
            "endpointIndex {} is past the {} configured endpoints",
            document.endpoint_index,
            graphql.endpoints.len()
        )
    })?;
    let operation = operation_of(&document.query, document.operation_name.as_deref())
        .map_err(|error| error.to_string())?;
    if operation.kind != OperationKind::Query {
        return Err(
            "only a query can be re-fetched: a push never runs a mutation or a subscription".to_owned()
        );
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

/// The bytes of a VAPID public key as `PushManager.subscribe` takes them (`applicationServerKey`), from
/// the base64url text servers publish: 65 bytes, an uncompressed P-256 point (`0x04` first). Padding
/// (`=`) and the standard alphabet (`+`, `/`) are accepted too.
pub fn vapid_public_key(text: &str) -> Result<Vec<u8>, String> {
    let bytes = base64url_decode(text.trim())
        .ok_or_else(|| "the VAPID public key is not base64url text".to_owned())?;
    if bytes.len() != 65 || bytes[0] != 4 {
        return Err(format!(
            "the VAPID public key must be an uncompressed P-256 point (65 bytes starting with 0x04), got {} bytes",
            bytes.len()
        ));
    }
    Ok(bytes)
}

fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut bytes = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0_u32, 0_u32);
    for character in text.bytes() {
        let value = match character {
            b'A'..=b'Z' => character - b'A',
            b'a'..=b'z' => character - b'a' + 26,
            b'0'..=b'9' => character - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    // A single leftover character carries fewer than 8 bits: not base64.
    (bits < 6).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_decodes_what_encoders_write() {
        assert_eq!(base64url_decode("aGVsbG8"), Some(b"hello".to_vec()));
        assert_eq!(base64url_decode("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(base64url_decode("-_8"), Some(vec![0xfb, 0xff]));
        assert_eq!(base64url_decode("+/8"), Some(vec![0xfb, 0xff]));
        assert_eq!(base64url_decode("a"), None);
        assert_eq!(base64url_decode("a b"), None);
        assert_eq!(base64url_decode(""), Some(Vec::new()));
    }
}
