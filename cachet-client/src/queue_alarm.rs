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
//! BENCHMARKS.md.)
//!
//! With no tab open, the Service Worker's own start (a page opened) and Background Sync replay.

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::machines::queue::{ask_again_after_silence, ALARM_RECHECK_MS};
use cachet_core::protocol::{PageToSw, SwToPage};
use gloo::timers::callback::Timeout;

use crate::link::WorkerLink;
use crate::locks::{now_ms, with_lock, LockGuard};
use crate::transport::Transport;
use crate::Error;

/// How long the alarm waits for the worker's answer before it asks again: a worker stopped while it
/// answered never answers (the page's own timeout, `service_worker_timeout`, is 10 s by default).
const ASK_WITHIN: std::time::Duration = std::time::Duration::from_millis(2 * ALARM_RECHECK_MS);

/// The Web Lock held by the tab that runs the alarm.
pub const LOCK: &str = "cachet-queue-alarm";

/// The alarm: its state and the client's transport, which it asks the worker through. Kept by the
/// client (it ends, and its lock is released, when the client is dropped and no question is out).
pub(crate) struct Alarm {
    state: RefCell<State>,
    transport: Rc<Transport>,
}

impl Alarm {
    /// The alarm of the client whose transport is `transport`, not started ([`start`]).
    pub(crate) fn new(transport: Rc<Transport>) -> Rc<Self> {
        Rc::new(Alarm { state: RefCell::default(), transport })
    }
}

#[derive(Default)]
struct State {
    /// Set once this tab runs the alarm: the lock's guard (`None` inside: no Web Locks here).
    running: Option<Option<LockGuard>>,
    /// A question is out; `again`: something happened meanwhile, ask once more after its answer.
    asking: bool,
    again: bool,
    /// The next question's timer, when the worker gave a time.
    timer: Option<Timeout>,
    /// The last answer's time (for the core's rule after a silence).
    last: Option<u64>,
    /// Whether an error was said on the console already (once per page).
    reported: bool,
}

/// Starts `alarm` once this tab holds the lock. Without Web Locks every tab runs it, which is
/// harmless: a wake-up changes nothing in a worker already busy with the head.
pub(crate) fn start(alarm: &Rc<Alarm>) {
    let weak = Rc::downgrade(alarm);
    // A client dropped before the lock came releases it with the guard.
    let held = with_lock(
        LOCK,
        Box::new(move |held| {
            if let Some(alarm) = weak.upgrade() {
                run(&alarm, held);
            }
        }),
    );
    if let Err(error) = held {
        web_sys::console::warn_1(&format!("cachet: queue alarm without a lock: {error}").into());
        run(alarm, None);
    }
}

/// This tab runs the alarm from now on (`held`: the lock's guard, `None` without Web Locks).
fn run(alarm: &Rc<Alarm>, held: Option<LockGuard>) {
    alarm.state.borrow_mut().running = Some(held);
    poke(alarm);
}

/// Something may have changed the queue (a `cachet` broadcast, `online`, the alarm's timer): asks the
/// worker when its head is due, once for a burst, when this tab runs the alarm.
pub(crate) fn poke(alarm: &Rc<Alarm>) {
    {
        let mut state = alarm.state.borrow_mut();
        if state.running.is_none() {
            return;
        }
        if state.asking {
            state.again = true;
            return;
        }
        state.asking = true;
        state.timer = None;
    }
    let alarm = alarm.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let online = web_sys::window().is_some_and(|window| window.navigator().on_line());
        let answer = ask(&alarm.transport.link, online).await;
        let mut state = alarm.state.borrow_mut();
        let check_at = match answer {
            Ok(check_at) => check_at,
            // Stopped while it answered (the browser stops an idle worker at will; the question
            // waited ASK_WITHIN): the core's rule.
            Err(Error::ServiceWorkerSilent { .. }) => ask_again_after_silence(state.last, now_ms()),
            Err(error) => {
                if !std::mem::replace(&mut state.reported, true) {
                    web_sys::console::warn_1(&format!("cachet: queue alarm: {error}").into());
                }
                Some(now_ms() + 10 * ALARM_RECHECK_MS)
            }
        };
        state.last = check_at;
        state.asking = false;
        if std::mem::take(&mut state.again) {
            drop(state);
            return poke(&alarm);
        }
        if let Some(at) = check_at {
            // setTimeout takes at most 2^31 - 1 ms (more fires at once).
            let delay = at.saturating_sub(now_ms()).min(i32::MAX as u64) as u32;
            let weak = Rc::downgrade(&alarm);
            state.timer = Some(Timeout::new(delay, move || {
                if let Some(alarm) = weak.upgrade() {
                    poke(&alarm);
                }
            }));
        }
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
