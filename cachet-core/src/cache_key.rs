//! Cache keys, user partitions and the synthetic URLs under which GraphQL responses are stored.
//!
//! # The key
//!
//! A GraphQL query's key is the lowercase hex SHA-256 (64 characters) of the canonical JSON text
//!
//! ```text
//! {"operationName":<name or null>,"query":<query text>,"variables":<canonical variables>}
//! ```
//!
//! - **Variables are canonicalised**: object keys sorted by their UTF-8 bytes at every depth, no
//!   whitespace, so `{"a":1,"b":2}` and `{"b":2,"a":1}` share one entry. Absent and `null` variables
//!   are the empty object `{}`. Array order matters. Numbers are written as they were sent
//!   ([`crate::json::Number`] keeps a number's text), so `1` and `1.0`, or `1.5` and `1.50`, are
//!   different keys: that only ever costs a cache miss, never wrong data. Integers are written as
//!   serde_json writes them, so the keys of earlier versions (which read numbers with serde_json) stand
//!   for every variable holding integers only. Strings use JSON's minimal escaping.
//! - **The query text is kept as sent**, whitespace and comments included. Normalising it would need a
//!   full printer in the Service Worker, and one client sends one text for one query anyway.
//! - **`operationName` is part of the key**: a document holding several operations answers differently
//!   per name. Absent, `null` and `""` are all `null`.
//!
//! Own serialisation, not `serde_json::to_string`, writes the canonical text (over [`crate::json`]'s
//! tree, which the worker reads request bodies into), so the key does not depend on a serde_json
//! feature turned on somewhere in a build.
//!
//! # Partitions
//!
//! Cached GraphQL responses live in a per-user partition so that one user never reads another's data:
//! [`partition_id`] hashes the user's identity (for example the user id from `/api/me`) into 16 hex
//! characters; [`ANONYMOUS_PARTITION`] holds what is fetched without identity. Where an entry is stored
//! (its cache and URL, partition and endpoint included) is [`crate::engine::key`].

use crate::json::{write_canonical, write_canonical_object, write_string, Map, Value};
use sha2::{Digest, Sha256};

/// The partition for requests made without a known user.
pub const ANONYMOUS_PARTITION: &str = "anonymous";
/// Path prefix of the synthetic Cache Storage URLs of GraphQL entries.
pub const GRAPHQL_CACHE_PREFIX: &str = "/__cachet/gql/";

/// The cache key of a GraphQL query: 64 lowercase hex characters.
pub fn cache_key(query: &str, variables: Option<&Map>, operation_name: Option<&str>) -> String {
    let mut text = String::with_capacity(query.len() + 64);
    text.push_str("{\"operationName\":");
    match operation_name.filter(|name| !name.is_empty()) {
        Some(name) => write_string(&mut text, name),
        None => text.push_str("null"),
    }
    text.push_str(",\"query\":");
    write_string(&mut text, query);
    text.push_str(",\"variables\":");
    write_canonical_object(&mut text, variables.unwrap_or(&Map::new()));
    text.push('}');
    sha256_hex(text.as_bytes())
}

/// The canonical JSON text of a value: object keys sorted at every depth, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut text = String::new();
    write_canonical(&mut text, value);
    text
}

/// The partition of a user: the first 16 hex characters of SHA-256 over `cachet-partition:<identity>`.
pub fn partition_id(user_identity: &str) -> String {
    let mut hex = sha256_hex(["cachet-partition:", user_identity].concat().as_bytes());
    hex.truncate(16);
    hex
}

/// The fingerprint of an `Authorization` header value: the first 16 hex characters of SHA-256 over
/// `cachet-auth:<value>`. The Service Worker names the token a failed request carried by this value in a
/// [`crate::protocol::SwToPage::RefreshRequest`], so that the page can tell "my current token failed:
/// refresh" from "an older token failed: here is the current one", without the token itself travelling
/// back.
pub fn auth_fingerprint(authorization: &str) -> String {
    let mut hex = sha256_hex(["cachet-auth:", authorization].concat().as_bytes());
    hex.truncate(16);
    hex
}

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    // By hand, not `write!("{byte:02x}")`: no `core::fmt` on a cold hit's path (issue "Weight").
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}
