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
use serde_json::{Map, Value};

/// The auth of the current user (SPEC §2): all fields optional. Cookie auth usually carries only `user`
/// and `expires_at`; bearer auth adds `token`.
///
/// `Debug` never prints the token. Its JSON (camelCase, an absent field left out) is what serde's derive
/// reads and writes; the client itself reads and writes it by hand (`AuthData::read`,
/// [`AuthData::to_value`]: no serde decoder in its wasm, `crate::json`), with the derive as the oracle.
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
            Value::Object(ref object) if is_auth_data => {
                AuthData::read(object).ok().or(Some(AuthData { user: Some(value), ..AuthData::default() }))
            }
            user => Some(AuthData { user: Some(user), ..AuthData::default() }),
        }
    }

    /// Reads AuthData's JSON object as its derive does: unknown members ignored, an absent or `null`
    /// member is `None`, `expiresAt` any JSON number (JavaScript's `Date.now() + 0.5` is a float; a
    /// negative one is `None`). `Err` names the member of the wrong kind.
    pub(crate) fn read(object: &Map<String, Value>) -> Result<AuthData, String> {
        let members = Members(object);
        Ok(AuthData {
            token: members.string("token")?,
            user: members.get("user").cloned(),
            expires_at: members.millis("expiresAt")?,
        })
    }

    /// Its JSON object, as its derive writes it: camelCase, the absent fields left out.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        if let Some(token) = &self.token {
            object.insert("token".to_owned(), Value::String(token.clone()));
        }
        if let Some(user) = &self.user {
            object.insert("user".to_owned(), user.clone());
        }
        if let Some(expires_at) = self.expires_at {
            object.insert("expiresAt".to_owned(), Value::Number(expires_at.into()));
        }
        Value::Object(object)
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
        // The canonical text of a value read back by cachet-core's reader from the client's writer
        // (`crate::json`): no number formatting of serde_json's in the page's wasm.
        let canonical = |value: &Value| {
            cachet_core::json::from_str(&crate::json::text(value)).map(|value| canonical_json(&value))
        };
        match user.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            Some(id) if !id.is_null() => canonical(id).ok(),
            _ => canonical(user).ok(),
        }
    }

    /// The cache partition of this user ([`cachet_core::cache_key::partition_id`] of [`Self::identity`]).
    pub fn partition(&self) -> Option<String> {
        self.identity().map(|identity| partition_id(&identity))
    }
}

/// Unix milliseconds from any JSON number (JavaScript's `Date.now() + 0.5` is a float) or `null`.
pub(crate) fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.and_then(millis_of))
}

/// Unix milliseconds from a number: `None` for a negative or non-finite one.
fn millis_of(number: f64) -> Option<u64> {
    (number.is_finite() && number >= 0.0).then_some(number as u64)
}

/// The members of a record's JSON object as serde's derive reads them: unknown members ignored, an
/// absent or `null` member `None`; a member of the wrong kind is an error naming it. The one reader of
/// [`AuthData::read`] and the auth record's (`session::store`).
pub(crate) struct Members<'a>(pub(crate) &'a Map<String, Value>);

impl Members<'_> {
    /// The member `name`, unless absent or `null`.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|value| !value.is_null())
    }

    /// A string member.
    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("`{name}`: expected a string")),
        }
    }

    /// Unix milliseconds from any JSON number ([`millis`]'s reading).
    pub(crate) fn millis(&self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(millis_of(number.as_f64().unwrap_or(f64::NAN))),
            Some(_) => Err(format!("`{name}`: expected a number")),
        }
    }
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

impl AuthSnapshot {
    /// Its JSON object, as its derive writes it (`{ authenticated, auth, online }`, `auth` `null` when
    /// absent), by hand as [`AuthData::to_value`] is.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("authenticated".to_owned(), Value::Bool(self.authenticated));
        object.insert("auth".to_owned(), self.auth.as_ref().map_or(Value::Null, AuthData::to_value));
        object.insert("online".to_owned(), Value::Bool(self.online));
        Value::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// The derive is the oracle: the hand reader accepts what it accepts, reads the same, and refuses
    /// what it refuses; the hand writer writes the same tree.
    #[wasm_bindgen_test]
    fn the_hand_reader_and_writer_agree_with_the_derive() {
        let objects = [
            json!({}),
            json!({"token": "t"}),
            json!({"token": null, "user": null, "expiresAt": null}),
            json!({"user": {"id": 7, "name": "A"}, "expiresAt": 1_700_000_000_000_u64}),
            json!({"user": "just a string", "expiresAt": 1_700_000_000_000.5}),
            json!({"expiresAt": -5}),
            json!({"token": "t", "extra": [1, 2], "user": [1]}),
            json!({"token": 7}),
            json!({"expiresAt": "soon"}),
            json!({"token": ["t"]}),
        ];
        for object in objects {
            let map = object.as_object().cloned().unwrap_or_default();
            let derived = serde_json::from_value::<AuthData>(object.clone()).ok();
            assert_eq!(AuthData::read(&map).ok(), derived, "{object}");
            if let Some(auth) = derived {
                assert_eq!(auth.to_value(), serde_json::to_value(&auth).unwrap_or_default(), "{object}");
            }
        }
        for snapshot in [
            AuthSnapshot::default(),
            AuthSnapshot {
                authenticated: true,
                auth: Some(AuthData {
                    token: Some("t".into()),
                    user: Some(json!({"id": 1})),
                    expires_at: Some(9),
                }),
                online: true,
            },
        ] {
            assert_eq!(snapshot.to_value(), serde_json::to_value(&snapshot).unwrap_or_default());
        }
    }
}
