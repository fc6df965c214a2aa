//! Persisted queries (Apollo's "automatic persisted queries" protocol, APQ), negotiated by the Service
//! Worker for the endpoints listed in `features.graphql.persistedQueries.endpoints`. The rule is here,
//! whole; the worker only sends what it is told and keeps [`Memory`] in its database.
//!
//! A query goes out as its hash: its body without `query`, with
//! `extensions.persistedQuery = {"version": 1, "sha256Hash": <SHA-256 of the query text, hex>}`. The
//! server answers it from the text it holds for that hash, or with `PersistedQueryNotFound`; then the
//! whole body goes again with the extension ([`Way::Register`]), which the server runs and keeps: one
//! extra round trip, once per query and server.
//!
//! What the server is known to hold is remembered per endpoint ([`Memory`], durable: across reloads,
//! tabs and the worker's restarts): only a hash the server is known to hold goes as a GET
//! ([`Way::HashGet`], when `getMaxUrlLength` allows it, so that an HTTP cache in front of the server may
//! answer it; never a hash it may not hold, whose `PersistedQueryNotFound` such a cache could keep). A
//! not-found for a known hash (the server forgot it: a restart, its own eviction) forgets it and
//! registers it again. A server that does not speak the protocol (`PersistedQueryNotSupported`; or, on
//! an endpoint not yet known to speak it, a 4xx or an answer with errors and no data to the hashed
//! request, when the same query sent plain is answered) gets plain requests from then on, remembered.
//!
//! The cache key, tags and partition of a query are the page's request's (decided before the network
//! step): the way it is sent changes none of them. Mutations are never hashed here (they go plain: the
//! queue keeps and replays their bodies whole).

use crate::json::{Map, Value};

use crate::cache_key::{canonical_json, sha256_hex};

/// The extension's name in a request's `extensions`.
pub const EXTENSION: &str = "persistedQuery";
/// The hashes one endpoint's [`Memory`] keeps at most (the oldest forgotten first): an app has a bounded
/// number of distinct query documents; a forgotten hash costs one not-found round trip.
pub const HELD_MAX: usize = 500;
/// An answer longer than this is read as an answer ([`Verdict::Data`]) without being parsed: the
/// protocol's own answers (not found, not supported) and a refusal are short error documents.
pub const VERDICT_READ_MAX: usize = 4096;

/// Whether an endpoint speaks the protocol, as far as the worker has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Support {
    /// Nothing seen yet: queries go as hashes, and a refusal is tried plain once.
    #[default]
    Unknown,
    /// The endpoint answered a hash or registered one.
    Supported,
    /// The endpoint said it does not support the protocol, or refused a hash and answered the same query
    /// plain: queries go plain.
    NotSupported,
}

/// What the worker remembers of one endpoint, stored in its database as text ([`Memory::to_text`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    /// Whether it speaks the protocol.
    pub support: Support,
    /// The hashes it is known to hold, the first confirmed first, at most [`HELD_MAX`] (the oldest go).
    pub held: Vec<String>,
}

impl Memory {
    /// Reads a stored memory ([`Memory::to_text`]); a record that is not one (corrupt, from another
    /// build) is `Err` naming what was wrong, and the caller starts from [`Memory::default`] (the worst it
    /// costs is a round trip per query). A line format rather than serde's JSON: the worker's size
    /// (serde's derived readers and its JSON writer are not otherwise in the worker).
    pub fn from_text(text: &str) -> Result<Memory, String> {
        let mut lines = text.lines();
        let support = match lines.next() {
            Some("unknown") => Support::Unknown,
            Some("supported") => Support::Supported,
            Some("not-supported") => Support::NotSupported,
            other => {
                let other = other.unwrap_or_default();
                return Err(["persisted-query memory: unknown support \"", other, "\""].concat());
            }
        };
        let mut held = Vec::new();
        for line in lines {
            if line.len() != 64 || !line.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                return Err(["persisted-query memory: not a SHA-256 hash: \"", line, "\""].concat());
            }
            held.push(line.to_owned());
        }
        Ok(Memory { support, held })
    }

    /// The memory as stored: its support (`unknown`, `supported`, `not-supported`), then a hash a line.
    pub fn to_text(&self) -> String {
        let support = match self.support {
            Support::Unknown => "unknown",
            Support::Supported => "supported",
            Support::NotSupported => "not-supported",
        };
        let mut text = String::with_capacity(support.len() + self.held.len() * 65);
        text.push_str(support);
        for hash in &self.held {
            text.push('\n');
            text.push_str(hash);
        }
        text
    }

    fn holds(&self, hash: &str) -> bool {
        self.held.iter().any(|held| held == hash)
    }

    /// Kept in the order first confirmed (a hash confirmed again is not moved: the memory changes, and is
    /// written, only when something is learnt).
    fn hold(&mut self, hash: &str) {
        if self.holds(hash) {
            return;
        }
        self.held.push(hash.to_owned());
        if self.held.len() > HELD_MAX {
            let over = self.held.len() - HELD_MAX;
            self.held.drain(..over);
        }
    }

    fn forget(&mut self, hash: &str) {
        self.held.retain(|held| held != hash);
    }
}

