//! [`SwEvent`]: what the Service Worker broadcasts to every page and agent.

use serde::{Deserialize, Serialize};

/// An event the Service Worker broadcasts to every page and yew-agent worker of its origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum SwEvent {
    /// The Service Worker finished activating; `build` identifies its wasm build.
    Activated {
        /// Build identifier (hash of the SW wasm).
        build: String,
    },
    /// A background re-fetch stored new content for `url` (`cachet:cache-updated`).
    CacheUpdated {
        /// The URL whose cached copy changed.
        url: String,
    },
    /// Entries carrying any of `tags` were removed (`cache-invalidated`); consumers refetch.
    CacheInvalidated {
        /// The invalidated tags.
        tags: Vec<String>,
    },
    /// The auth state changed (`sw-auth-state-change`).
    AuthStateChange {
        /// `login`, `logout`, `refresh` or `clear`.
        kind: AuthChangeKind,
    },
    /// A `clear-all` finished: caches, queue and stored auth are gone.
    ClearAllDone {
        /// The `requestId` of the [`super::PageToSw::ClearAll`] that asked for it.
        request_id: u64,
    },
    /// A mutation was put in the offline queue.
    MutationQueued {
        /// Queue item id.
        id: u64,
        /// The GraphQL operation name, when it has one.
        operation_name: Option<String>,
    },
    /// A queued mutation was sent and succeeded; `invalidated` tags were removed.
    MutationReplayed {
        /// Queue item id.
        id: u64,
        /// Tags invalidated by the replay.
        invalidated: Vec<String>,
    },
    /// A queued mutation failed and will be retried at `retry_at`.
    MutationFailed {
        /// Queue item id.
        id: u64,
        /// Sends so far.
        attempts: u32,
        /// Unix milliseconds of the next attempt.
        retry_at: u64,
    },
    /// A queued mutation was given up and moved to the dead letters.
    MutationDeadLettered {
        /// Queue item id.
        id: u64,
        /// Why.
        reason: DeadLetterReason,
    },
}

/// The `type` of `sw-auth-state-change` (SPEC §6).
///
/// | Kind | Emitted when |
/// |---|---|
/// | `login` | `setAuth` while unauthenticated |
/// | `refresh` | `setAuth` while authenticated, or a silent token refresh succeeded |
/// | `logout` | a request to the logout route succeeded, or the refresh was refused (the session is over) |
/// | `clear` | `clearAuth()` |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthChangeKind {
    /// A user logged in.
    Login,
    /// The user logged out.
    Logout,
    /// The auth data was renewed.
    Refresh,
    /// `clearAuth()` purged everything.
    Clear,
}

impl AuthChangeKind {
    /// Its wire name: `login`, `logout`, `refresh` or `clear`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthChangeKind::Login => "login",
            AuthChangeKind::Logout => "logout",
            AuthChangeKind::Refresh => "refresh",
            AuthChangeKind::Clear => "clear",
        }
    }
}

/// Why a mutation was given up. Wire: `{"kind":"rejected","status":422}`, `{"kind":"too-many-attempts"}`,
/// `{"kind":"unauthorized"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DeadLetterReason {
    /// The server refused it with a 4xx status.
    Rejected {
        /// The status.
        status: u16,
    },
    /// It failed `maxAttempts` times.
    TooManyAttempts,
    /// It met an auth failure again after a refresh.
    Unauthorized,
}
