//! The yew-agent worker: mirrors the Service Worker's events, the auth state and connectivity, and keeps the
//! registry of which hook holds which tags, so that a `cache-invalidated` reaches exactly the queries it hits.
//!
//! One worker serves every hook of a page: each hook's bridge is one reactor instance ([`serve_bridge`]),
//! and all instances share one [`Hub`](self) — one `cachet` `BroadcastChannel` listener, the `online` /
//! `offline` listeners of the worker's global scope, and the registry
//! ([`cachet_core::machines::registry`], a pure reducer tested natively). What reaches the hub:
//!
//! | Source | Path |
//! |---|---|
//! | the Service Worker's `cache-invalidated`, `cache-updated`, `sw-auth-state-change` (any tab, replayed mutations included) | the `cachet` BroadcastChannel |
//! | a page's own invalidation while no Service Worker answers (the page client's in-page cache) | the page client posts it on the same `cachet` channel |
//! | a login, refresh, logout or clear in this tab or another one | `<CachetProvider>` reports the page client's state ([`AgentRequest::ReportAuth`]) |
//! | connectivity | `online` / `offline` events of the worker scope |
//!
//! The bridge carries protocol wire text (`String`) in both directions rather than typed values: yew-agent's
//! default codec is bincode, which cannot decode the protocol's internally tagged enums, and its `Codec`
//! trait has no way to report a decoding failure. Wire text decodes with `cachet_core::protocol`, which
//! turns an unknown or newer message into a typed error instead of a panic.
//!
//! The hub uses only `js_sys::global()`, a BroadcastChannel and `online` / `offline` events, so it runs in a
//! page as well: `cachet-yew`'s `AgentMode::InPage` calls [`serve_bridge`] in the page, over an in-memory
//! channel pair per hook, for apps that cannot host a worker binary, pages without a bundler, and tests. In
//! a page the hub's channel object is its own, so it hears the page client's announcements (a channel
//! object never hears its own posts, but does hear another object's of the same page).
//!
//! An app hosts the agent as a two-line binary:
//!
//! ```no_run
//! // src/bin/cachet-agent.rs of the app
//! fn main() {
//!     cachet_worker::agent::register();
//! }
//! ```
//!
//! [`register`] registers the reactor with cachet's own codec ([`codec::WireCodec`]), which
//! `<CachetProvider>` speaks too: yew-agent's default codec (bincode) would add 13.5 KB to the page and
//! to this worker, and a page meeting an agent registered with it says so in the console (the codec's
//! docs).
//!
//! [`AgentRequest::ReportAuth`]: cachet_core::protocol::AgentRequest::ReportAuth

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use cachet_core::machines::registry::{BridgeId, Registry, RegistryInput};
use cachet_core::protocol::{
    decode_message, decode_sw_event, encode_message, AgentRequest, BROADCAST_CHANNEL,
};
use futures::channel::mpsc;
use futures::{Sink, SinkExt, Stream, StreamExt};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BroadcastChannel, EventTarget, MessageEvent};
use yew_agent::prelude::*;

use crate::Error;

pub mod codec;

/// Registers cachet's agent in this worker with [`codec::WireCodec`], the codec `<CachetProvider>`
/// speaks: the whole `main` of an app's agent binary.
pub fn register() {
    CachetAgent::registrar().encoding::<codec::WireCodec>().register();
}

/// The reactor: one instance per bridge (per hook), all sharing the worker's hub.
#[reactor(CachetAgent)]
pub async fn cachet_agent(scope: ReactorScope<String, String>) {
    let (sink, inputs) = scope.split();
    // A bridge fails only when the hub cannot start: a browser API threw. Its three parts are logged
    // as they are, so the agent does not link the Display of every worker error (1.7 KB gzipped).
    match serve_bridge(inputs, sink).await {
        Ok(()) => {}
        Err(Error::Js { operation, name, message }) => {
            let (operation, name, message) = (operation.into(), name.into(), message.into());
            web_sys::console::error_4(
                &"cachet agent: could not start the hub:".into(),
                &operation,
                &name,
                &message,
            );
        }
        Err(_) => web_sys::console::error_1(&"cachet agent: a bridge failed".into()),
    }
}

