//! What the start module has running (`super::start`): every fetch it took and everything it left in
//! `waitUntil`, counted until settled, so that the whole engine gets its first event only once the start
//! module is idle (the shim waits on [`idle`]).
//!
//! A fetch that waits on the network ([`park`]) is not counted while it waits: it reads and writes
//! nothing then, and an answer a server holds for long (a slow query, a long poll) would otherwise hold
//! every event the whole engine must answer (a page's message, a mutation, a store) for as long. Once
//! the take-over has begun (`idle()` asked: [`retired`]), the start module reads nothing it keeps in
//! memory, which the whole engine may have changed since: its lookups find nothing
//! (`super::store_later::LaterStore`), and what follows an answer reads none of it (its store is handed
//! to the whole engine, stamped with the generation its request began under).

use std::cell::{Cell, RefCell};

use js_sys::Promise;
use wasm_bindgen::prelude::*;

thread_local! {
    /// Fetches taken and background work left running, not yet settled.
    static BUSY: Cell<u32> = const { Cell::new(0) };
    /// The resolvers of `idle()` promises given while busy.
    static WAITING: RefCell<Vec<js_sys::Function>> = const { RefCell::new(Vec::new()) };
    /// One closure for every settled promise (`Promise.finally`), made at the first.
    static SETTLED: RefCell<Option<Closure<dyn FnMut()>>> = const { RefCell::new(None) };
    /// Whether the whole engine's take-over has begun (the shim asked `idle()`).
    static RETIRED: Cell<bool> = const { Cell::new(false) };
}

/// Counts `promise` as work of the start module until it settles; returns the promise to wait on
/// (it settles as `promise` does).
pub(crate) fn busy(promise: Promise) -> Promise {
    BUSY.with(|busy| busy.set(busy.get() + 1));
    SETTLED.with(|settled| {
        let mut settled = settled.borrow_mut();
        promise.finally(settled.get_or_insert_with(|| Closure::new(settled_one)))
    })
}

fn settled_one() {
    let left = BUSY.with(|busy| {
        let left = busy.get().saturating_sub(1);
        busy.set(left);
        left
    });
    if left == 0 {
        for resolve in WAITING.take() {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }
}

/// A fetch counted by [`busy`] waits on the network: not counted while this lives (when `parks`; the
/// whole engine's network steps do not). A guard held across the `await`, not a future wrapping the
/// wait: a wrapper is a state machine of its own for every wait it wraps (measured: 1.1 KB of the
/// start module's gzipped wasm).
pub(crate) struct Parked(bool);

/// [`Parked`], from now until it is dropped.
pub(crate) fn park(parks: bool) -> Parked {
    if parks {
        waits(true);
    }
    Parked(parks)
}

impl Drop for Parked {
    fn drop(&mut self) {
        if self.0 {
            waits(false);
        }
    }
}

/// A fetch counted by [`busy`] begins (`true`) or ends (`false`) a wait on the network, which is not
/// counted. Called in pairs ([`Parked`] does, and the runner around a joined send's wait).
pub(crate) fn waits(begins: bool) {
    if begins {
        settled_one();
    } else {
        BUSY.with(|busy| busy.set(busy.get() + 1));
    }
}

/// Whether the whole engine's take-over has begun: the shim asked [`idle`], and gives the start module
/// no event after that.
pub(crate) fn retired() -> bool {
    RETIRED.with(Cell::get)
}

/// A promise that resolves once nothing the start module took is running (a fetch waiting on the
/// network, [`park`], is not counted). Asking it begins the take-over ([`retired`]).
pub(crate) fn idle() -> Promise {
    RETIRED.with(|retired| retired.set(true));
    Promise::new(&mut |resolve, _reject| {
        if BUSY.with(Cell::get) == 0 {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        } else {
            WAITING.with(|waiting| waiting.borrow_mut().push(resolve));
        }
    })
}
