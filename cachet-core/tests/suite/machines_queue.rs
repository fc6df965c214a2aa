//! The mutation queue: FIFO, one in flight, capped attempts, backoff with jitter, dead letters, refresh,
//! and a state that survives serialisation.

use cachet_core::config::QueueBounds;
use cachet_core::machines::queue::{
    ask_again_after_silence, idempotency_key, Alarm, DeadLetterReason, QueueEffect, QueueEvent, QueueState,
    QueuedRequest, Refusal, SendFailure, ALARM_RECHECK_MS, IDEMPOTENCY_KEY_HEADER,
};
use cachet_core::protocol::SwEvent;

const BOUNDS: QueueBounds =
    QueueBounds { max_items: 3, max_attempts: 3, backoff_base_ms: 1_000, backoff_max_ms: 3_000 };

fn request(name: &str) -> QueuedRequest {
    QueuedRequest {
        method: "POST".into(),
        url: "/graphql".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: format!(r#"{{"query":"mutation {name} {{ x }}"}}"#),
        operation_name: Some(name.into()),
        invalidate: vec!["note".into(), "notes".into()],
    }
}

/// Enqueues `name` at `now`, with `now` as the random bits of its key.
fn enqueue(state: QueueState, name: &str, now: u64) -> (QueueState, Vec<QueueEffect>) {
    state.reduce(QueueEvent::Enqueue { request: request(name), now, random: u128::from(now) })
}

/// `request` with the key an enqueue with `random` gives it.
fn keyed(mut request: QueuedRequest, random: u128) -> QueuedRequest {
    request.headers.push((IDEMPOTENCY_KEY_HEADER.into(), idempotency_key(random)));
    request
}

fn sent(effects: &[QueueEffect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|effect| if let QueueEffect::Send { id, .. } = effect { Some(*id) } else { None })
        .collect()
}

#[test]
fn fifo_one_in_flight_and_replay_invalidates() {
    let state = QueueState::new(BOUNDS, false);
    let (state, effects) = enqueue(state, "CreateNote", 0);
    assert_eq!(
        effects,
        [
            QueueEffect::Persist,
            QueueEffect::Announce(SwEvent::MutationQueued {
                id: 1,
                operation_name: Some("CreateNote".into())
            })
        ]
    );
    let (state, _) = enqueue(state, "UpdateNote", 1);
    let (state, _) = enqueue(state, "DeleteNote", 2);
    let (state, effects) = enqueue(state, "Extra", 3);
    assert_eq!(effects, [QueueEffect::Refused(Refusal::Full)]);
    let (state, effects) = state.reduce(QueueEvent::Online { now: 10 });
    assert_eq!(sent(&effects), [1], "only the head, only one");
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 11 });
    assert_eq!(sent(&effects), Vec::<u64>::new(), "nothing while one is in flight");
    let (state, effects) = state.reduce(QueueEvent::SendSucceeded { id: 1, now: 12 });
    assert_eq!(
        effects,
        [
            QueueEffect::Persist,
            QueueEffect::Invalidate { tags: vec!["note".into(), "notes".into()] },
            QueueEffect::Announce(SwEvent::MutationReplayed {
                id: 1,
                invalidated: vec!["note".into(), "notes".into()]
            }),
            QueueEffect::Send { id: 2, request: keyed(request("UpdateNote"), 1) },
        ]
    );
    let (state, effects) = state.reduce(QueueEvent::SendSucceeded { id: 2, now: 13 });
    assert_eq!(sent(&effects), [3]);
    let (state, _) = state.reduce(QueueEvent::Offline);
    let (state, effects) = state.reduce(QueueEvent::SendSucceeded { id: 3, now: 14 });
    assert_eq!(sent(&effects), Vec::<u64>::new(), "offline: nothing more is sent");
    assert!(state.items.is_empty());
}

