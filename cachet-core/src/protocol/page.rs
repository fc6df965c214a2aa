//! Messages between one page and the Service Worker: [`PageToSw`], [`SwToPage`], [`PageReply`].

use serde::{Deserialize, Serialize};

use super::SnapshotQuery;
#[cfg(doc)]
use super::StateSnapshot;

/// A page asks the Service Worker for something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum PageToSw {
    /// `clearAuth()`: purge runtime caches, the mutation queue and stored auth; answered by
    /// [`SwToPage::Ack`] and broadcast as [`super::SwEvent::ClearAllDone`].
    ClearAll {
        /// Correlates the answer.
        request_id: u64,
    },
    /// The page saw the browser go online or offline.
    ConnectivityChanged {
        /// `navigator.onLine`.
        online: bool,
    },
    /// The signed-in user, whose cache partition holds the entries of every request while they are
    /// signed in (`null`: nobody; see [`crate::partition`]). Answered by [`SwToPage::Ack`] once persisted.
    SetIdentity {
        /// Correlates the answer.
        request_id: u64,
        /// [`crate::cache_key::partition_id`] of the user's identity.
        partition: Option<String>,
        /// [`crate::cache_key::auth_fingerprint`] of the page's current `Authorization` (bearer), vouched
        /// for as this user's: requests carrying it are cached in the user's partition, requests carrying
        /// any `Authorization` nobody vouched for are never cached.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authorization: Option<String>,
    },
    /// Asks for the config the Service Worker runs on; answered by [`SwToPage::Config`]. The page follows
    /// the worker's config when the two differ.
    ConfigRequest {
        /// Correlates the answer.
        request_id: u64,
        /// The page's config as cachet writes it ([`crate::config::Config::to_json`]), for the worker to
        /// list where its own differs ([`SwToPage::Config`]'s `differences`): the page then says so
        /// without the difference listing in its wasm. Absent (a page of an earlier build): none listed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<String>,
    },
    /// Asks for a [`StateSnapshot`] (devtools): one page of entries as `query` says; answered by
    /// [`SwToPage::Snapshot`].
    SnapshotRequest {
        /// Correlates the answer.
        request_id: u64,
        /// Filters and the page's start.
        #[serde(default)]
        query: SnapshotQuery,
    },
    /// Puts these dead letters back at the end of the queue, in the order they were given up (the core's
    /// [`crate::machines::queue::QueueEvent::RetryDeadLetters`]); acked once stored. Any id that is not
    /// a dead letter refuses the whole message, changing nothing.
    RetryDeadLetters {
        /// Correlates the answer.
        request_id: u64,
        /// Queue item ids of dead letters.
        ids: Vec<u64>,
    },
    /// Deletes these dead letters; acked once stored, refused whole as [`PageToSw::RetryDeadLetters`].
    DiscardDeadLetters {
        /// Correlates the answer.
        request_id: u64,
        /// Queue item ids of dead letters.
        ids: Vec<u64>,
    },
    /// Removes these entries (cache URLs, as a snapshot lists them) from their cache and the index.
    DropEntries {
        /// Correlates the answer.
        request_id: u64,
        /// [`super::EntryView::url`]s.
        urls: Vec<String>,
    },
    /// `invalidateByTag`: remove every entry carrying one of `tags`.
    InvalidateTags {
        /// Correlates the answer.
        request_id: u64,
        /// Tags to invalidate.
        tags: Vec<String>,
    },
    /// Try to replay the mutation queue now.
    ReplayQueue,
    /// The page's queue alarm (one tab's: the holder of the Web Lock `cachet-queue-alarm`) asks when
    /// the mutation queue's head is next due: answered by [`SwToPage::QueueAlarm`], by the core's rule
    /// ([`crate::machines::queue::QueueState::alarm`]) on the queue the worker stored; when the head is
    /// due, the worker then replays it, as after [`PageToSw::ReplayQueue`]. The message starts a stopped
    /// worker, whose own timers die with it: the page keeps the schedule.
    QueueAlarmRequest {
        /// Correlates the answer.
        request_id: u64,
        /// The page's `navigator.onLine`.
        online: bool,
    },
    /// The answers this page stored before the worker controlled it, for the worker to keep as it would
    /// have ([`crate::handover`]); acked once handled (entries it refuses are named on its console),
    /// nacked whole when there are more than [`crate::handover::MAX_ENTRIES`].
    HandOver {
        /// Correlates the answer.
        request_id: u64,
        /// The entries, most recently used first.
        entries: Vec<super::handover::HandedEntry>,
    },
}

