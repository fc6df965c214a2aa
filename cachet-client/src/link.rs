//! The client's link to its Service Worker: requests it acknowledges (`clear-all`, `set-identity`,
//! `invalidate-tags`, `config-request`, the devtools' requests) and notices (`connectivity-changed`,
//! `replay-queue`), with their ids and the answers waited for ([`WorkerLink`]); `navigator.serviceWorker`
//! ([`container`]).
//!
//! A request goes to the worker that controls the page or, when none does (a hard reload), to the active
//! worker of the page's registration, which still owns the caches; with no Service Worker at all there
//! is nothing to tell and the request succeeds at once. The answer is awaited at most
//! `service_worker_timeout`. What the worker sends unasked (a `refresh-request`) is the listeners'
//! (`crate::listeners`): this part only settles the answers it waits for.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use cachet_core::protocol::{Message, PageToSw, SwToPage};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ServiceWorker, ServiceWorkerContainer};

use crate::locks::{millis, timer_ms};
use crate::Error;

/// Requests waiting for their answer (`ack`, `nack`, `config`, `snapshot`).
pub(crate) struct WorkerLink {
    next_id: Cell<u64>,
    /// A list, not a map: a page has a handful of requests out at once, and a `HashMap` of its own type
    /// would link hashbrown's insert, rehash and lookup for this key and value (1.5 KB of the page).
    /// Each waits on a promise of `js/page.js`'s `answer`, which times it out; the answer is put here
    /// when it comes, and the promise settled.
    pending: RefCell<Vec<Pending>>,
    timeout: Duration,
}

/// A request waiting for its answer.
struct Pending {
    request_id: u64,
    /// Settled ([`crate::js::settle`]) when the answer comes, else resolves by itself at the timeout.
    waiting: js_sys::Promise,
    answer: Option<SwToPage>,
}

/// `navigator.serviceWorker`, when this context has it.
pub(crate) fn container() -> Option<ServiceWorkerContainer> {
    let navigator = web_sys::window()?.navigator();
    js_sys::Reflect::has(&navigator, &"serviceWorker".into()).ok()?.then(|| navigator.service_worker())
}

impl WorkerLink {
    /// A link whose requests wait at most `timeout` for their answer.
    pub(crate) fn new(timeout: Duration) -> Self {
        // Ids start at a random point: every client of the page hears every answer.
        let start = (js_sys::Math::random() * 1e12) as u64;
        WorkerLink { next_id: Cell::new(start), pending: RefCell::new(Vec::new()), timeout }
    }

    /// Whether a Service Worker controls the page.
    pub(crate) fn is_controlled(&self) -> bool {
        container().and_then(|container| container.controller()).is_some()
    }

    /// The controller, else the active worker of the page's registration.
    pub(crate) async fn service_worker(&self) -> Option<ServiceWorker> {
        JsFuture::from(crate::js::service_worker(None)).await.ok()?.dyn_into().ok()
    }

    /// Sends the message `make(request_id)` and awaits its `ack`; `Ok` at once without a Service Worker.
    pub(crate) async fn request(&self, make: impl FnOnce(u64) -> PageToSw) -> Result<(), Error> {
        // Only the message is built per call site; the exchange below is one state machine for all of
        // them (a generic async fn is a copy of the whole exchange in every caller's wasm).
        let (request_id, message) = self.numbered(make);
        self.request_message(request_id, message).await
    }

    async fn request_message(&self, request_id: u64, message: PageToSw) -> Result<(), Error> {
        let Some(worker) = self.service_worker().await else {
            return Ok(());
        };
        let answered = self.exchange_message(&worker, request_id, message, self.timeout).await?;
        match answered.answer {
            SwToPage::Ack { .. } => Ok(()),
            _ => Err(answered.unexpected()),
        }
    }

    /// Sends the message `make(request_id)` to `worker` and awaits its answer, a `nack` as an error, at
    /// most `timeout` (`None`: the link's own).
    pub(crate) async fn exchange(
        &self,
        worker: &ServiceWorker,
        make: impl FnOnce(u64) -> PageToSw,
        timeout: Option<Duration>,
    ) -> Result<Answered, Error> {
        let (request_id, message) = self.numbered(make);
        self.exchange_message(worker, request_id, message, timeout.unwrap_or(self.timeout)).await
    }

    /// The next request id, and the message `make` builds with it.
    fn numbered(&self, make: impl FnOnce(u64) -> PageToSw) -> (u64, PageToSw) {
        let request_id = self.next_id.get() + 1;
        self.next_id.set(request_id);
        (request_id, make(request_id))
    }

    async fn exchange_message(
        &self,
        worker: &ServiceWorker,
        request_id: u64,
        message: PageToSw,
        timeout: Duration,
    ) -> Result<Answered, Error> {
        let waiting = crate::js::answer(timer_ms(timeout));
        self.pending.borrow_mut().push(Pending { request_id, waiting: waiting.clone(), answer: None });
        if let Err(error) = worker.post_message(&JsValue::from_str(&message.to_wire())) {
            self.take(request_id);
            return Err(Error::js("ServiceWorker.postMessage", error));
        }
        let _ = JsFuture::from(waiting).await;
        match self.take(request_id).and_then(|pending| pending.answer) {
            Some(SwToPage::Nack { message: reason, .. }) => {
                Err(Error::ServiceWorkerRefused { asked: message.type_name(), reason })
            }
            Some(answer) => Ok(Answered { asked: message, answer }),
            None => {
                Err(Error::ServiceWorkerSilent { asked: message.type_name(), waited_ms: millis(timeout) })
            }
        }
    }

    /// Posts a message that gets no answer to the controller, if any.
    pub(crate) fn notify(&self, message: &PageToSw) {
        if let Some(controller) = container().and_then(|container| container.controller()) {
            let _ = controller.post_message(&JsValue::from_str(&message.to_wire()));
        }
    }

    /// Hands `answer` to the request `request_id` waiting for it, if it is this link's.
    pub(crate) fn settle(&self, request_id: u64, answer: SwToPage) {
        let mut pending = self.pending.borrow_mut();
        if let Some(waiting) = pending.iter_mut().find(|pending| pending.request_id == request_id) {
            waiting.answer = Some(answer);
            crate::js::settle(&waiting.waiting);
        }
    }

    /// The request `request_id`, taken out of the pending ones.
    fn take(&self, request_id: u64) -> Option<Pending> {
        let mut pending = self.pending.borrow_mut();
        let at = pending.iter().position(|pending| pending.request_id == request_id)?;
        Some(pending.swap_remove(at))
    }
}

/// The Service Worker's answer to a message, with the message.
pub(crate) struct Answered {
    /// The message.
    asked: PageToSw,
    /// The answer.
    pub(crate) answer: SwToPage,
}

impl Answered {
    /// The error for an answer of a kind the message does not expect: one place for every exchange.
    pub(crate) fn unexpected(self) -> Error {
        Error::ServiceWorkerAnswer { asked: self.asked.type_name(), answered: self.answer.kind().to_owned() }
    }
}
