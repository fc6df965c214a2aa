//! The offline mutation queue's storage and replay, run inside a real Service Worker in headless Chromium.
//! The parts are driven directly (they are built either way); what reaches them through the engine's
//! messages needs the `queue` feature (`cargo test -p cachet-worker --features queue`, as `cargo xtask
//! test` runs it).
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::{Config, QueueBounds};
use cachet_core::machines::queue::{QueueEffect, QueueEvent, Refusal, IDEMPOTENCY_KEY_HEADER};
use cachet_core::protocol::storage::DATABASE;
use cachet_core::protocol::SwEvent;
use cachet_worker::sw::queue::{replay, Trigger};
use cachet_worker::sw::queue_store::{self, STATE_KEY, STORE};
use cachet_worker::sw::tag_index::TagIndex;
use cachet_worker::Error;
use js_sys::Promise;
use rexie::{Rexie, TransactionMode};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_service_worker);

mod common;
use common::{enqueue_offline, listen_for_events, mutation, next_event, UNREACHABLE_GRAPHQL};

/// Writes `value` as the queue's record, bypassing cachet, as a corrupt write would leave it.
async fn put_raw(value: &JsValue) {
    // The worker's database exists once cachet opened it; opened here at its version, it is not changed.
    let _ = queue_store::load(QueueBounds::default()).await;
    let database = Rexie::builder(DATABASE).build().await.unwrap();
    let transaction = database.transaction(&[STORE], TransactionMode::ReadWrite).unwrap();
    let store = transaction.store(STORE).unwrap();
    store.put(value, Some(&STATE_KEY.into())).await.unwrap();
    transaction.done().await.unwrap();
    database.close();
}

#[wasm_bindgen_test]
async fn the_stored_queue_reads_back_as_written() {
    queue_store::clear().await.unwrap();
    let first = enqueue_offline(mutation("CreateTodo", "https://t.invalid/graphql")).await;
    let second = enqueue_offline(mutation("UpdateTodo", "https://t.invalid/graphql")).await;
    assert_eq!(second, first + 1);

    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    let ids: Vec<u64> = state.items.iter().map(|item| item.id).collect();
    assert_eq!(ids, [first, second], "in order");
    let mut stored = state.items[0].request.clone();
    let key = stored.headers.pop().unwrap();
    assert_eq!((key.0.as_str(), key.1.len()), (IDEMPOTENCY_KEY_HEADER, 36), "a UUID key, stored with it");
    assert_eq!(stored, mutation("CreateTodo", "https://t.invalid/graphql"));
    assert_ne!(state.items[1].request.idempotency_key(), Some(key.1.as_str()), "one key per item");
    assert_eq!(state.items[1].request.operation_name.as_deref(), Some("UpdateTodo"));
    assert!(!state.online);
    assert_eq!(state.next_id, second + 1);

    // The bounds are always the current config's, whatever was stored with the queue.
    let narrow = QueueBounds { max_items: 2, ..QueueBounds::default() };
    assert_eq!(queue_store::load(narrow).await.unwrap().bounds, narrow);
    let refused = queue_store::update(narrow, &|state| {
        state.reduce(QueueEvent::Enqueue {
            request: mutation("Third", "https://t.invalid/g"),
            now: 2,
            random: 3,
        })
    })
    .await
    .unwrap();
    assert!(matches!(refused[..], [QueueEffect::Refused(Refusal::Full)]), "refused: {}", refused.len());
    assert_eq!(queue_store::load(narrow).await.unwrap().items.len(), 2, "the full queue kept its two");
}

