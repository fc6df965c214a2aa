//! A worker built without its optional cargo features (`cargo test -p cachet-worker` builds it so):
//! the devtools' messages are refused by name, so that a panel says what to turn on, and the messages
//! every worker carries out still are.
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
    match reply(PageToSw::ConfigRequest { request_id: 9 }, &config, &|_| {}).await {
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
