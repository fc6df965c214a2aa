//! Messages from pages (`navigator.serviceWorker.controller.postMessage(text)`), answered to the page
//! that sent them with [`SwToPage::Ack`] / [`SwToPage::Nack`].
//!
//! | message | what the engine does |
//! |---|---|
//! | `clear-all {requestId}` | [`clear_all`], then acks and broadcasts `clear-all-done {requestId}` |
//! | `invalidate-tags {requestId, tags}` | bumps the generations of `tags` (every entry carrying one is absent from then on), broadcasts `cache-invalidated`, acks; the stale entries are deleted after, in `waitUntil` ([`super::sweep`]) |
//! | `set-identity {requestId, partition, authorization?}` | persists the signed-in user and the fingerprint of their `Authorization` (`cachet_core::partition`), acks; an unusable partition is nacked |
//! | `config-request {requestId}` | answers `config {requestId, config, build}`: the config this worker runs on |
//! | `connectivity-changed {online}`, `replay-queue` | feeds the offline mutation queue (see [`super::queue`]); no answer |
//! | `queue-alarm-request {requestId, online}` | answers `queue-alarm {requestId, checkAt}` by the core's rule on the stored queue (`QueueState::alarm`), then replays when the head is due; nacks a queue it cannot read |
//! | `snapshot-request {requestId, query}` | answers `snapshot {requestId, snapshot}`: one page of what it holds (`snapshot`) |
//! | `retry-dead-letters {requestId, ids}`, `discard-dead-letters {requestId, ids}` | acts on dead letters (`dead_letters`), acks (then a retry replays), nacks an unknown id |
//! | `drop-entries {requestId, urls}` | removes those entries from cachet's caches and the index, acks |
//!
//! The four devtools messages above need the `devtools` feature; a worker built without it nacks them
//! with [`Error::NotBuilt`], naming the feature.
//! | `hand-over {requestId, entries}` | keeps the answers a page stored before this worker controlled it, as it would have ([`super::handover`]), acks; nacks more than 32 entries |
//! | any other kind | reported on the console: it is not handled by this build |
//!
//! A message that does not decode (garbage, another protocol version) is reported on the console and
//! dropped: without a decodable `requestId` there is nobody to answer.

use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::protocol::{decode_message, encode_message, PageToSw, SwEvent, SwToPage};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Client, ExtendableMessageEvent};

use super::broadcast::broadcast;
use super::http::await_js;
use super::invalidate::invalidate_everywhere;
#[cfg(feature = "queue")]
use super::queue;
use super::queue::Trigger;
use super::store::{cache_storage, exclusive_writes, note_invalidation};
#[cfg(all(feature = "devtools", feature = "queue"))]
use super::dead_letters;
#[cfg(feature = "devtools")]
use super::snapshot;
use super::{handover, identity, queue_store, tag_index};
use crate::Error;
use cachet_core::engine::key::CACHES;

/// Handles one `message` event: decodes it, carries it out ([`reply`]), answers the page that sent it.
pub(crate) async fn handle_message(event: &ExtendableMessageEvent, config: &Rc<Config>) {
    let text = event.data().as_string().unwrap_or_default();
    let message = match decode_message::<PageToSw>(&text) {
        Ok(message) => message,
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: dropped a page message: {error}").into());
            return;
        }
    };
    let background = |promise: js_sys::Promise| {
        let _ = event.wait_until(&promise);
    };
    let (answer_with, then_replay) = match reply(message, config, &background).await {
        Reply::Answer(reply) => (Some(reply), None),
        Reply::AnswerThenReplay(reply) => (Some(reply), Some(Trigger::Online)),
        Reply::Replay(trigger) => (None, Some(trigger)),
        Reply::Unknown => {
            // The wire text, not `{other:?}`: Debug output of the protocol enums costs the SW kilobytes.
            web_sys::console::warn_1(&format!("cachet: not supported by this build: {text}").into());
            (None, None)
        }
    };
    if let Some(reply) = answer_with {
        answer(event, &reply);
    }
    if let Some(trigger) = then_replay {
        replay(trigger, config, &background).await;
    }
}

