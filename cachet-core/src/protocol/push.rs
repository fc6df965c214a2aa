//! Server push (SPEC §5.8): what a push's payload may say. What the Service Worker does with one is
//! decided in [`crate::push`].
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
//! | `tags` | array of tags, at most [`crate::tags::MAX_TAGS`] | every cached GraphQL document carrying one is removed and `cache-invalidated {tags}` is broadcast, as a mutation does: open tabs' hooks re-run |
//! | `refetch` | array, at most [`MAX_REFETCH`] (optional) | GraphQL queries `{query, variables?, operationName?, endpointIndex?}` the worker re-fetches afterwards, in the background, and stores (network-first, with the user's cookie): the next page to open finds them fresh |
//!
//! The whole payload is at most [`MAX_PUSH_BYTES`] (the Web Push record size). [`crate::push::PushAction::decide`]
//! reads it against the worker's config; anything else is a [`crate::push::PushError`] that the worker reports on the
//! console, changing nothing. A refetch document must be a query: a push never makes the worker run a
//! mutation. Unknown fields are ignored (a later minor addition), an unknown `type` or another `v` is
//! refused.
//!
//! Pushes are accepted only with cookie auth or no auth ([`crate::config::PushRefusal`]): the worker
//! handles a push with no page open, and holds no token.

use crate::json::Map;
use serde::{Deserialize, Serialize};

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
    pub variables: Option<Map>,
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

/// The bytes of a VAPID public key as `PushManager.subscribe` takes them (`applicationServerKey`), from
/// the base64url text servers publish: 65 bytes, an uncompressed P-256 point (`0x04` first). Padding
/// (`=`) and the standard alphabet (`+`, `/`) are accepted too.
pub fn vapid_public_key(text: &str) -> Result<Vec<u8>, VapidKeyError> {
    let bytes = base64url_decode(text.trim()).ok_or(VapidKeyError::NotBase64Url)?;
    if bytes.len() != 65 || bytes[0] != 4 {
        return Err(VapidKeyError::NotAPoint { bytes: bytes.len() });
    }
    Ok(bytes)
}

/// Why a text is not a VAPID public key ([`vapid_public_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VapidKeyError {
    /// A character outside base64url (and the standard alphabet), or a length no encoding has.
    #[error("the VAPID public key is not base64url text")]
    NotBase64Url,
    /// Decoded, but not 65 bytes starting with `0x04`.
    #[error(
        "the VAPID public key must be an uncompressed P-256 point (65 bytes starting with 0x04), got {bytes} bytes"
    )]
    NotAPoint {
        /// How many bytes the text decoded to.
        bytes: usize,
    },
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
