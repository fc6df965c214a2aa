//! What stands in for the offline mutation queue in a worker built without it (the cargo feature
//! `queue` off; cachet-kit turns it on by default). An app that never queues a mutation leaves it out:
//! the queue's replay, its store's writes and its answers are about 14 KB of the worker's gzipped wasm.
//!
//! - A `queueOffline` mutation is sent as any other; when its send fails ([`NotBuilt`], an engine plugin
//!   in the queue plugin's place), the page gets the 507 of a mutation not queued, reason
//!   `queue-not-built` (`cachet_core::machines::queue::NotQueued::NotBuilt`; the client's
//!   `Error::NotQueued`), and the console says why and what to turn on.
//! - The first event of each worker instance looks for mutations an earlier build queued
//!   ([`start_once`]): this build never sends them, so the console says how many wait there (a
//!   `clear-all` purges them, as it purges everything).
//! - The messages that feed the queue (`connectivity-changed`, `replay-queue`) are taken and do nothing,
//!   and a page's queue alarm is answered with no time to ask again (`super::messages`).

use std::cell::Cell;
use std::fmt::Display;
use std::rc::Rc;

use cachet_core::config::{Config, QueueBounds};
use cachet_core::engine::plugin::{Call, Later, Plugin};
use cachet_core::machines::queue::NotQueued;
use js_sys::Promise;
use web_sys::Response;

use super::http::not_queued_answer;
use super::queue_store;
use crate::Error;

/// In the queue plugin's place: answers a failed send with the 507 that says there is no queue.
pub(crate) struct NotBuilt;

impl Plugin<Response> for NotBuilt {
    fn handler_did_error<'a>(
        &'a self,
        call: &'a Call<'a>,
        error: &'a dyn Display,
    ) -> Later<'a, Option<Response>> {
        let detail = error.to_string();
        web_sys::console::error_1(
            &format!(
                "cachet: {} {} asked to be queued offline, but this Service Worker is built without the \
                 queue (the `queue` feature of cachet-kit), and its send failed: {detail}",
                call.method, call.url
            )
            .into(),
        );
        Box::pin(std::future::ready(not_queued_answer(NotQueued::NotBuilt, &detail).ok()))
    }

    /// It only answers a mutation the network did not take: a stored answer never reaches it.
    fn shapes_cached_answers(&self) -> bool {
        false
    }
}

thread_local! {
    // Whether this worker instance has looked for mutations an earlier build queued.
    static LOOKED: Cell<bool> = const { Cell::new(false) };
}

/// Once per worker instance (the queue's start trigger in a build with it): says on the console how many
/// mutations an earlier build left queued ([`stranded`]), which this build never sends.
pub(crate) fn start_once(config: &Rc<Config>, background: &dyn Fn(Promise)) {
    if LOOKED.with(|looked| looked.replace(true)) {
        return;
    }
    let bounds = config.queue;
    background(wasm_bindgen_futures::future_to_promise(async move {
        match stranded(bounds).await {
            Ok(None) => {}
            Ok(Some(message)) => web_sys::console::error_1(&message.into()),
            Err(error) => web_sys::console::error_1(&format!("cachet: {error}").into()),
        }
        Ok(wasm_bindgen::JsValue::UNDEFINED)
    }));
}

/// What [`start_once`] says when an earlier build left mutations or dead letters in the stored queue;
/// `None` when it holds none.
pub async fn stranded(bounds: QueueBounds) -> Result<Option<String>, Error> {
    let state = queue_store::load(bounds).await?;
    if state.items.is_empty() && state.dead_letters.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "cachet: {} queued mutations and {} dead letters wait in this site's storage, and this Service \
         Worker, built without the queue (the `queue` feature of cachet-kit), never sends them",
        state.items.len(),
        state.dead_letters.len()
    )))
}
