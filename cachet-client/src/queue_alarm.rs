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
//! when the browser goes online: the client's own listeners of that channel and of `online` poke it
//! ([`poke`]), and events that come while a question is out make one more question after it. The
//! decision is the core's and the queue the worker's: this module only asks, waits and asks again.
//! (Until session 26 the page read the worker's database itself: 3 KB of its wasm; until session 33
//! the alarm was a task of its own, with its own listeners, channel and timer future: 1.6 KB more;
//! until session 36 the lock, the timer and the one question out were Rust's, now `js/alarm.js`'s
//! `alarm`; BENCHMARKS.md.)
//!
//! With no tab open, the Service Worker's own start (a page opened) and Background Sync replay.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use cachet_core::machines::queue::{ask_again_after_silence, ALARM_RECHECK_MS};
use cachet_core::protocol::{PageToSw, SwToPage};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::link::WorkerLink;
use crate::locks::now_ms;
use crate::transport::Transport;
use crate::Error;

/// How long the alarm waits for the worker's answer before it asks again: a worker stopped while it
/// answered never answers (the page's own timeout, `service_worker_timeout`, is 10 s by default).
const ASK_WITHIN: std::time::Duration = std::time::Duration::from_millis(2 * ALARM_RECHECK_MS);

/// The Web Lock held by the tab that runs the alarm.
pub const LOCK: &str = "cachet-queue-alarm";

/// The alarm: what the questions need and the schedule of `js/alarm.js`'s `alarm`, which holds the
/// lock, the timer and the one question out (`crate::js::alarm`). Kept by the client: dropping it stops
/// the schedule and releases the lock.
pub(crate) struct Alarm {
    transport: Rc<Transport>,
    /// The last answer's time (for the core's rule after a silence).
    last: Cell<Option<u64>>,
    /// Whether an error was said on the console already (once per page).
    reported: Cell<bool>,
    /// The schedule's `poke`, and the question it calls, once started.
    schedule: RefCell<Option<(js_sys::Function, Question)>>,
}

/// The alarm's question, called by the schedule with the function that takes its answer.
type Question = Closure<dyn FnMut(js_sys::Function)>;

impl Drop for Alarm {
    fn drop(&mut self) {
        if let Some((poke, _)) = self.schedule.get_mut() {
            let _ = poke.call1(&JsValue::UNDEFINED, &JsValue::TRUE);
        }
    }
}

impl Alarm {
    /// The alarm of the client whose transport is `transport`, not started ([`start`]).
    pub(crate) fn new(transport: Rc<Transport>) -> Rc<Self> {
        Rc::new(Alarm {
            transport,
            last: Cell::new(None),
            reported: Cell::new(false),
            schedule: RefCell::new(None),
        })
    }
}

/// Starts `alarm`'s schedule: it runs once this tab holds the lock. Without Web Locks every tab runs it,
/// which is harmless: a wake-up changes nothing in a worker already busy with the head.
pub(crate) fn start(alarm: &Rc<Alarm>) {
    let weak = Rc::downgrade(alarm);
    let ask = Question::new(move |done: js_sys::Function| {
        let Some(alarm) = weak.upgrade() else { return };
        wasm_bindgen_futures::spawn_local(async move {
            let at = alarm.next_check().await;
            let _ = done.call1(&JsValue::UNDEFINED, &at.map_or(JsValue::NULL, |at| JsValue::from(at as f64)));
        });
    });
    let poke = crate::js::alarm(LOCK, ask.as_ref().unchecked_ref());
    *alarm.schedule.borrow_mut() = Some((poke, ask));
}

/// Something may have changed the queue (a `cachet` broadcast, `online`): the schedule asks the worker
/// when its head is due, once for a burst, when this tab runs the alarm.
pub(crate) fn poke(alarm: &Alarm) {
    if let Some((poke, _)) = alarm.schedule.borrow().as_ref() {
        let _ = poke.call0(&JsValue::UNDEFINED);
    }
}

impl Alarm {
    /// One question: when to ask again at the latest (`None`: only when an event says the queue may
    /// have changed), by the worker's answer or the core's rule when it was silent.
    async fn next_check(&self) -> Option<u64> {
        let online = web_sys::window().is_some_and(|window| window.navigator().on_line());
        let check_at = match ask(&self.transport.link, online).await {
            Ok(check_at) => check_at,
            // Stopped while it answered (the browser stops an idle worker at will; the question
            // waited ASK_WITHIN): the core's rule.
            Err(Error::ServiceWorkerSilent { .. }) => ask_again_after_silence(self.last.get(), now_ms()),
            Err(error) => {
                if !self.reported.replace(true) {
                    web_sys::console::warn_1(&format!("cachet: queue alarm: {error}").into());
                }
                Some(now_ms() + 10 * ALARM_RECHECK_MS)
            }
        };
        self.last.set(check_at);
        check_at
    }
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
