//! Where an answer is stored: the cache and the key of every entry, for both edges (the Service Worker's
//! Cache Storage and the page's memory cache use the same keys, so a test of one names the other's entry).
//!
//! | Request | Cache | Entry URL |
//! |---|---|---|
//! | GET, shared partition | [`RUNTIME_CACHE`] | the request's absolute URL |
//! | GET, a user's partition | [`RUNTIME_CACHE`] | `<origin>/__cachet/get/<partition>/<encodeURIComponent(URL)>` |
//! | GraphQL query | [`DOCUMENT_CACHE`] | `<origin>/__cachet/gql/<partition>/<endpoint>/<key>` |
//! | anything in no partition ([`Partition::Uncached`]) | none: never stored | |
//!
//! `<endpoint>` is [`endpoint_id`] of the endpoint's path, so the same document sent to two endpoints
//! (`endpointIndex`) has two entries; `<key>` is [`crate::cache_key::cache_key`], the SHA-256 of the
//! canonical body. Documents stored by versions before the endpoint entered the key lived in
//! `cachet-graphql-v1`, which [`RETIRED_CACHES`] names: the worker deletes it, and its index records, when it
//! activates.

use crate::cache_key::{sha256_hex, GRAPHQL_CACHE_PREFIX};
use crate::partition::Partition;

/// The cache holding GET answers.
pub const RUNTIME_CACHE: &str = "cachet-runtime-v1";
/// The cache holding GraphQL documents (v2: the endpoint is part of the entry URL).
pub const DOCUMENT_CACHE: &str = "cachet-graphql-v2";
/// Every cache cachet stores answers in.
pub const CACHES: [&str; 2] = [RUNTIME_CACHE, DOCUMENT_CACHE];
/// Caches of earlier versions, whose entries no current request can name: deleted on activation.
pub const RETIRED_CACHES: [&str; 1] = ["cachet-graphql-v1"];
/// Path prefix of the entry URLs of GETs stored in a user's partition.
pub const PARTITIONED_GET_PREFIX: &str = "/__cachet/get/";

/// Where one answer is stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntryKey {
    /// The cache ([`RUNTIME_CACHE`] or [`DOCUMENT_CACHE`]).
    pub cache: &'static str,
    /// The entry's URL in it (absolute).
    pub url: String,
}

/// The entry of a GET of `url` (absolute) on `origin` in `partition`; `None` when it must not be stored.
pub fn get_entry(origin: &str, url: &str, partition: &Partition) -> Option<EntryKey> {
    let url = match partition {
        Partition::Shared => url.to_owned(),
        Partition::User(segment) => {
            format!("{origin}{PARTITIONED_GET_PREFIX}{segment}/{}", encode_uri_component(url))
        }
        Partition::Uncached => return None,
    };
    Some(EntryKey { cache: RUNTIME_CACHE, url })
}

/// The entry of a GraphQL document with cache key `key` posted to `endpoint` (its path) on `origin` in
/// `partition`; `None` when it must not be stored.
pub fn document_entry(origin: &str, endpoint: &str, key: &str, partition: &Partition) -> Option<EntryKey> {
    let segment = partition.segment()?;
    let url = format!("{origin}{GRAPHQL_CACHE_PREFIX}{segment}/{}/{key}", endpoint_id(endpoint));
    Some(EntryKey { cache: DOCUMENT_CACHE, url })
}

/// The endpoint segment of a document's entry URL: `e` and the first 8 hex characters of SHA-256 over the
/// endpoint's path. A hash rather than the endpoint's index, so reordering `features.graphql.endpoints`
/// never lets one endpoint's answers serve another's.
pub fn endpoint_id(endpoint: &str) -> String {
    let mut id = sha256_hex(format!("cachet-endpoint:{endpoint}").as_bytes());
    id.truncate(8);
    id.insert(0, 'e');
    id
}

/// JavaScript's `encodeURIComponent` (UTF-8 percent-encoding of everything but `A-Z a-z 0-9 - _ . ! ~ * '
/// ( )`), so that the entry URLs of partitioned GETs stored by earlier versions (which called the browser's)
/// are still found. Tested against the browser's in the client's browser tests.
pub fn encode_uri_component(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = String::with_capacity(text.len() * 3 / 2);
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX[usize::from(byte & 15)]));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_partition_and_the_endpoint() {
        let origin = "https://app.test";
        let url = "https://app.test/api/notes?q=a b&x=é";
        assert_eq!(get_entry(origin, url, &Partition::Shared).map(|key| key.url), Some(url.to_owned()));
        let user = get_entry(origin, url, &Partition::User("0123abcd".into())).map(|key| key.url);
        assert_eq!(
            user.as_deref(),
            Some("https://app.test/__cachet/get/0123abcd/https%3A%2F%2Fapp.test%2Fapi%2Fnotes%3Fq%3Da%20b%26x%3D%C3%A9")
        );
        assert_eq!(get_entry(origin, url, &Partition::Uncached), None);

        let one = document_entry(origin, "/graphql", "k", &Partition::Shared);
        let two = document_entry(origin, "/admin/graphql", "k", &Partition::Shared);
        assert_ne!(one, two, "the endpoint is part of the key");
        let one = one.map(|key| key.url).unwrap_or_default();
        assert_eq!(one, format!("{origin}/__cachet/gql/anonymous/{}/k", endpoint_id("/graphql")));
        assert_eq!(document_entry(origin, "/graphql", "k", &Partition::Uncached), None);
        assert_eq!(endpoint_id("/graphql").len(), 9);
    }

    #[test]
    fn encodes_as_javascript_does() {
        assert_eq!(encode_uri_component("azAZ09-_.!~*'()"), "azAZ09-_.!~*'()");
        assert_eq!(encode_uri_component("a/b?c=d&e#f g+%"), "a%2Fb%3Fc%3Dd%26e%23f%20g%2B%25");
        assert_eq!(encode_uri_component("€😀"), "%E2%82%AC%F0%9F%98%80");
    }
}
