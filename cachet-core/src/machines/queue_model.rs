//! The offline mutation queue's data: the wire names, the stored request and items, the events and
//! effects of the reducer, and the stored state (all re-exported by `machines::queue`). The reducer
//! (`queue`), its persistence (`queue_json`) and the dead-letter actions (`dead_letters`) build on this
//! module, which builds on none of them.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::config::QueueBounds;
use crate::protocol::SwEvent;

pub use crate::protocol::headers::{
    IDEMPOTENCY_KEY_HEADER, NOT_QUEUED_HEADER, QUEUED_HEADER, QUEUE_OFFLINE_HEADER,
};

/// The body of the 202 answer to a queued mutation: a GraphQL result with no data, saying it was queued.
pub fn queued_body(id: u64) -> String {
    format!(r#"{{"data":null,"extensions":{{"cachet":{{"queued":true,"id":{id}}}}}}}"#)
}

/// The status of the answer to a mutation the queue refused: 507 Insufficient Storage.
pub const NOT_QUEUED_STATUS: u16 = 507;

/// Why a `queueOffline` mutation was not queued (the mutation was not sent either: nothing was kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotQueued {
    /// The queue holds `queue.maxItems` items.
    QueueFull,
    /// The browser refused the queue's write (`QuotaExceededError`, or the transaction aborted at
    /// commit) even after cachet's caches gave up half of their entries for it.
    StorageFull,
    /// The queue's write failed for another reason (the database could not be opened, say).
    Unwritable,
    /// The Service Worker is built without the offline queue (the `queue` cargo feature of cachet-kit
    /// and cachet-worker is off), and the mutation's send failed: nothing could keep it.
    NotBuilt,
}

impl NotQueued {
    /// Every reason.
    pub const ALL: [NotQueued; 4] =
        [NotQueued::QueueFull, NotQueued::StorageFull, NotQueued::Unwritable, NotQueued::NotBuilt];

    /// The value of [`NOT_QUEUED_HEADER`]: `queue-full`, `storage-full`, `unwritable` or
    /// `queue-not-built`.
    pub fn as_str(self) -> &'static str {
        match self {
            NotQueued::QueueFull => "queue-full",
            NotQueued::StorageFull => "storage-full",
            NotQueued::Unwritable => "unwritable",
            NotQueued::NotBuilt => "queue-not-built",
        }
    }

    /// The reason a [`NOT_QUEUED_HEADER`] value names; `None` for anything else.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == value.trim())
    }
}

/// The body of the [`NOT_QUEUED_STATUS`] answer: a GraphQL result with no data and one error whose
/// `extensions.cachet` says `queued: false` and the reason; `detail` (the browser's words) ends the
/// message.
pub fn not_queued_body(reason: NotQueued, detail: &str) -> String {
    let message = match reason {
        NotQueued::QueueFull => "the offline mutation queue is full (queue.maxItems)",
        NotQueued::StorageFull => "the browser's storage for this site is full",
        NotQueued::Unwritable => "the offline mutation queue could not be written",
        NotQueued::NotBuilt => {
            "this Service Worker is built without the offline queue (the `queue` feature of cachet-kit)"
        }
    };
    let message = if detail.is_empty() { message.to_owned() } else { format!("{message}: {detail}") };
    // Refused before any send, except by a worker without the queue: its send was tried, and failed.
    let outcome = if reason == NotQueued::NotBuilt { "its send failed" } else { "not sent" };
    // By hand rather than through a JSON tree: a few hundred bytes less in the worker's wasm.
    let message = crate::json::quoted(&format!("not queued, {outcome}: {message}"));
    format!(
        r#"{{"data":null,"errors":[{{"message":{message},"extensions":{{"cachet":{{"queued":false,"reason":"{}"}}}}}}]}}"#,
        reason.as_str()
    )
}

/// The `Idempotency-Key` made from 128 random bits: a UUID (version 4, variant 1) in lower-case hex.
pub fn idempotency_key(random: u128) -> String {
    let bits = (random & !(0xf << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62);
    // Each group formatted on its own rather than cut out of one string (see tags::derive).
    let group = |shift: u32, bits_wide: u32| (bits >> shift) & ((1 << bits_wide) - 1);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        group(96, 32),
        group(80, 16),
        group(64, 16),
        group(48, 16),
        group(0, 48)
    )
}