/// One way a query is sent. A negotiation only moves forward through them (in this order), so it
/// ends within four sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Way {
    /// The hash, as a GET (a hash the server is known to hold, within `getMaxUrlLength`).
    HashGet,
    /// The hash, posted.
    Hash,
    /// The whole body with the hash, posted: the server runs it and keeps the text.
    Register,
    /// The body as the page sent it, to an endpoint not known to speak the protocol after it refused a
    /// hash: answered, the endpoint is remembered as not supporting it.
    Probe,
    /// The body as the page sent it.
    Plain,
}

/// How a server answered a hashed (or probing) request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A 2xx that is not a protocol error and not an error without data.
    Data,
    /// `PersistedQueryNotFound` (message or `extensions.code` `PERSISTED_QUERY_NOT_FOUND`).
    NotFound,
    /// `PersistedQueryNotSupported` (message or code `PERSISTED_QUERY_NOT_SUPPORTED`).
    NotSupported,
    /// A 4xx (but 401, 403, 408 and 429, which say nothing of the protocol), or a 2xx with errors and
    /// no data.
    Refused,
    /// Anything else (a 5xx, an auth failure): the answer as it is, nothing learnt.
    Other,
}

/// What to do after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The answer is the query's.
    Done,
    /// Send the query again this way.
    Send(Way),
}

/// A query body prepared for the protocol: its members, the text's hash.
#[derive(Debug, Clone)]
pub struct Prepared {
    members: Map,
    /// The SHA-256 of the query text, lowercase hex (the protocol's `sha256Hash`).
    pub hash: String,
}

/// What goes to the network for one [`Way`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    /// A POST with this JSON body.
    Post(String),
    /// A GET of this URL.
    Get(String),
}

impl Prepared {
    /// `body` prepared, or `None` when it is not a JSON object with a string `query` (then it goes as
    /// it is: an app that persists its own queries already sends no text).
    pub fn new(body: &[u8]) -> Option<Prepared> {
        let Ok(Value::Object(members)) = crate::json::from_slice(body) else { return None };
        let hash = sha256_hex(members.get("query")?.as_str()?.as_bytes());
        Some(Prepared { members, hash })
    }

    /// The first way to send it to an endpoint remembered as `memory`, and what goes ([`Prepared::outgoing`]
    /// of it, the GET's URL built once): plain to one that does not speak the protocol; as a GET when the
    /// server is known to hold the hash and the URL (`endpoint` and its search) is at most
    /// `get_max_url_length` long (0: never); else the hash, posted.
    pub fn first(
        &self,
        memory: &Memory,
        endpoint: &str,
        get_max_url_length: usize,
    ) -> (Way, Option<Outgoing>) {
        if memory.support == Support::NotSupported {
            return (Way::Plain, None);
        }
        if memory.support == Support::Supported && memory.holds(&self.hash) {
            let url = self.get_url(endpoint).filter(|url| url.len() <= get_max_url_length);
            if let Some(url) = url {
                return (Way::HashGet, Some(Outgoing::Get(url)));
            }
        }
        (Way::Hash, self.outgoing(Way::Hash, endpoint))
    }

    /// What to send for `way` to `endpoint` (its URL without a search); `None` when `body` (the page's
    /// own) goes as it is.
    pub fn outgoing(&self, way: Way, endpoint: &str) -> Option<Outgoing> {
        match way {
            Way::Plain | Way::Probe => None,
            Way::HashGet => self.get_url(endpoint).map(Outgoing::Get),
            Way::Hash => Some(Outgoing::Post(canonical_json(&Value::Object(self.hashed(false))))),
            Way::Register => Some(Outgoing::Post(canonical_json(&Value::Object(self.hashed(true))))),
        }
    }

    /// The members with the extension added, and without `query` unless `with_query`.
    fn hashed(&self, with_query: bool) -> Map {
        let mut members = self.members.clone();
        if !with_query {
            members.remove("query");
        }
        let mut extension = Map::new();
        extension.insert("version".to_owned(), Value::from(1));
        extension.insert("sha256Hash".to_owned(), Value::String(self.hash.clone()));
        let extension = Value::Object(extension);
        match members.get_mut("extensions") {
            Some(Value::Object(extensions)) => {
                extensions.insert(EXTENSION.to_owned(), extension);
            }
            _ => {
                let mut extensions = Map::new();
                extensions.insert(EXTENSION.to_owned(), extension);
                members.insert("extensions".to_owned(), Value::Object(extensions));
            }
        }
        members
    }