/// What the worker does after carrying out a page's message.
#[non_exhaustive]
pub enum Reply {
    /// Answer the page that sent it.
    Answer(SwToPage),
    /// Answer it, then replay the mutation queue (dead letters were put back; the head is due).
    #[cfg_attr(not(feature = "queue"), allow(dead_code))]
    AnswerThenReplay(SwToPage),
    /// Feed the mutation queue; its events are broadcast, so nothing is answered.
    Replay(Trigger),
    /// A kind this build does not know (reported on the console).
    Unknown,
}

/// Carries out `message` (the table of this module) and says what to answer; work that may outlive the
/// answer (an invalidation's sweep) goes to `background` (the event's `waitUntil`).
pub async fn reply(message: PageToSw, config: &Rc<Config>, background: &dyn Fn(js_sys::Promise)) -> Reply {
    let (request_id, outcome) = match message {
        PageToSw::ClearAll { request_id } => (request_id, clear_all_and_announce(request_id).await),
        PageToSw::InvalidateTags { request_id, tags } => {
            (request_id, invalidate_everywhere(&tags, background).await)
        }
        PageToSw::SetIdentity { request_id, partition, authorization } => {
            (request_id, identity::set(partition, authorization).await)
        }
        PageToSw::ConfigRequest { request_id, config: page } => {
            // Listed here, not in the page: the page's wasm holds no difference listing.
            let differences = page.map(|page| config.differences_from_page(&page)).unwrap_or_default();
            let (config, build) = (super::config_text(), super::build_stamp());
            return Reply::Answer(SwToPage::Config { request_id, config, build, differences });
        }
        PageToSw::ConnectivityChanged { online } => {
            return Reply::Replay(if online { Trigger::Online } else { Trigger::Offline });
        }
        PageToSw::ReplayQueue => return Reply::Replay(Trigger::Online),
        #[cfg(feature = "queue")]
        PageToSw::QueueAlarmRequest { request_id, online } => return queue_alarm(request_id, online, config).await,
        // No queue: nothing to ask about again.
        #[cfg(not(feature = "queue"))]
        PageToSw::QueueAlarmRequest { request_id, .. } => {
            return Reply::Answer(SwToPage::QueueAlarm { request_id, check_at: None })
        }
        #[cfg(feature = "devtools")]
        PageToSw::SnapshotRequest { request_id, query } => {
            let snapshot = snapshot::take(&query, config).await.to_value();
            return Reply::Answer(SwToPage::Snapshot { request_id, snapshot });
        }
        #[cfg(all(feature = "devtools", feature = "queue"))]
        PageToSw::RetryDeadLetters { request_id, ids } => {
            let outcome = dead_letters::retry(ids, config).await;
            let retried = outcome.is_ok();
            let reply = acknowledgement(request_id, outcome);
            return if retried { Reply::AnswerThenReplay(reply) } else { Reply::Answer(reply) };
        }
        #[cfg(all(feature = "devtools", feature = "queue"))]
        PageToSw::DiscardDeadLetters { request_id, ids } => {
            (request_id, dead_letters::discard(ids, config).await)
        }
        #[cfg(all(feature = "devtools", not(feature = "queue")))]
        PageToSw::RetryDeadLetters { request_id, .. } | PageToSw::DiscardDeadLetters { request_id, .. } => {
            (request_id, Err(Error::NotBuilt { what: "the offline queue's dead letters", feature: "queue" }))
        }
        #[cfg(feature = "devtools")]
        PageToSw::DropEntries { request_id, urls } => (request_id, snapshot::drop_entries(&urls).await),
        // Without the devtools handlers, their messages are refused by name, so that a panel says why.
        #[cfg(not(feature = "devtools"))]
        PageToSw::SnapshotRequest { request_id, .. } => (request_id, not_built("snapshot-request")),
        #[cfg(not(feature = "devtools"))]
        PageToSw::RetryDeadLetters { request_id, .. } => (request_id, not_built("retry-dead-letters")),
        #[cfg(not(feature = "devtools"))]
        PageToSw::DiscardDeadLetters { request_id, .. } => (request_id, not_built("discard-dead-letters")),
        #[cfg(not(feature = "devtools"))]
        PageToSw::DropEntries { request_id, .. } => (request_id, not_built("drop-entries")),
        PageToSw::HandOver { request_id, entries } => (request_id, handover::handle(&entries, config).await),
        _ => return Reply::Unknown,
    };
    Reply::Answer(acknowledgement(request_id, outcome))
}

