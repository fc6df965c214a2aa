//! Single-flight refresh: one refresh, waiters released together, each request retried once.

use cachet_core::machines::refresh::{
    Flight, Outcome, RefreshEffect, RefreshEvent, RefreshState, RejectReason, REFUSED_REMEMBERED,
};

fn failed(request: u64, retried: bool, generation: u64) -> RefreshEvent {
    failed_with(request, retried, generation, "t1")
}

fn failed_with(request: u64, retried: bool, generation: u64, token: &str) -> RefreshEvent {
    RefreshEvent::AuthFailed {
        request,
        retried,
        sent_with_generation: generation,
        token: Some(token.to_owned()),
    }
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

#[test]
fn a_refused_token_is_rejected_at_once_and_another_token_still_refreshes() {
    let (state, _) = RefreshState::new(true).reduce(failed_with(1, false, 0, "old"));
    let (state, _) = state.reduce(failed_with(2, false, 0, "other"));
    let (state, effects) = state.reduce(RefreshEvent::Refused);
    assert_eq!(
        effects,
        [1, 2].map(|request| RefreshEffect::Reject { request, reason: RejectReason::RefreshFailed })
    );
    assert_eq!(state.refused, ["old"], "the token that started the refresh, not every waiter's");
    let (state, effects) = state.reduce(failed_with(3, false, 0, "old"));
    assert_eq!(
        effects,
        [RefreshEffect::Reject { request: 3, reason: RejectReason::RefreshFailed }],
        "no new refresh"
    );
    let (state, effects) = state.reduce(failed_with(4, false, 0, "new"));
    assert_eq!(effects, [RefreshEffect::StartRefresh]);
    // A refresh that merely failed (offline) remembers nothing: the token may refresh later.
    let (state, _) = state.reduce(RefreshEvent::Failed);
    assert_eq!(state.refused, ["old"]);
    let (mut state, effects) = state.reduce(failed_with(5, false, 0, "new"));
    assert_eq!(effects, [RefreshEffect::StartRefresh]);
    // Bounded: the oldest refused token is forgotten first.
    for n in 0..REFUSED_REMEMBERED {
        state = state.reduce(RefreshEvent::Refused).0;
        state = state.reduce(failed_with(10 + n as u64, false, 0, &format!("t{n}"))).0;
    }
    assert_eq!(state.refused.len(), REFUSED_REMEMBERED);
    assert!(!state.refused.contains(&"old".to_owned()) && state.refused.contains(&"new".to_owned()));
}

#[test]
fn a_flight_hands_each_waiter_back_with_its_outcome() {
    let mut flight = Flight::new(true);
    let first = flight.auth_failed("a", false, 0, Some("t1".into()));
    assert!(first.start_refresh && first.told.is_empty());
    let second = flight.auth_failed("b", false, 0, Some("t1".into()));
    assert!(!second.start_refresh && second.told.is_empty(), "waits behind the running refresh");
    let done = flight.apply(RefreshEvent::Succeeded);
    assert_eq!(done.told, [("a", Outcome::Retry { generation: 1 }), ("b", Outcome::Retry { generation: 1 })]);
    assert_eq!(flight.state().generation, 1);
    let late = flight.auth_failed("c", false, 0, Some("t1".into()));
    assert_eq!(
        late.told,
        [("c", Outcome::Retry { generation: 1 })],
        "sent before the refresh: retried at once"
    );
    let again = flight.auth_failed("d", true, 1, Some("t2".into()));
    assert_eq!(again.told, [("d", Outcome::Reject(RejectReason::AlreadyRetried))]);
    let _ = flight.auth_failed("e", false, 1, Some("t2".into()));
    let cleared = flight.apply(RefreshEvent::Reset);
    assert_eq!(cleared.told, [("e", Outcome::Reject(RejectReason::Cleared))]);
    let mut cookie = Flight::new(false);
    assert_eq!(
        cookie.auth_failed("f", false, 0, None).told,
        [("f", Outcome::Reject(RejectReason::NotRefreshable))]
    );
}

#[test]
fn no_token_is_never_remembered_as_refused_and_a_reset_forgets_refusals() {
    let none =
        |request| RefreshEvent::AuthFailed { request, retried: false, sent_with_generation: 0, token: None };
    let (state, _) = RefreshState::new(true).reduce(none(1));
    let (state, _) = state.reduce(RefreshEvent::Refused);
    assert!(state.refused.is_empty());
    let (state, effects) = state.reduce(none(2));
    assert_eq!(effects, [RefreshEffect::StartRefresh], "a custom adapter's next failure still refreshes");
    let (state, _) = state.reduce(RefreshEvent::Reset);
    let (state, _) = state.reduce(failed_with(3, false, 1, "old"));
    let (state, _) = state.reduce(RefreshEvent::Refused);
    let (state, _) = state.reduce(RefreshEvent::Reset);
    let (_, effects) = state.reduce(failed_with(4, false, 2, "old"));
    assert_eq!(effects, [RefreshEffect::StartRefresh], "a new session (clearAuth, login) starts clean");
}
