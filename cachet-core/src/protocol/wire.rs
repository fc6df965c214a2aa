//! Hand-written decoders of the protocol's message enums ([`PageToSw`], [`PageReply`], [`SwToPage`],
//! [`SwEvent`], [`AgentRequest`], [`AgentResponse`]), over the envelope's [`serde_json::Value`].
//!
//! Why by hand: serde's derive decodes an internally tagged enum (`#[serde(tag = "type")]`) by buffering
//! the object into its private `Content` tree and running a generated visitor per variant over it: in
//! the worker's wasm that machinery was the bulk of its message handler, and the page and the agent
//! decode four such enums. Reading the fields off the `Value` the envelope check already parsed costs a
//! few small functions. The derives stay: they encode,
//! and the native tests run them as the oracle (every message round-trips, and serde and these decoders
//! agree on what they accept).

use crate::json::{Map, ObjectWriter, Value};

use super::handover::{HandedEntry, HandedRequest, HandedResponse};
use super::snapshot::{
    DeadLetterView, EntryPage, EntryView, IdentityView, NotStoredView, QueueView, QueuedView, StateSnapshot,
    TagCount,
};
use super::DeadLetterReason;
use super::{
    AgentRequest, AgentResponse, AuthChangeKind, PageReply, PageToSw, ProtocolError, SnapshotQuery, SwEvent,
    SwToPage,
};

