//! [`AuthData`] (SPEC §2) and what of it is persisted.
//!
//! # What is stored where
//!
//! | Field | Page memory | IndexedDB (`cachet-client` / `auth`) | Other tabs | Service Worker |
//! |---|---|---|---|---|
//! | `token` | yes | **never** | in memory, over the `cachet-auth` BroadcastChannel | only the `Authorization` value of one retry, never stored |
//! | `user` | yes | yes | yes | only its partition hash (`set-identity`) |
//! | `expiresAt` | yes | yes | yes | no |
//! | fingerprint of the `Authorization` value | derived | yes (16 hex of a SHA-256) | derived | derived per request |
//!
//! The user and the expiry are persisted so that a reload knows who was logged in (cookie auth needs
//! nothing else: the browser holds the session cookie) and so that `getAuth()` can answer without a
//! round trip. The token is a secret: storage outlives the tab and is readable by any script of the
//! origin at any later time, so a bearer token lives in page memory only (SPEC §5.3). The fingerprint lets
//! a tab that waited for the refresh lock see that another tab already refreshed; it cannot be turned
//! back into the token.

use cachet_core::cache_key::{canonical_json, partition_id};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The auth of the current user (SPEC §2): all fields optional. Cookie auth usually carries only `user`
/// and `expires_at`; bearer auth adds `token`.
///
/// `Debug` never prints the token.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthData {
    /// The bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The backend's user object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Value>,
    /// When the session or token expires, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "millis")]
    pub expires_at: Option<u64>,
}

impl std::fmt::Debug for AuthData {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AuthData")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("user", &self.user)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl AuthData {
    /// Reads what an app passes to `setAuth(data)`: an object with any of `token`, `user` and `expiresAt`
    /// is AuthData; any other value (for example the user object `/api/me` returned) is taken as the user
    /// itself (SPEC §4: "stores AuthData (or the user data passed)"). `null` is no auth.
    pub fn from_json(value: Value) -> Option<AuthData> {
        let is_auth_data = value
            .as_object()
            .is_some_and(|object| ["token", "user", "expiresAt"].iter().any(|key| object.contains_key(*key)));
        match value {
            Value::Null => None,
            value if is_auth_data => serde_json::from_value(value.clone())
                .ok()
                .or(Some(AuthData { user: Some(value), ..AuthData::default() })),
            user => Some(AuthData { user: Some(user), ..AuthData::default() }),
        }
    }

    /// The `Authorization` header value of a bearer token: `Bearer <token>`.
    pub fn authorization(&self) -> Option<String> {
        self.token.as_ref().filter(|token| !token.is_empty()).map(|token| format!("Bearer {token}"))
    }

    /// Whether the auth is usable at `now` (Unix ms): no `expires_at`, or one in the future.
    pub fn is_valid_at(&self, now: u64) -> bool {
        self.expires_at.is_none_or(|expires_at| expires_at > now)
    }

    /// The user's identity, from which the cache partition is derived: `user.id` when present (a string
    /// as it is, any other JSON value as its text, so `7` and `"7"` are one user), otherwise the
    /// canonical JSON of the whole user object (keys sorted). `None` without a user: such auth has no
    /// partition, and the Service Worker then caches none of its `auth: true` requests.
    pub fn identity(&self) -> Option<String> {
        let user = self.user.as_ref().filter(|user| !user.is_null())?;
        match user.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            Some(id) if !id.is_null() => Some(canonical_json(&id.into())),
            _ => Some(canonical_json(&user.into())),
        }
    }

    /// The cache partition of this user ([`cachet_core::cache_key::partition_id`] of [`Self::identity`]).
    pub fn partition(&self) -> Option<String> {
        self.identity().map(|identity| partition_id(&identity))
    }
}

/// Unix milliseconds from any JSON number (JavaScript's `Date.now() + 0.5` is a float) or `null`.
pub(crate) fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let number = Option::<f64>::deserialize(deserializer)?;
    Ok(number.filter(|number| number.is_finite() && *number >= 0.0).map(|number| number as u64))
}

/// What `getAuthState()` returns (SPEC §2).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AuthSnapshot {
    /// Whether auth is present.
    pub authenticated: bool,
    /// The auth held in memory (the token included: it is the app's own).
    pub auth: Option<AuthData>,
    /// Connectivity (`navigator.onLine` and its events).
    pub online: bool,
}
