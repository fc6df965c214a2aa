//! The devtools snapshot: what the Service Worker holds, one page of entries at a time
//! ([`super::PageToSw::SnapshotRequest`] → [`super::SwToPage::Snapshot`]).
//!
//! A snapshot never holds a token: the identity is its partition and the number of `Authorization`
//! fingerprints vouched for, the queue's items their operation and a short form of their variables
//! (never their headers). How its parts are made from what is stored is decided in [`crate::devtools`].

use serde::{Deserialize, Serialize};

use super::DeadLetterReason;
use crate::json::{write_list, ObjectWriter};

/// Entries per page when a query asks for none.
pub const DEFAULT_PAGE_SIZE: u32 = 50;
/// The most entries a page holds, whatever the query asks.
pub const MAX_PAGE_SIZE: u32 = 500;
/// The most index records one snapshot reads to fill a filtered page: a filter that matches few entries
/// of a large cache costs this much per page, then the page ends with a [`EntryPage::next`] cursor.
pub const SCAN_BUDGET: u32 = 2_000;
/// The most distinct tags a snapshot lists ([`StateSnapshot::tags`]).
pub const MAX_TAGS: u32 = 200;
/// The most answers [`StateSnapshot::not_stored`] names (the newest).
pub const MAX_NOT_STORED: usize = 20;
/// The most pushes [`StateSnapshot::ignored_pushes`] names (the newest).
pub const MAX_IGNORED_PUSHES: usize = 20;

/// Which entries a snapshot lists: filters, and where the page starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SnapshotQuery {
    /// Start after this entry URL (the [`EntryPage::next`] of the previous page); `None`: the first page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Entries per page (0: [`DEFAULT_PAGE_SIZE`]; at most [`MAX_PAGE_SIZE`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub limit: u32,
    /// Only entries carrying this tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only entries whose request (operation name or URL) contains this text, ignoring ASCII case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Only entries of this partition (`shared` for the shared one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// What the Service Worker holds, for a devtools panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    /// The worker's build (`CACHET_BUILD`).
    pub build: String,
    /// The config the worker runs on, as `cachet.config.json` text.
    pub config: String,
    /// The worker's `navigator.onLine`.
    pub online: bool,
    /// Who is signed in, as the worker knows it; `None`: nobody.
    pub identity: Option<IdentityView>,
    /// One page of entries.
    pub entries: EntryPage,
    /// Distinct tags of the index (at most [`MAX_TAGS`]), each with its number of entries.
    pub tags: Vec<TagCount>,
    /// The mutation queue and its dead letters.
    pub queue: QueueView,
    /// What could not be read (an unreadable index record, queue or identity), named.
    pub problems: Vec<String>,
    /// The last answers from the network this worker instance did not store, and why (at most
    /// [`MAX_NOT_STORED`], oldest first; a stopped worker starts the list anew).
    #[serde(default)]
    pub not_stored: Vec<NotStoredView>,
    /// Why each of the last pushes this worker instance ignored was ignored, in the console's words: push
    /// off, an auth type that cannot take one, a payload the core refused (at most
    /// [`MAX_IGNORED_PUSHES`], oldest first; [`StateSnapshot::push_ignored`]). Plain strings, as
    /// `problems` are: a list of another type would cost every page that decodes a snapshot its own
    /// decoder.
    #[serde(default)]
    pub ignored_pushes: Vec<String>,
}

/// Appends `item` to `list`, keeping the newest `max`.
fn keep_newest<T>(list: &mut Vec<T>, item: T, max: usize) {
    list.push(item);
    if list.len() > max {
        let excess = list.len() - max;
        list.drain(..excess);
    }
}

/// An answer from the network that was not stored, as the panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotStoredView {
    /// The URL asked for (a GraphQL query's endpoint URL, with its operation in `request`).
    pub url: String,
    /// The operation name of a GraphQL query, else the URL's path.
    pub request: String,
    /// [`crate::engine::NotStored::code`], the `X-Cachet-Not-Stored` value.
    pub reason: String,
    /// [`crate::engine::NotStored::describe`].
    pub why: String,
    /// When it was answered (Unix ms).
    pub at: u64,
}

impl NotStoredView {
    /// Appends `view` to `list`, keeping the newest [`MAX_NOT_STORED`].
    pub fn remember(list: &mut Vec<NotStoredView>, view: NotStoredView) {
        keep_newest(list, view, MAX_NOT_STORED);
    }
}

impl StateSnapshot {
    /// Appends `why` to `list` (a worker's [`StateSnapshot::ignored_pushes`]), keeping the newest
    /// [`MAX_IGNORED_PUSHES`].
    pub fn push_ignored(list: &mut Vec<String>, why: String) {
        keep_newest(list, why, MAX_IGNORED_PUSHES);
    }

    /// The snapshot as the JSON a [`super::SwToPage::Snapshot`] carries.
    pub fn to_value(&self) -> crate::json::Value {
        // Written by hand and read back: cannot fail (what is written is JSON).
        crate::json::from_str(&self.to_json()).unwrap_or_default()
    }

