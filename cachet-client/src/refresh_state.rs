//! The tab's single-flight refresh state ([`RefreshCoordinator`], over the core's
//! [`RefreshState`](cachet_core::machines::refresh::RefreshState)) and what a waiting request is told
//! ([`RefreshOutcome`]). How a refresh runs is `crate::refresh`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use cachet_core::machines::refresh::{RefreshEffect, RefreshEvent, RefreshState, RejectReason};
use futures::channel::oneshot;

use crate::Error;

/// What a request that met an auth failure does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefreshOutcome {
    /// Send it again with the current auth.
    Retry,
    /// Give the caller the failing answer.
    Reject(RejectReason),
}

/// Who asked for the refresh. A refused refresh that the Service Worker asked for is announced to the
/// other tabs by the Service Worker itself (its `cachet` broadcast of `logout`), so the page does not
/// post it a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The page's own request or call.
    Page,
    /// A `refresh-request` of the Service Worker.
    ServiceWorker,
}

/// The tab's single-flight state and the requests waiting on it.
pub(crate) struct RefreshCoordinator {
    pub(crate) state: RefCell<RefreshState>,
    pub(crate) waiters: RefCell<HashMap<u64, oneshot::Sender<RefreshOutcome>>>,
    pub(crate) next_request: Cell<u64>,
    pub(crate) last_error: RefCell<Option<Error>>,
}

impl RefreshCoordinator {
    pub(crate) fn new(can_refresh: bool) -> Self {
        RefreshCoordinator {
            state: RefCell::new(RefreshState::new(can_refresh)),
            waiters: RefCell::new(HashMap::new()),
            next_request: Cell::new(0),
            last_error: RefCell::new(None),
        }
    }

    /// Whether the auth type refreshes (the config followed another type).
    pub(crate) fn set_refreshes(&self, can_refresh: bool) {
        self.state.borrow_mut().can_refresh = can_refresh;
    }

    /// The auth generation a request sent now is sent with.
    pub(crate) fn generation(&self) -> u64 {
        self.state.borrow().generation
    }

    /// Whether a refresh is running.
    pub(crate) fn in_flight(&self) -> bool {
        self.state.borrow().in_flight
    }

    /// The error of the last refresh that failed without an answer, if any.
    pub(crate) fn last_error(&self) -> Option<Error> {
        self.last_error.borrow().clone()
    }

    pub(crate) fn reduce(&self, event: RefreshEvent) -> Vec<RefreshEffect> {
        let state = self.state.borrow().clone();
        let (next, effects) = state.reduce(event);
        *self.state.borrow_mut() = next;
        effects
    }

    /// Tells the waiters their outcome; returns whether a refresh must start.
    pub(crate) fn settle(&self, effects: Vec<RefreshEffect>) -> bool {
        let mut start = false;
        for effect in effects {
            let (request, outcome) = match effect {
                RefreshEffect::StartRefresh => {
                    start = true;
                    continue;
                }
                RefreshEffect::Retry { request, .. } => (request, RefreshOutcome::Retry),
                RefreshEffect::Reject { request, reason } => (request, RefreshOutcome::Reject(reason)),
            };
            if let Some(waiter) = self.waiters.borrow_mut().remove(&request) {
                let _ = waiter.send(outcome);
            }
        }
        start
    }
}