/// The envelope of wire JSON: the object, and its `type`, once the version is checked.
pub(super) fn envelope(text: &str) -> Result<(Map, String), ProtocolError> {
    let value = crate::json::from_str(text).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
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
pub(super) struct Fields<'a> {
    object: &'a Map,
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

    fn small<T: TryFrom<u64>>(&self, name: &str, expected: &str) -> Result<T, ProtocolError> {
        self.required(name, expected)?
            .as_u64()
            .and_then(|value| T::try_from(value).ok())
            .ok_or_else(|| self.wrong(name, expected))
    }

    fn string(&self, name: &str) -> Result<String, ProtocolError> {
        self.required(name, "a string")?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.wrong(name, "a string"))
    }

    fn value(&self, name: &str) -> Result<Value, ProtocolError> {
        self.required(name, "a value").cloned()
    }

    /// A nested object of its own `tag` (`type` or `kind`): its fields and its tag.
    fn tagged(&self, name: &str, tag: &str) -> Result<(Fields<'_>, &str), ProtocolError> {
        let expected =
            if tag == "type" { "an object with a string `type`" } else { "an object with a string `kind`" };
        let Value::Object(object) = self.required(name, expected)? else {
            return Err(self.wrong(name, expected));
        };
        let kind = object.get(tag).and_then(Value::as_str).ok_or_else(|| self.wrong(name, expected))?;
        Ok((Fields { object, kind }, kind))
    }

    fn bool(&self, name: &str) -> Result<bool, ProtocolError> {
        self.required(name, "a boolean")?.as_bool().ok_or_else(|| self.wrong(name, "a boolean"))
    }

    fn option_u64(&self, name: &str) -> Result<Option<u64>, ProtocolError> {
        match self.object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => {
                value.as_u64().map(Some).ok_or_else(|| self.wrong(name, "an unsigned integer or null"))
            }
        }
    }

    /// A dead letter's reason (`{"kind":"rejected","status":422}`, ...).
    fn dead_letter_reason(&self, name: &str) -> Result<DeadLetterReason, ProtocolError> {
        let (reason, kind) = self.tagged(name, "kind")?;
        Ok(match kind {
            "rejected" => DeadLetterReason::Rejected { status: reason.small("status", "an HTTP status")? },
            "too-many-attempts" => DeadLetterReason::TooManyAttempts,
            "unauthorized" => DeadLetterReason::Unauthorized,
            _ => return Err(self.wrong(name, "a kind: rejected, too-many-attempts or unauthorized")),
        })
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

    /// A nested object's fields (errors name it by this message's type).
    fn object(&self, name: &str) -> Result<Fields<'_>, ProtocolError> {
        match self.required(name, "an object")? {
            Value::Object(object) => Ok(Fields { object, kind: self.kind }),
            _ => Err(self.wrong(name, "an object")),
        }
    }

    /// `read` of the field `name`, or the default when it is absent (serde's `#[serde(default)]`).
    fn or_default<T: Default>(
        &self,
        name: &str,
        read: impl FnOnce(&Self) -> Result<T, ProtocolError>,
    ) -> Result<T, ProtocolError> {
        match self.object.contains_key(name) {
            true => read(self),
            false => Ok(T::default()),
        }
    }

    /// An array of objects, each read by `item` over its fields; anything else is `expected`.
    fn objects<T>(
        &self,
        name: &str,
        expected: &str,
        item: impl Fn(&Fields<'_>) -> Result<T, ProtocolError>,
    ) -> Result<Vec<T>, ProtocolError> {
        let Value::Array(items) = self.required(name, expected)? else {
            return Err(self.wrong(name, expected));
        };
        let read = |value: &Value| match value {
            Value::Object(object) => item(&Fields { object, kind: self.kind }),
            _ => Err(self.wrong(name, expected)),
        };
        items.iter().map(read).collect()
    }

    /// `(name, value)` pairs as two-string arrays (`[["accept", "*/*"]]`); absent: none.
    fn pairs(&self, name: &str) -> Result<Vec<(String, String)>, ProtocolError> {
        self.or_default(name, |fields| {
            fields.list(name, "an array of [name, value] strings", |pair| match pair.as_array()?.as_slice() {
                [name, value] => Some((name.as_str()?.to_owned(), value.as_str()?.to_owned())),
                _ => None,
            })
        })
    }

    /// A hand-over's entries ([`HandedEntry`]), read as their derive reads them (camelCase keys; the
    /// headers, a body and an authorization may be absent).
    fn entries(&self, name: &str) -> Result<Vec<HandedEntry>, ProtocolError> {
        self.objects(name, "an array of hand-over entries", |entry| {
            let (request, response) = (entry.object("request")?, entry.object("response")?);
            Ok(HandedEntry {
                request: HandedRequest {
                    method: request.string("method")?,
                    url: request.string("url")?,
                    headers: request.pairs("headers")?,
                    body: request.option_string("body")?,
                    authorization: request.option_string("authorization")?,
                },
                response: HandedResponse {
                    status: response.small("status", "an HTTP status")?,
                    headers: response.pairs("headers")?,
                    body: response.string("body")?,
                },
                stored_at: entry.u64("storedAt")?,
            })
        })
    }

    /// A snapshot request's query ([`SnapshotQuery`]), read as its derive reads it (`default`: every
    /// field may be absent, an absent query is the default one; camelCase keys).
    fn snapshot_query(&self, name: &str) -> Result<SnapshotQuery, ProtocolError> {
        self.or_default(name, |fields| {
            let query = fields.object(name)?;
            Ok(SnapshotQuery {
                after: query.option_string("after")?,
                limit: query
                    .or_default("limit", |query| query.small("limit", "an unsigned 32-bit integer"))?,
                tag: query.option_string("tag")?,
                operation: query.option_string("operation")?,
                partition: query.option_string("partition")?,
            })
        })
    }
}

