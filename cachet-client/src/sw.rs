//! Talking to the Service Worker: requests it acknowledges (`clear-all`, `set-identity`,
//! `invalidate-tags`), notices (`connectivity-changed`), and the refresh requests it sends the page.
//!
//! A request goes to the worker that controls the page or, when none does (a hard reload), to the active
//! worker of the page's registration, which still owns the caches; with no Service Worker at all there
//! is nothing to tell and the request succeeds at once. The answer is awaited at most
//! `service_worker_timeout`.
//!
//! A `refresh-request {id, failed}` is answered on the `MessagePort` sent with it, as the table of
//! [`cachet_core::protocol::SwToPage::RefreshRequest`] says: the page runs the refresh only when `failed`
//! is the fingerprint of its current `Authorization`.

use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::protocol::{Message, PageReply, PageToSw, SwToPage};
use futures::channel::oneshot;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, MessagePort, ServiceWorker};

use crate::client::Inner;
use crate::locks::with_timeout;
use crate::refresh_state::{Origin, RefreshOutcome};
use crate::sw_link::container;
use crate::Error;

impl Inner {
    /// Whether a Service Worker controls the page.
    pub(crate) fn is_controlled(&self) -> bool {
        container().and_then(|container| container.controller()).is_some()
    }

    /// The controller, else the active worker of the page's registration.
    pub(crate) async fn service_worker(&self) -> Option<ServiceWorker> {
        let container = container()?;
        if let Some(controller) = container.controller() {
            return Some(controller);
        }
        let registration = JsFuture::from(container.get_registration()).await.ok()?;
        let registration: web_sys::ServiceWorkerRegistration = registration.dyn_into().ok()?;
        registration.active()
    }

    /// Sends the message `make(request_id)` and awaits its `ack`; `Ok` at once without a Service Worker.
    pub(crate) async fn sw_request(&self, make: impl FnOnce(u64) -> PageToSw) -> Result<(), Error> {
        let Some(worker) = self.service_worker().await else {
            return Ok(());
        };
        self.sw_request_to(&worker, make).await.map(drop)
    }

    /// Sends the message `make(request_id)` to `worker` and awaits its answer: `Ok("")` for an `ack`,
    /// the config text for a `config`.
    pub(crate) async fn sw_request_to(
        &self,
        worker: &ServiceWorker,
        make: impl FnOnce(u64) -> PageToSw,
    ) -> Result<String, Error> {
        let mut asked = String::new();
        let named = |request_id| {
            let message = make(request_id);
            asked = message.type_name();
            message
        };
        match self.sw_exchange(worker, named).await? {
            SwToPage::Ack { .. } => Ok(String::new()),
            SwToPage::Config { config, .. } => Ok(config),
            other => Err(Error::ServiceWorkerAnswer { asked, answered: other.type_name() }),
        }
    }

    /// Sends the message `make(request_id)` to `worker` and awaits its answer, a `nack` as an error.
    pub(crate) async fn sw_exchange(
        &self,
        worker: &ServiceWorker,
        make: impl FnOnce(u64) -> PageToSw,
    ) -> Result<SwToPage, Error> {
        let request_id = self.sw.next_id.get() + 1;
        self.sw.next_id.set(request_id);
        let (sender, answer) = oneshot::channel();
        self.sw.pending.borrow_mut().insert(request_id, sender);
        let message = make(request_id);
        if let Err(error) = worker.post_message(&JsValue::from_str(&message.to_wire())) {
            self.sw.pending.borrow_mut().remove(&request_id);
            return Err(Error::js("ServiceWorker.postMessage", error));
        }
        let outcome = with_timeout(self.options.service_worker_timeout, answer).await;
        self.sw.pending.borrow_mut().remove(&request_id);
        match outcome {
            Some(Ok(SwToPage::Nack { message: reason, .. })) => {
                Err(Error::ServiceWorkerRefused { asked: message.type_name(), reason })
            }
            Some(Ok(answer)) => Ok(answer),
            Some(Err(_)) | None => Err(Error::ServiceWorkerSilent {
                asked: message.type_name(),
                waited_ms: crate::locks::millis(self.options.service_worker_timeout),
            }),
        }
    }

    /// Posts a message that gets no answer to the controller, if any.
    pub(crate) fn sw_notify(&self, message: &PageToSw) {
        if let Some(controller) = container().and_then(|container| container.controller()) {
            let _ = controller.post_message(&JsValue::from_str(&message.to_wire()));
        }
    }

    /// A `message` event of `navigator.serviceWorker`.
    pub(crate) fn on_sw_message(self: &Rc<Self>, event: &MessageEvent) {
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
            | SwToPage::Snapshot { request_id, .. } => self.settle_sw_request(request_id, message),
            SwToPage::RefreshRequest { id, failed } => {
                let Some(port) = event.ports().get(0).dyn_into::<MessagePort>().ok() else {
                    return;
                };
                let inner = self.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let (ok, authorization) = inner.answer_refresh_request(failed).await;
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

    fn settle_sw_request(&self, request_id: u64, answer: SwToPage) {
        if let Some(sender) = self.sw.pending.borrow_mut().remove(&request_id) {
            let _ = sender.send(answer);
        }
    }

    /// `(ok, authorization)` for a `refresh-request` whose failed request carried the fingerprint `failed`.
    #[cfg(feature = "auth")]
    pub(crate) async fn answer_refresh_request(
        self: &Rc<Self>,
        failed: Option<String>,
    ) -> (bool, Option<String>) {
        self.ready().await;
        let current = self.auth.borrow().as_ref().and_then(crate::AuthData::authorization);
        let current_fingerprint = current.as_deref().map(auth_fingerprint);
        let stale = failed.is_none() || failed != current_fingerprint;
        if stale {
            return (self.state.get().authenticated, current);
        }
        let generation = self.refresh.generation();
        match self.after_auth_failure(current, false, generation, Origin::ServiceWorker).await {
            RefreshOutcome::Retry { .. } => {
                (true, self.auth.borrow().as_ref().and_then(crate::AuthData::authorization))
            }
            RefreshOutcome::Reject(_) => (false, None),
        }
    }

    /// Without the cargo feature `auth` this page holds no auth: a worker asking is told so.
    #[cfg(not(feature = "auth"))]
    pub(crate) async fn answer_refresh_request(
        self: &Rc<Self>,
        _failed: Option<String>,
    ) -> (bool, Option<String>) {
        (false, None)
    }
}
