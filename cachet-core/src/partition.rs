//! Which cache partition a request's entry lives in, so that one user is never answered with another
//! user's entries, even when a purge failed.
//!
//! | request | identity known to the Service Worker | partition |
//! |---|---|---|
//! | not marked | any | [`Partition::Shared`] ([`ANONYMOUS_PARTITION`]) |
//! | marked `X-Cachet-Auth: 1` | `Some(p)` (set by the page with `set-identity`) | [`Partition::User`]`(p)` |
//! | marked | `None` | [`Partition::Uncached`]: network only, nothing stored or served from the cache |
//!
//! The page client marks the requests it sends with auth (`{ auth: true }`). The header is cachet's: the
//! Service Worker strips it before the network, like every `X-Cachet-*` header.

use crate::cache_key::ANONYMOUS_PARTITION;

/// The request header that marks a request as authenticated (`1` or `true`).
pub const AUTH_HEADER: &str = "x-cachet-auth";

/// Where a request's cache entry lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// Not authenticated: the shared partition.
    Shared,
    /// Authenticated: this user's partition (a [`crate::cache_key::partition_id`]).
    User(String),
    /// Authenticated but no user is known: never cached.
    Uncached,
}

impl Partition {
    /// The partition segment of the entry's cache URL; `None` when the request must not be cached.
    pub fn segment(&self) -> Option<&str> {
        match self {
            Partition::Shared => Some(ANONYMOUS_PARTITION),
            Partition::User(partition) => Some(partition),
            Partition::Uncached => None,
        }
    }
}

/// The partition of a request, from its headers (looked up by lowercase name) and the current identity.
pub fn partition_for(headers: &dyn Fn(&str) -> Option<String>, identity: Option<&str>) -> Partition {
    let marked = headers(AUTH_HEADER).is_some_and(|value| matches!(value.trim(), "1" | "true"));
    match (marked, identity) {
        (false, _) => Partition::Shared,
        (true, Some(identity)) => Partition::User(identity.to_owned()),
        (true, None) => Partition::Uncached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_follow_the_mark_and_the_identity() {
        let table: [(Option<&str>, Option<&str>, Partition); 6] = [
            (None, None, Partition::Shared),
            (None, Some("a1"), Partition::Shared),
            (Some("0"), Some("a1"), Partition::Shared),
            (Some("1"), Some("a1"), Partition::User("a1".into())),
            (Some(" true "), Some("b2"), Partition::User("b2".into())),
            (Some("1"), None, Partition::Uncached),
        ];
        for (mark, identity, expected) in table {
            let headers = |name: &str| (name == AUTH_HEADER).then(|| mark.map(str::to_owned)).flatten();
            assert_eq!(partition_for(&headers, identity), expected, "{mark:?} {identity:?}");
        }
        assert_eq!(Partition::Shared.segment(), Some(ANONYMOUS_PARTITION));
        assert_eq!(Partition::Uncached.segment(), None);
    }
}