/// A devtools snapshot ([`StateSnapshot`]) read from the JSON a [`SwToPage::Snapshot`] carries, as its
/// derive reads it (camelCase keys, unknown members ignored, an absent or `null` `Option` is `None`,
/// `notStored`, `ignoredPushes` and most of an entry's members may be absent): by hand, so that a page
/// links no serde deserializer for it (the derive is the oracle, `wire_oracle`).
pub(super) fn snapshot(value: &Value) -> Result<StateSnapshot, ProtocolError> {
    let Value::Object(object) = value else {
        return Err(ProtocolError::Malformed("snapshot: expected an object".to_owned()));
    };
    let f = Fields { object, kind: "snapshot" };
    const U32: &str = "an unsigned 32-bit integer";
    // Members read in their declaration order, as the derive reads them: the first wrong one is named.
    let (build, config, online) = (f.string("build")?, f.string("config")?, f.bool("online")?);
    let identity = match object.get("identity") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let identity = f.object("identity")?;
            Some(IdentityView {
                partition: identity.string("partition")?,
                vouched: identity.small("vouched", U32)?,
            })
        }
    };
    let entries = f.object("entries")?;
    let queue = f.object("queue")?;
    Ok(StateSnapshot {
        build,
        config,
        online,
        identity,
        entries: EntryPage {
            items: entries.objects("items", "an array of entries", |entry| {
                let strings = |name| entry.or_default(name, |entry| entry.strings(name));
                let string = |name| entry.or_default(name, |entry| entry.string(name));
                let number = |name| entry.or_default(name, |entry| entry.u64(name));
                Ok(EntryView {
                    url: entry.string("url")?,
                    cache: entry.string("cache")?,
                    partition: string("partition")?,
                    request: string("request")?,
                    variables: entry.option_string("variables")?,
                    tags: strings("tags")?,
                    size: number("size")?,
                    stored_at: number("storedAt")?,
                    used_at: number("usedAt")?,
                    strategy: entry.option_string("strategy")?,
                })
            })?,
            next: entries.option_string("next")?,
            scanned: entries.small("scanned", U32)?,
        },
        tags: f.objects("tags", "an array of tag counts", |count| {
            Ok(TagCount { tag: count.string("tag")?, entries: count.small("entries", U32)? })
        })?,
        queue: QueueView {
            online: queue.bool("online")?,
            pending: queue.objects("pending", "an array of queued mutations", |item| {
                Ok(QueuedView {
                    id: item.u64("id")?,
                    operation: item.string("operation")?,
                    variables: item.option_string("variables")?,
                    attempts: item.small("attempts", U32)?,
                    enqueued_at: item.u64("enqueuedAt")?,
                    next_attempt_at: item.u64("nextAttemptAt")?,
                })
            })?,
            in_flight: queue.option_u64("inFlight")?,
            dead_letters: queue.objects("deadLetters", "an array of dead letters", |letter| {
                Ok(DeadLetterView {
                    id: letter.u64("id")?,
                    operation: letter.string("operation")?,
                    variables: letter.option_string("variables")?,
                    attempts: letter.small("attempts", U32)?,
                    reason: letter.dead_letter_reason("reason")?,
                    at: letter.u64("at")?,
                })
            })?,
        },
        problems: f.strings("problems")?,
        not_stored: f.or_default("notStored", |f| {
            f.objects("notStored", "an array of answers not stored", |view| {
                Ok(NotStoredView {
                    url: view.string("url")?,
                    request: view.string("request")?,
                    reason: view.string("reason")?,
                    why: view.string("why")?,
                    at: view.u64("at")?,
                })
            })
        })?,
        ignored_pushes: f.or_default("ignoredPushes", |f| f.strings("ignoredPushes"))?,
    })
}

/// Decodes wire JSON with `decode`, which reads the fields of the message's `type`.
pub(super) fn decode<T>(
    text: &str,
    decode: fn(&str, &Fields<'_>) -> Result<T, ProtocolError>,
) -> Result<T, ProtocolError> {
    let (object, kind) = envelope(text)?;
    decode(&kind, &Fields { object: &object, kind: &kind })
}

fn unknown<T>(kind: &str) -> Result<T, ProtocolError> {
    Err(ProtocolError::UnknownType(kind.to_owned()))
}

const ID: &str = "requestId";

impl PageToSw {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        Ok(match kind {
            "clear-all" => PageToSw::ClearAll { request_id: f.u64(ID)? },
            "connectivity-changed" => PageToSw::ConnectivityChanged { online: f.bool("online")? },
            "set-identity" => PageToSw::SetIdentity {
                request_id: f.u64(ID)?,
                partition: f.option_string("partition")?,
                authorization: f.option_string("authorization")?,
            },
            "config-request" => {
                PageToSw::ConfigRequest { request_id: f.u64(ID)?, config: f.option_string("config")? }
            }
            "snapshot-request" => {
                PageToSw::SnapshotRequest { request_id: f.u64(ID)?, query: f.snapshot_query("query")? }
            }
            "retry-dead-letters" => PageToSw::RetryDeadLetters { request_id: f.u64(ID)?, ids: f.ids("ids")? },
            "discard-dead-letters" => {
                PageToSw::DiscardDeadLetters { request_id: f.u64(ID)?, ids: f.ids("ids")? }
            }
            "drop-entries" => PageToSw::DropEntries { request_id: f.u64(ID)?, urls: f.strings("urls")? },
            "invalidate-tags" => {
                PageToSw::InvalidateTags { request_id: f.u64(ID)?, tags: f.strings("tags")? }
            }
            "replay-queue" => PageToSw::ReplayQueue,
            "queue-alarm-request" => {
                PageToSw::QueueAlarmRequest { request_id: f.u64(ID)?, online: f.bool("online")? }
            }
            "hand-over" => PageToSw::HandOver { request_id: f.u64(ID)?, entries: f.entries("entries")? },
            _ => return unknown(kind),
        })
    }
}

