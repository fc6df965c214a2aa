//! Messages between the Yew hooks' bridges and the yew-agent reactor: [`AgentRequest`], [`AgentResponse`].

use serde::{Deserialize, Serialize};

/// A bridge asks the reactor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum AgentRequest {
    /// Tell this bridge when any of `tags` is invalidated.
    Subscribe {
        /// The bridge's own id for this subscription.
        subscription: u64,
        /// Tags of the query it watches.
        tags: Vec<String>,
    },
    /// Stop a subscription.
    Unsubscribe {
        /// As given to `subscribe`.
        subscription: u64,
    },
    /// Send the current [`AgentResponse::AuthState`].
    AuthStateRequest,
}

/// The reactor tells a bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum AgentResponse {
    /// The auth state (`getAuthState()` without the secret `auth` data).
    AuthState {
        /// Connectivity.
        online: bool,
        /// Whether auth is present.
        authenticated: bool,
    },
    /// Tags this bridge subscribed to were invalidated: refetch.
    Invalidated {
        /// The subscriptions hit.
        subscriptions: Vec<u64>,
        /// The invalidated tags.
        tags: Vec<String>,
    },
    /// Connectivity changed.
    OnlineChanged {
        /// The new value.
        online: bool,
    },
    /// A cached URL got new content.
    CacheUpdated {
        /// The URL.
        url: String,
    },
}
