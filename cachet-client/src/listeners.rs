//! What the client listens to, and its start-up.
//!
//! | Source | Event | The client |
//! |---|---|---|
//! | BroadcastChannel `cachet` (the Service Worker, other tabs without one) | `cache-invalidated` | drops the tagged in-page entries, fires `cache-invalidated` |
//! | | `cache-updated` | fires `cachet:cache-updated` |
//! | | `sw-auth-state-change` (a refused refresh the SW ran) | applies `Remote(kind)` |
//! | | anything else | [`crate::ClientEvent::Sw`] |
//! | BroadcastChannel `cachet-auth` (other tabs) | see [`crate::tabs`] | adopts or drops auth, answers queries |
//! | `navigator.serviceWorker` | `message` | acks, nacks, refresh requests ([`crate::sw`]) |
//! | | `controllerchange` | tells the new worker the connectivity and, when this tab holds auth, the user; then hands it the answers stored before it controlled the page ([`crate::handover`]) |
//! | `window` | `online` / `offline` | `Online` / `Offline` to the auth machine, `connectivity-changed` to the SW |
//! | the queue alarm ([`crate::queue_alarm`], one tab) | queue broadcasts, `online`, its timer | `replay-queue` to the SW when the stored queue's head is due |
//!
//! Start-up restores the persisted record ([`crate::restore`]).

use std::rc::{Rc, Weak};

use cachet_core::machines::auth::AuthEvent;
use cachet_core::protocol::{decode_sw_event, PageToSw, SwEvent};
use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Window};

use crate::client::Inner;
use crate::refresh_state::Origin;
use crate::sw_link::container;
use crate::tabs::TabMessage;
use crate::ClientEvent;

fn message_text(event: &web_sys::Event) -> Option<String> {
    event.dyn_ref::<MessageEvent>()?.data().as_string()
}

impl Inner {
    pub(crate) fn listen(self: &Rc<Self>, window: &Window) {
        let weak = Rc::downgrade(self);
        let mut listeners = Vec::new();
        let on = |weak: &Weak<Inner>, handler: fn(&Rc<Inner>, &web_sys::Event)| {
            let weak = weak.clone();
            move |event: &web_sys::Event| {
                if let Some(inner) = weak.upgrade() {
                    handler(&inner, event);
                }
            }
        };
        if let Some(channel) = &self.events_channel {
            listeners.push(EventListener::new(
                channel,
                "message",
                on(&weak, |inner, event| {
                    if let Some(event) = message_text(event).and_then(|text| decode_sw_event(&text).ok()) {
                        inner.on_sw_event(event);
                    }
                }),
            ));
        }
        #[cfg(feature = "auth")]
        if let Some(channel) = &self.auth_channel {
            listeners.push(EventListener::new(
                channel,
                "message",
                on(&weak, |inner, event| {
                    if let Some(message) = message_text(event).and_then(|text| TabMessage::from_wire(&text)) {
                        inner.on_tab_message(message);
                    }
                }),
            ));
        }
        if let Some(container) = container() {
            listeners.push(EventListener::new(
                &container,
                "message",
                on(&weak, |inner, event| {
                    if let Some(event) = event.dyn_ref::<MessageEvent>() {
                        inner.on_sw_message(event);
                    }
                }),
            ));
            listeners.push(EventListener::new(
                &container,
                "controllerchange",
                on(&weak, |inner, _| {
                    inner.sw_notify(&PageToSw::ConnectivityChanged { online: inner.state.get().online });
                    // A new worker may run on another config: follow it.
                    let following = inner.clone();
                    wasm_bindgen_futures::spawn_local(async move { following.follow_worker_config().await });
                    // Only a tab holding auth tells the new worker the user: a logged-out tab saying
                    // "nobody" at the same moment would race a logged-in one (clear_auth forgets the
                    // user itself). Then the answers this page stored are handed over: the worker
                    // partitions them by the user it knows.
                    let inner = inner.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        #[cfg(feature = "auth")]
                        if inner.auth.borrow().is_some() {
                            if let Err(error) = inner.sync_identity().await {
                                web_sys::console::warn_1(
                                    &format!("cachet: telling the new service worker the user: {error}")
                                        .into(),
                                );
                            }
                        }
                        inner.hand_over().await;
                    });
                }),
            ));
            // Messages from the Service Worker are queued until the page starts them.
            if let Ok(start) = js_sys::Reflect::get(&container, &"startMessages".into()) {
                if let Some(start) = start.dyn_ref::<js_sys::Function>() {
                    let _ = start.call0(&container);
                }
            }
        }
        for (name, online) in [("online", true), ("offline", false)] {
            let weak = weak.clone();
            listeners.push(EventListener::new(window, name, move |_| {
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                inner.sw_notify(&PageToSw::ConnectivityChanged { online });
                let event = if online { AuthEvent::Online } else { AuthEvent::Offline };
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = inner.apply_auth(event, Origin::Page).await;
                });
            }));
        }
        *self.listeners.borrow_mut() = listeners;
        crate::queue_alarm::start(weak);
    }

    pub(crate) fn on_sw_event(self: &Rc<Self>, event: SwEvent) {
        match event {
            SwEvent::CacheInvalidated { tags } => self.invalidate_locally(&tags, false),
            SwEvent::CacheUpdated { url } => self.emit(ClientEvent::CacheUpdated { url }),
            #[cfg(feature = "auth")]
            SwEvent::AuthStateChange { kind } => {
                let inner = self.clone();
                wasm_bindgen_futures::spawn_local(async move { inner.on_remote_auth(kind, None).await });
            }
            other => self.emit(ClientEvent::Sw(other)),
        }
    }

    fn on_tab_message(self: &Rc<Self>, message: TabMessage) {
        let inner = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            match message {
                TabMessage::Changed { kind, auth } => inner.on_remote_auth(kind, auth).await,
                TabMessage::Query => {
                    inner.ready().await;
                    let auth = inner.auth.borrow().clone();
                    // A page signed in from its stored record holds no token to lend.
                    let state = inner.state.get();
                    if let (true, false, Some(auth)) = (state.authenticated, state.restore_pending, auth) {
                        inner.post_tab(&TabMessage::Answer { auth });
                    }
                }
                TabMessage::Answer { auth } => {
                    if let Err(error) = inner.adopt(auth).await {
                        web_sys::console::warn_1(
                            &format!("cachet: adopting another tab's auth: {error}").into(),
                        );
                    }
                }
            }
        });
    }
}