impl PageReply {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        match kind {
            "refresh-reply" => Ok(PageReply::RefreshReply {
                id: f.u64("id")?,
                ok: f.bool("ok")?,
                authorization: f.option_string("authorization")?,
            }),
            _ => unknown(kind),
        }
    }
}

impl SwToPage {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        Ok(match kind {
            "refresh-request" => {
                SwToPage::RefreshRequest { id: f.u64("id")?, failed: f.option_string("failed")? }
            }
            "snapshot" => SwToPage::Snapshot { request_id: f.u64(ID)?, snapshot: f.value("snapshot")? },
            "config" => SwToPage::Config {
                request_id: f.u64(ID)?,
                config: f.string("config")?,
                build: f.string("build")?,
                differences: f.or_default("differences", |f| f.strings("differences"))?,
            },
            "queue-alarm" => {
                SwToPage::QueueAlarm { request_id: f.u64(ID)?, check_at: f.option_u64("checkAt")? }
            }
            "ack" => SwToPage::Ack { request_id: f.u64(ID)? },
            "nack" => SwToPage::Nack { request_id: f.u64(ID)?, message: f.string("message")? },
            _ => return unknown(kind),
        })
    }
}

impl SwEvent {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        Ok(match kind {
            "activated" => SwEvent::Activated { build: f.string("build")? },
            "cache-updated" => SwEvent::CacheUpdated { url: f.string("url")? },
            "cache-invalidated" => SwEvent::CacheInvalidated { tags: f.strings("tags")? },
            "auth-state-change" => SwEvent::AuthStateChange {
                kind: match f.required("kind", "a string")?.as_str() {
                    Some("login") => AuthChangeKind::Login,
                    Some("logout") => AuthChangeKind::Logout,
                    Some("refresh") => AuthChangeKind::Refresh,
                    Some("clear") => AuthChangeKind::Clear,
                    _ => return Err(f.wrong("kind", "login, logout, refresh or clear")),
                },
            },
            "clear-all-done" => SwEvent::ClearAllDone { request_id: f.u64(ID)? },
            "mutation-queued" => SwEvent::MutationQueued {
                id: f.u64("id")?,
                operation_name: f.option_string("operationName")?,
            },
            "mutation-replayed" => {
                SwEvent::MutationReplayed { id: f.u64("id")?, invalidated: f.strings("invalidated")? }
            }
            "mutation-failed" => SwEvent::MutationFailed {
                id: f.u64("id")?,
                attempts: f.small("attempts", "an unsigned 32-bit integer")?,
                retry_at: f.u64("retryAt")?,
            },
            "mutation-dead-lettered" => {
                SwEvent::MutationDeadLettered { id: f.u64("id")?, reason: f.dead_letter_reason("reason")? }
            }
            _ => return unknown(kind),
        })
    }
}

impl AgentRequest {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        Ok(match kind {
            "subscribe" => {
                AgentRequest::Subscribe { subscription: f.u64("subscription")?, tags: f.strings("tags")? }
            }
            "unsubscribe" => AgentRequest::Unsubscribe { subscription: f.u64("subscription")? },
            "auth-state-request" => AgentRequest::AuthStateRequest,
            "report-auth" => AgentRequest::ReportAuth { authenticated: f.bool("authenticated")? },
            "watch-sw-events" => AgentRequest::WatchSwEvents,
            _ => return unknown(kind),
        })
    }
}