/// How often a page wakes the Service Worker while the head of the queue is due ([`QueueState::alarm`]):
/// a worker stopped in the middle of a send leaves the head due, and only a new event starts it again.
pub const ALARM_RECHECK_MS: u64 = 1_000;

/// What a page's queue alarm does next ([`QueueState::alarm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alarm {
    /// Post `replay-queue` to the Service Worker now (which starts it if it was stopped).
    pub wake_now: bool,
    /// Read the stored queue again at this time (Unix ms) at the latest; `None`: only when an event
    /// (a queue broadcast, the browser going online) says it may have changed.
    pub check_at: Option<u64>,
}

/// A mutation request as stored. It never holds an `Authorization` header: the edge adds current auth
/// headers at each send (bearer tokens are never persisted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedRequest {
    /// HTTP method, usually `POST`.
    pub method: String,
    /// The URL.
    pub url: String,
    /// Headers to send (`Content-Type` and the like).
    pub headers: Vec<(String, String)>,
    /// The body text.
    pub body: String,
    /// The GraphQL operation name, when known.
    pub operation_name: Option<String>,
    /// Tags to invalidate when it succeeds.
    pub invalidate: Vec<String>,
}

impl QueuedRequest {
    /// Its `Idempotency-Key` header, if it has one (every item queued by this version has).
    pub fn idempotency_key(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(IDEMPOTENCY_KEY_HEADER))
            .map(|(_, value)| value.as_str())
    }
}

/// One queued mutation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueItem {
    /// Unique within the queue's life.
    pub id: u64,
    /// What to send.
    pub request: QueuedRequest,
    /// Sends that ended in an answer (but the auth retry's) or a network failure; a send cut short by a
    /// stopped worker is not counted.
    pub attempts: u32,
    /// When it was queued (Unix ms).
    pub enqueued_at: u64,
    /// Not sent before this time (Unix ms).
    pub next_attempt_at: u64,
    /// Whether an auth failure already triggered a refresh for it.
    pub auth_retried: bool,
}

/// A mutation given up, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    /// The item as it was last.
    pub item: QueueItem,
    /// Why it was given up.
    pub reason: DeadLetterReason,
    /// When (Unix ms).
    pub at: u64,
}

pub use crate::protocol::DeadLetterReason;

/// How one send went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendFailure {
    /// The server answered with this status (not 2xx, not an auth failure).
    Status(u16),
    /// The response is an auth failure per the configured rule.
    AuthFailure,
    /// No response.
    Network,
    /// It was not sent: no page could give a mutation that needs bearer auth its `Authorization` (every
    /// tab closed, or logged out). Not an attempt: it waits for a page.
    NotSent,
}

/// Why an enqueue was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The queue holds `maxItems` items.
    Full,
    /// A dead-letter action named an id that is not a dead letter.
    NoSuchDeadLetter {
        /// The id.
        id: u64,
    },
}

/// An input to the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueEvent {
    /// Queue a mutation.
    Enqueue {
        /// What to send.
        request: QueuedRequest,
        /// Current time (Unix ms).
        now: u64,
        /// 128 random bits for its `Idempotency-Key` ([`idempotency_key`]), used unless the request
        /// carries one.
        random: u128,
    },
    /// A timer fired or a replay was asked for: send the head if it is due.
    Wake {
        /// Current time (Unix ms).
        now: u64,
    },
    /// Connectivity came back.
    Online {
        /// Current time (Unix ms).
        now: u64,
    },
    /// Connectivity went away: nothing is sent until [`QueueEvent::Online`].
    Offline,
    /// The item in flight succeeded.
    SendSucceeded {
        /// Its id.
        id: u64,
        /// Current time (Unix ms).
        now: u64,
    },
    /// The item in flight failed.
    SendFailed {
        /// Its id.
        id: u64,
        /// How.
        failure: SendFailure,
        /// Current time (Unix ms).
        now: u64,
        /// A uniformly random number for the backoff jitter.
        random: u32,
    },
    /// The refresh asked for by [`QueueEffect::RequestRefresh`] finished.
    RefreshFinished {
        /// Whether fresh auth is available.
        ok: bool,
        /// Current time (Unix ms).
        now: u64,
        /// A uniformly random number for the backoff jitter.
        random: u32,
    },
    /// `clearAuth()`: drop every item and dead letter.
    Clear,
    /// Put these dead letters back in the queue (see `machines::dead_letters`).
    RetryDeadLetters {
        /// Their ids.
        ids: Vec<u64>,
        /// Current time (Unix ms).
        now: u64,
        /// 128 random bits for fresh `Idempotency-Key`s.
        random: u128,
    },
    /// Delete these dead letters.
    DiscardDeadLetters {
        /// Their ids.
        ids: Vec<u64>,
    },
}

