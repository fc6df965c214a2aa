//! Announcing [`SwEvent`]s to every page and yew-agent worker of the origin over a `BroadcastChannel`.

use cachet_core::protocol::{encode_sw_event, SwEvent, BROADCAST_CHANNEL};
use web_sys::BroadcastChannel;

use crate::Error;

/// Posts `event` on the cachet channel. A page or agent that is not listening right now misses it:
/// broadcasts are notifications, and the state they describe is always readable from storage.
pub fn broadcast(event: &SwEvent) -> Result<(), Error> {
    let channel =
        BroadcastChannel::new(BROADCAST_CHANNEL).map_err(|e| Error::js("new BroadcastChannel", e))?;
    let result = channel
        .post_message(&encode_sw_event(event).into())
        .map_err(|e| Error::js("BroadcastChannel.postMessage", e));
    channel.close();
    result
}