#[test]
fn server_errors_back_off_with_jitter_until_the_attempt_cap() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
    assert_eq!(state.in_flight, Some(1));
    // 1st failure: d = 1000, jitter in [500, 1000].
    let (state, effects) = state.reduce(QueueEvent::SendFailed {
        id: 1,
        failure: SendFailure::Status(503),
        now: 100,
        random: 0,
    });
    assert_eq!(
        effects,
        [
            QueueEffect::Persist,
            QueueEffect::Announce(SwEvent::MutationFailed { id: 1, attempts: 1, retry_at: 600 }),
            QueueEffect::WakeAt { at: 600 }
        ]
    );
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 599 });
    assert_eq!(effects, [QueueEffect::WakeAt { at: 600 }], "not before it is due");
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 600 });
    assert_eq!(sent(&effects), [1]);
    // 2nd failure (a 503): d = 2000, random = max gives the full 2000.
    let (state, effects) = state.reduce(QueueEvent::SendFailed {
        id: 1,
        failure: SendFailure::Status(503),
        now: 700,
        random: u32::MAX,
    });
    assert!(effects.contains(&QueueEffect::WakeAt { at: 2_700 }));
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 2_700 });
    assert_eq!(sent(&effects), [1]);
    // 3rd failure: the cap (3 sends) is reached.
    let (state, effects) = state.reduce(QueueEvent::SendFailed {
        id: 1,
        failure: SendFailure::Status(500),
        now: 3_000,
        random: 7,
    });
    assert!(effects.contains(&QueueEffect::Announce(SwEvent::MutationDeadLettered {
        id: 1,
        reason: DeadLetterReason::TooManyAttempts
    })));
    assert!(state.items.is_empty());
    assert_eq!(state.dead_letters.len(), 1);
    assert_eq!(state.dead_letters[0].item.attempts, 3);
}

#[test]
fn backoff_is_exponential_capped_and_jittered() {
    let state = QueueState::new(QueueBounds { backoff_base_ms: 100, backoff_max_ms: 1_000, ..BOUNDS }, true);
    let table: &[(u32, u32, u64)] = &[
        (1, 0, 50),
        (1, u32::MAX, 100),
        (2, 0, 100),
        (3, u32::MAX, 400),
        (4, u32::MAX, 800),
        (5, u32::MAX, 1_000),
        (5, 0, 500),
        (60, u32::MAX / 2, 749),
        (1_000, u32::MAX, 1_000),
    ];
    for (attempts, random, expected) in table {
        assert_eq!(state.backoff_ms(*attempts, *random), *expected, "attempts {attempts} random {random}");
    }
}

#[test]
fn client_errors_are_dead_letters_but_408_and_429_retry() {
    for (status, dead) in [
        (400, true),
        (404, true),
        (409, true),
        (422, true),
        (401, true),
        (408, false),
        (429, false),
        (500, false),
        (302, false),
    ] {
        let (state, _) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
        let (state, effects) = state.reduce(QueueEvent::SendFailed {
            id: 1,
            failure: SendFailure::Status(status),
            now: 1,
            random: 0,
        });
        let dead_lettered = effects.contains(&QueueEffect::Announce(SwEvent::MutationDeadLettered {
            id: 1,
            reason: DeadLetterReason::Rejected { status },
        }));
        assert_eq!(dead_lettered, dead, "status {status}");
        assert_eq!(state.items.is_empty(), dead);
    }
}

#[test]
fn a_dead_letter_unblocks_the_next_item() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    let (state, _) = enqueue(state, "B", 0);
    let (_, effects) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(400), now: 1, random: 0 });
    assert_eq!(sent(&effects), [2]);
}

