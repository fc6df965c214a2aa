//! The hooks' link to cachet's agent hub: typed [`AgentRequest`]s out, [`AgentResponse`]s in, protocol wire
//! text in between (see `cachet_worker::agent` for why), whichever [`AgentMode`] the provider runs.
//!
//! The provider holds one [`AgentLink`] (in a crate-private context); each hook opens its own
//! [`AgentBridge`] from it with [`use_agent_bridge`], so a hook never knows where the hub runs:
//!
//! - [`AgentMode::Worker`]: the link holds the yew-agent worker (spawned as `ReactorProvider` does:
//!   at once, one held bridge) and every hook's bridge is a fork of it, i.e. one reactor instance in
//!   the worker — what `use_reactor_bridge` does, without a hook, so both modes share one hook order.
//! - [`AgentMode::InPage`]: every hook's bridge is a pair of in-memory channels, and
//!   [`cachet_worker::agent::serve_bridge`] — the reactor's very body — serves it in the page
//!   (`spawn_local`), over the same hub (a `cachet` BroadcastChannel, online/offline, the registry).

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::protocol::{decode_message, encode_message, AgentRequest, AgentResponse};
use cachet_worker::agent::{serve_bridge, CachetAgent};
use futures::channel::{mpsc, oneshot};
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
    /// bundler, and tests (a `wasm-bindgen-test` binary cannot start a yew-agent worker).
    InPage,
}

/// The provider's way to the hub; one per provider, shared by every hook below it.
#[derive(Clone)]
pub(crate) struct AgentLink(Rc<LinkKind>);

enum LinkKind {
    /// The first bridge to the worker, held for the life of the provider; hooks fork it.
    Worker(ReactorBridge<CachetAgent>),
    InPage,
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
                LinkKind::Worker(ReactorSpawner::<CachetAgent>::new().as_module(module).spawn(path))
            }
            AgentMode::InPage => LinkKind::InPage,
        }))
    }

    /// Opens one bridge: a way to send wire requests, and the stream of wire responses.
    fn open(&self) -> (Rc<dyn Fn(String)>, LocalBoxStream<'static, String>) {
        match &*self.0 {
            LinkKind::Worker(held) => {
                let bridge = Rc::new(RefCell::new(held.fork()));
                let sender = bridge.clone();
                // Borrowed only for the duration of one poll or one send, never across an await.
                let responses =
                    futures::stream::poll_fn(move |context| bridge.borrow_mut().poll_next_unpin(context));
                (Rc::new(move |wire| sender.borrow().send_input(wire)), responses.boxed_local())
            }
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

/// Opens this component's bridge; `on_response` (refreshed every render) hears every response.
///
/// # Panics
/// Outside `<CachetProvider>`.
#[hook]
pub(crate) fn use_agent_bridge<F>(on_response: F) -> AgentBridge
where
    F: Fn(AgentResponse) + 'static,
{
    let link = use_context::<AgentLink>()
        .unwrap_or_else(|| panic!("cachet's hooks must be used inside <CachetProvider>"));
    let on_response: Rc<dyn Fn(AgentResponse)> = Rc::new(on_response);
    let current = use_mut_ref(|| on_response.clone());
    *current.borrow_mut() = on_response;
    let bridge = use_memo(link, |link| {
        let (send, responses) = link.open();
        let mut responses = responses.fuse();
        let (close, mut closed) = oneshot::channel::<()>();
        wasm_bindgen_futures::spawn_local(async move {
            loop {
                let wire = futures::select! {
                    wire = responses.next() => wire,
                    _ = closed => None,
                };
                let Some(wire) = wire else { break };
                // The hub sends only what this build encodes; a failure would mean two builds disagree.
                match decode_message::<AgentResponse>(&wire) {
                    Ok(response) => {
                        let on_response = current.borrow().clone();
                        on_response(response);
                    }
                    Err(error) => web_sys::console::warn_1(&format!("cachet: agent said: {error}").into()),
                }
            }
        });
        AgentBridge { send, _close: Rc::new(close) }
    });
    (*bridge).clone()
}