impl AgentResponse {
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        Ok(match kind {
            "auth-state" => AgentResponse::AuthState {
                online: f.bool("online")?,
                authenticated: f.bool("authenticated")?,
            },
            "invalidated" => AgentResponse::Invalidated {
                subscriptions: f.ids("subscriptions")?,
                tags: f.strings("tags")?,
            },
            "online-changed" => AgentResponse::OnlineChanged { online: f.bool("online")? },
            "cache-updated" => AgentResponse::CacheUpdated { url: f.string("url")? },
            "subscribed" => AgentResponse::Subscribed { subscription: f.u64("subscription")? },
            "sw-event" => {
                let (event, event_kind) = f.tagged("event", "type")?;
                AgentResponse::SwEvent { event: SwEvent::fields(event_kind, &event)? }
            }
            _ => return unknown(kind),
        })
    }
}

// Every message cachet sends, written by hand: no wasm of cachet's (the worker, the page, the agent)
// then carries a serde serializer for its own protocol. Members in declaration order, the envelope's `v`
// and `type` first: serde's derive writes the same text (tested against it in `wire_oracle`).

/// Opens a message: `{"v":1,"type":"<kind>"`.
fn message<'a>(text: &'a mut String, kind: &str) -> ObjectWriter<'a> {
    let mut object = ObjectWriter::start(text);
    object.number("v", u64::from(super::PROTOCOL_VERSION)).string("type", kind);
    object
}

/// A list of unsigned integers (ids, subscriptions).
fn numbers(text: &mut String, numbers: &[u64]) {
    crate::json::write_list(text, numbers, |text, number| crate::json::write_u64(text, *number));
}

fn write_entry(text: &mut String, entry: &HandedEntry) {
    let mut object = ObjectWriter::start(text);
    let request = &entry.request;
    let mut part = ObjectWriter::start(object.member("request"));
    part.string("method", &request.method)
        .string("url", &request.url)
        .pairs("headers", &request.headers)
        .present("body", request.body.as_deref())
        .present("authorization", request.authorization.as_deref())
        .end();
    let response = &entry.response;
    let mut part = ObjectWriter::start(object.member("response"));
    part.number("status", response.status.into())
        .pairs("headers", &response.headers)
        .string("body", &response.body)
        .end();
    object.number("storedAt", entry.stored_at).end();
}

fn write_query(text: &mut String, query: &SnapshotQuery) {
    let mut object = ObjectWriter::start(text);
    object.present("after", query.after.as_deref());
    if query.limit != 0 {
        object.number("limit", query.limit.into());
    }
    object
        .present("tag", query.tag.as_deref())
        .present("operation", query.operation.as_deref())
        .present("partition", query.partition.as_deref())
        .end();
}

impl PageToSw {
    /// The message as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        match self {
            PageToSw::ClearAll { request_id } => {
                message(&mut text, "clear-all").number(ID, *request_id).end()
            }
            PageToSw::ConnectivityChanged { online } => {
                message(&mut text, "connectivity-changed").boolean("online", *online).end()
            }
            PageToSw::SetIdentity { request_id, partition, authorization } => {
                let mut object = message(&mut text, "set-identity");
                object
                    .number(ID, *request_id)
                    .option("partition", partition.as_deref())
                    .present("authorization", authorization.as_deref())
                    .end()
            }
            PageToSw::ConfigRequest { request_id, config } => message(&mut text, "config-request")
                .number(ID, *request_id)
                .present("config", config.as_deref())
                .end(),
            PageToSw::SnapshotRequest { request_id, query } => {
                let mut object = message(&mut text, "snapshot-request");
                object.number(ID, *request_id);
                write_query(object.member("query"), query);
                object.end()
            }
            PageToSw::RetryDeadLetters { request_id, ids }
            | PageToSw::DiscardDeadLetters { request_id, ids } => {
                let kind = match self {
                    PageToSw::RetryDeadLetters { .. } => "retry-dead-letters",
                    _ => "discard-dead-letters",
                };
                let mut object = message(&mut text, kind);
                numbers(object.number(ID, *request_id).member("ids"), ids);
                object.end()
            }
            PageToSw::DropEntries { request_id, urls } => {
                message(&mut text, "drop-entries").number(ID, *request_id).strings("urls", urls).end()
            }
            PageToSw::InvalidateTags { request_id, tags } => {
                message(&mut text, "invalidate-tags").number(ID, *request_id).strings("tags", tags).end()
            }
            PageToSw::ReplayQueue => message(&mut text, "replay-queue").end(),
            PageToSw::QueueAlarmRequest { request_id, online } => message(&mut text, "queue-alarm-request")
                .number(ID, *request_id)
                .boolean("online", *online)
                .end(),
            PageToSw::HandOver { request_id, entries } => {
                let mut object = message(&mut text, "hand-over");
                crate::json::write_list(
                    object.number(ID, *request_id).member("entries"),
                    entries,
                    write_entry,
                );
                object.end()
            }
        }
        text
    }
}

