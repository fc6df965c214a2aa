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

use std::rc::Rc;

use cachet_core::protocol::{decode_sw_event, Message, PageReply, PageToSw, SwEvent, SwToPage};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::MessagePort;

use crate::client::Inner;
use crate::js::heard;
use crate::session::Session;
use crate::{ClientEvent, Error};

impl Inner {
    /// Listens to everything in the table above, through one callback.
    pub(crate) fn listen(self: &Rc<Self>) {
        let weak = Rc::downgrade(self);
        let on = Closure::<dyn FnMut(u32, JsValue, JsValue)>::new(move |kind, data: JsValue, port| {
            if let Some(inner) = weak.upgrade() {
                inner.heard(kind, data, port);
            }
        });
        let off = crate::js::listen(&self.hub.channel, self.session.channel(), on.as_ref().unchecked_ref());
        *self.listeners.borrow_mut() = Some(crate::js::Listening { _on: on, off });
        #[cfg(feature = "queue")]
        crate::queue_alarm::start(&self.alarm);
    }

    fn heard(self: &Rc<Self>, kind: u32, data: JsValue, port: JsValue) {
        match kind {
            heard::CHANNEL => {
                // Any broadcast may say the queue changed (queued, failed, replayed, ...).
                #[cfg(feature = "queue")]
                crate::queue_alarm::poke(&self.alarm);
                if let Some(event) = data.as_string().and_then(|text| decode_sw_event(&text).ok()) {
                    self.on_sw_event(event);
                }
            }
            heard::TABS => {
                if let Some(text) = data.as_string() {
                    self.session.on_tab_wire(&text);
                }
            }
            heard::WORKER => self.on_sw_message(data, port),
            heard::CONTROLLER => self.on_controller_change(),
            heard::ONLINE | heard::OFFLINE => {
                let online = kind == heard::ONLINE;
                self.transport.link.notify(&PageToSw::ConnectivityChanged { online });
                #[cfg(feature = "queue")]
                if online {
                    crate::queue_alarm::poke(&self.alarm);
                }
                let session = self.session.clone();
                wasm_bindgen_futures::spawn_local(async move { session.connectivity(online).await });
            }
            _ => {}
        }
    }

    /// A new worker controls the page: it hears the connectivity (and, from a tab holding auth, the
    /// user), the page follows its config and hands it the answers stored before it controlled.
    fn on_controller_change(self: &Rc<Self>) {
        let online = self.session.state().online;
        self.transport.link.notify(&PageToSw::ConnectivityChanged { online });
        // A new worker may run on another config: follow it.
        let following = self.clone();
        wasm_bindgen_futures::spawn_local(async move { following.follow_worker_config().await });
        // Only a tab holding auth tells the new worker the user: a logged-out tab saying "nobody" at
        // the same moment would race a logged-in one (clear_auth forgets the user itself). Then the
        // answers this page stored are handed over: the worker partitions them by the user it knows.
        let inner = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            if inner.session.holds_auth() {
                if let Err(error) = inner.session.sync_identity().await {
                    web_sys::console::warn_1(
                        &format!("cachet: telling the new service worker the user: {error}").into(),
                    );
                }
            }
            inner.hand_over().await;
        });
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

    /// A `message` event of `navigator.serviceWorker` (its `data` and first port): an answer the link
    /// waits for, or a `refresh-request`, answered on the `MessagePort` sent with it.
    fn on_sw_message(&self, data: JsValue, port: JsValue) {
        let Some(text) = data.as_string() else {
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
                let Ok(port) = port.dyn_into::<MessagePort>() else {
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
