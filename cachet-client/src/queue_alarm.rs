//! The queue alarm: the page keeps the offline mutation queue's schedule, because the Service Worker's
//! timers die with it (the browser stops an idle worker at will, even in the middle of a send).
//!
//! One tab of the origin at a time runs it: the one holding the Web Lock [`LOCK`] (the others wait for
//! it; a tab closed or reloaded hands it on). The holder reads the queue the Service Worker stored in
//! IndexedDB and does what the core's rule says ([`alarm_from_json`]: the rule of `QueueState::alarm`,
//! read straight from the stored text so that a page does not carry the whole decoder): post
//! `{"v":1,"type":"replay-queue"}` to the controller (which starts a stopped worker; the worker's start
//! replays what is due) when the head is due, again every [`ALARM_RECHECK_MS`] while it stays due, and
//! otherwise sleep until it is due. It reads the queue again at once when the `cachet` channel carries
//! anything (`mutation-queued`, `mutation-failed {retryAt}`, `mutation-replayed`, ...) and when the
//! browser goes online. The decision is the core's; this module only reads, waits and posts.
//!
//! With no tab open, the Service Worker's own start (a page opened) and Background Sync replay.

use std::rc::Weak;

use cachet_core::machines::queue::{alarm_from_json, Alarm, ALARM_RECHECK_MS};
use cachet_core::protocol::storage::{
    DATABASE as STORE_DATABASE, QUEUE as STORE_NAME, QUEUE_KEY as STORE_KEY,
};
use cachet_core::protocol::PageToSw;
use futures::channel::mpsc;
use futures::future::{select, Either};
use futures::StreamExt;
use gloo::events::EventListener;
use wasm_bindgen::{JsCast, JsValue};

use crate::locks::{acquire, now_ms};
use crate::transport::Transport;
use crate::Error;

/// The Web Lock held by the tab that runs the alarm.
pub const LOCK: &str = "cachet-queue-alarm";

/// Starts the alarm for the client whose transport is `transport` (it ends when the client is dropped). Without Web Locks every
/// tab runs it, which is harmless: a wake-up changes nothing in a worker already busy with the head.
pub(crate) fn start(transport: Weak<Transport>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let _held = match acquire(LOCK).await {
            Ok(guard) => guard,
            Err(error) => {
                web_sys::console::warn_1(&format!("cachet: queue alarm without a lock: {error}").into());
                None
            }
        };
        let (changed, mut changes) = mpsc::unbounded::<()>();
        let mut listeners = Vec::new();
        let channel = web_sys::BroadcastChannel::new("cachet").ok();
        for (target, name) in [(channel.as_deref(), "message"), (Some(window.as_ref()), "online")] {
            if let Some(target) = target {
                let changed = changed.clone();
                listeners.push(EventListener::new(target, name, move |_| {
                    let _ = changed.unbounded_send(());
                }));
            }
        }
        let mut reported = false;
        while let Some(client) = transport.upgrade() {
            let now = now_ms();
            let stored = read_queue().await.and_then(|text| match text {
                Some(text) => Ok(alarm_from_json(&text, now, window.navigator().on_line())?),
                None => Ok(Alarm { wake_now: false, check_at: None }),
            });
            let alarm = match stored {
                Ok(alarm) => alarm,
                Err(error) => {
                    if !std::mem::replace(&mut reported, true) {
                        web_sys::console::warn_1(&format!("cachet: queue alarm: {error}").into());
                    }
                    Alarm { wake_now: false, check_at: Some(now + 10 * ALARM_RECHECK_MS) }
                }
            };
            if alarm.wake_now {
                client.link.notify(&PageToSw::ReplayQueue);
            }
            drop(client);
            let changed = changes.next();
            match alarm.check_at {
                Some(at) => {
                    let delay = u32::try_from(at.saturating_sub(now_ms())).unwrap_or(u32::MAX);
                    let timer = gloo::timers::future::TimeoutFuture::new(delay);
                    if let Either::Left((None, _)) = select(changed, timer).await {
                        break;
                    }
                }
                None if changed.await.is_none() => break,
                None => {}
            }
            // One read for a burst of events.
            while changes.try_recv().is_ok() {}
        }
        drop(listeners);
    });
}

/// The queue's record as the Service Worker stored it (JSON text); `None` when it stored none yet. A page
/// never creates the database (a page without a Service Worker keeps none) nor upgrades it: it reads
/// only a database `indexedDB.databases()` lists, and then what is there ([`cachet_idb::read_existing`],
/// which aborts the creation if the database went in between). Listed first, not only aborted: an
/// aborted creation is a database for a moment, which the origin's own listing (and a worker opening it
/// at that moment) would see.
async fn read_queue() -> Result<Option<String>, Error> {
    if !database_exists().await? {
        return Ok(None);
    }
    let record = cachet_idb::read_existing(STORE_DATABASE, STORE_NAME, JsValue::from_str(STORE_KEY)).await;
    Ok(record
        .map_err(|error| Error::js("read the mutation queue", error))?
        .and_then(|value| value.as_string()))
}

/// Whether the origin has the queue's database (`indexedDB.databases()`).
async fn database_exists() -> Result<bool, Error> {
    let factory = web_sys::window()
        .map(|window| js_sys::Reflect::get(&window, &"indexedDB".into()))
        .transpose()
        .map_err(|e| Error::js("window.indexedDB", e))?
        .unwrap_or(JsValue::UNDEFINED);
    let databases = js_sys::Reflect::get(&factory, &"databases".into())
        .and_then(|databases| databases.dyn_into::<js_sys::Function>())
        .and_then(|databases| databases.call0(&factory))
        .map_err(|e| Error::js("indexedDB.databases", e))?;
    let list = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&databases))
        .await
        .map_err(|e| Error::js("indexedDB.databases", e))?;
    Ok(js_sys::Array::from(&list).iter().any(|info| {
        js_sys::Reflect::get(&info, &"name".into()).ok().and_then(|name| name.as_string()).as_deref()
            == Some(STORE_DATABASE)
    }))
}