#[test]
fn auth_failure_refreshes_then_retries_once() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
    let (state, effects) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::AuthFailure, now: 1, random: 0 });
    assert_eq!(effects, [QueueEffect::Persist, QueueEffect::RequestRefresh { id: 1 }]);
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 2 });
    assert_eq!(effects, [], "nothing is sent while the refresh runs");
    let (state, effects) = state.reduce(QueueEvent::RefreshFinished { ok: true, now: 3, random: 0 });
    assert_eq!(sent(&effects), [1]);
    assert_eq!(state.items[0].attempts, 0, "the auth retry does not count against maxAttempts");
    let (state, effects) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::AuthFailure, now: 4, random: 0 });
    assert!(effects.contains(&QueueEffect::Announce(SwEvent::MutationDeadLettered {
        id: 1,
        reason: DeadLetterReason::Unauthorized
    })));
    assert!(
        !effects.iter().any(|effect| matches!(effect, QueueEffect::RequestRefresh { .. })),
        "never a refresh loop"
    );
    assert!(state.items.is_empty());

    // A refused refresh: the item backs off, and its next auth failure is final.
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::AuthFailure, now: 1, random: 0 });
    let (state, effects) = state.reduce(QueueEvent::RefreshFinished { ok: false, now: 2, random: 0 });
    assert!(effects.contains(&QueueEffect::WakeAt { at: 502 }));
    assert!(state.items[0].auth_retried);
}

#[test]
fn clear_drops_everything_and_late_outcomes_are_ignored() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    let (state, _) = enqueue(state, "B", 0);
    let (state, effects) = state.reduce(QueueEvent::Clear);
    assert_eq!(effects, [QueueEffect::Persist]);
    assert!(state.items.is_empty() && state.in_flight.is_none());
    let (state, effects) = state.reduce(QueueEvent::SendSucceeded { id: 1, now: 5 });
    assert_eq!(effects, []);
    let (state, _) = enqueue(state, "C", 6);
    assert_eq!(state.items[0].id, 3, "ids are never reused");
}

#[test]
fn the_state_survives_serialisation_and_forgets_what_was_in_flight() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    let (state, _) = enqueue(state, "B", 0);
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(400), now: 1, random: 0 });
    assert_eq!(state.in_flight, Some(2));
    let text = state.to_json();
    assert!(text.contains(r#""deadLetters":[{"item":{"id":1,"#), "{text}");
    let restored = QueueState::from_json(&text).unwrap();
    assert_eq!(restored.in_flight, None);
    assert_eq!(restored.items, state.items);
    assert_eq!(restored.dead_letters, state.dead_letters);
    assert_eq!(restored.next_id, 3);
    // Restored, it sends the interrupted item again (at-least-once).
    let (_, effects) = restored.reduce(QueueEvent::Wake { now: 2 });
    assert_eq!(sent(&effects), [2]);
    assert!(matches!(
        QueueState::from_json("{\"items\": 1}"),
        Err(cachet_core::Error::StoredState { what: "mutation queue", .. })
    ));
}

#[test]
fn dead_letters_are_bounded() {
    let mut state = QueueState::new(BOUNDS, true);
    for round in 0..5 {
        let (next, effects) = enqueue(state, "A", round);
        let id = sent(&effects)[0];
        let (next, _) = next.reduce(QueueEvent::SendFailed {
            id,
            failure: SendFailure::Status(400),
            now: round,
            random: 0,
        });
        state = next;
    }
    assert_eq!(state.dead_letters.len(), 3);
    assert_eq!(state.dead_letters[0].item.id, 3, "the oldest go first");
}

#[test]
fn the_queued_answer_body_is_a_graphql_result_naming_the_item() {
    let body: serde_json::Value =
        serde_json::from_str(&cachet_core::machines::queue::queued_body(42)).expect("valid JSON");
    assert_eq!(body["data"], serde_json::Value::Null);
    assert_eq!(body["extensions"]["cachet"]["queued"], true);
    assert_eq!(body["extensions"]["cachet"]["id"], 42);
}

#[test]
fn the_not_queued_answer_body_is_a_graphql_error_naming_the_reason() {
    use cachet_core::machines::queue::{not_queued_body, NotQueued};
    for (reason, name, outcome) in [
        (NotQueued::QueueFull, "queue-full", "not sent"),
        (NotQueued::StorageFull, "storage-full", "not sent"),
        (NotQueued::Unwritable, "unwritable", "not sent"),
        // Only a worker without the queue has tried the send (it failed: that is the detail).
        (NotQueued::NotBuilt, "queue-not-built", "its send failed"),
    ] {
        let body: serde_json::Value =
            serde_json::from_str(&not_queued_body(reason, "QuotaExceededError: \"x\"")).expect("valid JSON");
        assert_eq!(body["data"], serde_json::Value::Null);
        assert_eq!(body["errors"][0]["extensions"]["cachet"]["queued"], false);
        assert_eq!(body["errors"][0]["extensions"]["cachet"]["reason"], name);
        let message = body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!("not queued, {outcome}: "))
                && message.ends_with("QuotaExceededError: \"x\""),
            "{message}"
        );
    }
}

