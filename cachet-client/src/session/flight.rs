//! The tab's single-flight refresh state ([`RefreshCoordinator`], over the core's
//! [`RefreshState`](cachet_core::machines::refresh::RefreshState)) and what a waiting request is told
//! ([`RefreshOutcome`]). How a refresh runs is `refresh.rs`.

use std::cell::RefCell;

use cachet_core::machines::refresh::{Flight, Outcome, RefreshEvent};
use futures::channel::oneshot;

use crate::Error;

/// What a request that met an auth failure does next (the core's outcome, as each waiter is told it).
pub(crate) type RefreshOutcome = Outcome;

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

/// The tab's single flight (the core's [`Flight`]) with a channel per waiting request.
pub(crate) struct RefreshCoordinator {
    flight: RefCell<Flight<oneshot::Sender<RefreshOutcome>>>,
    pub(crate) last_error: RefCell<Option<Error>>,
    /// The persisted record's `Authorization` fingerprint when this tab was signed in from the record
    /// with no token in memory (`restore.rs`): a refresh run without a token compares the record
    /// with it to see whether another tab restored the session meanwhile.
    pub(crate) restored_from: RefCell<Option<String>>,
}

impl RefreshCoordinator {
    pub(crate) fn new(can_refresh: bool) -> Self {
        RefreshCoordinator {
            flight: RefCell::new(Flight::new(can_refresh)),
            last_error: RefCell::new(None),
            restored_from: RefCell::new(None),
        }
    }

    /// Whether the auth type refreshes.
    pub(crate) fn refreshes(&self) -> bool {
        self.flight.borrow().state().can_refresh
    }

    /// Whether the auth type refreshes (the config followed another type).
    pub(crate) fn set_refreshes(&self, can_refresh: bool) {
        self.flight.borrow_mut().set_can_refresh(can_refresh);
    }

    /// The auth generation a request sent now is sent with.
    pub(crate) fn generation(&self) -> u64 {
        self.flight.borrow().state().generation
    }

    /// Whether a refresh is running.
    pub(crate) fn in_flight(&self) -> bool {
        self.flight.borrow().state().in_flight
    }

    /// The error of the last refresh that failed without an answer, if any.
    pub(crate) fn last_error(&self) -> Option<Error> {
        self.last_error.borrow().clone()
    }

    /// A request sent with the token of fingerprint `token` at `generation` met an auth failure: the
    /// receiver resolves with its outcome; `true` when a refresh must start.
    pub(crate) fn auth_failed(
        &self,
        retried: bool,
        generation: u64,
        token: Option<String>,
    ) -> (oneshot::Receiver<RefreshOutcome>, bool) {
        let (sender, receiver) = oneshot::channel();
        let settled = self.flight.borrow_mut().auth_failed(sender, retried, generation, token);
        (receiver, Self::tell(settled))
    }

    /// Applies a refresh's outcome or a reset; returns whether a refresh must start.
    pub(crate) fn apply(&self, event: RefreshEvent) -> bool {
        let settled = self.flight.borrow_mut().apply(event);
        Self::tell(settled)
    }

    fn tell(settled: cachet_core::machines::refresh::Settled<oneshot::Sender<RefreshOutcome>>) -> bool {
        for (waiter, outcome) in settled.told {
            let _ = waiter.send(outcome);
        }
        settled.start_refresh
    }
}
