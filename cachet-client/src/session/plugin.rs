//! Refresh-and-retry in the page as an engine plugin (urql's `authExchange` contract, decided by
//! [`cachet_core::machines::refresh`]): `request_will_fetch` puts the adapter's headers on each send;
//! after an auth failure, `fetch_did_succeed` waits for the one refresh in flight and asks for the retry,
//! whose answer is final (a second failure is reported to the machine, never a refresh loop).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use cachet_core::engine::plugin::{AfterFetch, Call, Later, Plugin};
use cachet_core::engine::Fetched;

use super::flight::{Origin, RefreshOutcome};
use super::Session;
use crate::http::HttpResponse;

/// The plugin of one request sent with auth.
struct PageAuth {
    session: Rc<Session>,
    /// The refresh generation at the last send.
    generation: Cell<u64>,
    /// The `Authorization` of the last send.
    sent: RefCell<Option<String>>,
}

impl Session {
    /// The refresh-and-retry plugin of one request sent with auth.
    pub(crate) fn retry_plugin(self: &Rc<Self>) -> Option<Rc<dyn Plugin<HttpResponse>>> {
        Some(Rc::new(PageAuth { session: self.clone(), generation: Cell::new(0), sent: RefCell::new(None) }))
    }
}

impl Plugin<HttpResponse> for PageAuth {
    fn request_will_fetch(&self, _call: &Call<'_>, headers: &mut Vec<(String, String)>) {
        self.generation.set(self.session.refresh.generation());
        let adapter_headers = self.session.adapter_headers();
        let sent = adapter_headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        *self.sent.borrow_mut() = sent.map(|(_, value)| value.clone());
        headers.extend(adapter_headers);
    }

    fn fetch_did_succeed<'a>(
        &'a self,
        _call: &'a Call<'a>,
        fetched: &'a Fetched<HttpResponse>,
        retried: bool,
    ) -> Later<'a, AfterFetch> {
        Box::pin(async move {
            if !fetched.auth_failure {
                return AfterFetch::Keep;
            }
            let failed = self.sent.borrow().clone();
            let outcome =
                self.session.after_auth_failure(failed, retried, self.generation.get(), Origin::Page).await;
            match outcome {
                // A retried request's second failure is the machine's `AlreadyRetried`: never a loop.
                RefreshOutcome::Retry { .. } => AfterFetch::Retry,
                RefreshOutcome::Reject(_) => AfterFetch::Keep,
            }
        })
    }

    /// It only sends and retries: a stored answer never reaches it.
    fn shapes_cached_answers(&self) -> bool {
        false
    }
}