#[test]
fn a_torn_item_is_left_out_by_name_and_the_rest_of_the_queue_is_kept() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    let (state, _) = enqueue(state, "B", 1);
    let (state, _) = enqueue(state, "C", 2);
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(422), now: 3, random: 0 });
    assert_eq!((state.items.len(), state.dead_letters.len()), (2, 1));
    let mut torn: serde_json::Value = serde_json::from_str(&state.to_json()).expect("JSON");
    torn["items"][0]["request"]["url"] = serde_json::json!(5);
    torn["deadLetters"][0]["at"] = serde_json::json!("yesterday");
    torn.as_object_mut().expect("an object").remove("nextId");
    let text = torn.to_string();
    assert!(QueueState::from_json_as_written(&text).is_err(), "torn: not read whole");

    let (salvaged, left_out) = QueueState::salvage_json(&text).expect("salvaged");
    let names: Vec<_> = salvaged.items.iter().map(|item| item.request.operation_name.clone()).collect();
    assert_eq!(names, [Some("C".to_owned())], "the readable item kept, in order");
    assert!(salvaged.dead_letters.is_empty());
    assert_eq!(salvaged.next_id, state.next_id, "no id handed out again");
    let messages: Vec<String> = left_out.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("mutation queue")
            && messages[0].contains("items[0].request.url: expected a string")
    );
    assert!(messages[1].contains("deadLetters[0].at: expected a whole number"), "{messages:?}");
    assert_eq!(QueueState::from_json_as_written(&salvaged.to_json()), Ok(salvaged));

    assert!(QueueState::salvage_json(&state.to_json()[..40]).is_none(), "cut short: nothing told apart");
}

/// States of every shape the reducer makes: items in flight and backing off, dead letters of each
/// reason, refreshes awaited, operation names absent and present.
pub(crate) fn varied_states() -> Vec<QueueState> {
    let mut states = vec![QueueState::new(BOUNDS, true), QueueState::new(BOUNDS, false)];
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    states.push(state.clone());
    let mut anonymous = request("B");
    anonymous.operation_name = None;
    anonymous.headers.push(("x-cachet-auth".into(), "1".into()));
    let (state, _) = state.reduce(QueueEvent::Enqueue { request: anonymous, now: 1, random: u128::MAX });
    states.push(state.clone());
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(422), now: 2, random: 7 });
    states.push(state.clone());
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 2, failure: SendFailure::AuthFailure, now: 3, random: 7 });
    states.push(state.clone());
    let (state, _) = state.reduce(QueueEvent::RefreshFinished { ok: true, now: 4, random: 7 });
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 2, failure: SendFailure::AuthFailure, now: 5, random: 7 });
    states.push(state.clone());
    let (state, _) = enqueue(state, "C", 6);
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 3, failure: SendFailure::Status(503), now: 7, random: 9 });
    states.push(state.clone());
    let mut exhausted = QueueState::new(QueueBounds { max_attempts: 1, ..BOUNDS }, true);
    for round in 0..2 {
        let (next, effects) = enqueue(exhausted, "D", round);
        let id = sent(&effects)[0];
        (exhausted, _) =
            next.reduce(QueueEvent::SendFailed { id, failure: SendFailure::Network, now: 8, random: 0 });
        exhausted = exhausted.reduce(QueueEvent::Online { now: 8 }).0;
    }
    states.push(exhausted);
    states
}

