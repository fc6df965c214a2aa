//! The agent's event forwarding, run inside a real dedicated worker in headless Chromium.
#![allow(clippy::unwrap_used)]

use cachet_core::protocol::{decode_sw_event, encode_sw_event, SwEvent, BROADCAST_CHANNEL};
use cachet_worker::agent::forward_sw_events;
use futures::channel::mpsc;
use futures::StreamExt;
use wasm_bindgen_test::*;
use web_sys::BroadcastChannel;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn valid_events_are_forwarded_in_order_and_garbage_is_skipped() {
    let (input_sender, inputs) = mpsc::unbounded::<String>();
    let (outputs, mut forwarded) = mpsc::unbounded::<String>();
    let forwarding =
        wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(async move {
            forward_sw_events(inputs, outputs).await.map_err(wasm_bindgen::JsValue::from)?;
            Ok(wasm_bindgen::JsValue::TRUE)
        }));

    // The forwarder opens its channel synchronously when first polled; post from another channel once
    // it is listening. An `Activated` from "the SW" goes first, then garbage, a future version, and a
    // second valid event.
    let sw_side = BroadcastChannel::new(BROADCAST_CHANNEL).unwrap();
    gloo_timers_sleep().await;
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

/// Yields to the event loop once (a zero-delay timer), so the spawned forwarder starts listening.
async fn gloo_timers_sleep() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global: web_sys::WorkerGlobalScope = wasm_bindgen::JsCast::unchecked_into(js_sys::global());
        global.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}