/// What the edge must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueEffect {
    /// Send this request (with current auth headers) and report the outcome.
    Send {
        /// Item id.
        id: u64,
        /// The request.
        request: QueuedRequest,
    },
    /// Send [`QueueEvent::Wake`] at this time (Unix ms).
    WakeAt {
        /// When.
        at: u64,
    },
    /// Refresh auth (through the single-flight refresh), then send [`QueueEvent::RefreshFinished`].
    RequestRefresh {
        /// The item waiting for it.
        id: u64,
    },
    /// Remove cache entries carrying these tags.
    Invalidate {
        /// The tags.
        tags: Vec<String>,
    },
    /// Broadcast this event.
    Announce(SwEvent),
    /// Save the state.
    Persist,
    /// The enqueue was refused.
    Refused(Refusal),
}

/// When a page asks the worker again about the queue after a question it never answered (the worker was
/// stopped while it answered), given the time the last answer asked to be asked again at (`None`: no time,
/// or no answer yet): at once when the last answer had a time, the queue then having work that a stopped
/// worker will not do; else not before the next event, as that answer said (asking again would start a
/// stopped worker for nothing).
pub fn ask_again_after_silence(last_check_at: Option<u64>, now: u64) -> Option<u64> {
    last_check_at.map(|_| now)
}

/// The rule of [`QueueState::alarm`].
pub(super) fn alarm_of(
    head_due_at: Option<u64>,
    queue_online: bool,
    now: u64,
    browser_online: bool,
) -> Alarm {
    let recheck = Some(now.saturating_add(ALARM_RECHECK_MS));
    match head_due_at {
        None => Alarm { wake_now: false, check_at: None },
        Some(_) if !browser_online => Alarm { wake_now: false, check_at: None },
        // The queue met no network: a trigger (the browser online, a page's `replay-queue`, the worker's
        // start, Background Sync) brings it back, each followed by a broadcast the page hears. Asking
        // again every second would start a stopped worker every second (session 26: the page asks the
        // worker; it used to read the queue itself).
        Some(_) if !queue_online => Alarm { wake_now: false, check_at: None },
        Some(due_at) if due_at > now => Alarm { wake_now: false, check_at: Some(due_at) },
        Some(_) => Alarm { wake_now: true, check_at: recheck },
    }
}

/// The queue. Serialises as camelCase JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueState {
    /// Bounds from `cachet.config.json`.
    pub bounds: QueueBounds,
    /// Waiting items, head first (the one in flight included).
    pub items: VecDeque<QueueItem>,
    /// Dead letters, oldest first.
    pub dead_letters: Vec<DeadLetter>,
    /// The item being sent.
    pub in_flight: Option<u64>,
    /// The item waiting for a refresh.
    pub awaiting_refresh: Option<u64>,
    /// Whether sending is possible.
    pub online: bool,
    /// The next id to hand out.
    pub next_id: u64,
}

#[cfg(test)]
mod tests {
    use super::NotQueued;

    #[test]
    fn a_not_queued_reason_reads_back_from_its_header_value_and_nothing_else_does() {
        for reason in NotQueued::ALL {
            assert_eq!(NotQueued::parse(reason.as_str()), Some(reason));
            assert_eq!(NotQueued::parse(&format!(" {} ", reason.as_str())), Some(reason));
        }
        for other in ["", "full", "Queue-Full", "queue-full, storage-full"] {
            assert_eq!(NotQueued::parse(other), None, "{other:?}");
        }
    }
}
