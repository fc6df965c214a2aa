//! The offline mutation queue (`queueOffline`): the edge over the pure reducer
//! [`cachet_core::machines::queue`], which decides everything (order, one in flight, outcomes, backoff,
//! dead letters). This module feeds it events, stores each new state ([`super::queue_store`]) and
//! carries out its effects.
//!
//! # Queueing
//!
//! A GraphQL mutation carrying `X-Cachet-Queue-Offline: 1` is queued when its send fails for lack of
//! network (the `fetch` rejects), and also, without trying the network, while earlier queued mutations
//! still wait: a later mutation never overtakes an earlier one. The page then gets status **202** with
//! `X-Cachet-Queued: <id>`, `X-Cachet-Source: queue` and the body
//! [`queued_body`](cachet_core::machines::queue::queued_body), and `mutation-queued {id, operationName}`
//! is broadcast. A full queue (`queue.maxItems`) or a queue that cannot be written (storage full even
//! after freeing the caches, see `queue_store::transition`) queues nothing and sends nothing: the page
//! gets status **507** with `X-Cachet-Not-Queued: queue-full | storage-full | unwritable`,
//! `X-Cachet-Source: queue` and a GraphQL error saying so
//! ([`not_queued_body`](cachet_core::machines::queue::not_queued_body)), never a silent loss.
//!
//! What is stored: method, URL, body, the operation name, the tags to invalidate, and the request's
//! headers except `Authorization` (tokens are never persisted) and `X-Cachet-Queue-Offline`. cachet's
//! other headers stay stored (`X-Cachet-Auth: 1` marks an authenticated mutation) and are stripped at
//! each send like every `X-Cachet-*` header. A replay is sent with the browser's default credentials
//! for the same origin, so a session cookie goes with it as it went with the original.
//!
//! # Replaying
//!
//! | trigger | event for the reducer |
//! |---|---|
//! | a mutation queued after a network failure | `Offline`, then `Enqueue` |
//! | the first event a worker instance handles (start, restart after being stopped; a `fetch` once its answer is ready) | `Online` if `navigator.onLine`, else nothing |
//! | page message `connectivity-changed {online: true}` / `replay-queue` | `Online` |
//! | page message `connectivity-changed {online: false}` | `Offline` |
//! | Background Sync `sync` with tag `cachet-queue` (registered at each enqueue where the API exists) | `Online`; the event fails, so the browser tries again later, while items remain |
//! | a page's queue alarm (`replay-queue`, see below) | `Online` |
//! | the wake-up timer of a backoff | `Wake` |
//! | a replay failed for lack of network | `SendFailed`, then `Offline` (no timer burns attempts while offline) |
//!
//! Replays go one at a time, head first, and only when due (`nextAttemptAt`). A 2xx answer is a success:
//! the mutation's tags are invalidated exactly as for a live mutation (`cache-invalidated {tags}`), then
//! `mutation-replayed`. An auth failure (per `features.auth.failure`, when auth is enabled) asks for a
//! refresh: cookie auth has none, so the reducer backs off and a second auth failure dead-letters it.
//!
//! # Bearer auth
//!
//! The stored request has no token. Before each send of a mutation marked `X-Cachet-Auth: 1` under
//! bearer (or custom) auth, a page is asked for its current `Authorization`
//! (`refresh-request {failed: null}`, see `super::page_auth`), which rides on that one send and is
//! dropped. On an auth failure the page is asked to refresh the token that failed
//! (`refresh-request {failed: <fingerprint>}`); with fresh auth the mutation is sent once more at once,
//! without, it backs off. With no page open (a `sync` event with every tab closed) it is not sent: it
//! is not sent and waits for a page (SPEC §5.8: background sync needs cookie auth).
//! Other 4xx (but 408 and 429) are dead-lettered at once (`mutation-dead-lettered`); network failures,
//! 408, 429 and 5xx back off (`mutation-failed {attempts, retryAt}`) until `queue.maxAttempts`.
//!
//! With no page to ask, or a page that has no auth (logged out), it is not sent
//! ([`SendFailure::NotSent`]): not an attempt, no timer; a page's alarm or the next trigger tries again.
//!
//! # Delivery
//!
//! Each item carries the `Idempotency-Key` header the reducer gave it at enqueue (from 128 bits of
//! `crypto.getRandomValues`), stored with it and sent with every replay of it. A worker stopped in the
//! middle of a send (between the server's answer and the write that removes the item, say) sends it again
//! with the same key, and that costs no attempt: delivery is at least once, and exactly once where the
//! server keeps the first answer under the key (the example backend does).
//!
//! The worker's own wake-up timer dies with the worker. The schedule lives in the stored queue, and the
//! open pages keep it: one tab at a time (Web Lock `cachet-queue-alarm`) runs the client's queue alarm,
//! which reads the stored queue and posts `replay-queue` when the core's
//! [`QueueState::alarm`](cachet_core::machines::queue::QueueState::alarm) says so (the head due, and again
//! every second while it stays due). With every tab closed, the start of the worker (a page opened) and
//! Background Sync replay.

