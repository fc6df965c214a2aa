//! Single-flight token refresh (urql's `authExchange` contract, SPEC §3's refresh-and-retry row).
//!
//! - **One refresh in flight.** The first auth failure starts a refresh; failures that arrive while it
//!   runs wait behind it.
//! - **Waiters released together.** When the refresh succeeds every waiter is retried, in arrival order,
//!   with the new auth (`generation`); when it fails every waiter is rejected.
//! - **Each request retried once, never looped.** The edge reports whether the failed request was
//!   already a retry; a retry that fails again is rejected, never refreshed again.
//! - **No needless refresh.** A request sent with an older auth `generation` than the current one (a
//!   refresh completed while it was on the wire) is retried at once without a new refresh.
//! - **Only when refresh is possible.** With cookie auth (`can_refresh` false, SPEC §5.6) an auth failure
//!   is rejected at once and the caller sees the failing response.
//! - **A refused token stays refused.** When the refresh is refused ([`RefreshEvent::Refused`]: the
//!   session is over), the token whose failure started it is remembered (the last
//!   [`REFUSED_REMEMBERED`]); a later failure of that token is rejected at once, with no new refresh.
//! - **Reset** (`clearAuth()`, a new session): every waiter is rejected, a refresh outcome arriving later
//!   is ignored, and the refused tokens are forgotten.
//!
//! The edge must turn a refresh that never answers into [`RefreshEvent::Failed`] (a timeout), or waiters
//! would wait for ever.
//!
//! Both edges run it through [`Flight`], which keeps each waiting request's edge-side waiter (a channel's
//! sender) beside the state and hands each back with its [`Outcome`]: the page client for its own
//! requests (the refresh is the app's adapter), the Service Worker for the requests it sends (the refresh
//! is a question to a page, `SwToPage::RefreshRequest`).

use serde::{Deserialize, Serialize};

/// The single-flight state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshState {
    /// Whether this auth type refreshes at all ([`crate::config::AuthType::refreshes`]).
    pub can_refresh: bool,
    /// Bumped by every successful refresh and every reset; requests record the generation they were sent with.
    pub generation: u64,
    /// Whether a refresh is running.
    pub in_flight: bool,
    /// Requests waiting for it, in arrival order.
    pub waiters: Vec<u64>,
    /// The fingerprint of the token whose failure started the running refresh.
    #[serde(default)]
    pub flight_token: Option<String>,
    /// Fingerprints of tokens whose refresh was refused, oldest first (at most [`REFUSED_REMEMBERED`]).
    #[serde(default)]
    pub refused: Vec<String>,
}

/// How many refused tokens [`RefreshState`] remembers.
pub const REFUSED_REMEMBERED: usize = 16;

/// An input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshEvent {
    /// A request met an auth failure.
    AuthFailed {
        /// The request's id.
        request: u64,
        /// Whether the request was already a retry.
        retried: bool,
        /// The auth generation the request was sent with.
        sent_with_generation: u64,
        /// The fingerprint of the token it was sent with ([`crate::cache_key::auth_fingerprint`]);
        /// `None` when it carried none that cachet reads (cookies, a custom adapter's own headers).
        token: Option<String>,
    },
    /// The refresh produced new auth.
    Succeeded,
    /// The refresh could not be carried out (an error, the network, a timeout): the session may go on.
    Failed,
    /// The refresh was refused (the session is over): its token is remembered as refused.
    Refused,
    /// Auth was cleared.
    Reset,
}

/// Why a request is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// It was already retried once.
    AlreadyRetried,
    /// The refresh failed.
    RefreshFailed,
    /// The auth type does not refresh.
    NotRefreshable,
    /// Auth was cleared while it waited.
    Cleared,
}

/// What the edge must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshEffect {
    /// Run the refresh (in the SW: ask the page with [`crate::protocol::SwToPage::RefreshRequest`]).
    StartRefresh,
    /// Send the request again, once, with the auth of `generation`, marked as a retry.
    Retry {
        /// The request's id.
        request: u64,
        /// The auth generation to use.
        generation: u64,
    },
    /// Give the caller the auth-failure response.
    Reject {
        /// The request's id.
        request: u64,
        /// Why.
        reason: RejectReason,
    },
}

impl RefreshState {
    /// Idle, at generation 0.
    pub fn new(can_refresh: bool) -> Self {
        RefreshState {
            can_refresh,
            generation: 0,
            in_flight: false,
            waiters: Vec::new(),
            flight_token: None,
            refused: Vec::new(),
        }
    }