impl PageReply {
    /// The reply as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        match self {
            PageReply::RefreshReply { id, ok, authorization } => message(&mut text, "refresh-reply")
                .number("id", *id)
                .boolean("ok", *ok)
                .option("authorization", authorization.as_deref())
                .end(),
        }
        text
    }
}

impl AgentRequest {
    /// The request as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        match self {
            AgentRequest::Subscribe { subscription, tags } => message(&mut text, "subscribe")
                .number("subscription", *subscription)
                .strings("tags", tags)
                .end(),
            AgentRequest::Unsubscribe { subscription } => {
                message(&mut text, "unsubscribe").number("subscription", *subscription).end()
            }
            AgentRequest::AuthStateRequest => message(&mut text, "auth-state-request").end(),
            AgentRequest::ReportAuth { authenticated } => {
                message(&mut text, "report-auth").boolean("authenticated", *authenticated).end()
            }
            AgentRequest::WatchSwEvents => message(&mut text, "watch-sw-events").end(),
        }
        text
    }
}

impl AgentResponse {
    /// The response as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        match self {
            AgentResponse::AuthState { online, authenticated } => message(&mut text, "auth-state")
                .boolean("online", *online)
                .boolean("authenticated", *authenticated)
                .end(),
            AgentResponse::Invalidated { subscriptions, tags } => {
                let mut object = message(&mut text, "invalidated");
                numbers(object.member("subscriptions"), subscriptions);
                object.strings("tags", tags).end()
            }
            AgentResponse::OnlineChanged { online } => {
                message(&mut text, "online-changed").boolean("online", *online).end()
            }
            AgentResponse::CacheUpdated { url } => {
                message(&mut text, "cache-updated").string("url", url).end()
            }
            AgentResponse::Subscribed { subscription } => {
                message(&mut text, "subscribed").number("subscription", *subscription).end()
            }
            AgentResponse::SwEvent { event } => {
                let mut object = message(&mut text, "sw-event");
                // The event inside, as the derive nests an internally tagged enum: its `type` first,
                // no `v`.
                event.write(ObjectWriter::start(object.member("event")));
                object.end()
            }
        }
        text
    }
}

/// A dead letter's reason: `{"kind":"rejected","status":422}`, `{"kind":"too-many-attempts"}`.
pub(crate) fn write_dead_letter_reason(text: &mut String, reason: &DeadLetterReason) {
    let mut object = ObjectWriter::start(text);
    match reason {
        DeadLetterReason::Rejected { status } => {
            object.string("kind", "rejected").number("status", u64::from(*status))
        }
        DeadLetterReason::TooManyAttempts => object.string("kind", "too-many-attempts"),
        DeadLetterReason::Unauthorized => object.string("kind", "unauthorized"),
    };
    object.end();
}

