//! The hooks' link to cachet's agent hub: typed [`AgentRequest`]s out, [`AgentResponse`]s in, protocol wire
//! text in between (see `cachet_worker::agent` for why), whichever [`AgentMode`] the provider runs.
//!
//! The provider holds one [`AgentLink`] (in its context, crate-private); each hook opens its own
//! [`AgentBridge`] from it with `crate::provider::use_agent_bridge`, so a hook never knows where the hub runs:
//!
//! - [`AgentMode::Worker`]: the link holds the yew-agent worker (spawned as `ReactorProvider` does:
//!   at once, one held bridge) and every hook's bridge is a fork of it, i.e. one reactor instance in
//!   the worker — what `use_reactor_bridge` does, without a hook, so both modes share one hook order.
//! - `AgentMode::InPage` (cargo feature `in-page-agent`): every hook's bridge is a pair of in-memory
//!   channels, and
//!   `cachet_worker::agent::serve_bridge` — the reactor's very body — serves it in the page
//!   (`spawn_local`), over the same hub (a `cachet` BroadcastChannel, online/offline, the registry).

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::protocol::{decode_message, encode_message, AgentRequest, AgentResponse};
use cachet_worker::agent::codec::WireCodec;
#[cfg(feature = "in-page-agent")]
use cachet_worker::agent::serve_bridge;
use cachet_worker::agent::CachetAgent;
#[cfg(feature = "in-page-agent")]
use futures::channel::mpsc;
use futures::channel::oneshot;
use futures::stream::{LocalBoxStream, StreamExt};
use yew::prelude::*;
use yew_agent::reactor::{ReactorBridge, ReactorSpawner};

/// Where `<CachetProvider>` runs cachet's agent hub: the mirror of the Service Worker's events, the auth
/// state and connectivity, and the registry of which query holds which tags. The hooks behave the same in
/// both modes; they speak the same protocol ([`AgentRequest`], [`AgentResponse`]) to the same hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AgentMode {
    /// A yew-agent worker (`agent_path`, `agent_module`), which the app hosts as a two-line binary (see
    /// `cachet_worker::agent`): the hub's listeners and bookkeeping stay off the main thread. The default.
    #[default]
    Worker,
    /// The same hub run in the page itself: for an app that cannot host a worker binary, a page without a
    /// bundler, and tests (a `wasm-bindgen-test` binary cannot start a yew-agent worker). Only with the
    /// cargo feature `in-page-agent`: the hub's code (about 15 KB of gzipped wasm) is then linked into the
    /// page, which an app hosting the worker does not need.
    #[cfg(feature = "in-page-agent")]
    InPage,
}

/// The provider's way to the hub; one per provider, shared by every hook below it.
#[derive(Clone)]
pub(crate) struct AgentLink(Rc<LinkKind>);

enum LinkKind {
    Worker {
        /// The first bridge to the worker, held for the life of the provider; hooks fork it. A task reads
        /// and drops what the hub sends it (auth, connectivity), so that nothing piles up in its queue.
        held: Rc<RefCell<ReactorBridge<CachetAgent>>>,
        /// Dropped with the link: the task ends and lets the held bridge (and the worker) go.
        _close: oneshot::Sender<()>,
    },
    #[cfg(feature = "in-page-agent")]
    InPage,
}

impl std::fmt::Debug for AgentLink {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("AgentLink")
    }
}

impl PartialEq for AgentLink {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl AgentLink {
    /// Starts the hub of `mode` (the worker at `path` at once, or nothing yet for the page's own hub, which
    /// starts with its first bridge).
    pub(crate) fn new(mode: AgentMode, path: &str, module: bool) -> Self {
        AgentLink(Rc::new(match mode {
            AgentMode::Worker => {
                let spawner = ReactorSpawner::<CachetAgent>::new().as_module(module).encoding::<WireCodec>();
                let held = match loader(path).filter(|_| !module) {
                    Some(loader) => spawner.with_loader(true).spawn(&loader),
                    None => spawner.spawn(path),
                };
                let held = Rc::new(RefCell::new(held));
                let (close, closed) = oneshot::channel();
                pump(responses_of(held.clone()), closed, Box::new(drop));
                LinkKind::Worker { held, _close: close }
            }
            #[cfg(feature = "in-page-agent")]
            AgentMode::InPage => LinkKind::InPage,
        }))
    }

