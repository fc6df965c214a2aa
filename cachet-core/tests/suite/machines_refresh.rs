//! Single-flight refresh: one refresh, waiters released together, each request retried once.

use cachet_core::machines::refresh::{RefreshEffect, RefreshEvent, RefreshState, RejectReason};

fn failed(request: u64, retried: bool, generation: u64) -> RefreshEvent {
    RefreshEvent::AuthFailed { request, retried, sent_with_generation: generation }
}

#[test]
fn one_refresh_in_flight_and_waiters_retried_with_the_new_auth() {
    let state = RefreshState::new(true);
    let (state, effects) = state.reduce(failed(1, false, 0));
    assert_eq!(effects, [RefreshEffect::StartRefresh]);
    let (state, effects) = state.reduce(failed(2, false, 0));
    assert_eq!(effects, [], "no second refresh");
    let (state, effects) = state.reduce(failed(3, false, 0));
    assert_eq!(effects, []);
    let (state, effects) = state.reduce(RefreshEvent::Succeeded);
    assert_eq!(
        effects,
        [1, 2, 3].map(|request| RefreshEffect::Retry { request, generation: 1 }),
        "released in arrival order"
    );
    assert!(!state.in_flight && state.waiters.is_empty());
    // A retry that fails again is rejected: never a loop.
    let (state, effects) = state.reduce(failed(1, true, 1));
    assert_eq!(effects, [RefreshEffect::Reject { request: 1, reason: RejectReason::AlreadyRetried }]);
    // A request sent with the old token before the refresh finished is retried without a new refresh.
    let (state, effects) = state.reduce(failed(4, false, 0));
    assert_eq!(effects, [RefreshEffect::Retry { request: 4, generation: 1 }]);
    // A late duplicate outcome is ignored.
    let (_, effects) = state.reduce(RefreshEvent::Succeeded);
    assert_eq!(effects, []);
}

#[test]
fn a_failed_refresh_rejects_every_waiter() {
    let (state, _) = RefreshState::new(true).reduce(failed(1, false, 0));
    let (state, _) = state.reduce(failed(2, false, 0));
    let (state, effects) = state.reduce(RefreshEvent::Failed);
    assert_eq!(
        effects,
        [1, 2].map(|request| RefreshEffect::Reject { request, reason: RejectReason::RefreshFailed })
    );
    assert_eq!(state.generation, 0);
    // The next failure starts a new refresh.
    let (_, effects) = state.reduce(failed(3, false, 0));
    assert_eq!(effects, [RefreshEffect::StartRefresh]);
}

#[test]
fn cookie_auth_never_refreshes_and_reset_rejects_waiters() {
    let (_, effects) = RefreshState::new(false).reduce(failed(1, false, 0));
    assert_eq!(effects, [RefreshEffect::Reject { request: 1, reason: RejectReason::NotRefreshable }]);
    let (state, _) = RefreshState::new(true).reduce(failed(1, false, 0));
    let (state, effects) = state.reduce(RefreshEvent::Reset);
    assert_eq!(effects, [RefreshEffect::Reject { request: 1, reason: RejectReason::Cleared }]);
    let (_, effects) = state.reduce(RefreshEvent::Succeeded);
    assert_eq!(effects, [], "a refresh answering after clearAuth brings nothing back");
}

#[test]
fn no_request_is_ever_retried_twice() {
    // Drive many interleavings: every request id gets at most one Retry.
    let mut state = RefreshState::new(true);
    let mut retries = std::collections::BTreeMap::<u64, u32>::new();
    let script = [0u8, 0, 1, 0, 2, 0, 0, 1, 3, 0, 1, 0, 2, 1];
    let mut next_id = 1;
    for step in script {
        let event = match step {
            0 => {
                next_id += 1;
                failed(next_id, false, state.generation)
            }
            1 => RefreshEvent::Succeeded,
            2 => RefreshEvent::Failed,
            _ => RefreshEvent::Reset,
        };
        let (next, effects) = state.reduce(event);
        state = next;
        for effect in effects {
            if let RefreshEffect::Retry { request, .. } = effect {
                *retries.entry(request).or_default() += 1;
                // The retried request fails again: it must be rejected.
                let generation = state.generation;
                let (next, effects) = state.reduce(failed(request, true, generation));
                state = next;
                assert!(matches!(
                    effects.as_slice(),
                    [RefreshEffect::Reject { reason: RejectReason::AlreadyRetried, .. }]
                ));
            }
        }
    }
    assert!(retries.values().all(|count| *count == 1));
    assert!(!retries.is_empty());
}