/// The refusal of a devtools message by a worker built without them.
#[cfg(not(feature = "devtools"))]
fn not_built(what: &'static str) -> Result<(), Error> {
    Err(Error::NotBuilt { what, feature: "devtools" })
}

/// `ack`, or `nack` with the error.
fn acknowledgement(request_id: u64, outcome: Result<(), Error>) -> SwToPage {
    match outcome {
        Ok(()) => SwToPage::Ack { request_id },
        Err(error) => SwToPage::Nack { request_id, message: error.to_string() },
    }
}

/// The answer to a page's queue alarm: when it should ask again, by the core's rule on the stored queue
/// (`QueueState::alarm`), and a replay after the answer when the head is due. A queue that cannot be
/// read is refused, naming why (the page asks again later; the next write of the queue salvages it).
#[cfg(feature = "queue")]
async fn queue_alarm(request_id: u64, online: bool, config: &Config) -> Reply {
    match queue_store::load(config.queue).await {
        Ok(state) => {
            let alarm = state.alarm(super::clock::now_ms(), online);
            let answer = SwToPage::QueueAlarm { request_id, check_at: alarm.check_at };
            if alarm.wake_now {
                Reply::AnswerThenReplay(answer)
            } else {
                Reply::Answer(answer)
            }
        }
        Err(error) => Reply::Answer(acknowledgement(request_id, Err(error))),
    }
}

/// Posts `reply` to the page that sent `event`.
fn answer(event: &ExtendableMessageEvent, reply: &SwToPage) {
    if let Some(client) = event.source().and_then(|source| source.dyn_into::<Client>().ok()) {
        if let Err(error) = client.post_message(&JsValue::from_str(&encode_message(reply))) {
            web_sys::console::error_1(&Error::js("Client.postMessage", error).to_string().into());
        }
    }
}

/// Feeds the mutation queue; its events are broadcast, so nothing is answered.
/// Without the queue, nothing to feed: what an earlier build left queued is named once per instance
/// (`queue_off::start_once`, which the message event runs).
async fn replay(trigger: Trigger, config: &Rc<Config>, background: &dyn Fn(js_sys::Promise)) {
    #[cfg(feature = "queue")]
    if let Err(error) = queue::replay(trigger, config, background).await {
        web_sys::console::error_1(&format!("cachet: replaying the mutation queue: {error}").into());
    }
    #[cfg(not(feature = "queue"))]
    let _ = (trigger, config, background);
}

/// [`clear_all`], then `clear-all-done {requestId}` to every page. A failed broadcast is reported, not
/// nacked: the purge itself is done.
async fn clear_all_and_announce(request_id: u64) -> Result<(), Error> {
    clear_all().await?;
    if let Err(error) = broadcast(&SwEvent::ClearAllDone { request_id }) {
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
    Ok(())
}

/// Purges everything cachet stored: the shim's request names (`super::names`), the runtime and GraphQL
/// caches, the entry index, the mutation queue (items, dead letters, records set aside as unreadable)
/// and the identity. The cached SW wasm stays (the worker needs it to restart offline), and caches that
/// are not cachet's are untouched.
pub async fn clear_all() -> Result<(), Error> {
    // A store on its way when the purge begins is not kept (see [`super::store::invalidations_begun`]).
    note_invalidation(None);
    super::names::forget_all().await?;
    let _writing = exclusive_writes().await;
    let index = tag_index::shared().await?;
    // First: whatever the deletes below leave if the worker stops halfway is already absent.
    super::generations::clear(&index).await?;
    let storage = cache_storage()?;
    for name in CACHES {
        await_js("caches.delete", storage.delete(name)).await?;
    }
    index.clear().await?;
    queue_store::clear().await?;
    identity::forget().await
}