    /// The snapshot as JSON text, written by hand in the derive's member order (its exact text: tested
    /// against it), so that the worker's wasm carries no serde serializer.
    pub fn to_json(&self) -> String {
        let mut text = String::new();
        let mut snapshot = ObjectWriter::start(&mut text);
        snapshot.string("build", &self.build).string("config", &self.config).boolean("online", self.online);
        match &self.identity {
            Some(identity) => ObjectWriter::start(snapshot.member("identity"))
                .string("partition", &identity.partition)
                .number("vouched", u64::from(identity.vouched))
                .end(),
            None => snapshot.member("identity").push_str("null"),
        }
        let mut entries = ObjectWriter::start(snapshot.member("entries"));
        write_list(entries.member("items"), &self.entries.items, |text, entry| {
            ObjectWriter::start(text)
                .string("url", &entry.url)
                .string("cache", &entry.cache)
                .string("partition", &entry.partition)
                .string("request", &entry.request)
                .option("variables", entry.variables.as_deref())
                .strings("tags", &entry.tags)
                .number("size", entry.size)
                .number("storedAt", entry.stored_at)
                .number("usedAt", entry.used_at)
                .option("strategy", entry.strategy.as_deref())
                .end();
        });
        entries
            .option("next", self.entries.next.as_deref())
            .number("scanned", u64::from(self.entries.scanned))
            .end();
        write_list(snapshot.member("tags"), &self.tags, |text, count| {
            ObjectWriter::start(text)
                .string("tag", &count.tag)
                .number("entries", u64::from(count.entries))
                .end();
        });
        let queue = &self.queue;
        let mut view = ObjectWriter::start(snapshot.member("queue"));
        view.boolean("online", queue.online);
        write_list(view.member("pending"), &queue.pending, |text, item| {
            ObjectWriter::start(text)
                .number("id", item.id)
                .string("operation", &item.operation)
                .option("variables", item.variables.as_deref())
                .number("attempts", u64::from(item.attempts))
                .number("enqueuedAt", item.enqueued_at)
                .number("nextAttemptAt", item.next_attempt_at)
                .end();
        });
        view.option_number("inFlight", queue.in_flight);
        write_list(view.member("deadLetters"), &queue.dead_letters, |text, letter| {
            let mut object = ObjectWriter::start(text);
            object
                .number("id", letter.id)
                .string("operation", &letter.operation)
                .option("variables", letter.variables.as_deref())
                .number("attempts", u64::from(letter.attempts));
            super::write_dead_letter_reason(object.member("reason"), &letter.reason);
            object.number("at", letter.at).end();
        });
        view.end();
        snapshot.strings("problems", &self.problems);
        write_list(snapshot.member("notStored"), &self.not_stored, |text, view| {
            ObjectWriter::start(text)
                .string("url", &view.url)
                .string("request", &view.request)
                .string("reason", &view.reason)
                .string("why", &view.why)
                .number("at", view.at)
                .end();
        });
        snapshot.strings("ignoredPushes", &self.ignored_pushes).end();
        text
    }

    /// Reads the JSON of a [`super::SwToPage::Snapshot`]; what does not decode is
    /// [`super::ProtocolError::Malformed`] naming it.
    pub fn from_value(value: crate::json::Value) -> Result<Self, super::ProtocolError> {
        super::wire::snapshot(&value)
    }

    /// The derive's reading of the same JSON: the oracle of [`StateSnapshot::from_value`].
    #[cfg(test)]
    pub(crate) fn from_value_by_serde(value: &crate::json::Value) -> Result<Self, String> {
        serde_json::from_str(&value.to_string()).map_err(|error| error.to_string())
    }
}

/// The signed-in user as the worker knows it: never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityView {
    /// The user's partition.
    pub partition: String,
    /// How many `Authorization` values a page vouched for as this user's.
    pub vouched: u32,
}

/// One page of entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryPage {
    /// The entries, in URL order.
    pub items: Vec<EntryView>,
    /// Ask with `after: next` for the following page; `None`: this was the last.
    pub next: Option<String>,
    /// How many index records were read for this page.
    pub scanned: u32,
}

/// One cached entry, as the entry index records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryView {
    /// The Cache Storage URL (the key of [`super::PageToSw::DropEntries`]).
    pub url: String,
    /// The cache it lives in.
    pub cache: String,
    /// Its partition (`shared` for the shared one).
    #[serde(default)]
    pub partition: String,
    /// The request: the GraphQL operation name (`<anonymous>` without one) or the URL of a GET.
    #[serde(default)]
    pub request: String,
    /// A short form of the GraphQL variables, when there are any.
    #[serde(default)]
    pub variables: Option<String>,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Body size in bytes (0 when unknown: stored by an older build).
    #[serde(default)]
    pub size: u64,
    /// When it was stored (Unix ms).
    #[serde(default)]
    pub stored_at: u64,
    /// When it was last used (Unix ms).
    #[serde(default)]
    pub used_at: u64,
    /// The strategy that stored it (`cache-first`, ...), when recorded.
    #[serde(default)]
    pub strategy: Option<String>,
}

/// A tag and how many entries carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagCount {
    /// The tag.
    pub tag: String,
    /// Entries carrying it.
    pub entries: u32,
}

/// The mutation queue as the panel shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    /// Whether the queue believes it can send.
    pub online: bool,
    /// Waiting items, head first.
    pub pending: Vec<QueuedView>,
    /// The item being sent.
    pub in_flight: Option<u64>,
    /// Items given up, oldest first.
    pub dead_letters: Vec<DeadLetterView>,
}

/// A queued mutation, without its headers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedView {
    /// Queue item id.
    pub id: u64,
    /// The operation name (`<anonymous>` without one).
    pub operation: String,
    /// A short form of its variables.
    pub variables: Option<String>,
    /// Failed sends so far.
    pub attempts: u32,
    /// When it was queued (Unix ms).
    pub enqueued_at: u64,
    /// Not sent before (Unix ms): the next retry.
    pub next_attempt_at: u64,
}

/// A dead letter, without its headers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterView {
    /// Queue item id (the key of retry and discard).
    pub id: u64,
    /// The operation name (`<anonymous>` without one).
    pub operation: String,
    /// A short form of its variables.
    pub variables: Option<String>,
    /// Failed sends.
    pub attempts: u32,
    /// Why it was given up.
    pub reason: DeadLetterReason,
    /// When (Unix ms).
    pub at: u64,
}
