//! The offline mutation queue as a pure reducer: [`QueueState::reduce`].
//!
//! # Rules
//!
//! - **FIFO, one in flight.** Only the head is ever sent, and only while online, nothing is in flight and
//!   no refresh is awaited. A later mutation never overtakes an earlier one, even while the head backs
//!   off: mutations often depend on each other (create, then update).
//! - **Bounded.** At most `maxItems` items; an [`QueueEvent::Enqueue`] beyond that is refused with
//!   [`QueueEffect::Refused`]. At most `maxItems` dead letters are kept (the oldest go first).
//! - **Outcomes** of sending (the edge decides auth failures with
//!   [`crate::config::AuthFailureRule::is_failure`]):
//!
//!   | Outcome | Then |
//!   |---|---|
//!   | success | removed; its `invalidate` tags are invalidated ([`QueueEffect::Invalidate`]), `mutation-replayed` announced; the next item is sent |
//!   | auth failure, first time for this item | [`QueueEffect::RequestRefresh`]; after [`QueueEvent::RefreshFinished`] `ok` it is sent again at once; not `ok`: it backs off |
//!   | auth failure after a refresh | dead letter [`DeadLetterReason::Unauthorized`]: never a refresh loop |
//!   | 4xx other than 408 and 429 | dead letter [`DeadLetterReason::Rejected`]: resending cannot help |
//!   | 408, 429, 5xx, other statuses, network failure | retried after a backoff, or dead letter [`DeadLetterReason::TooManyAttempts`] once `maxAttempts` sends failed so |
//!   | not sent ([`SendFailure::NotSent`]: no page could give a bearer mutation its auth) | retried after a backoff; never counted, never a dead letter |
//!
//! - **Stops are not failures.** `attempts` counts sends that ended in an answer or a network failure,
//!   counted when the outcome arrives ([`QueueEvent::SendFailed`]), never when the send starts: a worker
//!   stopped in the middle of a send (the browser does it at will) reports nothing, and a new instance
//!   sends the item again without it costing an attempt, however often it happens. The auth retry is not
//!   counted either.
//! - **Idempotency.** [`QueueEvent::Enqueue`] gives every item an `Idempotency-Key` header
//!   ([`IDEMPOTENCY_KEY_HEADER`], a UUID made from the caller's random `u128`; a key the app set itself is
//!   kept), stored with it and sent with every replay of it: delivery is at least once, and exactly once
//!   where the server answers a repeated key with its first answer and applies nothing.
//! - **The alarm.** The Service Worker's wake-up timer dies with it. A page keeps the schedule instead:
//!   [`QueueState::alarm`] says, from the stored state, when a page must post `replay-queue` to wake the
//!   worker (the head is due: now, and again every [`ALARM_RECHECK_MS`] while it stays due, since a
//!   worker stopped mid-send leaves it due) and when to read the queue again.
//! - **Backoff** after the n-th failed send: `d = min(backoffMaxMs, backoffBaseMs * 2^(n-1))`, then
//!   "equal jitter": a delay in `[d/2, d]` chosen by the caller's random `u32`
//!   (`d/2 + (d - d/2) * random / u32::MAX`). The reducer reads no clock and no random source.
//! - **Stale outcomes** (an id that is not in flight, e.g. after [`QueueEvent::Clear`]) are ignored.
//! - **Persistence.** The state is serde-serialisable; every change emits [`QueueEffect::Persist`].
//!   [`QueueState::from_json`] clears `inFlight` and `awaitingRefresh`: a Service Worker killed mid-send
//!   sends that item again, with the same `Idempotency-Key` (at-least-once delivery).

use crate::config::QueueBounds;

/// The request header that asks for a mutation to be queued when the network fails (`queueOffline`):
/// `1` or `true`. Stripped before the network like every `X-Cachet-*` header.
pub const QUEUE_OFFLINE_HEADER: &str = "x-cachet-queue-offline";