use std::cell::Cell;
use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::engine::mutation::{kept_headers, Mutation};
use cachet_core::machines::queue::{NotQueued, QueueEffect, QueueEvent, QueuedRequest};
use cachet_core::protocol::SwEvent;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Request, Response};

use super::broadcast::broadcast;
use super::clock::{now_ms, random, random_u128};
use super::http::{header_pairs, not_queued_answer, queued_answer};
use super::invalidate::invalidate_everywhere;
use super::queue_send::{refresh, send, SentWith};
use super::queue_store;
use crate::Error;

/// The Background Sync tag the queue registers.
pub const SYNC_TAG: &str = "cachet-queue";

/// What starts a replay.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The first event of a worker instance.
    Start,
    /// The page says the browser is online (`connectivity-changed {online: true}`), asks for a replay
    /// (`replay-queue`), or the Background Sync `sync` event came.
    Online,
    /// The page says the browser is offline.
    Offline,
    /// A backoff's wake-up timer, as the tests fire it (the worker's own timer is `Work::WakeAt`).
    #[cfg(feature = "test-support")]
    Timer,
}

/// Whether earlier queued mutations still wait. An unreadable queue may hold some: it counts as
/// pending (reported), so that the new mutation queues behind what the queue's next write salvages.
pub(crate) async fn has_pending(config: &Config) -> bool {
    match queue_store::load(config.queue).await {
        Ok(state) => !state.items.is_empty(),
        Err(error) => {
            web_sys::console::error_1(&format!("cachet: {error}").into());
            true
        }
    }
}

/// Queues the mutation `request` (whose body is `body`) and answers it with the 202 of a queued
/// mutation, or, when the queue refused it (full, or storage full even after freeing cache space), with
/// the 507 that says why (nothing was kept, nothing was sent). `after_network_failure`: its send just failed
/// for lack of network, so the queue holds off until a trigger says the network is back.
pub(crate) async fn enqueue(
    request: &Request,
    body: &[u8],
    mutation: &Mutation,
    after_network_failure: bool,
    config: &Config,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    let queued = QueuedRequest {
        method: request.method(),
        url: request.url(),
        headers: kept_headers(header_pairs(&request.headers())),
        body: String::from_utf8_lossy(body).into_owned(),
        operation_name: mutation.operation.clone(),
        invalidate: mutation.invalidate.clone(),
    };
    let now = now_ms();
    let random = random_u128();
    let effects = queue_store::transition(config, &|state| {
        let state = if after_network_failure { state.reduce(QueueEvent::Offline).0 } else { state };
        state.reduce(QueueEvent::Enqueue { request: queued.clone(), now, random })
    })
    .await;
    let effects = match effects {
        Ok(effects) => effects,
        Err(error) => {
            web_sys::console::error_1(&format!("cachet: not queued: {error}").into());
            let reason = match queue_store::is_storage_full(&error) {
                true => NotQueued::StorageFull,
                false => NotQueued::Unwritable,
            };
            return not_queued_answer(reason, &error.to_string());
        }
    };
    let queued_id = effects.iter().find_map(|effect| match effect {
        QueueEffect::Announce(SwEvent::MutationQueued { id, .. }) => Some(*id),
        _ => None,
    });
    let Some(id) = queued_id else {
        web_sys::console::warn_1(&"cachet: not queued: the mutation queue is full (queue.maxItems)".into());
        return not_queued_answer(NotQueued::QueueFull, "");
    };
    background(wasm_bindgen_futures::future_to_promise(register_sync()));
    spawn(background, Rc::new(config.clone()), Work::Run(effects));
    queued_answer(id)
}

