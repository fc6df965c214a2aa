//! The first visit's answers, handed to the worker that takes control ([`cachet_core::handover`]).
//!
//! While no worker controls the page, the answers its memory cache stores are recorded with their
//! request (cachet's headers, and only the fingerprint of the `Authorization` they were sent with). When
//! a worker takes control (`controllerchange`, after the user is told to it), the page posts them once,
//! most recently used first, at most [`cachet_core::handover::MAX_ENTRIES`], as `hand-over`; an answer
//! stored after that moment (a request already on its way) is handed over as it is stored. The worker
//! keeps each only as it would have kept the page's own request, so the next load is a hit rather than
//! a second request to the server.

use std::rc::Rc;

use cachet_core::protocol::PageToSw;

use crate::client::Inner;

impl Inner {
    /// Posts the entries not handed over yet to the controlling worker; a failure is said on the console
    /// (the entries stay in the page, and the worker fetches them on their next request).
    pub(crate) async fn hand_over(self: &Rc<Self>) {
        if !self.is_controlled() {
            return;
        }
        let entries = self.transport.cache.borrow_mut().hand_over();
        if entries.is_empty() {
            return;
        }
        let count = entries.len();
        let handed = |request_id| PageToSw::HandOver { request_id, entries };
        if let Err(error) = self.transport.link.request(handed).await {
            web_sys::console::warn_1(
                &format!("cachet: handing {count} answers to the service worker: {error}").into(),
            );
        }
    }
}