    /// The GET URL of the hash (GraphQL over HTTP: `operationName`, `variables` and `extensions` in the
    /// search, the JSON members as JSON text); `None` for a body whose members cannot all go in a search.
    fn get_url(&self, endpoint: &str) -> Option<String> {
        let hashed = self.hashed(false);
        let mut url = String::with_capacity(endpoint.len() + 160);
        url.push_str(endpoint);
        let mut first = true;
        // In name order, so that one request is one URL (a CDN's key) whatever the body's order.
        let mut members: Vec<_> = hashed.iter().collect();
        crate::sort::sort_by(&mut members, |left, right| left.0.cmp(right.0));
        for (name, value) in members {
            let text = match (name.as_str(), value) {
                (_, Value::Null) => continue,
                ("operationName", Value::String(name)) => name.clone(),
                ("variables" | "extensions", Value::Object(_)) => canonical_json(value),
                _ => return None,
            };
            url.push(if first { '?' } else { '&' });
            first = false;
            url.push_str(name);
            url.push('=');
            url.extend(form_urlencoded::byte_serialize(text.as_bytes()));
        }
        Some(url)
    }
}

/// How the server answered (`status`, `body`) a request sent some [`Way`].
pub fn verdict(status: u16, body: &[u8]) -> Verdict {
    let read = || {
        if body.len() > VERDICT_READ_MAX {
            return None;
        }
        crate::json::from_slice(body).ok()
    };
    let said = |document: &Value, message: &str, code: &str| {
        document["errors"].as_array().is_some_and(|errors| {
            errors.iter().any(|error| {
                error["message"].as_str() == Some(message)
                    || error["extensions"]["code"].as_str() == Some(code)
            })
        })
    };
    let document = read();
    if let Some(document) = &document {
        if said(document, "PersistedQueryNotFound", "PERSISTED_QUERY_NOT_FOUND") {
            return Verdict::NotFound;
        }
        if said(document, "PersistedQueryNotSupported", "PERSISTED_QUERY_NOT_SUPPORTED") {
            return Verdict::NotSupported;
        }
    }
    match status {
        401 | 403 | 408 | 429 => Verdict::Other,
        400..=499 => Verdict::Refused,
        200..=299 => {
            let errors_only = document.as_ref().is_some_and(|document| {
                document["errors"].as_array().is_some_and(|errors| !errors.is_empty())
                    && document["data"].is_null()
            });
            if errors_only {
                Verdict::Refused
            } else {
                Verdict::Data
            }
        }
        _ => Verdict::Other,
    }
}

/// After the query whose text hashes to `hash` was sent `way` and answered `verdict`: what the
/// endpoint's `memory` learns (changed in place), and what follows. Every [`Next::Send`] names a way
/// after `way` ([`Way`]'s order), so a negotiation ends.
pub fn next(memory: &mut Memory, hash: &str, way: Way, verdict: Verdict) -> Next {
    match (way, verdict) {
        (Way::Plain, _) | (_, Verdict::Other) => Next::Done,
        (Way::HashGet | Way::Hash | Way::Register, Verdict::Data) => {
            memory.support = Support::Supported;
            memory.hold(hash);
            Next::Done
        }
        (Way::HashGet | Way::Hash | Way::Register, Verdict::NotSupported) => {
            *memory = Memory { support: Support::NotSupported, held: Vec::new() };
            Next::Send(Way::Plain)
        }
        (Way::HashGet | Way::Hash, Verdict::NotFound) => {
            memory.support = Support::Supported;
            memory.forget(hash);
            Next::Send(Way::Register)
        }
        // A GET refused (an endpoint that takes POSTs only, a URL too long for a proxy): posted.
        (Way::HashGet, Verdict::Refused) => Next::Send(Way::Hash),
        (Way::Hash, Verdict::Refused) if memory.support == Support::Unknown => Next::Send(Way::Probe),
        // The query's own error, on an endpoint that speaks the protocol; a registration not kept.
        (Way::Hash | Way::Register, Verdict::Refused | Verdict::NotFound) => Next::Done,
        (Way::Probe, Verdict::Data) => {
            *memory = Memory { support: Support::NotSupported, held: Vec::new() };
            Next::Done
        }
        (Way::Probe, _) => Next::Done,
    }
}