/// Runs a replay for `trigger`: feeds the reducer and carries out what it decides, sending due items
/// one at a time until none is due. Background work (a wake-up timer) goes to `background`.
pub async fn replay(
    trigger: Trigger,
    config: &Rc<Config>,
    background: &dyn Fn(Promise),
) -> Result<(), Error> {
    drive(Work::Replay(trigger), config, background).await
}

/// Carries out `work`: one place for every way a replay starts.
async fn drive(work: Work, config: &Rc<Config>, background: &dyn Fn(Promise)) -> Result<(), Error> {
    let now = now_ms();
    let event = match work {
        Work::Run(effects) => {
            run(effects, config.clone(), background).await;
            return Ok(());
        }
        Work::WakeAt(at) => {
            sleep_until(at).await?;
            TIMER_AT.with(|timer| {
                if timer.get() == Some(at) {
                    timer.set(None);
                }
            });
            QueueEvent::Wake { now: now_ms() }
        }
        Work::Replay(Trigger::Start) if !navigator_online() => return Ok(()),
        Work::Replay(Trigger::Start | Trigger::Online) => QueueEvent::Online { now },
        Work::Replay(Trigger::Offline) => QueueEvent::Offline,
        #[cfg(feature = "test-support")]
        Work::Replay(Trigger::Timer) => QueueEvent::Wake { now },
    };
    let effects = queue_store::transition(config, &|state| state.reduce(event.clone())).await?;
    run(effects, config.clone(), background).await;
    Ok(())
}

/// The Background Sync `sync` event: replays, then fails while items remain, so that the browser tries
/// again later (it backs off on its own), unless this was its last chance.
pub async fn sync(config: &Rc<Config>, last_chance: bool, background: &dyn Fn(Promise)) -> Result<(), Error> {
    replay(Trigger::Online, config, background).await?;
    let state = queue_store::load(config.queue).await?;
    if state.items.is_empty() || last_chance {
        Ok(())
    } else {
        Err(Error::Context("mutations remain queued; the browser will sync again"))
    }
}

