//! The client's side of its requests to the Service Worker: the ids and the waiting answers
//! ([`SwLink`]), and `navigator.serviceWorker` ([`container`]). What is sent and how answers are read
//! is `crate::sw`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use cachet_core::protocol::SwToPage;
use futures::channel::oneshot;
use web_sys::ServiceWorkerContainer;

/// Requests waiting for their answer (`ack`, `nack`, `config`).
pub(crate) struct SwLink {
    pub(crate) next_id: Cell<u64>,
    pub(crate) pending: RefCell<HashMap<u64, oneshot::Sender<SwToPage>>>,
}

impl SwLink {
    pub(crate) fn new() -> Self {
        // Ids start at a random point: every client of the page hears every answer.
        let start = (js_sys::Math::random() * 1e12) as u64;
        SwLink { next_id: Cell::new(start), pending: RefCell::new(HashMap::new()) }
    }
}

/// `navigator.serviceWorker`, when this context has it.
pub(crate) fn container() -> Option<ServiceWorkerContainer> {
    let navigator = web_sys::window()?.navigator();
    js_sys::Reflect::has(&navigator, &"serviceWorker".into()).ok()?.then(|| navigator.service_worker())
}
