//! Reading a stored [`QueueState`] back by hand, over `serde_json::Value`, rather than through the serde
//! derive. The format is the one [`QueueState::to_json`] writes (the suite holds the two to each other);
//! the code is a fraction of the derive's in the Service Worker's wasm, which parses `Value`s anyway; and
//! an error names the field that is wrong (`items[2].request.url: expected a string`).

use std::collections::VecDeque;

use crate::json::{write_list, Map, ObjectWriter, Value};

use super::queue_model::{DeadLetter, DeadLetterReason, QueueItem, QueueState, QueuedRequest};
use crate::config::QueueBounds;

/// The first error a read found, its message ([`crate::noted`]); the reads run in the order the fields
/// are written, so the first noted is the one a reader stopping at the first error would give.
type Noted = crate::noted::Noted<String>;

/// The state in `text`, exactly as written (the item in flight included).
pub(super) fn decode(text: &str) -> Result<QueueState, String> {
    let value = crate::json::from_str(text).map_err(|error| error.to_string())?;
    let noted = Noted::default();
    let root = Object::new(&noted, &value, String::new());
    let bounds = root.object("bounds");
    let state = QueueState {
        bounds: QueueBounds {
            max_items: bounds.u32("maxItems"),
            max_attempts: bounds.u32("maxAttempts"),
            backoff_base_ms: bounds.u64("backoffBaseMs"),
            backoff_max_ms: bounds.u64("backoffMaxMs"),
        },
        items: VecDeque::from(root.array("items", |value| item(value.object(&noted)))),
        dead_letters: root.array("deadLetters", |value| dead_letter(value.object(&noted))),
        in_flight: root.optional_u64("inFlight"),
        awaiting_refresh: root.optional_u64("awaitingRefresh"),
        online: root.bool("online"),
        next_id: root.u64("nextId"),
    };
    noted.result(state)
}

/// What can be read of a state [`decode`] refuses: every item and dead letter that decodes on its own,
/// and one message per one left out (`items[1].request.url: expected a string`). The frame around them
/// is rebuilt where it is unreadable: ids above every kept one, online, the in-flight marks dropped
/// unless they name the head. `None` when `text` is not a JSON object with an `items` array.
pub(super) fn salvage(text: &str) -> Option<(QueueState, Vec<String>)> {
    let value = crate::json::from_str(text).ok()?;
    let frame = Noted::default();
    let root = Object::new(&frame, &value, String::new());
    root.map?;
    let mut left_out = Vec::new();
    // Each item read on its own: kept when it noted nothing, its first error left out otherwise.
    let each = |value: &Value, path: String, left_out: &mut Vec<String>| -> Option<QueueItem> {
        let noted = Noted::default();
        let read = item((Located { value, path }).object(&noted));
        noted.result(read).map_err(|message| left_out.push(message)).ok()
    };
    let mut items = VecDeque::new();
    for (index, value) in root.get("items")?.as_array()?.iter().enumerate() {
        items.extend(each(value, format!("items[{index}]"), &mut left_out));
    }
    let mut dead_letters = Vec::new();
    match root.get("deadLetters") {
        None => {}
        Some(Value::Array(letters)) => {
            for (index, value) in letters.iter().enumerate() {
                let noted = Noted::default();
                let letter =
                    dead_letter((Located { value, path: format!("deadLetters[{index}]") }).object(&noted));
                match noted.result(letter) {
                    Ok(letter) => dead_letters.push(letter),
                    Err(message) => left_out.push(message),
                }
            }
        }
        Some(_) => left_out.push(root.at("deadLetters").wrong("an array")),
    }
    let highest =
        items.iter().chain(dead_letters.iter().map(|letter| &letter.item)).map(|item| item.id).max();
    let head = items.front().map(|item| item.id);
    // The frame's fields read on their own: one unreadable takes its default.
    let field = |read: &dyn Fn(&Object<'_>) -> Option<u64>| {
        let noted = Noted::default();
        let value = read(&Object { map: root.map, path: String::new(), noted: &noted });
        noted.result(value).ok().flatten()
    };
    let at_head = |name: &str| field(&|root| root.optional_u64(name)).filter(|id| Some(*id) == head);
    let online = {
        let noted = Noted::default();
        let online = Object { map: root.map, path: String::new(), noted: &noted }.bool("online");
        noted.result(online).unwrap_or(true)
    };
    let state = QueueState {
        bounds: QueueBounds::default(),
        in_flight: at_head("inFlight"),
        awaiting_refresh: at_head("awaitingRefresh"),
        online,
        next_id: field(&|root| Some(root.u64("nextId"))).unwrap_or(1).max(highest.map_or(1, |id| id + 1)),
        items,
        dead_letters,
    };
    Some((state, left_out))
}

