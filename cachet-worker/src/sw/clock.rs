//! The worker's clocks and randomness (the core reads neither): the plain clock the queue reducer is
//! given, a strictly increasing one for the entry index's last-use times, `Math.random` for backoff
//! jitter, and 128 random bits for an `Idempotency-Key`.

use std::cell::Cell;

use wasm_bindgen::JsCast;

thread_local! {
    static LAST_TIME: Cell<u64> = const { Cell::new(0) };
}

/// Now, in whole Unix milliseconds (the queue's times: due dates, backoffs).
pub(crate) fn now_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// A random `u32` (the reducer's jitter).
pub(crate) fn random() -> u32 {
    (js_sys::Math::random() * f64::from(u32::MAX)) as u32
}

/// 128 random bits for an `Idempotency-Key`: `crypto.getRandomValues`, or `Math.random` where a worker
/// has no `crypto` (never in a browser that has Service Workers).
pub(crate) fn random_u128() -> u128 {
    let bytes = js_sys::Uint8Array::new_with_length(16);
    let global = js_sys::global();
    let filled = js_sys::Reflect::get(&global, &"crypto".into()).and_then(|crypto| {
        let fill = js_sys::Reflect::get(&crypto, &"getRandomValues".into())?;
        fill.dyn_into::<js_sys::Function>()?.call1(&crypto, &bytes)
    });
    if filled.is_err() {
        return (0..4).fold(0, |bits, _| bits << 32 | u128::from(random()));
    }
    let mut raw = [0_u8; 16];
    bytes.copy_to(&mut raw);
    u128::from_le_bytes(raw)
}

/// Now, in whole Unix milliseconds, strictly increasing within one run of the worker: two uses in the
/// same millisecond still order, so least-recently-used eviction never breaks a tie by URL. (A restarted
/// worker starts later than the last run's times.)
pub(crate) fn increasing_ms() -> u64 {
    LAST_TIME.with(|last| {
        let now = (js_sys::Date::now() as u64).max(last.get() + 1);
        last.set(now);
        now
    })
}