#[wasm_bindgen_test]
async fn a_corrupt_record_is_a_typed_error_and_nothing_else_stored_is_lost() {
    queue_store::clear().await.unwrap();
    // Something in the other stores of the worker.
    let index = TagIndex::open().await.unwrap();
    index.record("https://t.invalid/kept", "c", &["kept".into()], 1).await.unwrap();
    cachet_worker::sw::identity::set(Some("someone".into()), None).await.unwrap();

    for (garbage, expected) in [
        (JsValue::from_str(r#"{"items": "#), "unexpected end of the text"),
        (JsValue::from_f64(42.0), "not JSON text"),
        (JsValue::from_str(r#"{"items": []}"#), "missing field"),
    ] {
        put_raw(&garbage).await;
        let error = queue_store::load(QueueBounds::default()).await.unwrap_err();
        match &error {
            Error::Core(cachet_core::Error::StoredState { what, message }) => {
                assert_eq!(*what, "mutation queue");
                assert!(message.contains(expected), "{message}");
            }
            other => panic!("not a stored-state error: {other}"),
        }
        assert!(error.to_string().starts_with("stored mutation queue is unreadable: "), "{error}");
    }

    // The next change sets the unreadable record aside, untouched, and starts an empty queue.
    put_raw(&JsValue::from_str("{not json")).await;
    let id = enqueue_offline(mutation("CreateTodo", "https://t.invalid/graphql")).await;
    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    assert_eq!(state.items.iter().map(|item| item.id).collect::<Vec<_>>(), [id]);
    let kept = queue_store::unreadable().await.unwrap();
    assert_eq!(kept.len(), 1, "the unreadable record is kept");
    assert!(kept[0].0.starts_with(queue_store::UNREADABLE_PREFIX));
    assert_eq!(kept[0].1, "{not json");

    assert_eq!(
        index.entries_tagged(&["kept".into()]).await.unwrap(),
        [("https://t.invalid/kept".to_owned(), "c".to_owned())]
    );
    assert_eq!(
        cachet_worker::sw::identity::current().await.unwrap().map(|identity| identity.partition).as_deref(),
        Some("someone")
    );
    index.remove(&["https://t.invalid/kept".into()]).await.unwrap();
}

#[wasm_bindgen_test]
async fn a_torn_item_is_left_out_the_readable_items_stay_queued_and_the_record_is_kept_whole() {
    queue_store::clear().await.unwrap();
    let first = enqueue_offline(mutation("First", "https://t.invalid/graphql")).await;
    let second = enqueue_offline(mutation("Second", "https://t.invalid/graphql")).await;
    let stored = queue_store::load(QueueBounds::default()).await.unwrap().to_json();
    let mut torn: serde_json::Value = serde_json::from_str(&stored).unwrap();
    torn["items"][0]["request"]["headers"] = serde_json::json!("not pairs");
    let torn = torn.to_string();
    put_raw(&JsValue::from_str(&torn)).await;
    assert!(queue_store::load(QueueBounds::default()).await.is_err(), "not read whole");

    let third = enqueue_offline(mutation("Third", "https://t.invalid/graphql")).await;
    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    let ids: Vec<u64> = state.items.iter().map(|item| item.id).collect();
    assert_eq!(ids, [second, third], "the readable item stays queued, ahead of the new one");
    assert!(third > second && second > first, "no id handed out again");
    let kept = queue_store::unreadable().await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].1, torn, "the torn record is kept whole, the torn item with it");
    queue_store::clear().await.unwrap();
}

#[wasm_bindgen_test]
async fn clear_all_purges_the_queue_dead_letters_and_set_aside_records() {
    queue_store::clear().await.unwrap();
    put_raw(&JsValue::from_str("{not json")).await;
    enqueue_offline(mutation("CreateTodo", "https://t.invalid/graphql")).await;
    let last = enqueue_offline(mutation("UpdateTodo", "https://t.invalid/graphql")).await;
    queue_store::update(QueueBounds::default(), &|mut state| {
        // A dead letter, as the reducer leaves one.
        let item = state.items[0].clone();
        state.dead_letters.push(cachet_core::machines::queue::DeadLetter {
            item,
            reason: cachet_core::machines::queue::DeadLetterReason::Rejected { status: 422 },
            at: 5,
        });
        (state, Vec::new())
    })
    .await
    .unwrap();
    assert_eq!(queue_store::unreadable().await.unwrap().len(), 1);

    cachet_worker::sw::messages::clear_all().await.unwrap();
    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    assert!(state.items.is_empty() && state.dead_letters.is_empty());
    assert!(queue_store::unreadable().await.unwrap().is_empty(), "set-aside records hold user data too");
    assert_eq!(state.next_id, last + 1, "ids are not handed out again");
}

#[wasm_bindgen_test]
async fn a_replay_without_network_backs_off_announces_and_waits_for_connectivity() {
    queue_store::clear().await.unwrap();
    let events = listen_for_events();
    let id = enqueue_offline(mutation("CreateTodo", UNREACHABLE_GRAPHQL)).await;
    let config = Rc::new(Config::default());
    let background: Rc<RefCell<Vec<Promise>>> = Rc::default();
    let collector = background.clone();
    replay(Trigger::Online, &config, &move |promise| collector.borrow_mut().push(promise)).await.unwrap();

    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    assert_eq!(state.items.len(), 1, "kept for later");
    assert_eq!((state.items[0].id, state.items[0].attempts), (id, 1));
    assert!(!state.online, "a network failure means offline: no timer burns attempts");
    assert_eq!(state.in_flight, None);
    match next_event(&events).await {
        SwEvent::MutationFailed { id: failed, attempts: 1, retry_at } => {
            assert_eq!(failed, id);
            assert!(retry_at > 1_000, "{retry_at}");
        }
        other => panic!("expected mutation-failed, got {}", cachet_core::protocol::encode_sw_event(&other)),
    }
    assert_eq!(background.borrow().len(), 0, "no wake-up timer while offline");

    // Offline, a trigger that is not a connectivity change sends nothing.
    replay(Trigger::Timer, &config, &|_| ()).await.unwrap();
    assert_eq!(queue_store::load(QueueBounds::default()).await.unwrap().items[0].attempts, 1);
    queue_store::clear().await.unwrap();
}

#[wasm_bindgen_test]
async fn a_bearer_replay_with_no_page_to_authorise_it_waits_without_costing_an_attempt() {
    queue_store::clear().await.unwrap();
    let events = listen_for_events();
    // Marked `X-Cachet-Auth: 1` under bearer auth: the token lives in a page, and no page is controlled.
    let id = enqueue_offline(mutation("CreateTodo", UNREACHABLE_GRAPHQL)).await;
    let config = Rc::new(
        Config::from_json_str(
            r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true}}}"#,
        )
        .unwrap(),
    );
    let background: Rc<RefCell<Vec<Promise>>> = Rc::default();
    for _ in 0..3 {
        // Due now (the page's alarm wakes the worker when it is).
        queue_store::update(QueueBounds::default(), &|mut state| {
            state.items[0].next_attempt_at = 0;
            (state, Vec::new())
        })
        .await
        .unwrap();
        let collector = background.clone();
        replay(Trigger::Online, &config, &move |promise| collector.borrow_mut().push(promise)).await.unwrap();
        match next_event(&events).await {
            SwEvent::MutationFailed { id: failed, attempts: 0, .. } => assert_eq!(failed, id),
            other => {
                panic!("expected mutation-failed, got {}", cachet_core::protocol::encode_sw_event(&other))
            }
        }
    }
    let state = queue_store::load(QueueBounds::default()).await.unwrap();
    assert_eq!((state.items.len(), state.items[0].attempts), (1, 0), "not sent is not an attempt");
    assert!(state.dead_letters.is_empty() && state.online, "nor a dead letter, nor offline");
    assert_eq!(background.borrow().len(), 0, "no worker timer: a page's alarm or the next trigger retries");
    queue_store::clear().await.unwrap();
}

