//! The devtools methods of `window.cachet` (not in SPEC), over `cachet_client::devtools`:
//!
//! | `window.cachet.` | Resolves to |
//! |---|---|
//! | `getSnapshot({ after?, limit?, tag?, operation?, partition? })` | the Service Worker's snapshot: `{ build, config, online, identity, entries: { items, next, scanned }, tags, queue: { online, pending, inFlight, deadLetters }, problems, notStored: [{ url, request, reason, why, at }], ignoredPushes: [why] }` |
//! | `deadLetters()` | `[{ id, operation, variables, attempts, reason, at }]` |
//! | `retryDeadLetters(ids)`, `discardDeadLetters(ids)` | `undefined`; rejects (`kind: 'service-worker'`) naming an id that is not a dead letter |
//! | `dropEntries(urls)` | `undefined` |
//! | `replayQueue()` | `undefined` |
//! | `clearCaches()` | `undefined`: every cachet cache, the index and the queue emptied; the user stays signed in |

use cachet_client::Error;
use cachet_core::protocol::SnapshotQuery;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::convert::to_json;
use crate::{client, fail, promise};

/// A JS value that must be an array of `T`, else an `invalid` error naming `what`.
fn list<T: serde::de::DeserializeOwned>(value: &JsValue, what: &str) -> Result<Vec<T>, JsValue> {
    serde_json::from_value(to_json(value)).map_err(|error| {
        fail(Error::InvalidArgument { what: what.to_owned(), expected: "an array", got: error.to_string() })
    })
}

/// `getSnapshot(query)`.
#[wasm_bindgen(js_name = getSnapshot)]
pub fn get_snapshot(query: JsValue) -> js_sys::Promise {
    promise(async move {
        let query: SnapshotQuery = match to_json(&query) {
            Value::Null => SnapshotQuery::default(),
            value => serde_json::from_value(value).map_err(|error| {
                fail(Error::InvalidArgument {
                    what: "getSnapshot query".to_owned(),
                    expected: "{ tag, urlContains, after, limit }",
                    got: error.to_string(),
                })
            })?,
        };
        let snapshot = client()?.devtools_snapshot(query).await.map_err(fail)?;
        Ok(snapshot_to_js(&snapshot))
    })
}

/// The snapshot as a JS object: its JSON written by hand (the worker's writer), parsed by the browser.
fn snapshot_to_js(snapshot: &cachet_core::protocol::StateSnapshot) -> JsValue {
    // The text is JSON cachet wrote: it parses.
    js_sys::JSON::parse(&snapshot.to_json()).unwrap_or(JsValue::NULL)
}

/// `deadLetters()`: the snapshot's `queue.deadLetters`, as `getSnapshot` shows them.
#[wasm_bindgen(js_name = deadLetters)]
pub fn dead_letters() -> js_sys::Promise {
    promise(async move {
        let query = SnapshotQuery { limit: 1, ..SnapshotQuery::default() };
        let snapshot = snapshot_to_js(&client()?.devtools_snapshot(query).await.map_err(fail)?);
        let queue = js_sys::Reflect::get(&snapshot, &"queue".into())?;
        js_sys::Reflect::get(&queue, &"deadLetters".into())
    })
}

/// `retryDeadLetters(ids)`.
#[wasm_bindgen(js_name = retryDeadLetters)]
pub fn retry_dead_letters(ids: JsValue) -> js_sys::Promise {
    promise(async move {
        let ids: Vec<u64> = list(&ids, "retryDeadLetters ids")?;
        client()?.retry_dead_letters(&ids).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `discardDeadLetters(ids)`.
#[wasm_bindgen(js_name = discardDeadLetters)]
pub fn discard_dead_letters(ids: JsValue) -> js_sys::Promise {
    promise(async move {
        let ids: Vec<u64> = list(&ids, "discardDeadLetters ids")?;
        client()?.discard_dead_letters(&ids).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `dropEntries(urls)`.
#[wasm_bindgen(js_name = dropEntries)]
pub fn drop_entries(urls: JsValue) -> js_sys::Promise {
    promise(async move {
        let urls: Vec<String> = list(&urls, "dropEntries urls")?;
        client()?.drop_entries(&urls).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `replayQueue()`.
#[wasm_bindgen(js_name = replayQueue)]
pub fn replay_queue() -> Result<(), JsValue> {
    client()?.replay_queue();
    Ok(())
}

/// `clearCaches()`.
#[wasm_bindgen(js_name = clearCaches)]
pub fn clear_caches() -> js_sys::Promise {
    promise(async move { client()?.clear_caches().await.map_err(fail).map(|()| JsValue::UNDEFINED) })
}
