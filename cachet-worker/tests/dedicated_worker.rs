//! The agent's hub, run inside a real dedicated worker in headless Chromium: two bridges, the `cachet`
//! BroadcastChannel, and the registry deciding who hears what.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use cachet_core::protocol::{
    decode_message, encode_message, encode_sw_event, AgentRequest, AgentResponse, SwEvent, BROADCAST_CHANNEL,
};
use cachet_worker::agent::serve_bridge;
use futures::channel::mpsc;
use futures::StreamExt;
use wasm_bindgen_test::*;
use web_sys::BroadcastChannel;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// A bridge as a hook sees it: a sender of requests, a receiver of responses, and the served future's end.
struct TestBridge {
    requests: mpsc::UnboundedSender<String>,
    responses: mpsc::UnboundedReceiver<String>,
    done: wasm_bindgen_futures::JsFuture,
}

impl TestBridge {
    fn open() -> Self {
        let (requests, inputs) = mpsc::unbounded::<String>();
        let (outputs, responses) = mpsc::unbounded::<String>();
        let done =
            wasm_bindgen_futures::JsFuture::from(wasm_bindgen_futures::future_to_promise(async move {
                serve_bridge(inputs, outputs)
                    .await
                    .map_err(|error| wasm_bindgen::JsValue::from(error.to_string()))?;
                Ok(wasm_bindgen::JsValue::TRUE)
            }));
        TestBridge { requests, responses, done }
    }

    fn send(&self, request: AgentRequest) {
        self.requests.unbounded_send(encode_message(&request)).unwrap();
    }

    async fn next(&mut self) -> AgentResponse {
        decode_message(&self.responses.next().await.unwrap()).unwrap()
    }

    /// Ends the bridge and awaits the reactor's clean end.
    async fn close(self) {
        drop(self.requests);
        assert_eq!(self.done.await.unwrap(), wasm_bindgen::JsValue::TRUE);
    }
}

fn tags(list: &[&str]) -> Vec<String> {
    list.iter().map(|tag| (*tag).to_owned()).collect()
}

#[wasm_bindgen_test]
async fn an_invalidation_reaches_only_the_bridge_whose_tags_it_hits() {
    let mut notes = TestBridge::open();
    let mut users = TestBridge::open();
    notes.send(AgentRequest::Subscribe { subscription: 7, tags: tags(&["getnotes", "notes"]) });
    users.send(AgentRequest::Subscribe { subscription: 8, tags: tags(&["users"]) });
    users.send(AgentRequest::WatchSwEvents);
    // Acknowledged: from now on the hub listens and the registry holds both.
    assert_eq!(notes.next().await, AgentResponse::Subscribed { subscription: 7 });
    assert_eq!(users.next().await, AgentResponse::Subscribed { subscription: 8 });

    // "The Service Worker": garbage, a newer version, then an invalidation of `note`/`notes`.
    let sw_side = BroadcastChannel::new(BROADCAST_CHANNEL).unwrap();
    sw_side.post_message(&"not json".into()).unwrap();
    sw_side.post_message(&r#"{"v":99,"type":"activated","build":"x"}"#.into()).unwrap();
    let event = SwEvent::CacheInvalidated { tags: tags(&["note", "notes"]) };
    sw_side.post_message(&encode_sw_event(&event).into()).unwrap();

    assert_eq!(
        notes.next().await,
        AgentResponse::Invalidated { subscriptions: vec![7], tags: tags(&["note", "notes"]) }
    );
    // `users` watches raw events, so it hears the event itself but no invalidation: its next response
    // after the raw event is the auth state it asks for now.
    assert_eq!(users.next().await, AgentResponse::SwEvent { event });
    users.send(AgentRequest::AuthStateRequest);
    assert!(matches!(users.next().await, AgentResponse::AuthState { authenticated: false, .. }));

    // A report of the page's auth reaches both bridges.
    notes.send(AgentRequest::ReportAuth { authenticated: true });
    for bridge in [&mut notes, &mut users] {
        assert!(matches!(bridge.next().await, AgentResponse::AuthState { authenticated: true, .. }));
    }

    // A closed bridge's subscriptions are forgotten: the next invalidation of `notes` reaches nobody, which
    // `users` confirms by hearing only the raw event.
    notes.close().await;
    let again = SwEvent::CacheInvalidated { tags: tags(&["notes", "users"]) };
    sw_side.post_message(&encode_sw_event(&again).into()).unwrap();
    assert_eq!(users.next().await, AgentResponse::SwEvent { event: again.clone() });
    assert_eq!(
        users.next().await,
        AgentResponse::Invalidated { subscriptions: vec![8], tags: tags(&["notes", "users"]) }
    );
    users.close().await;
    sw_side.close();
}
