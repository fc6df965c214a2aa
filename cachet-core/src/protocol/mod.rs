//! Every message that crosses a context boundary (Service Worker ↔ page ↔ yew-agent worker).
//!
//! Messages travel as JSON text `{"v": <version>, "type": "<kebab-case>", ...fields}` so that the
//! bundler-free JavaScript API can read them with `JSON.parse`; field names are camelCase. A message of
//! another version, an unknown `type` or a malformed body is a [`ProtocolError`], never a panic. There is
//! one enum per direction, each a [`Message`]:
//!
//! | Enum | From → to | Carried by |
//! |---|---|---|
//! | [`SwEvent`] | Service Worker → every page and agent | `BroadcastChannel` [`BROADCAST_CHANNEL`] |
//! | [`PageToSw`] | page → Service Worker | `navigator.serviceWorker.controller.postMessage` |
//! | [`SwToPage`] | Service Worker → one page | `Client.postMessage` |
//! | [`PageReply`] | page → Service Worker, answering a [`SwToPage::RefreshRequest`] | the `MessagePort` sent with the request |
//! | [`AgentRequest`] | Yew hook bridge → yew-agent reactor | gloo-worker |
//! | [`AgentResponse`] | yew-agent reactor → bridge | gloo-worker |
//! | [`push::PushMessage`] | the app's server → Service Worker | a Web Push payload (see [`push`]) |
//!
//! The wire form of every variant is in the round-trip table of `tests/protocol_table.rs`, for example
//! `{"v":1,"type":"cache-invalidated","tags":["note","notes"]}` or
//! `{"v":1,"type":"refresh-reply","id":7,"ok":true,"authorization":"Bearer t2"}`.
//!
//! The bearer token crosses into the Service Worker only inside a [`PageReply::RefreshReply`] for the
//! one retried request (SPEC §5.3: the SW scope holds no token); the SW must not store it.

mod agent;
pub mod handover;
pub mod headers;
mod page;
pub mod push;
pub mod snapshot;
pub mod storage;
mod sw;
mod wire;
pub(crate) use wire::write_dead_letter_reason;
#[cfg(test)]
mod wire_oracle;

pub use agent::{AgentRequest, AgentResponse};
pub use page::{PageReply, PageToSw, SwToPage};
pub use snapshot::{
    DeadLetterView, EntryPage, EntryView, IdentityView, NotStoredView, QueueView, QueuedView, SnapshotQuery,
    StateSnapshot, TagCount,
};
pub use sw::{AuthChangeKind, DeadLetterReason, SwEvent};

use serde::{Deserialize, Serialize};

/// The protocol version written into every message. Bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;

/// Name of the `BroadcastChannel` on which the Service Worker announces events to every page and agent.
pub const BROADCAST_CHANNEL: &str = "cachet";

pub use headers::NOT_STORED_HEADER;

/// A message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The text is not JSON of the envelope shape.
    #[error("malformed cachet message: {0}")]
    Malformed(String),
    /// The message carries a protocol version this build does not speak.
    #[error("unsupported cachet protocol version {got} (this build speaks {PROTOCOL_VERSION})")]
    UnsupportedVersion {
        /// The version found in the message.
        got: u64,
    },
    /// The `type` field names a message this build does not know.
    #[error("unknown cachet message type {}", crate::json::quoted(.0))]
    UnknownType(String),
}

#[derive(Serialize)]
struct EnvelopeOut<'a, T> {
    v: u32,
    #[serde(flatten)]
    msg: &'a T,
}

/// A message type of the protocol: one enum per direction.
pub trait Message: Serialize + for<'de> Deserialize<'de> + sealed::Sealed {
    /// Encodes the message as wire JSON.
    fn to_wire(&self) -> String {
        encode(self)
    }

    /// Decodes wire JSON into a message of this direction.
    fn from_wire(text: &str) -> Result<Self, ProtocolError> {
        decode(text)
    }

