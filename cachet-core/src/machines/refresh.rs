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
//! - **Reset** (`clearAuth()`): every waiter is rejected, and a refresh outcome arriving later is ignored.
//!
//! The edge must turn a refresh that never answers into [`RefreshEvent::Failed`] (a timeout), or waiters
//! would wait for ever.

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
}

/// An input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshEvent {
    /// A request met an auth failure.
    AuthFailed {
        /// The request's id.
        request: u64,
        /// Whether the request was already a retry.
        retried: bool,
        /// The auth generation the request was sent with.
        sent_with_generation: u64,
    },
    /// The refresh produced new auth.
    Succeeded,
    /// The refresh failed, returned null or timed out.
    Failed,
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
        RefreshState { can_refresh, generation: 0, in_flight: false, waiters: Vec::new() }
    }

    /// Applies one event.
    pub fn reduce(mut self, event: RefreshEvent) -> (Self, Vec<RefreshEffect>) {
        let mut effects = Vec::new();
        match event {
            RefreshEvent::AuthFailed { request, retried, sent_with_generation } => {
                if retried {
                    effects.push(RefreshEffect::Reject { request, reason: RejectReason::AlreadyRetried });
                } else if !self.can_refresh {
                    effects.push(RefreshEffect::Reject { request, reason: RejectReason::NotRefreshable });
                } else if sent_with_generation < self.generation && !self.in_flight {
                    effects.push(RefreshEffect::Retry { request, generation: self.generation });
                } else {
                    self.waiters.push(request);
                    if !self.in_flight {
                        self.in_flight = true;
                        effects.push(RefreshEffect::StartRefresh);
                    }
                }
            }
            RefreshEvent::Succeeded if self.in_flight => {
                self.in_flight = false;
                self.generation += 1;
                let generation = self.generation;
                effects.extend(
                    self.waiters.drain(..).map(|request| RefreshEffect::Retry { request, generation }),
                );
            }
            RefreshEvent::Failed if self.in_flight => {
                self.in_flight = false;
                effects.extend(
                    self.waiters.drain(..).map(|request| RefreshEffect::Reject {
                        request,
                        reason: RejectReason::RefreshFailed,
                    }),
                );
            }
            RefreshEvent::Succeeded | RefreshEvent::Failed => {}
            RefreshEvent::Reset => {
                self.in_flight = false;
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
