//! The agent's event forwarding, run inside a real dedicated worker in headless Chromium.
#![allow(clippy::unwrap_used)]

use cachet_core::protocol::{decode_sw_event, encode_sw_event, SwEvent, BROADCAST_CHANNEL};
use cachet_worker::agent::forward_sw_events;
use futures::channel::mpsc;
use std::future::Future;

use futures::StreamExt;
use wasm_bindgen_test::*;
use web_sys::BroadcastChannel;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn valid_events_are_forwarded_in_order_and_garbage_is_skipped() {
    let (input_sender, inputs) = mpsc::unbounded::<String>();
    let (outputs, mut forwarded) = mpsc::unbounded::<String>();
    let mut forwarder = Box::pin(forward_sw_events(inputs, outputs));
    // One poll by hand runs the forwarder up to its first wait: by then it has opened its channel and
    // listens, so what is posted next cannot be missed. (The executor polls it again, with its own waker.)
    let noop = futures::task::noop_waker();
    assert!(forwarder.as_mut().poll(&mut std::task::Context::from_waker(&noop)).is_pending());
    let forwarding =
        wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(async move {
            forwarder.await.map_err(wasm_bindgen::JsValue::from)?;
            Ok(wasm_bindgen::JsValue::TRUE)
        }));

    // An `Activated` from "the SW" goes first, then garbage, a future version, and a second valid event.
    let sw_side = BroadcastChannel::new(BROADCAST_CHANNEL).unwrap();
    let first = SwEvent::Activated { build: "b1".into() };
    let second = SwEvent::CacheUpdated { url: "http://127.0.0.1/api/hello".into() };
    sw_side.post_message(&encode_sw_event(&first).into()).unwrap();
    sw_side.post_message(&"not json".into()).unwrap();
    sw_side.post_message(&r#"{"v":99,"type":"activated","build":"x"}"#.into()).unwrap();
    sw_side.post_message(&encode_sw_event(&second).into()).unwrap();

    assert_eq!(decode_sw_event(&forwarded.next().await.unwrap()).unwrap(), first);
    assert_eq!(decode_sw_event(&forwarded.next().await.unwrap()).unwrap(), second);

    // The bridge goes away: the forwarder ends cleanly and closes its output.
    drop(input_sender);
    assert_eq!(forwarding.await.unwrap(), wasm_bindgen::JsValue::TRUE);
    assert_eq!(forwarded.next().await, None, "nothing else was forwarded");
}