fn dead_letter(letter: Object<'_>) -> DeadLetter {
    DeadLetter {
        item: item(letter.object("item")),
        reason: reason(letter.object("reason")),
        at: letter.u64("at"),
    }
}

fn item(object: Object<'_>) -> QueueItem {
    let request = object.object("request");
    QueueItem {
        id: object.u64("id"),
        request: QueuedRequest {
            method: request.string("method"),
            url: request.string("url"),
            headers: request.array("headers", |pair| match pair.value.as_array().map(Vec::as_slice) {
                Some([Value::String(name), Value::String(value)]) => (name.clone(), value.clone()),
                _ => {
                    object.noted.note(pair.wrong("a [name, value] pair of strings"));
                    (String::new(), String::new())
                }
            }),
            body: request.string("body"),
            operation_name: match request.get("operationName") {
                None | Some(Value::Null) => None,
                Some(_) => Some(request.string("operationName")),
            },
            invalidate: request.array("invalidate", |tag| {
                tag.value.as_str().map(str::to_owned).unwrap_or_else(|| {
                    object.noted.note(tag.wrong("a string"));
                    String::new()
                })
            }),
        },
        attempts: object.u32("attempts"),
        enqueued_at: object.u64("enqueuedAt"),
        next_attempt_at: object.u64("nextAttemptAt"),
        auth_retried: object.bool("authRetried"),
    }
}

fn reason(object: Object<'_>) -> DeadLetterReason {
    let kind = object.string("kind");
    match kind.as_str() {
        "rejected" => {
            let status = object.u64("status");
            let status = u16::try_from(status).unwrap_or_else(|_| {
                object.noted.note(object.at("status").wrong("an HTTP status"));
                0
            });
            DeadLetterReason::Rejected { status }
        }
        "too-many-attempts" => DeadLetterReason::TooManyAttempts,
        "unauthorized" => DeadLetterReason::Unauthorized,
        _ => {
            // A kind already noted missing or of another type is not noted again.
            if object.map.is_some_and(|map| map.get("kind").is_some_and(Value::is_string)) {
                object.noted.note(object.at("kind").wrong("rejected, too-many-attempts or unauthorized"));
            }
            DeadLetterReason::Unauthorized
        }
    }
}

/// A value and where it is (`items[2].request`), for error messages.
struct Located<'a> {
    value: &'a Value,
    path: String,
}

impl Located<'_> {
    fn wrong(&self, expected: &str) -> String {
        format!("{}: expected {expected}", self.path)
    }
}

/// An object and where it is; `map` is `None` when it was missing or not an object (noted), and every
/// read of it then notes nothing more and gives a default.
struct Object<'a> {
    map: Option<&'a Map>,
    path: String,
    noted: &'a Noted,
}

impl<'a> Object<'a> {
    fn new(noted: &'a Noted, value: &'a Value, path: String) -> Self {
        let map = value.as_object();
        if map.is_none() {
            noted.note(Located { value, path: path.clone() }.wrong("an object"));
        }
        Object { map, path, noted }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map?.get(name)
    }

    fn at(&self, name: &str) -> Located<'a> {
        let path = if self.path.is_empty() { name.to_owned() } else { format!("{}.{name}", self.path) };
        Located { value: self.get(name).unwrap_or(&Value::Null), path }
    }

    /// The field `name`, when this object was read and has it (its absence noted).
    fn required(&self, name: &str) -> Option<Located<'a>> {
        let map = self.map?;
        if map.contains_key(name) {
            Some(self.at(name))
        } else {
            self.noted.note(if self.path.is_empty() {
                format!("missing field `{name}`")
            } else {
                format!("{}: missing field `{name}`", self.path)
            });
            None
        }
    }

    /// The field `name` through `read`; `expected` noted when `read` says `None`.
    fn read<T: Default>(&self, name: &str, expected: &str, read: impl FnOnce(&'a Value) -> Option<T>) -> T {
        let Some(field) = self.required(name) else { return T::default() };
        read(field.value).unwrap_or_else(|| {
            self.noted.note(field.wrong(expected));
            T::default()
        })
    }

    fn object(&self, name: &str) -> Object<'a> {
        match self.required(name) {
            Some(field) => Object::new(self.noted, field.value, field.path),
            None => Object { map: None, path: String::new(), noted: self.noted },
        }
    }

    fn array<T>(&self, name: &str, each: impl Fn(Located<'a>) -> T) -> Vec<T> {
        let Some(field) = self.required(name) else { return Vec::new() };
        let Some(values) = field.value.as_array() else {
            self.noted.note(field.wrong("an array"));
            return Vec::new();
        };
        // A plain loop: `collect` costs several kilobytes of wasm per element type.
        let mut decoded = Vec::with_capacity(values.len());
        for (index, value) in values.iter().enumerate() {
            decoded.push(each(Located { value, path: format!("{}[{index}]", field.path) }));
        }
        decoded
    }

    fn u64(&self, name: &str) -> u64 {
        self.read(name, "a whole number", Value::as_u64)
    }

    fn u32(&self, name: &str) -> u32 {
        let Some(field) = self.required(name) else { return 0 };
        match field.value.as_u64() {
            None => {
                self.noted.note(field.wrong("a whole number"));
                0
            }
            Some(number) => u32::try_from(number).unwrap_or_else(|_| {
                self.noted.note(field.wrong("a whole number below 2^32"));
                0
            }),
        }
    }

    fn optional_u64(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            None | Some(Value::Null) => None,
            Some(_) => Some(self.u64(name)),
        }
    }

    fn bool(&self, name: &str) -> bool {
        self.read(name, "true or false", Value::as_bool)
    }

    fn string(&self, name: &str) -> String {
        self.read(name, "a string", |value| value.as_str().map(str::to_owned))
    }
}