/// The Service Worker tells one page something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum SwToPage {
    /// A request met an auth failure (or a queued mutation is about to be replayed): answer with
    /// [`PageReply::RefreshReply`] on the port sent along.
    ///
    /// The page owns the token and is the single flight (SPEC §5.3: the SW holds no token):
    ///
    /// | `failed` | the page's current `Authorization` | the page answers |
    /// |---|---|---|
    /// | `Some(f)` | its [`crate::cache_key::auth_fingerprint`] is `f` | runs the adapter's `refresh` (one at a time), then the new header, or `ok: false` |
    /// | `Some(f)` | another (a refresh already happened) | its current header at once, no refresh |
    /// | `None` | any | its current header at once (a replay asks for auth without a failure) |
    RefreshRequest {
        /// Correlates the reply.
        id: u64,
        /// [`crate::cache_key::auth_fingerprint`] of the `Authorization` value the failed request carried;
        /// `null` when no request failed (a queued mutation asks for current auth before it is sent).
        #[serde(default)]
        failed: Option<String>,
    },
    /// The answer to [`PageToSw::SnapshotRequest`].
    Snapshot {
        /// The request's id.
        request_id: u64,
        /// The [`StateSnapshot`], as JSON: decoded ([`StateSnapshot::from_value`]) only by the code that
        /// asked, so that every page decoding the worker's answers does not carry the snapshot's decoder.
        snapshot: crate::json::Value,
    },
    /// The answer to [`PageToSw::ConfigRequest`].
    Config {
        /// The request's id.
        request_id: u64,
        /// The worker's config as `cachet.config.json` text, as the worker read it (`{}`: the defaults).
        config: String,
        /// The worker's build (`CACHET_BUILD`).
        build: String,
        /// Where the page's config (the request's `config`) differs from the worker's, one line per key
        /// ([`crate::config::ConfigDifference`]'s `path: here, there`, here the page's), sorted by path;
        /// empty when they are equal or the page sent none. A worker of an earlier build sends none.
        #[serde(default)]
        differences: Vec<String>,
    },
    /// The answer to [`PageToSw::QueueAlarmRequest`]: when to ask again at the latest.
    QueueAlarm {
        /// The request's id.
        request_id: u64,
        /// Unix ms ([`crate::machines::queue::Alarm::check_at`]); `null`: only when an event (a queue
        /// broadcast, the browser going online) says the queue may have changed.
        check_at: Option<u64>,
    },
    /// A request was carried out.
    Ack {
        /// The request's id.
        request_id: u64,
    },
    /// A request failed.
    Nack {
        /// The request's id.
        request_id: u64,
        /// Why, for people.
        message: String,
    },
}

impl SwToPage {
    /// The answer's wire `type` ([`super::Message::type_name`] without writing the answer: a page, which
    /// never sends one, names an answer it did not expect without linking the answers' encoder).
    pub fn kind(&self) -> &'static str {
        match self {
            SwToPage::RefreshRequest { .. } => "refresh-request",
            SwToPage::Snapshot { .. } => "snapshot",
            SwToPage::Config { .. } => "config",
            SwToPage::QueueAlarm { .. } => "queue-alarm",
            SwToPage::Ack { .. } => "ack",
            SwToPage::Nack { .. } => "nack",
        }
    }
}

/// The page's reply on the `MessagePort` of a [`SwToPage::RefreshRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum PageReply {
    /// The outcome of the refresh.
    RefreshReply {
        /// The request's id.
        id: u64,
        /// Whether the refresh produced fresh auth.
        ok: bool,
        /// The `Authorization` header value for the retry (bearer); `null` for cookie-like auth or failure.
        authorization: Option<String>,
    },
}
