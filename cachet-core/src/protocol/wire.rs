//! Hand-written decoders of the two message enums the Service Worker decodes ([`PageToSw`],
//! [`PageReply`]), over the envelope's [`serde_json::Value`].
//!
//! Why by hand: serde's derive decodes an internally tagged enum (`#[serde(tag = "type")]`) by buffering
//! the object into its private `Content` tree and running a generated visitor per variant over it: in
//! the worker's wasm that machinery was the bulk of its message handler. Reading the fields off the
//! `Value` the envelope check already parsed costs a few small functions. The derives stay: they encode,
//! and the native tests run them as the oracle (every message round-trips, and serde and these decoders
//! agree on what they accept).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{PageReply, PageToSw, ProtocolError};

/// The envelope of wire JSON: the object, and its `type`, once the version is checked.
pub(super) fn envelope(text: &str) -> Result<(Map<String, Value>, String), ProtocolError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    let Value::Object(object) = value else {
        return Err(ProtocolError::Malformed("expected a JSON object".into()));
    };
    let version = object
        .get("v")
        .and_then(Value::as_u64)
        .ok_or_else(|| ProtocolError::Malformed("missing numeric field `v`".into()))?;
    if version != u64::from(super::PROTOCOL_VERSION) {
        return Err(ProtocolError::UnsupportedVersion { got: version });
    }
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| ProtocolError::Malformed("missing string field `type`".into()))?
        .to_owned();
    Ok((object, kind))
}

/// The fields of one message, read as serde's derive would: unknown fields ignored, a missing or `null`
/// `Option` is `None`.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    kind: &'a str,
}

impl Fields<'_> {
    fn wrong(&self, name: &str, expected: &str) -> ProtocolError {
        ProtocolError::Malformed(format!("{}: field `{name}`: expected {expected}", self.kind))
    }

    fn required(&self, name: &str, expected: &str) -> Result<&Value, ProtocolError> {
        self.object.get(name).ok_or_else(|| self.wrong(name, expected))
    }

    fn u64(&self, name: &str) -> Result<u64, ProtocolError> {
        self.required(name, "an unsigned integer")?
            .as_u64()
            .ok_or_else(|| self.wrong(name, "an unsigned integer"))
    }

    fn bool(&self, name: &str) -> Result<bool, ProtocolError> {
        self.required(name, "a boolean")?.as_bool().ok_or_else(|| self.wrong(name, "a boolean"))
    }

    fn option_string(&self, name: &str) -> Result<Option<String>, ProtocolError> {
        match self.object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.wrong(name, "a string or null")),
        }
    }

    fn list<T>(
        &self,
        name: &str,
        expected: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Result<Vec<T>, ProtocolError> {
        let Value::Array(items) = self.required(name, expected)? else {
            return Err(self.wrong(name, expected));
        };
        items.iter().map(|value| item(value).ok_or_else(|| self.wrong(name, expected))).collect()
    }

    fn strings(&self, name: &str) -> Result<Vec<String>, ProtocolError> {
        self.list(name, "an array of strings", |value| value.as_str().map(str::to_owned))
    }

    fn ids(&self, name: &str) -> Result<Vec<u64>, ProtocolError> {
        self.list(name, "an array of unsigned integers", Value::as_u64)
    }

    /// A nested struct, by its own (plain, untagged) derive; `default`: absent means `T::default()`.
    fn nested<T: DeserializeOwned + Default>(&self, name: &str, default: bool) -> Result<T, ProtocolError> {
        match self.object.get(name) {
            None if default => Ok(T::default()),
            None => Err(self.wrong(name, "a value")),
            Some(value) => T::deserialize(value)
                .map_err(|error| ProtocolError::Malformed(format!("{}: field `{name}`: {error}", self.kind))),
        }
    }
}

impl PageToSw {
    /// Decodes wire JSON (see the module's doc for why by hand).
    pub(super) fn decode(text: &str) -> Result<Self, ProtocolError> {
        let (object, kind) = envelope(text)?;
        let f = Fields { object: &object, kind: &kind };
        let id = "requestId";
        Ok(match kind.as_str() {
            "clear-all" => PageToSw::ClearAll { request_id: f.u64(id)? },
            "connectivity-changed" => PageToSw::ConnectivityChanged { online: f.bool("online")? },
            "set-identity" => PageToSw::SetIdentity {
                request_id: f.u64(id)?,
                partition: f.option_string("partition")?,
                authorization: f.option_string("authorization")?,
            },
            "config-request" => PageToSw::ConfigRequest { request_id: f.u64(id)? },
            "snapshot-request" => {
                PageToSw::SnapshotRequest { request_id: f.u64(id)?, query: f.nested("query", true)? }
            }
            "retry-dead-letters" => PageToSw::RetryDeadLetters { request_id: f.u64(id)?, ids: f.ids("ids")? },
            "discard-dead-letters" => {
                PageToSw::DiscardDeadLetters { request_id: f.u64(id)?, ids: f.ids("ids")? }
            }
            "drop-entries" => PageToSw::DropEntries { request_id: f.u64(id)?, urls: f.strings("urls")? },
            "invalidate-tags" => {
                PageToSw::InvalidateTags { request_id: f.u64(id)?, tags: f.strings("tags")? }
            }
            "replay-queue" => PageToSw::ReplayQueue,
            "hand-over" => {
                PageToSw::HandOver { request_id: f.u64(id)?, entries: f.nested::<Vec<_>>("entries", false)? }
            }
            _ => return Err(ProtocolError::UnknownType(kind)),
        })
    }
}

impl PageReply {
    /// Decodes wire JSON (see the module's doc for why by hand).
    pub(super) fn decode(text: &str) -> Result<Self, ProtocolError> {
        let (object, kind) = envelope(text)?;
        let f = Fields { object: &object, kind: &kind };
        match kind.as_str() {
            "refresh-reply" => Ok(PageReply::RefreshReply {
                id: f.u64("id")?,
                ok: f.bool("ok")?,
                authorization: f.option_string("authorization")?,
            }),
            _ => Err(ProtocolError::UnknownType(kind)),
        }
    }
}
