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
//!   | not sent ([`SendFailure::NotSent`]: no page could give a bearer mutation its auth) | retried after a backoff, woken by a page's alarm or the next trigger (no [`QueueEffect::WakeAt`]: a worker's timer has no page to ask); never counted, never a dead letter |
//!
//!   A network failure also means the network cannot be reached: the queue is offline (as after
//!   [`QueueEvent::Offline`]) and asks for no wake-up; the next [`QueueEvent::Online`] replays.
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
//!   [`QueueState::alarm`] says, from the stored state, when the worker a page asks must replay (the head
//!   is due: now, and again every [`ALARM_RECHECK_MS`] while it stays due, since a worker stopped mid-send
//!   leaves it due) and when the page must ask again; [`ask_again_after_silence`] says when a page asks
//!   again after a question the worker never answered.
//! - **Backoff** after the n-th failed send: `d = min(backoffMaxMs, backoffBaseMs * 2^(n-1))`, then
//!   "equal jitter": a delay in `[d/2, d]` chosen by the caller's random `u32`
//!   (`d/2 + (d - d/2) * random / u32::MAX`). The reducer reads no clock and no random source.
//! - **Stale outcomes** (an id that is not in flight, e.g. after [`QueueEvent::Clear`]) are ignored.
//! - **Persistence.** The state is serde-serialisable; every change emits [`QueueEffect::Persist`].
//!   [`QueueState::from_json`] clears `inFlight` and `awaitingRefresh`: a Service Worker killed mid-send
//!   sends that item again, with the same `Idempotency-Key` (at-least-once delivery).

pub use super::queue_model::*;

use std::collections::VecDeque;

use super::queue_model::alarm_of;
use crate::config::QueueBounds;
use crate::protocol::SwEvent;

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
    /// | the queue is offline (its last send found no network) | no: the page's `online` event, a worker start or Background Sync resumes it, so no timer burns attempts while the network is away | on an event (asked of the worker, a look every second would start a stopped worker every second) |
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
                if failure == SendFailure::Network {
                    // The network cannot be reached: nothing is sent until a connectivity trigger says
                    // it can ([`QueueEvent::Online`]).
                    self.online = false;
                }
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
        // No wake-up while offline (a wake-up would send nothing: the next connectivity trigger
        // replays), nor for a mutation no page could authorise (a worker's timer has no page to ask: a
        // page's alarm, `QueueState::alarm`, or the next trigger tries again).
        if self.online && failure != SendFailure::NotSent {
            effects.push(QueueEffect::WakeAt { at: retry_at });
        }
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
