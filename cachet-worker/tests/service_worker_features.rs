//! A worker built without its optional cargo features (`cargo test -p cachet-worker` builds it so):
//! the devtools' messages are refused by name, so that a panel says what to turn on; without the
//! offline queue, a mutation asked to be queued whose send fails is answered with the 507 that names the
//! missing queue, and a page's queue alarm is told there is nothing to ask about; the messages every
//! worker carries out still are.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::protocol::{PageToSw, SwToPage};
use cachet_worker::sw::messages::{reply, Reply};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_service_worker);

mod common;

/// Built only where the feature is off (alone, as `cargo xtask test` runs this crate's tests).
#[cfg(not(feature = "devtools"))]
mod without_devtools {
    use super::*;
    use cachet_core::protocol::SnapshotQuery;

    fn nack_of(reply: Reply) -> (u64, String) {
        match reply {
            Reply::Answer(SwToPage::Nack { request_id, message }) => (request_id, message),
            Reply::Answer(other) => {
                panic!("expected a nack, got {}", cachet_core::protocol::encode_message(&other))
            }
            _ => panic!("expected an answer"),
        }
    }

    #[wasm_bindgen_test]
    async fn without_the_devtools_feature_its_four_messages_are_nacked_naming_the_feature() {
        let config = Rc::new(Config::default());
        let messages = [
            (
                PageToSw::SnapshotRequest { request_id: 1, query: SnapshotQuery::default() },
                "snapshot-request",
            ),
            (PageToSw::RetryDeadLetters { request_id: 2, ids: vec![7] }, "retry-dead-letters"),
            (PageToSw::DiscardDeadLetters { request_id: 3, ids: vec![7] }, "discard-dead-letters"),
            (PageToSw::DropEntries { request_id: 4, urls: vec!["https://x.test/a".into()] }, "drop-entries"),
        ];
        for (expected_id, (message, what)) in (1..).zip(messages) {
            let (request_id, text) = nack_of(reply(message, &config, &|_| {}).await);
            assert_eq!(request_id, expected_id);
            assert!(text.contains(what) && text.contains("`devtools` cargo feature"), "{text}");
        }
    }
}

#[wasm_bindgen_test]
async fn the_messages_every_worker_carries_out_are_answered() {
    let config = Rc::new(Config::default());
    match reply(PageToSw::ConfigRequest { request_id: 9, config: None }, &config, &|_| {}).await {
        Reply::Answer(SwToPage::Config { request_id, .. }) => assert_eq!(request_id, 9),
        _ => panic!("expected the config"),
    }
    let invalidate = PageToSw::InvalidateTags { request_id: 10, tags: vec!["nothing-tagged-so".into()] };
    match reply(invalidate, &config, &|_| {}).await {
        Reply::Answer(SwToPage::Ack { request_id }) => assert_eq!(request_id, 10),
        Reply::Answer(other) => {
            panic!("expected an ack, got {}", cachet_core::protocol::encode_message(&other))
        }
        _ => panic!("expected an answer"),
    }
}

/// Built only where the `queue` feature is off (as `cargo xtask test` runs this crate's tests; an app
/// gets the queue from cachet-kit's default features).
#[cfg(not(feature = "queue"))]
mod without_queue {
    use super::common::{enqueue_offline, mutation, UNREACHABLE_GRAPHQL};
    use super::*;
    use cachet_core::config::QueueBounds;
    use cachet_core::machines::queue::{NOT_QUEUED_HEADER, NOT_QUEUED_STATUS, QUEUE_OFFLINE_HEADER};
    use cachet_worker::sw::queue_store;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{Headers, Request, RequestInit};

    #[wasm_bindgen_test]
    async fn a_mutation_asked_to_be_queued_whose_send_fails_is_answered_not_queued_naming_the_missing_queue()
    {
        let mut config = Config::default();
        config.features.graphql.enabled = true;
        queue_store::clear().await.unwrap();
        let headers = Headers::new().unwrap();
        headers.set("content-type", "application/json").unwrap();
        headers.set(QUEUE_OFFLINE_HEADER, "1").unwrap();
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&r#"{"query":"mutation CreateTodo { createTodo(title: \"x\") { id } }"}"#.into());
        let request = Request::new_with_str_and_init(UNREACHABLE_GRAPHQL, &init).unwrap();
        let answer =
            cachet_worker::sw::answer(request, String::new(), &config, Rc::new(|_| {})).await.unwrap();
        assert_eq!(answer.status(), NOT_QUEUED_STATUS);
        assert_eq!(answer.headers().get(NOT_QUEUED_HEADER).unwrap().as_deref(), Some("queue-not-built"));
        let body = JsFuture::from(answer.text().unwrap()).await.unwrap().as_string().unwrap();
        assert!(
            body.contains("built without the offline queue") && body.contains("its send failed"),
            "{body}"
        );
        let stored = queue_store::load(QueueBounds::default()).await.unwrap();
        assert!(stored.items.is_empty(), "nothing was queued");
    }

    #[wasm_bindgen_test]
    async fn what_an_earlier_build_left_queued_is_counted_for_the_console() {
        use cachet_worker::sw::queue_off::stranded;
        queue_store::clear().await.unwrap();
        assert_eq!(stranded(QueueBounds::default()).await.unwrap(), None, "an empty queue says nothing");
        // Queued as a build with the queue would have (offline: nothing sent).
        enqueue_offline(mutation("CreateTodo", UNREACHABLE_GRAPHQL)).await;
        let message = stranded(QueueBounds::default()).await.unwrap().unwrap();
        assert!(message.contains("1 queued mutations and 0 dead letters"), "{message}");
        queue_store::clear().await.unwrap();
    }

    #[wasm_bindgen_test]
    async fn a_queue_alarm_is_told_there_is_no_time_to_ask_again() {
        let config = Rc::new(Config::default());
        match reply(PageToSw::QueueAlarmRequest { request_id: 5, online: true }, &config, &|_| {}).await {
            Reply::Answer(SwToPage::QueueAlarm { request_id, check_at }) => {
                assert_eq!((request_id, check_at), (5, None));
            }
            _ => panic!("expected a queue alarm with no time"),
        }
    }
}
