//! The caching strategies the Service Worker applies, named on the wire by the `X-SW-Strategy` request
//! header and in `cachet.config.json` (`strategy.default`, `strategy.graphql`).
//!
//! Header values are matched after trimming and ASCII-lowercasing; any other value is an
//! [`UnknownStrategy`] error (the Service Worker then falls back to the configured default and says why).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use crate::protocol::headers::STRATEGY_HEADER;

/// How the Service Worker answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The cache when it holds the request, else the network (and store).
    CacheFirst,
    /// The network (and store); the cache when the network fails.
    NetworkFirst,
    /// The cache at once, and a background re-fetch that stores fresh content; the network when nothing is
    /// cached.
    StaleWhileRevalidate,
    /// The network only; nothing stored.
    NetworkOnly,
    /// The cache only; an error when nothing is cached.
    CacheOnly,
    /// The cache at once and, always, the network: the fresh answer is stored and announced
    /// (`cache-updated`) even when it did not change, so the caller gets a second answer (the hooks render
    /// twice); the network when nothing is cached.
    CacheAndNetwork,
}

impl Strategy {
    /// Every strategy, in the order the error messages list them.
    pub const ALL: [Strategy; 6] = [
        Strategy::CacheFirst,
        Strategy::NetworkFirst,
        Strategy::StaleWhileRevalidate,
        Strategy::NetworkOnly,
        Strategy::CacheOnly,
        Strategy::CacheAndNetwork,
    ];

    /// The wire names of [`Self::ALL`], in order (what `cachet.config.json` accepts).
    pub const NAMES: [&'static str; 6] = [
        "cache-first",
        "network-first",
        "stale-while-revalidate",
        "network-only",
        "cache-only",
        "cache-and-network",
    ];

    /// The wire name, e.g. `cache-first`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::CacheFirst => "cache-first",
            Strategy::NetworkFirst => "network-first",
            Strategy::StaleWhileRevalidate => "stale-while-revalidate",
            Strategy::NetworkOnly => "network-only",
            Strategy::CacheOnly => "cache-only",
            Strategy::CacheAndNetwork => "cache-and-network",
        }
    }

    /// The strategy a fetch is sent with when the server's current data is wanted (a refetch on focus,
    /// reconnect, polling or by hand): one that could answer from the cache without asking the server
    /// (cache-first, stale-while-revalidate) becomes network-first, which still stores the answer and
    /// still falls back to the cache offline; the others already ask the server, or must not
    /// (cache-only).
    pub fn for_fresh_data(self) -> Strategy {
        match self {
            Strategy::CacheFirst | Strategy::StaleWhileRevalidate | Strategy::CacheAndNetwork => {
                Strategy::NetworkFirst
            }
            other => other,
        }
    }

    /// The strategy a query hook sends one fetch with: `fresh` for a refetch that wants the server's data
    /// ([`Self::for_fresh_data`]); a cache-and-network query's first read goes cache-first, because the
    /// hook asks for the fresh answer itself right after a cached one (`cachet_core::machines::query`), so
    /// the worker need not re-fetch in the background as well.
    pub fn for_query_fetch(self, fresh: bool) -> Strategy {
        match (self, fresh) {
            (strategy, true) => strategy.for_fresh_data(),
            (Strategy::CacheAndNetwork, false) => Strategy::CacheFirst,
            (strategy, false) => strategy,
        }
    }

    /// Whether this strategy may store responses.
    pub fn stores(self) -> bool {
        !matches!(self, Strategy::NetworkOnly)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A strategy name that names no strategy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("X-SW-Strategy: expected one of cache-first, network-first, stale-while-revalidate, network-only, cache-only, cache-and-network, got {}", crate::json::quoted(.0))]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let wanted = value.trim().to_ascii_lowercase();
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.as_str() == wanted)
            .ok_or_else(|| UnknownStrategy(value.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_header_value_and_rejects_others() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.as_str().parse(), Ok(strategy));
            assert_eq!(format!(" {} ", strategy.as_str().to_uppercase()).parse(), Ok(strategy));
            let json = serde_json::to_string(&strategy).unwrap_or_default();
            assert_eq!(json, format!("\"{strategy}\""));
        }
        assert_eq!("cache-last".parse::<Strategy>(), Err(UnknownStrategy("cache-last".into())));
        assert_eq!("".parse::<Strategy>(), Err(UnknownStrategy(String::new())));
    }

    #[test]
    fn fresh_data_is_asked_of_the_server_unless_the_strategy_forbids_it() {
        let fresh: Vec<Strategy> = Strategy::ALL.into_iter().map(Strategy::for_fresh_data).collect();
        use Strategy::*;
        assert_eq!(fresh, [NetworkFirst, NetworkFirst, NetworkFirst, NetworkOnly, CacheOnly, NetworkFirst]);
        let first: Vec<Strategy> = Strategy::ALL.into_iter().map(|s| s.for_query_fetch(false)).collect();
        assert_eq!(
            first,
            [CacheFirst, NetworkFirst, StaleWhileRevalidate, NetworkOnly, CacheOnly, CacheFirst]
        );
        assert_eq!(Strategy::NAMES, Strategy::ALL.map(Strategy::as_str));
    }
}