    /// Opens one bridge: a way to send wire requests, and the stream of wire responses.
    fn open(&self) -> (Rc<dyn Fn(String)>, LocalBoxStream<'static, String>) {
        match &*self.0 {
            LinkKind::Worker { held, .. } => {
                let bridge = Rc::new(RefCell::new(held.borrow().fork()));
                let sender = bridge.clone();
                (Rc::new(move |wire| sender.borrow().send_input(wire)), responses_of(bridge))
            }
            #[cfg(feature = "in-page-agent")]
            LinkKind::InPage => {
                let (requests, inputs) = mpsc::unbounded::<String>();
                let (outputs, responses) = mpsc::unbounded::<String>();
                wasm_bindgen_futures::spawn_local(async move {
                    if let Err(error) = serve_bridge(inputs, outputs).await {
                        web_sys::console::error_1(&format!("cachet agent (in page): {error}").into());
                    }
                });
                (Rc::new(move |wire| drop(requests.unbounded_send(wire))), responses.boxed_local())
            }
        }
    }
}

/// The outputs of a worker bridge, as a stream that shares the bridge with its sender. The bridge is
/// borrowed only for the duration of one poll or one send, never across an await.
fn responses_of(bridge: Rc<RefCell<ReactorBridge<CachetAgent>>>) -> LocalBoxStream<'static, String> {
    futures::stream::poll_fn(move |context| bridge.borrow_mut().poll_next_unpin(context)).boxed_local()
}

/// Hands every response to `on_wire` until the stream ends or `closed` fires (its sender dropped); the
/// stream, and so its end of the bridge, is dropped then. `on_wire` is boxed: one task's state machine
/// in the page's wasm for both callers, not one per closure.
fn pump(
    responses: LocalBoxStream<'static, String>,
    closed: oneshot::Receiver<()>,
    on_wire: Box<dyn Fn(String)>,
) {
    // `take_until` rather than `select!` in a loop: the same end, a fraction of the page's wasm.
    let mut responses = responses.take_until(closed);
    wasm_bindgen_futures::spawn_local(async move {
        while let Some(wire) = responses.next().await {
            on_wire(wire);
        }
    });
}

/// A bridge to the hub, owned by one hook; closed (the hub forgets its subscriptions) when the last clone
/// is dropped.
#[derive(Clone)]
pub(crate) struct AgentBridge {
    send: Rc<dyn Fn(String)>,
    /// Dropping the last clone ends the task that reads the responses, which drops the bridge's other end.
    _close: Rc<oneshot::Sender<()>>,
}

impl AgentBridge {
    /// Sends one request (queued until the worker has started, in worker mode).
    pub(crate) fn send(&self, request: &AgentRequest) {
        (self.send)(encode_message(request));
    }
}

/// Opens this component's bridge on `link` (the provider's: `crate::provider::use_agent_bridge` takes it
/// from the context); `on_response` (refreshed every render) hears every response.
#[hook]
pub(crate) fn use_bridge_of(link: AgentLink, on_response: Rc<dyn Fn(AgentResponse)>) -> AgentBridge {
    let current = use_mut_ref(|| on_response.clone());
    *current.borrow_mut() = on_response;
    let bridge = use_memo(link, |link| {
        let (send, responses) = link.open();
        let (close, closed) = oneshot::channel::<()>();
        pump(
            responses,
            closed,
            Box::new(move |wire| {
                // The hub sends only what this build encodes; a failure would mean two builds disagree.
                match decode_message::<AgentResponse>(&wire) {
                    Ok(response) => {
                        let on_response = current.borrow().clone();
                        on_response(response);
                    }
                    Err(error) => web_sys::console::warn_1(&format!("cachet: agent said: {error}").into()),
                }
            }),
        );
        AgentBridge { send, _close: Rc::new(close) }
    });
    (*bridge).clone()
}

/// The classic (no-modules) worker's loader, as a `blob:` URL: the agent's script, then its wasm started
/// with wasm-bindgen's current argument (`{module_or_path}`). yew-agent's own loader passes the wasm URL
/// as a bare string, which wasm-bindgen's glue reports on every load ("using deprecated parameters for
/// the initialization function"); this one is the same two lines without the warning. `None` when the
/// URLs or the blob cannot be made (yew-agent's loader is used then). The wasm sits next to the script
/// as `<name>_bg.wasm`, yew-agent's rule.
fn loader(path: &str) -> Option<String> {
    let base = web_sys::window()?.location().href().ok()?;
    let script = web_sys::Url::new_with_base(path, &base).ok()?.href();
    let wasm = cachet_core::deploy::worker_wasm_path(&script);
    let quote = |text: &str| js_sys::JSON::stringify(&text.into()).ok().and_then(|quoted| quoted.as_string());
    let text =
        ["importScripts(", &quote(&script)?, ");wasm_bindgen({module_or_path: ", &quote(&wasm)?, "});"]
            .concat();
    let parts = js_sys::Array::of1(&text.into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}
