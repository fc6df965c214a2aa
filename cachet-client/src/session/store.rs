//! The persisted auth record in IndexedDB: user, expiry and the fingerprint of the current
//! `Authorization` value; never the token (see [`crate::auth_data`]). Beside it, under
//! `clear-pending`, the mark of a purge whose `clear-all` the Service Worker has not acknowledged yet
//! (see `effects.rs`): it outlives the page and the worker, so the next client start finishes it.
//! IndexedDB is reached through `js/auth.js`'s `record` (session 36: its Rust over web-sys was 4 KB of
//! the API's gzipped wasm).

use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use cachet_core::cache_key::auth_fingerprint;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth_data::millis;
use crate::AuthData;
use crate::Error;

/// The record's key in the object store `auth` (keys out of line; `js/auth.js` makes the store).
const KEY: &str = "current";
const CLEAR_PENDING: &str = "clear-pending";

/// The record's database (by default `cachet-client`).
#[derive(Debug, Clone)]
pub(crate) struct AuthStore {
    database: String,
}

impl AuthStore {
    pub(crate) fn new(database: &str) -> Self {
        AuthStore { database: database.to_owned() }
    }

    /// The record, `None` when absent. An unreadable record (a torn write, another build's) counts as
    /// absent, reported on the console with what is wrong with it.
    pub(crate) async fn load(&self) -> Result<Option<PersistedAuth>, Error> {
        let Some(text) = self.read(KEY).await? else { return Ok(None) };
        match crate::json_body(text.as_bytes()).and_then(serde_json::from_value) {
            Ok(record) => Ok(Some(record)),
            Err(error) => {
                let message =
                    format!("cachet: the persisted auth record is unreadable ({error}): signed out");
                web_sys::console::warn_1(&message.into());
                Ok(None)
            }
        }
    }

    /// Writes the record.
    pub(crate) async fn save(&self, record: &PersistedAuth) -> Result<(), Error> {
        let text = serde_json::to_string(record).unwrap_or_default();
        self.write(KEY, Some(&text)).await
    }

    /// Deletes the record.
    pub(crate) async fn clear(&self) -> Result<(), Error> {
        self.write(KEY, None).await
    }

    /// Whether a purge's `clear-all` is still to be acknowledged.
    pub(crate) async fn clear_pending(&self) -> Result<bool, Error> {
        Ok(self.read(CLEAR_PENDING).await?.is_some())
    }

    /// Marks (or, once acknowledged, unmarks) a purge's `clear-all`.
    pub(crate) async fn set_clear_pending(&self, pending: bool) -> Result<(), Error> {
        self.write(CLEAR_PENDING, pending.then_some("1")).await
    }

    async fn read(&self, key: &str) -> Result<Option<String>, Error> {
        Ok(self.access(key, JsValue::UNDEFINED).await?.as_string())
    }

    async fn write(&self, key: &str, text: Option<&str>) -> Result<(), Error> {
        self.access(key, text.map_or(JsValue::NULL, JsValue::from_str)).await.map(drop)
    }

    /// `js/auth.js`'s `record`: reads `key` (`text` undefined), deletes it (null) or writes `text`.
    async fn access(&self, key: &str, text: JsValue) -> Result<JsValue, Error> {
        JsFuture::from(crate::js::record(&self.database, key, text)).await.map_err(|failed| {
            let failed = js_sys::Array::from(&failed);
            let operation = match failed.get(0).as_string().as_deref() {
                Some("open") => "open",
                Some("write") => "write",
                // An aborted transaction (storage full at commit) wrote nothing: an error, not a success.
                Some("commit") => "commit",
                _ => "read",
            };
            let (name, message) = crate::error::js_name_and_message(&failed.get(1));
            Error::Storage { operation, message: [name, message].join(": ") }
        })
    }
}

/// The persisted record: no token, ever.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PersistedAuth {
    #[serde(default)]
    pub(crate) user: Option<Value>,
    #[serde(default, deserialize_with = "millis")]
    pub(crate) expires_at: Option<u64>,
    /// [`auth_fingerprint`] of the `Authorization` value current when the record was written.
    #[serde(default)]
    pub(crate) auth_fingerprint: Option<String>,
}

impl PersistedAuth {
    /// What of `auth` may be written to IndexedDB: everything but the token.
    pub(crate) fn of(auth: &AuthData) -> Self {
        PersistedAuth {
            user: auth.user.clone(),
            expires_at: auth.expires_at,
            auth_fingerprint: auth.authorization().map(|header| auth_fingerprint(&header)),
        }
    }

    /// The auth a reload restores: user and expiry, no token.
    pub(crate) fn to_auth(&self) -> AuthData {
        AuthData { token: None, user: self.user.clone(), expires_at: self.expires_at }
    }
}