/// The page's queue alarm asks the worker (`queue-alarm-request`), which answers by the core's rule on
/// the queue it stored and replays after its answer when the head is due (a worker with the `queue`
/// feature: `cargo xtask test` runs these tests with it; without it, see `service_worker_features.rs`).
#[cfg(feature = "queue")]
#[wasm_bindgen_test]
async fn a_pages_queue_alarm_is_answered_by_the_core_rule_on_the_stored_queue() {
    use cachet_core::machines::queue::ALARM_RECHECK_MS;
    use cachet_core::protocol::{PageToSw, SwToPage};
    use cachet_worker::sw::messages::{reply, Reply};
    queue_store::clear().await.unwrap();
    let config = Rc::new(Config::default());
    let ask = |request_id: u64, online: bool| {
        let config = config.clone();
        async move { reply(PageToSw::QueueAlarmRequest { request_id, online }, &config, &|_| {}).await }
    };
    let answered = |reply: Reply| match reply {
        Reply::Answer(SwToPage::QueueAlarm { request_id, check_at }) => (request_id, check_at, false),
        Reply::AnswerThenReplay(SwToPage::QueueAlarm { request_id, check_at }) => {
            (request_id, check_at, true)
        }
        _ => panic!("expected a queue-alarm answer"),
    };
    assert_eq!(answered(ask(1, true).await), (1, None, false), "nothing queued: asked again on an event");

    enqueue_offline(mutation("CreateTodo", UNREACHABLE_GRAPHQL)).await;
    let set_head = |due_at: u64| async move {
        queue_store::update(QueueBounds::default(), &|mut state| {
            state.online = true;
            state.items[0].next_attempt_at = due_at;
            (state, Vec::new())
        })
        .await
        .unwrap();
    };
    let later = js_sys::Date::now() as u64 + 3_600_000;
    set_head(later).await;
    assert_eq!(answered(ask(2, true).await), (2, Some(later), false), "due later: asked again then");
    assert_eq!(answered(ask(3, false).await), (3, None, false), "the page is offline: its online event asks");

    set_head(0).await;
    let before = js_sys::Date::now() as u64;
    let (request_id, check_at, replays) = answered(ask(4, true).await);
    assert!(replays && request_id == 4, "due: the worker replays after its answer");
    let check_at = check_at.unwrap();
    assert!(
        check_at >= before + ALARM_RECHECK_MS && check_at <= js_sys::Date::now() as u64 + ALARM_RECHECK_MS
    );

    // A record that does not decode is refused, naming it, and stays as it was.
    put_raw(&JsValue::from_str("{not json")).await;
    match ask(5, true).await {
        Reply::Answer(SwToPage::Nack { request_id: 5, message }) => {
            assert!(message.contains("mutation queue"), "{message}");
        }
        _ => panic!("expected a nack naming the queue"),
    }
    assert!(queue_store::load(QueueBounds::default()).await.is_err(), "nothing changed");
    queue_store::clear().await.unwrap();
}