impl SwEvent {
    /// The event as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        let mut object = ObjectWriter::start(&mut text);
        object.number("v", u64::from(super::PROTOCOL_VERSION));
        self.write(object);
        text
    }

    /// Writes the event's `type` and fields into `object` (after its `v`, when it is a message of its
    /// own), and closes it.
    fn write(&self, mut object: ObjectWriter<'_>) {
        let kind = match self {
            SwEvent::Activated { .. } => "activated",
            SwEvent::CacheUpdated { .. } => "cache-updated",
            SwEvent::CacheInvalidated { .. } => "cache-invalidated",
            SwEvent::AuthStateChange { .. } => "auth-state-change",
            SwEvent::ClearAllDone { .. } => "clear-all-done",
            SwEvent::MutationQueued { .. } => "mutation-queued",
            SwEvent::MutationReplayed { .. } => "mutation-replayed",
            SwEvent::MutationFailed { .. } => "mutation-failed",
            SwEvent::MutationDeadLettered { .. } => "mutation-dead-lettered",
        };
        object.string("type", kind);
        match self {
            SwEvent::Activated { build } => object.string("build", build),
            SwEvent::CacheUpdated { url } => object.string("url", url),
            SwEvent::CacheInvalidated { tags } => object.strings("tags", tags),
            SwEvent::AuthStateChange { kind } => object.string("kind", kind.as_str()),
            SwEvent::ClearAllDone { request_id } => object.number(ID, *request_id),
            SwEvent::MutationQueued { id, operation_name } => {
                object.number("id", *id).option("operationName", operation_name.as_deref())
            }
            SwEvent::MutationReplayed { id, invalidated } => {
                object.number("id", *id).strings("invalidated", invalidated)
            }
            SwEvent::MutationFailed { id, attempts, retry_at } => {
                object.number("id", *id).number("attempts", u64::from(*attempts)).number("retryAt", *retry_at)
            }
            SwEvent::MutationDeadLettered { id, reason } => {
                object.number("id", *id);
                write_dead_letter_reason(object.member("reason"), reason);
                &mut object
            }
        };
        object.end();
    }
}

impl SwToPage {
    /// The message as wire JSON.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        // The `type` is the answer's `kind`: its names are written in one place.
        let mut object = message(&mut text, self.kind());
        match self {
            SwToPage::RefreshRequest { id, failed } => {
                object.number("id", *id).option("failed", failed.as_deref());
            }
            SwToPage::Snapshot { request_id, snapshot } => {
                object.number("requestId", *request_id);
                crate::json::write(object.member("snapshot"), snapshot);
            }
            SwToPage::Config { request_id, config, build, differences } => {
                object
                    .number("requestId", *request_id)
                    .string("config", config)
                    .string("build", build)
                    .strings("differences", differences);
            }
            SwToPage::QueueAlarm { request_id, check_at } => {
                object.number("requestId", *request_id).option_number("checkAt", *check_at);
            }
            SwToPage::Ack { request_id } => {
                object.number("requestId", *request_id);
            }
            SwToPage::Nack { request_id, message: why } => {
                object.number("requestId", *request_id).string("message", why);
            }
        }
        object.end();
        text
    }
}

impl super::push::PushMessage {
    /// Decodes a push's fields as the derive does: `tags` required, `refetch` absent meaning none, each
    /// document's `query` required and the rest optional (`endpointIndex` absent meaning 0). A document
    /// given as a JSON array (serde's struct-as-sequence) is refused: no server writes one.
    pub(super) fn fields(kind: &str, f: &Fields<'_>) -> Result<Self, ProtocolError> {
        match kind {
            "invalidate" => {
                let document = |document: &Fields<'_>| {
                    let variables = match document.object.get("variables") {
                        None | Some(Value::Null) => None,
                        Some(Value::Object(variables)) => Some(variables.clone()),
                        Some(_) => return Err(document.wrong("variables", "an object or null")),
                    };
                    Ok(super::push::RefetchDocument {
                        query: document.string("query")?,
                        variables,
                        operation_name: document.option_string("operationName")?,
                        endpoint_index: document.or_default("endpointIndex", |fields| {
                            fields.small("endpointIndex", "an unsigned integer")
                        })?,
                    })
                };
                let refetch =
                    f.or_default("refetch", |f| f.objects("refetch", "an array of documents", document))?;
                Ok(super::push::PushMessage::Invalidate { tags: f.strings("tags")?, refetch })
            }
            _ => unknown(kind),
        }
    }
}

impl SnapshotQuery {
    /// A snapshot query given on its own (`window.cachet.getSnapshot(query)`), read as the worker reads
    /// the one a `snapshot-request` carries (and as its derive reads it): an object, every member
    /// optional, unknown members ignored.
    pub fn read(value: &Value) -> Result<SnapshotQuery, ProtocolError> {
        let object: Map = std::iter::once(("query".to_owned(), value.clone())).collect();
        Fields { object: &object, kind: "getSnapshot query" }.snapshot_query("query")
    }
}
