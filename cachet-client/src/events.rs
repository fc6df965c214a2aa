//! What the client tells the app: [`ClientEvent`]s, to Rust subscribers ([`crate::Client::subscribe`],
//! [`crate::Client::events`]) and, for the three events of SPEC §6, as `CustomEvent`s on `window`.
//!
//! | [`ClientEvent`] | `window` event | `detail` |
//! |---|---|---|
//! | [`ClientEvent::AuthStateChange`] | [`AUTH_STATE_CHANGE_EVENT`] `sw-auth-state-change` | `{ type: 'login' \| 'logout' \| 'refresh' \| 'clear' }` |
//! | [`ClientEvent::CacheInvalidated`] | [`CACHE_INVALIDATED_EVENT`] `cache-invalidated` | `{ tags }` |
//! | [`ClientEvent::CacheUpdated`] | [`CACHE_UPDATED_EVENT`] `cachet:cache-updated` | `{ url }` |
//! | [`ClientEvent::StateChanged`] | none | |
//! | [`ClientEvent::Sw`] | none | |
//!
//! Which tab fires `sw-auth-state-change`: the tab that acted, at once, and every other tab when the
//! news reaches it (over the `cachet-auth` channel, or the Service Worker's `cachet` broadcast of a
//! refused refresh). A `logout` or `clear` that finds a tab already logged out fires nothing there, so one
//! logout is one event per tab even when both the Service Worker and a tab announce it.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll};

use cachet_core::json::ObjectWriter;
use cachet_core::machines::auth::AuthState;
use cachet_core::protocol::{AuthChangeKind, SwEvent};
use futures::channel::mpsc;
use futures::Stream;

/// `window` event fired when the auth state changes.
pub const AUTH_STATE_CHANGE_EVENT: &str = "sw-auth-state-change";
/// `window` event fired when cache tags were invalidated.
pub const CACHE_INVALIDATED_EVENT: &str = "cache-invalidated";
/// `window` event fired when a background re-fetch brought new content.
pub const CACHE_UPDATED_EVENT: &str = "cachet:cache-updated";

/// Something the app may react to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// `sw-auth-state-change`: login, logout, refresh or clear, here or in another tab.
    AuthStateChange {
        /// Which.
        kind: AuthChangeKind,
    },
    /// `cache-invalidated`: entries with these tags were removed; queries carrying them should re-run.
    CacheInvalidated {
        /// The tags.
        tags: Vec<String>,
    },
    /// `cachet:cache-updated`: a stale-while-revalidate re-fetch stored new content, or a cache-and-network
    /// one stored the server's answer.
    CacheUpdated {
        /// The cache URL of the entry.
        url: String,
    },
    /// The observable state (authenticated × online) changed.
    StateChanged(AuthState),
    /// Any other Service Worker broadcast (activation, mutation queue), as received.
    Sw(SwEvent),
}

impl ClientEvent {
    /// The `window` event name and `detail` of this event, for the three events of SPEC §6; the detail
    /// as JSON text (`window` receives it parsed), written by hand as the worker writes its messages.
    pub fn window_event(&self) -> Option<(&'static str, String)> {
        let mut detail = String::new();
        let mut object = ObjectWriter::start(&mut detail);
        let name = match self {
            ClientEvent::AuthStateChange { kind } => {
                object.string("type", kind.as_str());
                AUTH_STATE_CHANGE_EVENT
            }
            ClientEvent::CacheInvalidated { tags } => {
                object.strings("tags", tags);
                CACHE_INVALIDATED_EVENT
            }
            ClientEvent::CacheUpdated { url } => {
                object.string("url", url);
                CACHE_UPDATED_EVENT
            }
            ClientEvent::StateChanged(_) | ClientEvent::Sw(_) => return None,
        };
        object.end();
        Some((name, detail))
    }
}

type Callback = Rc<dyn Fn(&ClientEvent)>;

/// The Rust subscribers of one client.
#[derive(Default)]
pub(crate) struct Subscribers {
    next_id: Cell<u64>,
    list: RefCell<Vec<(u64, Callback)>>,
}

impl Subscribers {
    pub(crate) fn add(self: &Rc<Self>, callback: Callback) -> Subscription {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.list.borrow_mut().push((id, callback));
        Subscription { id, subscribers: Rc::downgrade(self) }
    }

    /// Calls every subscriber; one that subscribes or unsubscribes from its callback is fine.
    pub(crate) fn emit(&self, event: &ClientEvent) {
        let callbacks: Vec<Callback> =
            self.list.borrow().iter().map(|(_, callback)| callback.clone()).collect();
        for callback in callbacks {
            callback(event);
        }
    }
}

/// A live subscription; dropping it unsubscribes.
#[must_use = "dropping the subscription unsubscribes at once"]
pub struct Subscription {
    id: u64,
    subscribers: Weak<Subscribers>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Subscription").field("id", &self.id).finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(subscribers) = self.subscribers.upgrade() {
            subscribers.list.borrow_mut().retain(|(id, _)| *id != self.id);
        }
    }
}

/// The client's events as a `futures` stream (unbounded: read it, or drop it).
pub struct EventStream {
    receiver: mpsc::UnboundedReceiver<ClientEvent>,
    _subscription: Subscription,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("EventStream")
    }
}

impl EventStream {
    pub(crate) fn new(subscribers: &Rc<Subscribers>) -> Self {
        let (sender, receiver) = mpsc::unbounded();
        let subscription = subscribers.add(Rc::new(move |event: &ClientEvent| {
            let _ = sender.unbounded_send(event.clone());
        }));
        EventStream { receiver, _subscription: subscription }
    }
}

impl Stream for EventStream {
    type Item = ClientEvent;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<ClientEvent>> {
        Pin::new(&mut self.receiver).poll_next(context)
    }
}

/// Fires `CustomEvent(name, { detail })` on `window`.
pub(crate) fn dispatch_window_event(name: &str, detail: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let detail = js_sys::JSON::parse(detail).unwrap_or(wasm_bindgen::JsValue::NULL);
    let init = web_sys::CustomEventInit::new();
    init.set_detail(&detail);
    match web_sys::CustomEvent::new_with_event_init_dict(name, &init) {
        Ok(event) => {
            let _ = window.dispatch_event(&event);
        }
        Err(error) => {
            web_sys::console::error_1(&crate::Error::js("new CustomEvent", error).to_string().into())
        }
    }
}
