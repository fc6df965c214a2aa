//! Where the offline mutation queue lives: one IndexedDB record holding the whole
//! [`QueueState`] as JSON text ([`QueueState::to_json`]), in the worker's one database ([`cachet_core::protocol::storage`]).
//!
//! Every change is a read-modify-write inside one `readwrite` transaction ([`update`]): IndexedDB runs
//! such transactions on the same store one after the other, so two events handled at the same time (two
//! mutations queued at once, a replay and a `clear-all`) never lose each other's changes, and the new
//! state is committed before anything it decided is carried out or announced. A change that changes
//! nothing writes nothing, and the database stays open for the worker instance's life (`sw::database`): the
//! write that records a replay's outcome is the worker's share of the window in which a stopped worker
//! forgets a mutation the server applied (RELIABILITY.md).
//!
//! A record that does not decode (a corrupt write, a record of a future build) is never overwritten: it
//! is moved aside under `unreadable-<time>`, whole, and the error naming it is reported. What can be
//! read of it item by item ([`QueueState::salvage_json`]) stays queued, each item left out reported by
//! name; a record with nothing to tell apart (cut short) leaves the queue empty. `clear-all` ([`clear`]) removes those too: they hold mutation bodies, which are user data.
//!
//! A write the browser refuses for room (`QuotaExceededError`, or the transaction aborted at commit) makes
//! room at cachet's caches, never at the queue: `transition` evicts the least recently used half of
//! each cache and tries once more. The queue is never dropped for room.
//!
//! The state a Service Worker instance reads first is read with [`QueueState::from_json`], which forgets
//! the item in flight: the instance that was sending it is gone (at-least-once delivery). Later reads in
//! the same instance ([`QueueState::from_json_as_written`]) keep it, so that a second trigger never sends
//! the head while it is on its way.

use std::cell::Cell;

use cachet_core::config::{Config, QueueBounds};
use cachet_core::machines::queue::{QueueEffect, QueueState};
use cachet_idb::TransactionMode;
use wasm_bindgen::JsValue;

use super::database;
use super::store::make_room;
use crate::error::{commit, idb};
use crate::Error;

/// The queue's object store in the worker's database (out-of-line keys). Only the worker reads it: a
/// page's queue alarm asks the worker (`queue-alarm-request`).
pub const STORE: &str = cachet_core::protocol::storage::QUEUE;
/// The key of the queue's record.
pub const STATE_KEY: &str = cachet_core::protocol::storage::QUEUE_KEY;
/// The prefix of the keys records that did not decode are kept under.
pub const UNREADABLE_PREFIX: &str = "unreadable-";

thread_local! {
    // Whether this instance of the worker has read the queue yet (see the module docs). Not state: a new
    // instance starts with `false`, which is the point.
    static READ_BY_THIS_INSTANCE: Cell<bool> = const { Cell::new(false) };
}

/// A transaction on the queue's store, on the worker's one connection ([`database`]: opened once per
/// instance, since opening costs more than the read-modify-write of a replay's outcome, 1–9 ms against
/// 1–3 ms in Chromium, measured for issue 31, and that write is the window in which a stopped worker
/// forgets a mutation the server applied).
async fn transaction(mode: TransactionMode) -> Result<cachet_idb::Transaction, Error> {
    database::transaction(&[STORE], mode).await
}

/// Decodes a stored queue record; the bounds always come from the current config.
fn decode(value: &JsValue, bounds: QueueBounds) -> Result<QueueState, Error> {
    let text = value.as_string().ok_or(cachet_core::Error::StoredState {
        what: "mutation queue",
        message: "the record is not JSON text".to_owned(),
    })?;
    let mut state = if READ_BY_THIS_INSTANCE.with(Cell::get) {
        QueueState::from_json_as_written(&text)?
    } else {
        QueueState::from_json(&text)?
    };
    state.bounds = bounds;
    Ok(state)
}

/// What can be read of an unreadable record (kept aside as `aside`), item by item: the readable items
/// stay queued, each one left out is reported by name; nothing readable, an empty queue.
fn salvage(value: &JsValue, bounds: QueueBounds, error: &Error, aside: &str) -> QueueState {
    let report = |message: String| web_sys::console::error_1(&message.into());
    let Some((mut state, left_out)) = value.as_string().and_then(|text| QueueState::salvage_json(&text))
    else {
        report(format!("cachet: {error}; kept as {aside}, starting empty"));
        return QueueState::new(bounds, true);
    };
    for left in left_out {
        report(format!("cachet: {left}; left out of the queue, kept as {aside}"));
    }
    report(format!("cachet: {error}; kept as {aside}, {} readable items stay queued", state.items.len()));
    if !READ_BY_THIS_INSTANCE.with(Cell::get) {
        state.in_flight = None;
        state.awaiting_refresh = None;
    }
    state.bounds = bounds;
    state
}

/// The stored queue, or an empty one (online) when nothing is stored. A record that does not decode is
/// [`Error::Core`] with [`cachet_core::Error::StoredState`] naming what was wrong; nothing is changed.
pub async fn load(bounds: QueueBounds) -> Result<QueueState, Error> {
    let transaction = transaction(TransactionMode::Readonly).await?;
    let store = transaction.store(STORE).map_err(idb("mutation queue store"))?;
    match store.get(JsValue::from_str(STATE_KEY)).await.map_err(idb("read the mutation queue"))? {
        Some(value) => decode(&value, bounds),
        None => Ok(QueueState::new(bounds, true)),
    }
}