    /// Applies one event.
    pub fn reduce(mut self, event: RefreshEvent) -> (Self, Vec<RefreshEffect>) {
        let mut effects = Vec::new();
        match event {
            RefreshEvent::AuthFailed { request, retried, sent_with_generation, token } => {
                if retried {
                    effects.push(RefreshEffect::Reject { request, reason: RejectReason::AlreadyRetried });
                } else if !self.can_refresh {
                    effects.push(RefreshEffect::Reject { request, reason: RejectReason::NotRefreshable });
                } else if token.as_ref().is_some_and(|token| self.refused.contains(token)) {
                    effects.push(RefreshEffect::Reject { request, reason: RejectReason::RefreshFailed });
                } else if sent_with_generation < self.generation && !self.in_flight {
                    effects.push(RefreshEffect::Retry { request, generation: self.generation });
                } else {
                    self.waiters.push(request);
                    if !self.in_flight {
                        self.in_flight = true;
                        self.flight_token = token;
                        effects.push(RefreshEffect::StartRefresh);
                    }
                }
            }
            RefreshEvent::Succeeded if self.in_flight => {
                self.in_flight = false;
                self.flight_token = None;
                self.generation += 1;
                let generation = self.generation;
                effects.extend(
                    self.waiters.drain(..).map(|request| RefreshEffect::Retry { request, generation }),
                );
            }
            RefreshEvent::Failed | RefreshEvent::Refused if self.in_flight => {
                self.in_flight = false;
                let token = self.flight_token.take();
                if let (true, Some(token)) = (matches!(event, RefreshEvent::Refused), token) {
                    if self.refused.len() == REFUSED_REMEMBERED {
                        self.refused.remove(0);
                    }
                    self.refused.push(token);
                }
                effects.extend(
                    self.waiters.drain(..).map(|request| RefreshEffect::Reject {
                        request,
                        reason: RejectReason::RefreshFailed,
                    }),
                );
            }
            RefreshEvent::Succeeded | RefreshEvent::Failed | RefreshEvent::Refused => {}
            RefreshEvent::Reset => {
                self.in_flight = false;
                self.flight_token = None;
                self.refused.clear();
                self.generation += 1;
                effects.extend(
                    self.waiters
                        .drain(..)
                        .map(|request| RefreshEffect::Reject { request, reason: RejectReason::Cleared }),
                );
            }
        }
        (self, effects)
    }
}

/// What a waiting request is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Send it again, once, with the auth of `generation`.
    Retry {
        /// The auth generation to use.
        generation: u64,
    },
    /// Give the caller the auth-failure response.
    Reject(RejectReason),
}

/// What the edge does after an input: tell each waiter its outcome, and start the refresh when asked.
#[derive(Debug)]
pub struct Settled<W> {
    /// Whether the edge must run the refresh now (and feed its outcome to [`Flight::apply`]).
    pub start_refresh: bool,
    /// The waiters told, in arrival order, with their outcome.
    pub told: Vec<(W, Outcome)>,
}

/// The single flight as an edge runs it: [`RefreshState`] and, beside it, the edge's waiter of every
/// request that waits (a channel's sender, say), handed back with its [`Outcome`] once the state decides.
#[derive(Debug)]
pub struct Flight<W> {
    state: RefreshState,
    waiting: Vec<(u64, W)>,
    next_request: u64,
}

impl<W> Flight<W> {
    /// Idle, at generation 0.
    pub fn new(can_refresh: bool) -> Self {
        Flight { state: RefreshState::new(can_refresh), waiting: Vec::new(), next_request: 0 }
    }

    /// The state (the generation a request sent now is sent with, whether a refresh runs).
    pub fn state(&self) -> &RefreshState {
        &self.state
    }

    /// Whether the auth type refreshes (the config followed another type).
    pub fn set_can_refresh(&mut self, can_refresh: bool) {
        self.state.can_refresh = can_refresh;
    }

    /// A request sent with the token of fingerprint `token` at `sent_with_generation` met an auth
    /// failure; `waiter` is handed back with its outcome, now or when the refresh ends.
    pub fn auth_failed(
        &mut self,
        waiter: W,
        retried: bool,
        sent_with_generation: u64,
        token: Option<String>,
    ) -> Settled<W> {
        self.next_request += 1;
        let request = self.next_request;
        self.waiting.push((request, waiter));
        self.apply(RefreshEvent::AuthFailed { request, retried, sent_with_generation, token })
    }

    /// Applies `event` (a refresh's outcome, a reset, or an auth failure whose waiter was registered).
    pub fn apply(&mut self, event: RefreshEvent) -> Settled<W> {
        let state = std::mem::replace(&mut self.state, RefreshState::new(false));
        let (next, effects) = state.reduce(event);
        self.state = next;
        let mut settled = Settled { start_refresh: false, told: Vec::new() };
        for effect in effects {
            let (request, outcome) = match effect {
                RefreshEffect::StartRefresh => {
                    settled.start_refresh = true;
                    continue;
                }
                RefreshEffect::Retry { request, generation } => (request, Outcome::Retry { generation }),
                RefreshEffect::Reject { request, reason } => (request, Outcome::Reject(reason)),
            };
            if let Some(at) = self.waiting.iter().position(|(id, _)| *id == request) {
                let (_, waiter) = self.waiting.remove(at);
                settled.told.push((waiter, outcome));
            }
        }
        settled
    }
}
