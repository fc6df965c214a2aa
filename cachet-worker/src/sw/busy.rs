//! What the start module has running (`super::start`): every fetch it took and everything it left in
//! `waitUntil`, counted until settled, so that the whole engine gets its first event only once the start
//! module is idle (the shim waits on [`idle`]).

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

/// A promise that resolves once nothing the start module took is running.
pub(crate) fn idle() -> Promise {
    Promise::new(&mut |resolve, _reject| {
        if BUSY.with(Cell::get) == 0 {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        } else {
            WAITING.with(|waiting| waiting.borrow_mut().push(resolve));
        }
    })
}