/// The response header of a mutation the Service Worker queued instead of sending: the queue item's id.
/// Such an answer has status 202 and the body `{"data":null,"extensions":{"cachet":{"queued":true,"id":N}}}`
/// ([`queued_body`]).
pub const QUEUED_HEADER: &str = "x-cachet-queued";

/// The body of the 202 answer to a queued mutation: a GraphQL result with no data, saying it was queued.
pub fn queued_body(id: u64) -> String {
    format!(r#"{{"data":null,"extensions":{{"cachet":{{"queued":true,"id":{id}}}}}}}"#)
}

/// The IndexedDB database where the Service Worker keeps the queue (version 1, one object store
/// [`STORE_NAME`] with out-of-line keys, the whole [`QueueState`] as JSON text under [`STORE_KEY`]). Pages
/// read it too: their queue alarm decides from it ([`QueueState::alarm`]).
pub const STORE_DATABASE: &str = "cachet-sw-queue";
/// The object store of [`STORE_DATABASE`].
pub const STORE_NAME: &str = "queue";
/// The key of the queue's record in [`STORE_NAME`].
pub const STORE_KEY: &str = "state";

/// The request header that names a queued mutation to the server across its replays (lower case, as
/// stored). A server that keeps the first answer under the key and returns it, applying nothing, for a
/// repeat makes the queue's delivery exactly once.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// The `Idempotency-Key` made from 128 random bits: a UUID (version 4, variant 1) in lower-case hex.
pub fn idempotency_key(random: u128) -> String {
    let bits = (random & !(0xf << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62);
    let hex = format!("{bits:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
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
use crate::protocol::SwEvent;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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

/// Why a mutation was given up. Wire: `{"kind":"rejected","status":422}`, `{"kind":"too-many-attempts"}`,
/// `{"kind":"unauthorized"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DeadLetterReason {
    /// The server refused it with a 4xx status.
    Rejected {
        /// The status.
        status: u16,
    },
    /// It failed `maxAttempts` times.
    TooManyAttempts,
    /// It met an auth failure again after a refresh.
    Unauthorized,
}

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
    /// Put these dead letters back in the queue (see [`super::dead_letters`]).
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

/// [`QueueState::alarm`] straight from the stored text, reading only what it needs (the head's
/// `nextAttemptAt` and `online`): what a page runs, so that it does not carry the whole decoder. A text
/// that lacks them is [`crate::Error::StoredState`] naming the field.
pub fn alarm_from_json(text: &str, now: u64, browser_online: bool) -> Result<Alarm, crate::Error> {
    let wrong = |message: String| crate::Error::StoredState { what: "mutation queue", message };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| wrong(error.to_string()))?;
    let items = value.get("items").and_then(serde_json::Value::as_array);
    let items = items.ok_or_else(|| wrong("items: expected an array".to_owned()))?;
    let head_due_at = match items.first() {
        None => None,
        Some(head) => Some(
            head.get("nextAttemptAt")
                .and_then(serde_json::Value::as_u64)
                .ok_or_else(|| wrong("items[0].nextAttemptAt: expected a whole number".to_owned()))?,
        ),
    };
    let online = value.get("online").and_then(serde_json::Value::as_bool);
    let online = online.ok_or_else(|| wrong("online: expected true or false".to_owned()))?;
    Ok(alarm_of(head_due_at, online, now, browser_online))
}

/// The one rule behind [`QueueState::alarm`] and [`alarm_from_json`].
fn alarm_of(head_due_at: Option<u64>, queue_online: bool, now: u64, browser_online: bool) -> Alarm {
    let recheck = Some(now.saturating_add(ALARM_RECHECK_MS));
    match head_due_at {
        None => Alarm { wake_now: false, check_at: None },
        Some(_) if !browser_online => Alarm { wake_now: false, check_at: None },
        Some(_) if !queue_online => Alarm { wake_now: false, check_at: recheck },
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

impl QueueState {
    /// An empty queue.
    pub fn new(bounds: QueueBounds, online: bool) -> Self {
        QueueState {
            bounds,
            items: VecDeque::new(),
            dead_letters: Vec::new(),
            in_flight: None,
            awaiting_refresh: None,
            online,
            next_id: 1,
        }
    }

    /// The state as JSON text.
    pub fn to_json(&self) -> String {
        // Plain data into a String: cannot fail.
        serde_json::to_string(self).unwrap_or_default()
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
        super::queue_json::decode(text)
            .map_err(|message| crate::Error::StoredState { what: "mutation queue", message })
    }

    /// The backoff delay after the `attempts`-th failed send, with `random` jitter.
    pub fn backoff_ms(&self, attempts: u32, random: u32) -> u64 {
        let exponent = attempts.saturating_sub(1);
        let factor = 1u64.checked_shl(exponent).unwrap_or(u64::MAX);
        let delay = self.bounds.backoff_base_ms.saturating_mul(factor).min(self.bounds.backoff_max_ms);
        let half = delay / 2;
        let spread = u128::from(delay - half) * u128::from(random) / u128::from(u32::MAX);
        half + u64::try_from(spread).unwrap_or(0)
    }

    /// What a page's queue alarm does next, from the stored state at `now` (`browser_online`: the page's
    /// `navigator.onLine`):
    ///
    /// | state | wake now | read again |
    /// |---|---|---|
    /// | no items | no | on an event |
    /// | the browser is offline | no | on an event (its `online` event) |
    /// | the queue is offline (its last send found no network) | no: the page's `online` event, a worker start or Background Sync resumes it, so no timer burns attempts while the network is away | in [`ALARM_RECHECK_MS`] |
    /// | the head is due later | no | when it is due |
    /// | the head is due (or in flight: its worker may have been stopped) | yes | in [`ALARM_RECHECK_MS`] |
    ///
    /// Waking a worker that is alive and busy with the head changes nothing (one in flight); a new
    /// instance forgets what was in flight and sends the head again.
    pub fn alarm(&self, now: u64, browser_online: bool) -> Alarm {
        let head_due_at = self.items.front().map(|head| head.next_attempt_at);
        alarm_of(head_due_at, self.online, now, browser_online)
    }

    /// Applies one event.
    pub fn reduce(mut self, event: QueueEvent) -> (Self, Vec<QueueEffect>) {
        let mut effects = Vec::new();
        match event {
            QueueEvent::Enqueue { mut request, now, random } => {
                if self.items.len() >= self.bounds.max_items as usize {
                    effects.push(QueueEffect::Refused(Refusal::Full));
                    return (self, effects);
                }
                if request.idempotency_key().is_none() {
                    request.headers.push((IDEMPOTENCY_KEY_HEADER.to_owned(), idempotency_key(random)));
                }
                let id = self.next_id;
                self.next_id += 1;
                let operation_name = request.operation_name.clone();
                self.items.push_back(QueueItem {
                    id,
                    request,
                    attempts: 0,
                    enqueued_at: now,
                    next_attempt_at: now,
                    auth_retried: false,
                });
                effects.push(QueueEffect::Persist);
                effects.push(QueueEffect::Announce(SwEvent::MutationQueued { id, operation_name }));
                self.pump(now, &mut effects);
            }
            QueueEvent::Wake { now } => self.pump(now, &mut effects),
            QueueEvent::Online { now } => {
                self.online = true;
                self.pump(now, &mut effects);
            }
            QueueEvent::Offline => self.online = false,
            QueueEvent::SendSucceeded { id, now } => {
                if self.in_flight != Some(id) {
                    return (self, effects);
                }
                self.in_flight = None;
                if let Some(item) = self.items.pop_front() {
                    let tags = item.request.invalidate;
                    effects.push(QueueEffect::Persist);
                    if !tags.is_empty() {
                        effects.push(QueueEffect::Invalidate { tags: tags.clone() });
                    }
                    effects.push(QueueEffect::Announce(SwEvent::MutationReplayed { id, invalidated: tags }));
                }
                self.pump(now, &mut effects);
            }
            QueueEvent::SendFailed { id, failure, now, random } => {
                if self.in_flight != Some(id) {
                    return (self, effects);
                }
                self.in_flight = None;
                self.fail_head(failure, now, random, &mut effects);
            }
            QueueEvent::RefreshFinished { ok, now, random } => {
                let Some(id) = self.awaiting_refresh.take() else {
                    return (self, effects);
                };
                if ok {
                    self.pump(now, &mut effects);
                } else if self.items.front().is_some_and(|item| item.id == id) {
                    self.fail_head(SendFailure::Network, now, random, &mut effects);
                }
            }
            QueueEvent::RetryDeadLetters { ids, now, random } => {
                self.retry_dead_letters(&ids, now, random, &mut effects)
            }
            QueueEvent::DiscardDeadLetters { ids } => self.discard_dead_letters(&ids, &mut effects),
            QueueEvent::Clear => {
                self = QueueState { next_id: self.next_id, ..QueueState::new(self.bounds, self.online) };
                effects.push(QueueEffect::Persist);
            }
        }
        (self, effects)
    }

    fn fail_head(&mut self, failure: SendFailure, now: u64, random: u32, effects: &mut Vec<QueueEffect>) {
        let Some(head) = self.items.front_mut() else {
            return;
        };
        match failure {
            SendFailure::AuthFailure if !head.auth_retried => {
                head.auth_retried = true;
                self.awaiting_refresh = Some(head.id);
                effects.push(QueueEffect::Persist);
                effects.push(QueueEffect::RequestRefresh { id: head.id });
                return;
            }
            SendFailure::NotSent => {}
            _ => head.attempts = head.attempts.saturating_add(1),
        }
        let dead = match failure {
            SendFailure::AuthFailure => Some(DeadLetterReason::Unauthorized),
            SendFailure::Status(status) if (400..500).contains(&status) && status != 408 && status != 429 => {
                Some(DeadLetterReason::Rejected { status })
            }
            SendFailure::NotSent => None,
            _ if head.attempts >= self.bounds.max_attempts => Some(DeadLetterReason::TooManyAttempts),
            _ => None,
        };
        effects.push(QueueEffect::Persist);
        if let Some(reason) = dead {
            if let Some(item) = self.items.pop_front() {
                effects.push(QueueEffect::Announce(SwEvent::MutationDeadLettered { id: item.id, reason }));
                self.dead_letters.push(DeadLetter { item, reason, at: now });
                let excess = self.dead_letters.len().saturating_sub(self.bounds.max_items as usize);
                self.dead_letters.drain(..excess);
            }
            self.pump(now, effects);
            return;
        }
        let attempts = head.attempts;
        let retry_at = now.saturating_add(self.backoff_ms(attempts.max(1), random));
        if let Some(head) = self.items.front_mut() {
            head.next_attempt_at = retry_at;
            effects.push(QueueEffect::Announce(SwEvent::MutationFailed { id: head.id, attempts, retry_at }));
        }
        effects.push(QueueEffect::WakeAt { at: retry_at });
    }

    /// Sends the head when it is due and nothing blocks; otherwise asks to be woken when it is due.
    fn pump(&mut self, now: u64, effects: &mut Vec<QueueEffect>) {
        if !self.online || self.in_flight.is_some() || self.awaiting_refresh.is_some() {
            return;
        }
        let Some(head) = self.items.front_mut() else {
            return;
        };
        if head.next_attempt_at > now {
            effects.push(QueueEffect::WakeAt { at: head.next_attempt_at });
            return;
        }
        self.in_flight = Some(head.id);
        effects.push(QueueEffect::Send { id: head.id, request: head.request.clone() });
    }
}
