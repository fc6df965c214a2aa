//! The queue alarm: the page keeps the offline mutation queue's schedule, because the Service Worker's
//! timers die with it (the browser stops an idle worker at will, even in the middle of a send).
//!
//! One tab of the origin at a time runs it: the one holding the Web Lock [`LOCK`] (the others wait for
//! it; a tab closed or reloaded hands it on). The holder asks the Service Worker when the queue's head
//! is next due (`{"v":1,"type":"queue-alarm-request","requestId":…,"online":…}`, which starts a stopped
//! worker): the worker answers by the core's rule (`QueueState::alarm`) on the queue it stored, and
//! replays at once when the head is due. The page then sleeps until the time it was given (again every
//! [`ALARM_RECHECK_MS`] while the head stays due), and asks again at once when the `cachet` channel
//! carries anything (`mutation-queued`, `mutation-failed {retryAt}`, `mutation-replayed`, ...) and
//! when the browser goes online. The decision is the core's and the queue the worker's: this module
//! only asks, waits and asks again. (Until session 26 the page read the worker's database itself: 3 KB
//! of its wasm; BENCHMARKS.md.)
//!
//! With no tab open, the Service Worker's own start (a page opened) and Background Sync replay.

use std::rc::Weak;

use cachet_core::machines::queue::{ask_again_after_silence, ALARM_RECHECK_MS};
use cachet_core::protocol::{PageToSw, SwToPage};
use futures::channel::mpsc;
use futures::future::{select, Either};
use futures::StreamExt;
use gloo::events::EventListener;

use crate::link::WorkerLink;
use crate::locks::{acquire, now_ms};
use crate::transport::Transport;
use crate::Error;

/// How long the alarm waits for the worker's answer before it asks again: a worker stopped while it
/// answered never answers (the page's own timeout, `service_worker_timeout`, is 10 s by default).
const ASK_WITHIN: std::time::Duration = std::time::Duration::from_millis(2 * ALARM_RECHECK_MS);

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
        let (mut reported, mut last) = (false, None);
        while let Some(client) = transport.upgrade() {
            let check_at = match ask(&client.link, window.navigator().on_line()).await {
                Ok(check_at) => check_at,
                // Stopped while it answered (the browser stops an idle worker at will; the question
                // waited ASK_WITHIN): the core's rule.
                Err(Error::ServiceWorkerSilent { .. }) => ask_again_after_silence(last, now_ms()),
                Err(error) => {
                    if !std::mem::replace(&mut reported, true) {
                        web_sys::console::warn_1(&format!("cachet: queue alarm: {error}").into());
                    }
                    Some(now_ms() + 10 * ALARM_RECHECK_MS)
                }
            };
            last = check_at;
            drop(client);
            let changed = changes.next();
            match check_at {
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
            // One question for a burst of events.
            while changes.try_recv().is_ok() {}
        }
        drop(listeners);
    });
}

/// The Service Worker's answer to the alarm's question ([`PageToSw::QueueAlarmRequest`]): when to ask
/// again at the latest (`None`: only when an event says the queue may have changed). `None` at once
/// without a Service Worker: a page it does not serve has no queue, and its `activated` broadcast is an
/// event.
async fn ask(link: &WorkerLink, online: bool) -> Result<Option<u64>, Error> {
    let Some(worker) = link.service_worker().await else {
        return Ok(None);
    };
    let asked = |request_id| PageToSw::QueueAlarmRequest { request_id, online };
    let answered = link.exchange(&worker, asked, Some(ASK_WITHIN)).await?;
    match answered.answer {
        SwToPage::QueueAlarm { check_at, .. } => Ok(check_at),
        _ => Err(answered.unexpected()),
    }
}
