//! The HTTP headers of cachet's wire, each named once, and how a header is read: which headers are
//! cachet's own (stripped before the network, by either edge), and how a marker header reads as set.
//! Both edges and the core's modules take them from here (the older paths, `tags::TAGS_HEADER` and the
//! like, re-export these).

/// The request header that selects a strategy for one request (`X-SW-Strategy`).
pub const STRATEGY_HEADER: &str = "x-sw-strategy";

/// The response header by which a server tags a cached response (`X-SW-Cache-Tags: a, b`).
pub const CACHE_TAGS_HEADER: &str = "x-sw-cache-tags";

/// The request header carrying a query's explicit `tags` option (replaces the auto-tags).
pub const TAGS_HEADER: &str = "x-cachet-tags";

/// The request header carrying a mutation's explicit `invalidate` option (added to the derived tags).
pub const INVALIDATE_HEADER: &str = "x-cachet-invalidate";

/// The request header that marks a request as authenticated (`1` or `true`, see [`marker_is_set`]).
pub const AUTH_HEADER: &str = "x-cachet-auth";

/// The request header that asks for a mutation to be queued when the network fails (`queueOffline`):
/// `1` or `true` (see [`marker_is_set`]).
pub const QUEUE_OFFLINE_HEADER: &str = "x-cachet-queue-offline";

/// The response header of a mutation the Service Worker queued instead of sending: the queue item's id.
/// Such an answer has status 202 and the body `{"data":null,"extensions":{"cachet":{"queued":true,"id":N}}}`
/// ([`queued_body`](crate::machines::queue::queued_body)).
pub const QUEUED_HEADER: &str = "x-cachet-queued";

/// The response header of a `queueOffline` mutation the Service Worker could neither send nor queue:
/// why, as [`NotQueued::as_str`](crate::machines::queue::NotQueued::as_str). Such an answer has status
/// [`NOT_QUEUED_STATUS`](crate::machines::queue::NOT_QUEUED_STATUS) and a GraphQL result with no data and
/// one error: the app learns that nothing was kept, rather than getting a network failure it cannot tell
/// from one the queue would have absorbed.
pub const NOT_QUEUED_HEADER: &str = "x-cachet-not-queued";

/// The request header that names a queued mutation to the server across its replays (lower case, as
/// stored). A server that keeps the first answer under the key and returns it, applying nothing, for a
/// repeat makes the queue's delivery exactly once.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// The response header of a stored entry: its generation, then (after one space) its tags, comma-separated.
pub const GENERATION_HEADER: &str = "x-cachet-generation";

/// The header of a stored answer recording when it was fetched (Unix milliseconds).
pub const STORED_AT_HEADER: &str = "x-cachet-stored-at";

/// The response header that tells where an answer came from: `cache`, `network` or `queue`.
pub const SOURCE_HEADER: &str = "x-cachet-source";

/// The response header on an answer from the network that was not stored, naming why
/// ([`crate::engine::NotStored::code`], e.g. `server-no-store`): any client, not only cachet's, can tell.
pub const NOT_STORED_HEADER: &str = "x-cachet-not-stored";

/// The response header on a stored answer given under stale-if-error, in place of a network failure or a
/// server's 5xx (`1`; [`crate::engine::plan::after_failure`]): the data is the last good answer, not the
/// server's word now. The page client reads it into its results' `stale`.
pub const STALE_HEADER: &str = "x-cachet-stale";

/// Whether the header `name` (lower case) is cachet's own: `X-SW-Strategy` and every `X-Cachet-*`. The
/// network never sees them: either edge strips them before a request leaves.
pub fn is_cachet_header(name: &str) -> bool {
    name == STRATEGY_HEADER || name.starts_with("x-cachet-")
}

/// Whether a marker header ([`AUTH_HEADER`], [`QUEUE_OFFLINE_HEADER`]) with this value is set: `1` or
/// `true`, spaces around ignored. Absent, or any other value, is not set.
pub fn marker_is_set(value: Option<&str>) -> bool {
    value.is_some_and(|value| matches!(value.trim(), "1" | "true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cachet_headers_are_the_strategy_and_every_x_cachet_one() {
        for name in [STRATEGY_HEADER, AUTH_HEADER, TAGS_HEADER, QUEUE_OFFLINE_HEADER, "x-cachet-anything"] {
            assert!(is_cachet_header(name), "{name}");
        }
        for name in [CACHE_TAGS_HEADER, IDEMPOTENCY_KEY_HEADER, "authorization", "x-cachetx", "x-sw-other"] {
            assert!(!is_cachet_header(name), "{name}");
        }
    }

    #[test]
    fn a_marker_is_set_by_one_or_true_only() {
        for value in ["1", "true", " true ", "1\t"] {
            assert!(marker_is_set(Some(value)), "{value:?}");
        }
        for value in [None, Some(""), Some("0"), Some("false"), Some("TRUE"), Some("yes"), Some("11")] {
            assert!(!marker_is_set(value), "{value:?}");
        }
    }
}
