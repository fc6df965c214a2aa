//! Messages between the Yew hooks' bridges and the yew-agent reactor: [`AgentRequest`], [`AgentResponse`].

use serde::{Deserialize, Serialize};

use super::SwEvent;

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
    /// The page client's auth state changed (a login, refresh, logout or clear here or in another tab):
    /// the agent mirrors it and tells every bridge. The page is the source of truth for auth: it holds
    /// the token, and other tabs reach it over the `cachet-auth` channel.
    ReportAuth {
        /// Whether auth is present now.
        authenticated: bool,
    },
    /// Forward every Service Worker event to this bridge as [`AgentResponse::SwEvent`].
    WatchSwEvents,
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
    /// The subscription is registered: from now on no invalidation of its tags is missed.
    Subscribed {
        /// As given to `subscribe`.
        subscription: u64,
    },
    /// A Service Worker event, for a bridge that sent [`AgentRequest::WatchSwEvents`].
    SwEvent {
        /// The event.
        event: SwEvent,
    },
}