/// Reads the queue, applies `change` and writes the result, in one transaction; returns the effects
/// `change` returned. An unreadable record is moved aside first (see the module docs) and `change` gets
/// an empty queue. Fails, leaving the stored queue as it was, when the write does not commit (for example
/// storage is full).
pub async fn update(
    bounds: QueueBounds,
    change: &dyn Fn(QueueState) -> (QueueState, Vec<QueueEffect>),
) -> Result<Vec<QueueEffect>, Error> {
    let transaction = transaction(TransactionMode::Readwrite).await?;
    let store = transaction.store(STORE).map_err(idb("mutation queue store"))?;
    let key = JsValue::from_str(STATE_KEY);
    let stored = store.get(key.clone()).await.map_err(idb("read the mutation queue"))?;
    let stored_text = stored.as_ref().and_then(JsValue::as_string);
    let state = match stored {
        None => QueueState::new(bounds, true),
        Some(value) => match decode(&value, bounds) {
            Ok(state) => state,
            Err(error) => {
                let aside = format!("{UNREADABLE_PREFIX}{}", js_sys::Date::now() as u64);
                store
                    .put(&value, Some(&aside.as_str().into()))
                    .await
                    .map_err(idb("keep an unreadable queue"))?;
                salvage(&value, bounds, &error, &aside)
            }
        },
    };
    let (state, effects) = change(state);
    let text = state.to_json();
    // A change that changed nothing (a page's `replay-queue` while the head is on its way, say) writes
    // nothing: the write would only hold up the one that records a replay's outcome.
    if stored_text.as_deref() != Some(text.as_str()) {
        store.put(&text.into(), Some(&key)).await.map_err(idb("write the mutation queue"))?;
    }
    commit(transaction, "commit the mutation queue").await?;
    READ_BY_THIS_INSTANCE.with(|read| read.set(true));
    Ok(effects)
}

/// [`update`] for a change of the queue's edge, before anything it decided is carried out. When the
/// write fails for room ([`is_storage_full`]), cachet's caches give way: the least recently used half
/// of each is evicted, then the write is tried once more. A write that still fails leaves the stored
/// queue as it was, and is the error.
pub(crate) async fn transition(
    config: &Config,
    change: &dyn Fn(QueueState) -> (QueueState, Vec<QueueEffect>),
) -> Result<Vec<QueueEffect>, Error> {
    match update(config.queue, change).await {
        Ok(effects) => Ok(effects),
        Err(first) if !is_storage_full(&first) => Err(first),
        Err(first) => {
            web_sys::console::warn_1(&format!("cachet: {first}; freeing cache space for the queue").into());
            if let Err(error) = make_room().await {
                web_sys::console::error_1(&format!("cachet: freeing cache space: {error}").into());
            }
            update(config.queue, change).await
        }
    }
}

/// Whether a failed queue write looks like a full storage: a `QuotaExceededError`, or a transaction that
/// aborted at commit (IndexedDB's way of reporting it).
pub(crate) fn is_storage_full(error: &Error) -> bool {
    // A byte window rather than `str::contains` with a text pattern, which links the two-way string
    // searcher (2 KB of the worker) for this one call.
    let quota = |message: &str| message.as_bytes().windows(13).any(|window| window == b"QuotaExceeded");
    matches!(error, Error::Js { name, message, .. } if name == "AbortError" || quota(message))
}

/// Purges the queue: its items and dead letters, and any record set aside as unreadable. The ids handed
/// out so far are not handed out again (a replay still on its way reports an id nobody has).
pub async fn clear() -> Result<(), Error> {
    // The bounds are the config's at every read; these are only written along.
    let bounds = QueueBounds::default();
    let transaction = transaction(TransactionMode::Readwrite).await?;
    let store = transaction.store(STORE).map_err(idb("mutation queue store"))?;
    let key = JsValue::from_str(STATE_KEY);
    let stored = store.get(key.clone()).await.map_err(idb("read the mutation queue"))?;
    let next_id = stored.and_then(|value| decode(&value, bounds).ok()).map_or(1, |state| state.next_id);
    store.clear().await.map_err(idb("clear the mutation queue"))?;
    let empty = QueueState { next_id, ..QueueState::new(bounds, true) };
    store.put(&empty.to_json().into(), Some(&key)).await.map_err(idb("write the mutation queue"))?;
    commit(transaction, "commit the mutation queue").await
}

/// The records set aside as unreadable, as `(key, text)` (for the tests).
#[cfg(feature = "test-support")]
pub async fn unreadable() -> Result<Vec<(String, String)>, Error> {
    let transaction = transaction(TransactionMode::Readonly).await?;
    let store = transaction.store(STORE).map_err(idb("mutation queue store"))?;
    let mut kept = Vec::new();
    for key in keys(&store).await? {
        if key.starts_with(UNREADABLE_PREFIX) {
            let value = store.get(key.as_str().into()).await.map_err(idb("read an unreadable record"))?;
            kept.push((key, value.and_then(|value| value.as_string()).unwrap_or_default()));
        }
    }
    Ok(kept)
}

#[cfg(feature = "test-support")]
async fn keys(store: &cachet_idb::Store) -> Result<Vec<String>, Error> {
    let keys = store.get_all_keys(None, None).await.map_err(idb("list the mutation queue"))?;
    Ok(keys.into_iter().filter_map(|key| key.as_string()).collect())
}
