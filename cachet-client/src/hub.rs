//! The client's event hub: what it tells the app ([`crate::ClientEvent`] to Rust subscribers, and the
//! SPEC §6 events on `window`), and the events it posts on the `cachet` channel in the Service Worker's
//! format when the page did what a worker would (no worker: the other tabs and agents hear it too).
//! What the events are is [`crate::events`].

use std::rc::Rc;

use cachet_core::protocol::{encode_sw_event, SwEvent};
use web_sys::BroadcastChannel;

use crate::events::{dispatch_window_event, Subscribers};
use crate::ClientEvent;

/// The subscribers and the `cachet` channel of one client.
pub(crate) struct EventHub {
    pub(crate) subscribers: Rc<Subscribers>,
    /// The `cachet` channel: the Service Worker's broadcasts, heard by the listeners, and this page's.
    pub(crate) channel: BroadcastChannel,
    window_events: bool,
}

impl Drop for EventHub {
    fn drop(&mut self) {
        self.channel.close();
    }
}

impl EventHub {
    pub(crate) fn new(channel: BroadcastChannel, window_events: bool) -> Self {
        EventHub { subscribers: Rc::default(), channel, window_events }
    }

    /// Tells subscribers, and `window` for the SPEC §6 events.
    pub(crate) fn emit(&self, event: ClientEvent) {
        if self.window_events {
            if let Some((name, detail)) = event.window_event() {
                dispatch_window_event(name, &detail);
            }
        }
        self.subscribers.emit(&event);
    }

    /// Posts an event in the Service Worker's format on `cachet`, for the other tabs and agents.
    pub(crate) fn post_event(&self, event: &SwEvent) {
        let _ = self.channel.post_message(&encode_sw_event(event).into());
    }
}
