//! The persisted auth record in IndexedDB: user, expiry and the fingerprint of the current
//! `Authorization` value; never the token (see [`crate::auth_data`]). Beside it, under
//! `clear-pending`, the mark of a purge whose `clear-all` the Service Worker has not acknowledged yet
//! (see `effects.rs`): it outlives the page and the worker, so the next client start finishes it.
//! IndexedDB is reached through `js/auth.js`'s `record` (session 36: its Rust over web-sys was 4 KB of
//! the API's gzipped wasm).

use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use cachet_core::cache_key::auth_fingerprint;
#[cfg(test)]
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(test)]
use crate::auth_data::millis;
use crate::auth_data::Members;
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
        let record = crate::json::read(text.as_bytes())
            .map_err(|error| error.to_string())
            .and_then(|value| PersistedAuth::read(&value));
        match record {
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
        let text = crate::json::text(&record.to_value());
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

/// The persisted record: no token, ever. Read and written by hand ([`PersistedAuth::read`],
/// [`PersistedAuth::to_value`]: no serde decoder in the client's wasm, `crate::json`); the derive, as the
/// records of earlier builds were written, is the tests' oracle.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(test, derive(Serialize, Deserialize))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
pub(crate) struct PersistedAuth {
    #[cfg_attr(test, serde(default))]
    pub(crate) user: Option<Value>,
    #[cfg_attr(test, serde(default, deserialize_with = "millis"))]
    pub(crate) expires_at: Option<u64>,
    /// [`auth_fingerprint`] of the `Authorization` value current when the record was written.
    #[cfg_attr(test, serde(default))]
    pub(crate) auth_fingerprint: Option<String>,
}

impl PersistedAuth {
    /// Reads the record as its derive did: an object, unknown members ignored, an absent or `null`
    /// member `None`; `Err` says what is wrong.
    pub(crate) fn read(value: &Value) -> Result<PersistedAuth, String> {
        let Value::Object(object) = value else { return Err("expected an object".to_owned()) };
        let members = Members(object);
        Ok(PersistedAuth {
            user: members.get("user").cloned(),
            expires_at: members.millis("expiresAt")?,
            auth_fingerprint: members.string("authFingerprint")?,
        })
    }

    /// The record's JSON, as its derive wrote it (every member, `null` when absent).
    pub(crate) fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("user".to_owned(), self.user.clone().unwrap_or(Value::Null));
        object.insert(
            "expiresAt".to_owned(),
            self.expires_at.map_or(Value::Null, |at| Value::Number(at.into())),
        );
        object.insert(
            "authFingerprint".to_owned(),
            self.auth_fingerprint.clone().map_or(Value::Null, Value::String),
        );
        Value::Object(object)
    }

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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// The derive (as earlier builds wrote and read the record) is the oracle.
    #[wasm_bindgen_test]
    fn the_record_is_read_and_written_as_its_derive_did() {
        let records = [
            json!({}),
            json!({"user": {"id": 7}, "expiresAt": 1_700_000_000_000_u64, "authFingerprint": "abcd"}),
            json!({"user": null, "expiresAt": null, "authFingerprint": null}),
            json!({"expiresAt": 12.75, "other": true}),
            json!({"expiresAt": -1}),
            json!({"expiresAt": "later"}),
            json!({"authFingerprint": 5}),
            json!("record"),
        ];
        for record in records {
            let derived = serde_json::from_value::<PersistedAuth>(record.clone()).ok();
            assert_eq!(PersistedAuth::read(&record).ok(), derived, "{record}");
            if let Some(read) = derived {
                assert_eq!(read.to_value(), serde_json::to_value(&read).unwrap_or_default(), "{record}");
            }
        }
        // The one difference, on purpose: the derive also reads a struct from an array of its fields in
        // order, which no build ever wrote; the hand reader refuses it.
        assert!(PersistedAuth::read(&json!([{"id": 1}, 2])).is_err());
    }
}