/// Serves one bridge: its requests (wire [`AgentRequest`]s) go to the hub's registry, and what the registry
/// delivers to it goes to `outputs` (wire [`AgentResponse`](cachet_core::protocol::AgentResponse)s), until
/// `inputs` ends (the bridge was dropped) or `outputs` closes; its subscriptions are then forgotten.
/// Requests that do not decode are logged and skipped.
pub async fn serve_bridge<I, O>(inputs: I, mut outputs: O) -> Result<(), Error>
where
    I: Stream<Item = String> + Unpin,
    O: Sink<String> + Unpin,
{
    let hub = hub()?;
    let (bridge, mut outbox) = hub.connect();
    let mut inputs = inputs.fuse();
    loop {
        futures::select! {
            input = inputs.next() => {
                let Some(wire) = input else { break };
                match decode_message::<AgentRequest>(&wire) {
                    Ok(request) => hub.apply(RegistryInput::Request(bridge, request)),
                    Err(error) => warn(&format!("skipped a request: {error}")),
                }
            }
            response = outbox.next() => {
                let Some(wire) = response else { break };
                if outputs.send(wire).await.is_err() { break }
            }
        }
    }
    hub.disconnect(bridge);
    Ok(())
}

/// The state every bridge of this worker (or page) shares.
struct Hub {
    registry: RefCell<Registry>,
    /// Each open bridge's outbox, in the order they opened. A list rather than a map: a page has a few
    /// hooks, the lookups are few, and a map of its own type linked 1 KB of B-tree code into the agent.
    outboxes: RefCell<Vec<(BridgeId, mpsc::UnboundedSender<String>)>>,
    next_bridge: Cell<BridgeId>,
    /// Kept open for the life of the worker, with its listener.
    _channel: BroadcastChannel,
    _listeners: Vec<Closure<dyn FnMut(JsValue)>>,
}

thread_local! {
    static HUB: RefCell<Option<Rc<Hub>>> = const { RefCell::new(None) };
}

/// The hub of this worker (or page, in-page mode), started on first use.
fn hub() -> Result<Rc<Hub>, Error> {
    if let Some(hub) = HUB.with(|cell| cell.borrow().clone()) {
        return Ok(hub);
    }
    let global: EventTarget = js_sys::global().unchecked_into();
    let channel =
        BroadcastChannel::new(BROADCAST_CHANNEL).map_err(|e| Error::js("new BroadcastChannel", e))?;
    let on_message = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
        let Some(text) = event.unchecked_into::<MessageEvent>().data().as_string() else { return };
        match decode_sw_event(&text) {
            Ok(event) => apply_global(RegistryInput::Sw(event)),
            Err(error) => warn(&format!("skipped a message: {error}")),
        }
    });
    channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let mut listeners = vec![on_message];
    for (name, online) in [("online", true), ("offline", false)] {
        let listener =
            Closure::<dyn FnMut(JsValue)>::new(move |_| apply_global(RegistryInput::Online(online)));
        global
            .add_event_listener_with_callback(name, listener.as_ref().unchecked_ref())
            .map_err(|e| Error::js("addEventListener", e))?;
        listeners.push(listener);
    }
    let hub = Rc::new(Hub {
        registry: RefCell::new(Registry::new(navigator_online(&global))),
        outboxes: RefCell::new(Vec::new()),
        next_bridge: Cell::new(0),
        _channel: channel,
        _listeners: listeners,
    });
    HUB.with(|cell| *cell.borrow_mut() = Some(hub.clone()));
    Ok(hub)
}

fn apply_global(input: RegistryInput) {
    if let Some(hub) = HUB.with(|cell| cell.borrow().clone()) {
        hub.apply(input);
    }
}

impl Hub {
    fn connect(&self) -> (BridgeId, mpsc::UnboundedReceiver<String>) {
        let bridge = self.next_bridge.get() + 1;
        self.next_bridge.set(bridge);
        let (sender, receiver) = mpsc::unbounded();
        self.outboxes.borrow_mut().push((bridge, sender));
        self.apply(RegistryInput::Connected(bridge));
        (bridge, receiver)
    }

    fn disconnect(&self, bridge: BridgeId) {
        self.outboxes.borrow_mut().retain(|(open, _)| *open != bridge);
        self.apply(RegistryInput::Disconnected(bridge));
    }

    /// Runs the registry and posts its deliveries to the bridges' outboxes.
    fn apply(&self, input: RegistryInput) {
        let registry = self.registry.take();
        let (registry, deliveries) = registry.reduce(input);
        *self.registry.borrow_mut() = registry;
        let outboxes = self.outboxes.borrow();
        for delivery in deliveries {
            if let Some((_, outbox)) = outboxes.iter().find(|(open, _)| *open == delivery.bridge) {
                let _ = outbox.unbounded_send(encode_message(&delivery.response));
            }
        }
    }
}

/// `navigator.onLine` of a window or worker scope (true when unknown).
fn navigator_online(global: &JsValue) -> bool {
    js_sys::Reflect::get(global, &"navigator".into())
        .and_then(|navigator| js_sys::Reflect::get(&navigator, &"onLine".into()))
        .ok()
        .and_then(|online| online.as_bool())
        .unwrap_or(true)
}

fn warn(message: &str) {
    web_sys::console::warn_1(&format!("cachet agent: {message}").into());
}