#[test]
fn the_hand_written_writer_and_reader_agree_with_the_derive() {
    let states = varied_states();
    let reasons: Vec<_> = states.iter().flat_map(|s| s.dead_letters.iter().map(|d| d.reason)).collect();
    for reason in [
        DeadLetterReason::Rejected { status: 422 },
        DeadLetterReason::Unauthorized,
        DeadLetterReason::TooManyAttempts,
    ] {
        assert!(reasons.contains(&reason), "the states cover every reason");
    }
    assert!(states.iter().any(|s| s.in_flight.is_some() && s.awaiting_refresh.is_none()));
    assert!(states.iter().any(|s| s.awaiting_refresh.is_some()));
    for state in states {
        let text = state.to_json();
        // Written by hand: the derive's exact text.
        assert_eq!(text, serde_json::to_string(&state).unwrap());
        assert_eq!(QueueState::from_json_as_written(&text).as_ref(), Ok(&state), "{text}");
        let derived: QueueState = serde_json::from_str(&text).expect("the derive reads it too");
        assert_eq!(derived, state);
    }
}

#[test]
fn an_unreadable_state_names_what_is_wrong() {
    let good: serde_json::Value = serde_json::from_str(&varied_states()[5].to_json()).expect("json");
    let with = |pointer: &str, value: serde_json::Value| {
        let mut changed = good.clone();
        *changed.pointer_mut(pointer).expect("pointer") = value;
        changed.to_string()
    };
    let without = |field: &str| {
        let mut changed = good.clone();
        changed.as_object_mut().expect("object").remove(field);
        changed.to_string()
    };
    let cases = [
        ("{\"items\": ".to_owned(), "unexpected end of the text"),
        ("[]".to_owned(), ": expected an object"),
        (without("nextId"), "missing field `nextId`"),
        (with("/items", serde_json::json!(1)), "items: expected an array"),
        (with("/items/0/request/url", serde_json::json!(5)), "items[0].request.url: expected a string"),
        (
            with("/items/0/request/headers/0", serde_json::json!(["a"])),
            "items[0].request.headers[0]: expected a [name, value] pair",
        ),
        (
            with("/items/0/attempts", serde_json::json!(1_u64 << 40)),
            "items[0].attempts: expected a whole number below 2^32",
        ),
        (
            with("/deadLetters/0/reason/kind", serde_json::json!("lost")),
            "deadLetters[0].reason.kind: expected rejected",
        ),
        (
            with("/deadLetters/0/reason/status", serde_json::json!(70000)),
            "deadLetters[0].reason.status: expected an HTTP status",
        ),
        (with("/online", serde_json::json!("yes")), "online: expected true or false"),
        (with("/bounds/maxItems", serde_json::json!(-1)), "bounds.maxItems: expected a whole number"),
    ];
    for (text, expected) in cases {
        match QueueState::from_json(&text) {
            Err(cachet_core::Error::StoredState { what: "mutation queue", message }) => {
                assert!(message.contains(expected), "{message} lacks {expected}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// The worker stopped in the middle of a send: the stored state (written with the item in flight) is
/// read back by a new instance, which sends the head again.
fn stopped_mid_send(state: &QueueState) -> QueueState {
    QueueState::from_json(&state.to_json()).expect("the state reads back")
}

#[test]
fn a_worker_stopped_mid_send_costs_no_attempt_however_often() {
    let (mut state, effects) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
    assert_eq!(sent(&effects), [1]);
    for round in 1..=100 {
        state = stopped_mid_send(&state);
        let (next, effects) = state.reduce(QueueEvent::Online { now: round });
        assert_eq!(sent(&effects), [1], "round {round}: sent again");
        assert_eq!(next.items[0].attempts, 0, "round {round}: a stop is not an attempt");
        state = next;
    }
    // Answers still count: maxAttempts (3) failed answers, and only they, make a dead letter.
    for (round, dead) in [(1, false), (2, false), (3, true)] {
        let now = 1_000 * round;
        let (next, effects) =
            state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Status(503), now, random: 0 });
        let dead_lettered =
            effects.iter().any(|e| matches!(e, QueueEffect::Announce(SwEvent::MutationDeadLettered { .. })));
        assert_eq!(dead_lettered, dead, "after {round} failed answers");
        state = stopped_mid_send(&next);
        state = state.reduce(QueueEvent::Wake { now: now + 10_000 }).0;
        state = stopped_mid_send(&state);
        state = state.reduce(QueueEvent::Wake { now: now + 20_000 }).0;
    }
    assert_eq!(state.dead_letters.len(), 1);
    assert_eq!(state.dead_letters[0].item.attempts, 3);
}

#[test]
fn a_mutation_no_page_could_authorise_waits_and_is_never_a_dead_letter() {
    let (mut state, _) = enqueue(QueueState::new(BOUNDS, true), "CreateNote", 0);
    for round in 1..=50_u64 {
        let now = round * 10_000;
        let (next, effects) =
            state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::NotSent, now, random: 0 });
        assert_eq!(
            effects,
            [
                QueueEffect::Persist,
                QueueEffect::Announce(SwEvent::MutationFailed { id: 1, attempts: 0, retry_at: now + 500 }),
            ],
            "round {round}: no wake-up of the worker's own (it has no page to ask)"
        );
        assert_eq!(next.alarm(now, true).check_at, Some(now + 500), "a page's alarm wakes it when due");
        assert!(next.alarm(now + 500, true).wake_now);
        let (next, effects) = next.reduce(QueueEvent::Wake { now: now + 500 });
        assert_eq!(sent(&effects), [1]);
        state = next;
    }
    assert!(state.dead_letters.is_empty());
}

#[test]
fn every_item_carries_a_stable_idempotency_key() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, false), "A", 7);
    let mut own = request("B");
    own.headers.push(("Idempotency-Key".into(), "app-chosen".into()));
    let (state, _) = state.reduce(QueueEvent::Enqueue { request: own, now: 8, random: 99 });
    let key = state.items[0].request.idempotency_key().map(str::to_owned);
    assert_eq!(key.as_deref(), Some(idempotency_key(7).as_str()));
    assert_eq!(state.items[1].request.idempotency_key(), Some("app-chosen"), "an app's own key is kept");
    assert_eq!(state.items[1].request.headers.len(), 2, "and no second key is added");
    // Kept through storage, stops and every send.
    let state = stopped_mid_send(&state);
    let (state, effects) = state.reduce(QueueEvent::Online { now: 9 });
    let Some(QueueEffect::Send { request: sent_request, .. }) =
        effects.iter().find(|e| matches!(e, QueueEffect::Send { .. }))
    else {
        panic!("sent: {effects:?}");
    };
    assert_eq!(sent_request.idempotency_key().map(str::to_owned), key);
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Network, now: 10, random: 0 });
    let (_, effects) = stopped_mid_send(&state).reduce(QueueEvent::Online { now: 100_000 });
    assert!(effects.contains(&QueueEffect::Send { id: 1, request: keyed(request("A"), 7) }), "{effects:?}");
}

