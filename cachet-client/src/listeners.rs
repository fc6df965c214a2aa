//! What the client listens to, and its start-up.
//!
//! | Source | Event | The client |
//! |---|---|---|
//! | BroadcastChannel `cachet` (the Service Worker, other tabs without one) | `cache-invalidated` | drops the tagged in-page entries, fires `cache-invalidated` |
//! | | `cache-updated` | fires `cachet:cache-updated` |
//! | | `sw-auth-state-change` (a refused refresh the SW ran) | applies `Remote(kind)` |
//! | | anything else | [`crate::ClientEvent::Sw`] |
//! | BroadcastChannel `cachet-auth` (other tabs; the session listens, with the cargo feature `auth`) | see `cachet_client::tabs` | adopts or drops auth, answers queries |
//! | `navigator.serviceWorker` | `message` | acks, nacks and answers to the link (`crate::link`); a `refresh-request` to the session, answered on its port |
//! | | `controllerchange` | tells the new worker the connectivity and, when this tab holds auth, the user; then hands it the answers stored before it controlled the page ([`crate::handover`]) |
//! | `window` | `online` / `offline` | `Online` / `Offline` to the auth machine, `connectivity-changed` to the SW |
//! | the queue alarm (`queue_alarm`, one tab; cargo feature `queue`) | queue broadcasts, `online`, its timer | `replay-queue` to the SW when the stored queue's head is due |
//!
//! Start-up follows the worker's config, then the session restores the persisted record.

use std::rc::{Rc, Weak};

use cachet_core::protocol::{decode_sw_event, Message, PageReply, PageToSw, SwEvent, SwToPage};
use gloo::events::EventListener;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{MessageEvent, MessagePort, Window};

use crate::client::Inner;
use crate::link::container;
use crate::session::Session;
use crate::{ClientEvent, Error};

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
        listeners.push(EventListener::new(
            &self.hub.channel,
            "message",
            on(&weak, |inner, event| {
                // Any broadcast may say the queue changed (queued, failed, replayed, ...).
                #[cfg(feature = "queue")]
                crate::queue_alarm::poke(&inner.alarm);
                if let Some(event) = message_text(event).and_then(|text| decode_sw_event(&text).ok()) {
                    inner.on_sw_event(event);
                }
            }),
        ));
        listeners.extend(self.session.listen());
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
                    let online = inner.session.state().online;
                    inner.transport.link.notify(&PageToSw::ConnectivityChanged { online });
                    // A new worker may run on another config: follow it.
                    let following = inner.clone();
                    wasm_bindgen_futures::spawn_local(async move { following.follow_worker_config().await });
                    // Only a tab holding auth tells the new worker the user: a logged-out tab saying
                    // "nobody" at the same moment would race a logged-in one (clear_auth forgets the
                    // user itself). Then the answers this page stored are handed over: the worker
                    // partitions them by the user it knows.
                    let inner = inner.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        if inner.session.holds_auth() {
                            if let Err(error) = inner.session.sync_identity().await {
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
                inner.transport.link.notify(&PageToSw::ConnectivityChanged { online });
                #[cfg(feature = "queue")]
                if online {
                    crate::queue_alarm::poke(&inner.alarm);
                }
                let session = inner.session.clone();
                wasm_bindgen_futures::spawn_local(async move { session.connectivity(online).await });
            }));
        }
        *self.listeners.borrow_mut() = listeners;
        #[cfg(feature = "queue")]
        crate::queue_alarm::start(&self.alarm);
    }

    pub(crate) fn on_sw_event(self: &Rc<Self>, event: SwEvent) {
        match event {
            SwEvent::CacheInvalidated { tags } => self.invalidate_locally(&tags, false),
            SwEvent::CacheUpdated { url } => self.hub.emit(ClientEvent::CacheUpdated { url }),
            SwEvent::AuthStateChange { kind } if Session::BUILT => {
                let session = self.session.clone();
                wasm_bindgen_futures::spawn_local(async move { session.on_remote_auth(kind, None).await });
            }
            other => self.hub.emit(ClientEvent::Sw(other)),
        }
    }

    /// A `message` event of `navigator.serviceWorker`: an answer the link waits for, or a
    /// `refresh-request`, answered on the `MessagePort` sent with it.
    fn on_sw_message(&self, event: &MessageEvent) {
        let Some(text) = event.data().as_string() else {
            return;
        };
        // Messages of other libraries, or of another cachet version, are not ours to answer.
        let Ok(message) = SwToPage::from_wire(&text) else {
            return;
        };
        match message {
            SwToPage::Ack { request_id }
            | SwToPage::Nack { request_id, .. }
            | SwToPage::Config { request_id, .. }
            | SwToPage::QueueAlarm { request_id, .. }
            | SwToPage::Snapshot { request_id, .. } => self.transport.link.settle(request_id, message),
            SwToPage::RefreshRequest { id, failed } => {
                let Some(port) = event.ports().get(0).dyn_into::<MessagePort>().ok() else {
                    return;
                };
                let session = self.session.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let (ok, authorization) = session.answer_refresh_request(failed).await;
                    let reply = PageReply::RefreshReply { id, ok, authorization };
                    if let Err(error) = port.post_message(&JsValue::from_str(&reply.to_wire())) {
                        web_sys::console::error_1(
                            &Error::js("MessagePort.postMessage", error).to_string().into(),
                        );
                    }
                });
            }
            _ => {}
        }
    }
}
