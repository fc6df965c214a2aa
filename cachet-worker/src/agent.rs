//! The yew-agent worker that mirrors the Service Worker's broadcast events to Yew components.
//!
//! The bridge carries protocol wire text (`String`) in both directions rather than typed values: yew-agent's
//! default codec is bincode, which cannot decode the protocol's internally tagged enums, and its `Codec`
//! trait has no way to report a decoding failure. Wire text decodes with `cachet_core::protocol`, which
//! turns an unknown or newer message into a typed error instead of a panic.
//!
//! An app hosts the agent as a two-line binary:
//!
//! ```no_run
//! // src/bin/cachet-agent.rs of the app
//! use yew_agent::Registrable;
//! fn main() {
//!     cachet_worker::agent::CachetAgent::registrar().register();
//! }
//! ```

use cachet_core::protocol::{decode_sw_event, BROADCAST_CHANNEL};
use futures::channel::mpsc;
use futures::{Sink, SinkExt, Stream, StreamExt};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BroadcastChannel, MessageEvent};
use yew_agent::prelude::*;

use crate::Error;

/// The reactor: one instance per bridge, each forwarding every valid Service Worker event to its bridge.
#[reactor(CachetAgent)]
pub async fn cachet_agent(scope: ReactorScope<String, String>) {
    let (sink, inputs) = scope.split();
    if let Err(error) = forward_sw_events(inputs, sink).await {
        web_sys::console::error_1(&format!("cachet agent: {error}").into());
    }
}

/// Listens on the cachet `BroadcastChannel` and sends every event that decodes to `outputs`, until
/// `inputs` ends (the bridge was dropped) or `outputs` is closed. Messages that do not decode (another
/// version, garbage) are logged and skipped.
pub async fn forward_sw_events<I, O>(inputs: I, mut outputs: O) -> Result<(), Error>
where
    I: Stream<Item = String> + Unpin,
    O: Sink<String> + Unpin,
{
    let (sender, mut received) = mpsc::unbounded::<String>();
    let channel =
        BroadcastChannel::new(BROADCAST_CHANNEL).map_err(|e| Error::js("new BroadcastChannel", e))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        if let Some(text) = event.data().as_string() {
            let _ = sender.unbounded_send(text);
        }
    });
    channel.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let mut inputs = inputs.fuse();
    loop {
        futures::select! {
            input = inputs.next() => if input.is_none() { break },
            wire = received.next() => {
                let Some(wire) = wire else { break };
                match decode_sw_event(&wire) {
                    Ok(_) => if outputs.send(wire).await.is_err() { break },
                    Err(error) => web_sys::console::warn_1(&format!("cachet agent: skipped a message: {error}").into()),
                }
            }
        }
    }
    channel.set_onmessage(None);
    channel.close();
    Ok(())
}
