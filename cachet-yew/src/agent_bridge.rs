//! The hooks' link to cachet's yew-agent worker: typed [`AgentRequest`]s out, [`AgentResponse`]s in, wire
//! text on the bridge (see `cachet_worker::agent` for why).

use cachet_core::protocol::{decode_message, encode_message, AgentRequest, AgentResponse};
use cachet_worker::agent::CachetAgent;
use yew::prelude::*;
use yew_agent::reactor::{use_reactor_bridge, ReactorEvent, UseReactorBridgeHandle};

/// A bridge to the agent, owned by one hook.
#[derive(Clone)]
pub(crate) struct AgentBridge(UseReactorBridgeHandle<CachetAgent>);

impl AgentBridge {
    /// Sends one request (queued by yew-agent until the worker has started).
    pub(crate) fn send(&self, request: &AgentRequest) {
        self.0.send(encode_message(request));
    }
}

/// Opens this component's bridge; `on_response` (refreshed every render) hears every response.
#[hook]
pub(crate) fn use_agent_bridge<F>(on_response: F) -> AgentBridge
where
    F: Fn(AgentResponse) + 'static,
{
    AgentBridge(use_reactor_bridge::<CachetAgent, _>(move |event: ReactorEvent<CachetAgent>| {
        if let ReactorEvent::Output(wire) = event {
            // The agent sends only what this build encodes; a failure would mean two builds disagree.
            match decode_message::<AgentResponse>(&wire) {
                Ok(response) => on_response(response),
                Err(error) => web_sys::console::warn_1(&format!("cachet: agent said: {error}").into()),
            }
        }
    }))
}
