//! The offline queue as an engine plugin ([`cachet_core::engine::plugin`]), as Workbox's
//! background-sync plugin is: a mutation marked `X-Cachet-Queue-Offline: 1` whose send finds no network
//! is kept in the queue by `fetch_did_fail` ([`super::queue::enqueue`]), and `handler_did_error` answers
//! it with the 202 of a queued mutation, or with the 507 of a queue that refused it (full, storage
//! full). Only an enqueue that failed before it could answer (reported on the console) leaves the
//! network failure as the answer.

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::engine::plugin::{Call, Later, Plugin};
use cachet_core::engine::Mutation;
use js_sys::Promise;
use web_sys::{Request, Response};

use super::queue;

/// Queues one mutation when its send fails for lack of network.
pub(crate) struct QueueOffline {
    pub(crate) request: Request,
    pub(crate) body: Rc<[u8]>,
    pub(crate) mutation: Mutation,
    pub(crate) config: Rc<Config>,
    pub(crate) background: Rc<dyn Fn(Promise)>,
    /// The 202 once queued, or the 507 of a refusal.
    queued: RefCell<Option<Response>>,
}

impl QueueOffline {
    pub(crate) fn new(
        request: Request,
        body: Rc<[u8]>,
        mutation: Mutation,
        config: Rc<Config>,
        background: Rc<dyn Fn(Promise)>,
    ) -> Self {
        QueueOffline { request, body, mutation, config, background, queued: RefCell::new(None) }
    }
}

impl Plugin<Response> for QueueOffline {
    fn fetch_did_fail<'a>(&'a self, _call: &'a Call<'a>, _error: &'a dyn Display) -> Later<'a, ()> {
        Box::pin(async move {
            let queued = queue::enqueue(
                &self.request,
                &self.body,
                &self.mutation,
                true,
                &self.config,
                &*self.background,
            )
            .await;
            match queued {
                Ok(answer) => *self.queued.borrow_mut() = Some(answer),
                Err(error) => web_sys::console::error_1(&format!("cachet: not queued: {error}").into()),
            }
        })
    }

    fn handler_did_error<'a>(
        &'a self,
        _call: &'a Call<'a>,
        _error: &'a dyn Display,
    ) -> Later<'a, Option<Response>> {
        Box::pin(std::future::ready(self.queued.borrow_mut().take()))
    }

    /// It only keeps a mutation the network did not take: a stored answer never reaches it.
    fn shapes_cached_answers(&self) -> bool {
        false
    }
}
