//! Helpers shared by the Service Worker test binaries (`service_worker.rs`, `service_worker_queue.rs`,
//! `service_worker_parity.rs`, `service_worker_migration.rs`, `service_worker_shim_database.rs`,
//! `service_worker_features.rs`).
#![allow(dead_code)] // each test binary uses its part

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::QueueBounds;
use cachet_core::machines::queue::{QueueEffect, QueueEvent, QueuedRequest};
use cachet_core::protocol::{decode_sw_event, SwEvent, BROADCAST_CHANNEL};
use cachet_worker::sw::queue_store;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{BroadcastChannel, MessageEvent};

/// A channel whose messages are collected; [`next_event`] awaits the next one.
pub struct Listener {
    _channel: BroadcastChannel,
    received: Rc<RefCell<Vec<String>>>,
    waiter: Rc<RefCell<Option<js_sys::Function>>>,
}

/// Starts collecting the cachet channel's messages.
pub fn listen_for_events() -> Listener {
    let channel = BroadcastChannel::new(BROADCAST_CHANNEL).unwrap();
    let received: Rc<RefCell<Vec<String>>> = Rc::default();
    let waiter: Rc<RefCell<Option<js_sys::Function>>> = Rc::default();
    let (sink, wake) = (received.clone(), waiter.clone());
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        sink.borrow_mut().push(event.data().as_string().unwrap_or_default());
        if let Some(resolve) = wake.borrow_mut().take() {
            resolve.call0(&JsValue::NULL).unwrap();
        }
    });
    channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    Listener { _channel: channel, received, waiter }
}

/// The next message of the channel, decoded (waits for it when none is there yet).
pub async fn next_event(listener: &Listener) -> SwEvent {
    if listener.received.borrow().is_empty() {
        let waiter = listener.waiter.clone();
        let arrived = Promise::new(&mut |resolve, _reject| {
            *waiter.borrow_mut() = Some(resolve);
        });
        JsFuture::from(arrived).await.unwrap();
    }
    let wire = listener.received.borrow_mut().remove(0);
    decode_sw_event(&wire).unwrap()
}

/// Every message the channel carried before now, decoded, and forgotten: a sentinel is posted on the
/// channel from this worker and awaited. One sender's messages arrive in the order they were posted, so
/// a broadcast posted before the sentinel has arrived once it has (a barrier, not a wait: proving that
/// nothing more came needs no timeout).
pub async fn barrier(listener: &Listener) -> Vec<SwEvent> {
    thread_local! {
        static SENT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let number = SENT.with(|sent| sent.replace(sent.get() + 1));
    let sentinel = SwEvent::Activated { build: format!("test-barrier-{number}") };
    let sender = BroadcastChannel::new(BROADCAST_CHANNEL).unwrap();
    sender.post_message(&JsValue::from_str(&cachet_core::protocol::encode_sw_event(&sentinel))).unwrap();
    sender.close();
    let mut before = Vec::new();
    loop {
        let event = next_event(listener).await;
        if event == sentinel {
            return before;
        }
        before.push(event);
    }
}

/// The messages received so far, decoded, and forgotten.
pub fn drain(listener: &Listener) -> Vec<SwEvent> {
    listener.received.borrow_mut().drain(..).filter_map(|wire| decode_sw_event(&wire).ok()).collect()
}

/// Resolves after `ms` milliseconds (lets messages already sent arrive; never a timing assertion).
pub async fn settle(ms: i32) {
    let promise = Promise::new(&mut |resolve, _reject| {
        let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
        global.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms).unwrap();
    });
    JsFuture::from(promise).await.unwrap();
}

/// The names of the origin's IndexedDB databases (`indexedDB.databases()`).
pub async fn database_names() -> Vec<String> {
    let factory = js_sys::Reflect::get(&js_sys::global(), &"indexedDB".into()).unwrap();
    let databases: js_sys::Function = js_sys::Reflect::get(&factory, &"databases".into()).unwrap().into();
    let list = JsFuture::from(Promise::from(databases.call0(&factory).unwrap())).await.unwrap();
    js_sys::Array::from(&list)
        .iter()
        .filter_map(|info| js_sys::Reflect::get(&info, &"name".into()).ok()?.as_string())
        .collect()
}

/// Nothing listens on port 9 of 127.0.0.1: fetching it is a network error.
pub const UNREACHABLE_GRAPHQL: &str = "http://127.0.0.1:9/graphql";

/// A queued mutation named `name` to `url`, as the engine keeps one.
pub fn mutation(name: &str, url: &str) -> QueuedRequest {
    QueuedRequest {
        method: "POST".into(),
        url: url.into(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("x-cachet-auth".into(), "1".into()),
        ],
        body: format!(r#"{{"query":"mutation {name} {{ createTodo(title: \"x\") {{ id }} }}"}}"#),
        operation_name: Some(name.into()),
        invalidate: vec!["todo".into(), "todos".into()],
    }
}

/// Queues `request` while offline (nothing is sent), as the engine does after a network failure.
pub async fn enqueue_offline(request: QueuedRequest) -> u64 {
    let effects = queue_store::update(QueueBounds::default(), &|state| {
        let (state, _) = state.reduce(QueueEvent::Offline);
        let random = u128::from(state.next_id);
        state.reduce(QueueEvent::Enqueue { request: request.clone(), now: 1_000, random })
    })
    .await
    .unwrap();
    let queued = effects.iter().find_map(|effect| match effect {
        QueueEffect::Announce(SwEvent::MutationQueued { id, .. }) => Some(*id),
        _ => None,
    });
    queued.unwrap()
}