#[test]
fn idempotency_keys_are_version_4_uuids() {
    let table: &[(u128, &str)] = &[
        (0, "00000000-0000-4000-8000-000000000000"),
        (u128::MAX, "ffffffff-ffff-4fff-bfff-ffffffffffff"),
        (0x0123_4567_89ab_cdef_0123_4567_89ab_cdef, "01234567-89ab-4def-8123-456789abcdef"),
    ];
    for (random, expected) in table {
        assert_eq!(idempotency_key(*random), *expected);
    }
    assert_ne!(idempotency_key(1), idempotency_key(2));
}

#[test]
fn the_alarm_wakes_the_worker_while_the_head_is_due() {
    let idle = Alarm { wake_now: false, check_at: None };
    let empty = QueueState::new(BOUNDS, true);
    assert_eq!(empty.alarm(5, true), idle, "nothing queued");
    let (queued_offline, _) = enqueue(QueueState::new(BOUNDS, false), "A", 0);
    assert_eq!(queued_offline.alarm(5, false), idle, "the browser is offline: its online event re-checks");
    assert_eq!(
        queued_offline.alarm(5, true),
        idle,
        "the queue met no network: it waits for a trigger, which the page hears as a broadcast"
    );
    let (in_flight, _) = queued_offline.reduce(QueueEvent::Online { now: 10 });
    assert_eq!(in_flight.in_flight, Some(1));
    let due = Alarm { wake_now: true, check_at: Some(20 + ALARM_RECHECK_MS) };
    assert_eq!(in_flight.alarm(20, true), due, "in flight: its worker may have been stopped");
    assert_eq!(stopped_mid_send(&in_flight).alarm(20, true), due);
    let (backing_off, _) = in_flight.reduce(QueueEvent::SendFailed {
        id: 1,
        failure: SendFailure::Status(503),
        now: 30,
        random: 0,
    });
    assert_eq!(backing_off.alarm(31, true), Alarm { wake_now: false, check_at: Some(530) }, "due later");
    assert_eq!(
        backing_off.alarm(530, true),
        Alarm { wake_now: true, check_at: Some(530 + ALARM_RECHECK_MS) }
    );
}