thread_local! {
    // Whether this worker instance has run its start replay; a new instance starts with `false`.
    static STARTED: Cell<bool> = const { Cell::new(false) };
    // The time the pending wake-up timer fires, to set one timer rather than one per trigger. Losing it
    // (the worker stopped) loses nothing: the next trigger reads the queue again.
    static TIMER_AT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The start trigger, once per worker instance: call it from every event the engine handles.
pub(crate) fn start_once(config: &Rc<Config>, background: &dyn Fn(Promise)) {
    if !STARTED.with(|started| started.replace(true)) {
        spawn(background, config.clone(), Work::Replay(Trigger::Start));
    }
}

/// Queue work done in the background of an event.
enum Work {
    /// Wait until this time (Unix ms), then replay for [`Trigger::Timer`].
    WakeAt(u64),
    /// Replay for this trigger.
    Replay(Trigger),
    /// Carry out these effects.
    Run(Vec<QueueEffect>),
}

/// Does `work` as one promise handed to `background` (`waitUntil`). The promises the work hands on
/// (a wake-up timer) are awaited at its end: once the event is over, only a promise it is still waiting
/// for may add to its `waitUntil`.
fn spawn(background: &dyn Fn(Promise), config: Rc<Config>, work: Work) {
    background(wasm_bindgen_futures::future_to_promise(async move {
        let collected = std::cell::RefCell::new(Vec::new());
        drive(work, &config, &|promise: Promise| collected.borrow_mut().push(promise)).await?;
        loop {
            let Some(promise) = collected.borrow_mut().pop() else { break };
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        }
        Ok(JsValue::UNDEFINED)
    }));
}

/// Carries out `effects`, and those that follow from each send's outcome, until nothing is sent. A
/// wake-up time asked for on the way becomes a timer handed to `background`.
async fn run(mut effects: Vec<QueueEffect>, config: Rc<Config>, background: &dyn Fn(Promise)) {
    let mut wake_at = None;
    // The auth the last send carried: a refresh names it to the page.
    let mut sent_with = SentWith::default();
    loop {
        let mut next = None;
        for effect in effects {
            match effect {
                // Written by `transition` before any effect is carried out.
                QueueEffect::Persist | QueueEffect::Refused(_) => {}
                QueueEffect::Announce(event) => report(broadcast(&event)),
                QueueEffect::Invalidate { tags } => report(invalidate_everywhere(&tags, background).await),
                QueueEffect::WakeAt { at } => wake_at = Some(at),
                QueueEffect::RequestRefresh { .. } => {
                    let ok = refresh(&config, std::mem::take(&mut sent_with)).await;
                    next = Some(QueueEvent::RefreshFinished { ok, now: now_ms(), random: random() })
                }
                QueueEffect::Send { id, request } => {
                    let (outcome, sent) = send(id, &request, &config).await;
                    sent_with = sent;
                    next = Some(outcome);
                }
            }
        }
        let Some(event) = next else { break };
        let outcome = queue_store::transition(&config, &|state| state.reduce(event.clone())).await;
        match outcome {
            Ok(following) => effects = following,
            Err(error) => {
                // The outcome is lost with the write; the stored item is sent again by a later trigger.
                report::<()>(Err(error));
                break;
            }
        }
    }
    if let Some(at) = wake_at {
        schedule_wake(at, config, background);
    }
}

/// Sets the wake-up timer for `at` unless one fires earlier, kept alive through `background`.
fn schedule_wake(at: u64, config: Rc<Config>, background: &dyn Fn(Promise)) {
    if TIMER_AT.with(Cell::get).is_some_and(|pending| pending <= at) {
        return;
    }
    TIMER_AT.with(|timer| timer.set(Some(at)));
    spawn(background, config, Work::WakeAt(at));
}

async fn sleep_until(at: u64) -> Result<(), Error> {
    super::http::timer(at.saturating_sub(now_ms())).await
}

/// Registers the Background Sync `sync` for the queue, where the browser has the API.
async fn register_sync() -> Result<JsValue, JsValue> {
    let global = js_sys::global();
    let sync = js_sys::Reflect::get(&global, &"registration".into())
        .and_then(|registration| js_sys::Reflect::get(&registration, &"sync".into()));
    let Ok(sync) = sync else { return Ok(JsValue::UNDEFINED) };
    let Ok(register) = js_sys::Reflect::get(&sync, &"register".into()) else {
        return Ok(JsValue::UNDEFINED);
    };
    let Some(register) = register.dyn_ref::<js_sys::Function>() else {
        return Ok(JsValue::UNDEFINED);
    };
    if let Ok(promise) = register.call1(&sync, &SYNC_TAG.into()) {
        // Refused without a controlled page, or by the user's settings: the other triggers remain.
        let _ = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&promise)).await;
    }
    Ok(JsValue::UNDEFINED)
}

fn navigator_online() -> bool {
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    global.navigator().on_line()
}

fn report<T>(outcome: Result<T, Error>) {
    if let Err(error) = outcome {
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
}
