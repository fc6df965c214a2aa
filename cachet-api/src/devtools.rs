//! The devtools methods of `window.cachet` (not in SPEC), over `cachet_client::devtools`:
//!
//! | `window.cachet.` | Resolves to |
//! |---|---|
//! | `getSnapshot({ after?, limit?, tag?, operation?, partition? })` | the Service Worker's snapshot as it wrote it: `{ build, config, online, identity, entries: { items, next, scanned }, tags, queue: { online, pending, inFlight, deadLetters }, problems, notStored: [{ url, request, reason, why, at }], ignoredPushes: [why] }` (a worker of an earlier build may leave out `notStored` and `ignoredPushes`) |
//! | `deadLetters()` | `[{ id, operation, variables, attempts, reason, at }]` |
//! | `retryDeadLetters(ids)`, `discardDeadLetters(ids)` | `undefined`; rejects (`kind: 'service-worker'`) naming an id that is not a dead letter |
//! | `dropEntries(urls)` | `undefined` |
//! | `replayQueue()` | `undefined` |
//! | `clearCaches()` | `undefined`: every cachet cache, the index and the queue emptied; the user stays signed in |

use cachet_client::Error;
use cachet_core::protocol::SnapshotQuery;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::convert::{stringify, text_of, to_js, to_json};
use crate::{client, fail, promise};

/// A JS value that must be an array whose every item `item` reads, else an `invalid` error naming
/// `what`, what it expects, and what it got (the value, or its first item of the wrong kind).
fn list<T>(
    value: &JsValue,
    what: &str,
    expected: &'static str,
    item: impl Fn(&Value) -> Option<T>,
) -> Result<Vec<T>, JsValue> {
    let value = to_json(value);
    let wrong =
        |got: &Value| fail(Error::InvalidArgument { what: what.to_owned(), expected, got: text_of(got) });
    let Value::Array(items) = &value else { return Err(wrong(&value)) };
    items.iter().map(|given| item(given).ok_or_else(|| wrong(given))).collect()
}

/// `getSnapshot(query)`.
#[wasm_bindgen(js_name = getSnapshot)]
pub fn get_snapshot(query: JsValue) -> js_sys::Promise {
    promise(async move {
        // Read from the browser's text by cachet-core, as the worker reads the query it is sent.
        let query = cachet_core::json::from_str(&stringify(&query)).unwrap_or(cachet_core::json::Value::Null);
        let query: SnapshotQuery = match query {
            cachet_core::json::Value::Null => SnapshotQuery::default(),
            value => SnapshotQuery::read(&value).map_err(|error| {
                fail(Error::InvalidArgument {
                    what: "getSnapshot query".to_owned(),
                    expected: "{ after, limit, tag, operation, partition }",
                    got: error.to_string(),
                })
            })?,
        };
        snapshot(query).await
    })
}

/// The worker's snapshot as a JS object, as the worker wrote it (`devtools_snapshot_tree`: the page
/// only shows it, so its wasm decodes it into no typed snapshot and writes none back).
async fn snapshot(query: SnapshotQuery) -> Result<JsValue, JsValue> {
    let tree = client()?.devtools_snapshot_tree(query).await.map_err(fail)?;
    Ok(to_js(&cachet_client::json::from_core(tree)))
}

/// `deadLetters()`: the snapshot's `queue.deadLetters`, as `getSnapshot` shows them.
#[wasm_bindgen(js_name = deadLetters)]
pub fn dead_letters() -> js_sys::Promise {
    promise(async move {
        let query = SnapshotQuery { limit: 1, ..SnapshotQuery::default() };
        let snapshot = snapshot(query).await?;
        let queue = js_sys::Reflect::get(&snapshot, &"queue".into())?;
        js_sys::Reflect::get(&queue, &"deadLetters".into())
    })
}

/// `retryDeadLetters(ids)`.
#[wasm_bindgen(js_name = retryDeadLetters)]
pub fn retry_dead_letters(ids: JsValue) -> js_sys::Promise {
    promise(async move {
        let ids = list(&ids, "retryDeadLetters ids", "an array of ids", Value::as_u64)?;
        client()?.retry_dead_letters(&ids).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `discardDeadLetters(ids)`.
#[wasm_bindgen(js_name = discardDeadLetters)]
pub fn discard_dead_letters(ids: JsValue) -> js_sys::Promise {
    promise(async move {
        let ids = list(&ids, "discardDeadLetters ids", "an array of ids", Value::as_u64)?;
        client()?.discard_dead_letters(&ids).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `dropEntries(urls)`.
#[wasm_bindgen(js_name = dropEntries)]
pub fn drop_entries(urls: JsValue) -> js_sys::Promise {
    promise(async move {
        let urls =
            list(&urls, "dropEntries urls", "an array of URLs", |url| url.as_str().map(str::to_owned))?;
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