#[test]
fn a_question_the_worker_never_answered_is_asked_again_only_when_the_queue_had_work() {
    assert_eq!(ask_again_after_silence(Some(900), 100), Some(100), "the last answer had a time: at once");
    assert_eq!(ask_again_after_silence(None, 100), None, "no time (or no answer yet): at the next event");
}

#[test]
fn a_network_failure_takes_the_queue_offline_until_a_connectivity_trigger() {
    let (state, _) = enqueue(QueueState::new(BOUNDS, true), "A", 0);
    let (state, _) = enqueue(state, "B", 1);
    let (state, effects) =
        state.reduce(QueueEvent::SendFailed { id: 1, failure: SendFailure::Network, now: 10, random: 0 });
    assert!(!state.online);
    assert!(
        !effects.iter().any(|e| matches!(e, QueueEffect::WakeAt { .. } | QueueEffect::Send { .. })),
        "{effects:?}"
    );
    let (state, effects) = state.reduce(QueueEvent::Wake { now: 100_000 });
    assert!(effects.is_empty(), "a wake-up sends nothing while offline: {effects:?}");
    let (_, effects) = state.reduce(QueueEvent::Online { now: 100_000 });
    assert_eq!(sent(&effects), [1], "FIFO: the head again, never B first");
    // A refresh that found no fresh auth backs off as before, online, with a wake-up.
    let (state, effects) = enqueue(QueueState::new(BOUNDS, true), "C", 2);
    let id = sent(&effects)[0];
    let (state, _) =
        state.reduce(QueueEvent::SendFailed { id, failure: SendFailure::AuthFailure, now: 20, random: 0 });
    let (state, effects) = state.reduce(QueueEvent::RefreshFinished { ok: false, now: 30, random: 0 });
    assert!(state.online);
    assert!(effects.iter().any(|e| matches!(e, QueueEffect::WakeAt { .. })), "{effects:?}");
}
