//! Acting on dead letters (`cachet_core::machines::dead_letters`): retry back into the queue in the order
//! they were given up, discard, refusal of unknown ids and of a full queue, and the key a retry carries.

use cachet_core::config::QueueBounds;
use cachet_core::machines::queue::{
    DeadLetterReason, QueueEffect, QueueEvent, QueueState, QueuedRequest, Refusal, SendFailure,
};
use cachet_core::protocol::SwEvent;

const BOUNDS: QueueBounds =
    QueueBounds { max_items: 3, max_attempts: 1, backoff_base_ms: 1_000, backoff_max_ms: 3_000 };

fn request(name: &str) -> QueuedRequest {
    QueuedRequest {
        method: "POST".into(),
        url: "/graphql".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: format!(r#"{{"query":"mutation {name} {{ x }}"}}"#),
        operation_name: Some(name.into()),
        invalidate: vec![],
    }
}

/// A queue (online) where `A` was refused with 422, `B` failed its only attempt with a 503, and `C`
/// waits, not yet sent.
fn with_dead_letters() -> QueueState {
    let mut state = QueueState::new(BOUNDS, true);
    for (index, name) in ["A", "B", "C"].into_iter().enumerate() {
        let now = index as u64;
        state = state.reduce(QueueEvent::Enqueue { request: request(name), now, random: u128::from(now) }).0;
    }
    state = state
        .reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(422), now: 10, random: 0 })
        .0;
    // Offline before B's failure: C is not sent next.
    state = state.reduce(QueueEvent::Offline).0;
    state.reduce(QueueEvent::SendFailed { id: 2, failure: SendFailure::Status(503), now: 10, random: 0 }).0
}

fn key_of(state: &QueueState, id: u64) -> String {
    let item = state.items.iter().find(|item| item.id == id).unwrap();
    item.request.idempotency_key().unwrap().to_owned()
}

fn letter_key(state: &QueueState, id: u64) -> String {
    let letter = state.dead_letters.iter().find(|letter| letter.item.id == id).unwrap();
    letter.item.request.idempotency_key().unwrap().to_owned()
}

#[test]
fn the_setup_has_two_dead_letters_and_one_waiting_item() {
    let state = with_dead_letters();
    let reasons: Vec<_> = state.dead_letters.iter().map(|letter| (letter.item.id, letter.reason)).collect();
    assert_eq!(
        reasons,
        [(1, DeadLetterReason::Rejected { status: 422 }), (2, DeadLetterReason::TooManyAttempts)]
    );
    assert_eq!(state.items.iter().map(|item| item.id).collect::<Vec<_>>(), [3]);
}

#[test]
fn retry_puts_them_back_at_the_end_in_the_order_they_were_given_up() {
    let state = with_dead_letters();
    let (rejected_key, failed_key) = (letter_key(&state, 1), letter_key(&state, 2));
    let (state, effects) = state.reduce(QueueEvent::Online { now: 20 });
    assert_eq!(effects.iter().filter(|e| matches!(e, QueueEffect::Send { id: 3, .. })).count(), 1);
    let (state, _) = state.reduce(QueueEvent::SendSucceeded { id: 3, now: 21 });
    // Asked in the other order: still the order they were given up.
    let (state, effects) = state.reduce(QueueEvent::RetryDeadLetters { ids: vec![2, 1], now: 30, random: 7 });
    assert_eq!(
        effects,
        [
            QueueEffect::Persist,
            QueueEffect::Announce(SwEvent::MutationQueued { id: 1, operation_name: Some("A".into()) }),
            QueueEffect::Announce(SwEvent::MutationQueued { id: 2, operation_name: Some("B".into()) }),
        ]
    );
    assert!(state.dead_letters.is_empty());
    assert_eq!(state.items.iter().map(|item| (item.id, item.attempts)).collect::<Vec<_>>(), [(1, 0), (2, 0)]);
    assert_ne!(key_of(&state, 1), rejected_key, "a refused mutation gets a fresh key");
    assert_eq!(key_of(&state, 2), failed_key, "one that may have been applied keeps its key");
    let keys = state
        .items
        .iter()
        .flat_map(|item| &item.request.headers)
        .filter(|(name, _)| name == "idempotency-key");
    assert_eq!(keys.count(), 2, "one key each, the old one replaced");
    let (_, effects) = state.reduce(QueueEvent::Online { now: 31 });
    let sent: Vec<_> = effects
        .iter()
        .filter_map(|e| if let QueueEffect::Send { id, .. } = e { Some(*id) } else { None })
        .collect();
    assert_eq!(sent, [1], "the edge's Online sends the head");
}

#[test]
fn a_retried_item_waits_behind_the_living() {
    let (state, effects) =
        with_dead_letters().reduce(QueueEvent::RetryDeadLetters { ids: vec![1], now: 30, random: 1 });
    assert!(!effects.iter().any(|e| matches!(e, QueueEffect::Send { .. })), "offline: nothing sent");
    assert_eq!(state.items.iter().map(|item| item.id).collect::<Vec<_>>(), [3, 1]);
    let (_, effects) = state.reduce(QueueEvent::Online { now: 40 });
    let sent: Vec<_> = effects
        .iter()
        .filter_map(|e| if let QueueEffect::Send { id, .. } = e { Some(*id) } else { None })
        .collect();
    assert_eq!(sent, [3]);
}

#[test]
fn discard_deletes_only_the_named_letters() {
    let (state, effects) = with_dead_letters().reduce(QueueEvent::DiscardDeadLetters { ids: vec![1] });
    assert_eq!(effects, [QueueEffect::Persist]);
    assert_eq!(state.dead_letters.iter().map(|letter| letter.item.id).collect::<Vec<_>>(), [2]);
    assert_eq!(state.items.len(), 1);
}

#[test]
fn an_unknown_id_refuses_the_whole_action() {
    let before = with_dead_letters();
    for event in [
        QueueEvent::RetryDeadLetters { ids: vec![1, 3], now: 30, random: 1 },
        QueueEvent::DiscardDeadLetters { ids: vec![2, 99] },
    ] {
        let expected = if matches!(event, QueueEvent::RetryDeadLetters { .. }) { 3 } else { 99 };
        let (after, effects) = before.clone().reduce(event);
        assert_eq!(effects, [QueueEffect::Refused(Refusal::NoSuchDeadLetter { id: expected })]);
        assert_eq!(after, before, "nothing changed");
    }
}

#[test]
fn a_retry_beyond_max_items_is_refused() {
    let state = with_dead_letters();
    let state = state.reduce(QueueEvent::Enqueue { request: request("D"), now: 11, random: 11 }).0;
    let (after, effects) =
        state.clone().reduce(QueueEvent::RetryDeadLetters { ids: vec![1, 2], now: 30, random: 1 });
    assert_eq!(effects, [QueueEffect::Refused(Refusal::Full)]);
    assert_eq!(after, state);
    let (after, effects) = state.reduce(QueueEvent::RetryDeadLetters { ids: vec![], now: 30, random: 1 });
    assert!(effects.is_empty());
    assert_eq!(after.dead_letters.len(), 2);
}

#[test]
fn retried_state_survives_serialisation() {
    let (state, _) =
        with_dead_letters().reduce(QueueEvent::RetryDeadLetters { ids: vec![1], now: 30, random: 5 });
    assert_eq!(QueueState::from_json_as_written(&state.to_json()).unwrap(), state);
}