    /// The message's `type` (`clear-all`, `ack`, …), for errors and logs.
    fn type_name(&self) -> String {
        // Read off the wire text (`{"v":1,"type":"clear-all",…}`: the envelope's first fields, a
        // kebab-case name that needs no escaping) rather than through `serde_json::Value`, whose
        // serializer for every message enum would weigh kilobytes in each wasm.
        // Split at quotes (a character pattern: a text one links the two-way string searcher): `{`, `v`,
        // `:1,`, `type`, `:`, then the name.
        let wire = self.to_wire();
        let mut parts = wire.split('"');
        match (parts.nth(3), parts.nth(1)) {
            (Some("type"), Some(name)) => name.to_owned(),
            _ => String::new(),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

// A server's push: decoded by hand (see `wire`); cachet never sends one (the derive writes it in tests).
macro_rules! decoded_by_hand {
    ($($name:ty),*) => {$(
        impl sealed::Sealed for $name {}
        impl Message for $name {
            fn from_wire(text: &str) -> Result<Self, ProtocolError> {
                wire::decode(text, <$name>::fields)
            }
        }
    )*};
}
decoded_by_hand!(push::PushMessage);

// cachet's own messages, each way: decoded and encoded by hand (see `wire`).
macro_rules! coded_by_hand {
    ($($name:ty),*) => {$(
        impl sealed::Sealed for $name {}
        impl Message for $name {
            fn to_wire(&self) -> String {
                self.encode()
            }

            fn from_wire(text: &str) -> Result<Self, ProtocolError> {
                wire::decode(text, <$name>::fields)
            }
        }
    )*};
}
coded_by_hand!(SwEvent, SwToPage, PageToSw, PageReply, AgentRequest, AgentResponse);

/// Encodes an event as wire JSON.
pub fn encode_sw_event(event: &SwEvent) -> String {
    event.to_wire()
}

/// Decodes wire JSON into an event.
pub fn decode_sw_event(text: &str) -> Result<SwEvent, ProtocolError> {
    SwEvent::from_wire(text)
}

/// Encodes any message as wire JSON.
pub fn encode_message<M: Message>(message: &M) -> String {
    message.to_wire()
}

/// Decodes wire JSON into a message of the direction `M`.
pub fn decode_message<M: Message>(text: &str) -> Result<M, ProtocolError> {
    M::from_wire(text)
}

fn encode<T: Serialize>(msg: &T) -> String {
    // Serialising our own enums into a String cannot fail: no maps with non-string keys, no I/O.
    serde_json::to_string(&EnvelopeOut { v: PROTOCOL_VERSION, msg }).unwrap_or_default()
}

pub(crate) fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ProtocolError> {
    let (_, kind) = wire::envelope(text)?;
    // The same text again, by the derive (its `v` is ignored there): for the messages not decoded by
    // hand (a server push), without serde_json's tree and its deserializer in the worker.
    serde_json::from_slice(text.as_bytes()).map_err(|e| {
        if e.to_string().contains("unknown variant") {
            ProtocolError::UnknownType(kind)
        } else {
            ProtocolError::Malformed(e.to_string())
        }
    })
}

/// serde's derive encoding of any message: what the hand-written encoders of `wire` are checked against.
#[cfg(test)]
pub(crate) fn encode_by_serde<T: Serialize>(message: &T) -> String {
    encode(message)
}

/// serde's derive decoding of any message: what the hand-written decoders of `wire` are checked against.
#[cfg(test)]
pub(crate) fn decode_by_serde<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ProtocolError> {
    decode(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sw_event_round_trips_and_rejects_other_versions() {
        let event = SwEvent::Activated { build: "abc".into() };
        let wire = encode_sw_event(&event);
        assert_eq!(wire, r#"{"v":1,"type":"activated","build":"abc"}"#);
        assert_eq!(decode_sw_event(&wire), Ok(event));
        assert_eq!(
            decode_sw_event(r#"{"v":2,"type":"activated","build":"abc"}"#),
            Err(ProtocolError::UnsupportedVersion { got: 2 })
        );
        assert_eq!(
            decode_sw_event(r#"{"v":1,"type":"from-the-future"}"#),
            Err(ProtocolError::UnknownType("from-the-future".into()))
        );
        assert!(matches!(decode_sw_event("[1"), Err(ProtocolError::Malformed(_))));
    }
}