impl<'a> Located<'a> {
    fn object<'n>(&self, noted: &'n Noted) -> Object<'n>
    where
        'a: 'n,
    {
        Object::new(noted, self.value, self.path.clone())
    }
}

// Written by hand, in the derive's order (its exact text: tested against it), so that the worker's wasm
// carries no serde serializer.

fn write_item(text: &mut String, item: &QueueItem) {
    let mut object = ObjectWriter::start(text);
    object.number("id", item.id);
    let request = &item.request;
    let mut fields = ObjectWriter::start(object.member("request"));
    fields.string("method", &request.method).string("url", &request.url);
    fields.pairs("headers", &request.headers);
    fields
        .string("body", &request.body)
        .option("operationName", request.operation_name.as_deref())
        .strings("invalidate", &request.invalidate)
        .end();
    object
        .number("attempts", u64::from(item.attempts))
        .number("enqueuedAt", item.enqueued_at)
        .number("nextAttemptAt", item.next_attempt_at)
        .boolean("authRetried", item.auth_retried)
        .end();
}

impl QueueState {
    /// The state as JSON text.
    pub fn to_json(&self) -> String {
        let mut text = String::new();
        let mut state = ObjectWriter::start(&mut text);
        let bounds = &self.bounds;
        ObjectWriter::start(state.member("bounds"))
            .number("maxItems", u64::from(bounds.max_items))
            .number("maxAttempts", u64::from(bounds.max_attempts))
            .number("backoffBaseMs", bounds.backoff_base_ms)
            .number("backoffMaxMs", bounds.backoff_max_ms)
            .end();
        write_list(state.member("items"), &self.items, write_item);
        write_list(state.member("deadLetters"), &self.dead_letters, |text, letter| {
            let mut object = ObjectWriter::start(text);
            write_item(object.member("item"), &letter.item);
            crate::protocol::write_dead_letter_reason(object.member("reason"), &letter.reason);
            object.number("at", letter.at).end();
        });
        state
            .option_number("inFlight", self.in_flight)
            .option_number("awaitingRefresh", self.awaiting_refresh)
            .boolean("online", self.online)
            .number("nextId", self.next_id)
            .end();
        text
    }

    /// Reads a saved state back, forgetting what was in flight (see the module docs).
    pub fn from_json(text: &str) -> Result<Self, crate::Error> {
        let mut state = Self::from_json_as_written(text)?;
        state.in_flight = None;
        state.awaiting_refresh = None;
        Ok(state)
    }

    /// Reads a saved state back as it was written, the item in flight included: for the worker instance
    /// that wrote it, whose send is still on its way. The error names the field that is wrong.
    pub fn from_json_as_written(text: &str) -> Result<Self, crate::Error> {
        decode(text).map_err(|message| crate::Error::StoredState { what: "mutation queue", message })
    }

    /// What can be read, item by item, of a saved state that [`QueueState::from_json_as_written`]
    /// refuses (one field of one item torn, say): the state with every item and dead letter that reads
    /// on its own, and an error naming each one left out. `None` when the text is not a JSON object with
    /// an `items` array (cut short, say): nothing can be told apart. The bounds are the defaults (the
    /// caller sets the config's), and the item in flight is kept only when it is the head.
    pub fn salvage_json(text: &str) -> Option<(Self, Vec<crate::Error>)> {
        let (state, left_out) = salvage(text)?;
        let errors = left_out
            .into_iter()
            .map(|message| crate::Error::StoredState { what: "mutation queue", message })
            .collect();
        Some((state, errors))
    }
}
