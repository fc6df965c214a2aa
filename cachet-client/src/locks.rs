//! Web Locks (`navigator.locks.request`), so that one tab at a time refreshes the token, and small
//! timing helpers.
//!
//! web-sys has `LockManager` only behind `--cfg=web_sys_unstable_apis`, so the API is called through
//! `js_sys::Reflect`. Where it is missing (an old browser, an insecure origin) [`acquire`] gives `None`
//! and the refresh is single-flight within the tab only.

use std::cell::RefCell;
use std::time::Duration;

use futures::future::{select, Either, LocalBoxFuture, Shared};
use futures::FutureExt;

/// The Web Lock itself: only the queue alarm's tab (`queue`) and the auth refresh (`auth`) take one.
#[cfg(any(feature = "queue", feature = "auth"))]
mod web_lock {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};

    use crate::Error;

    /// Holds an exclusive Web Lock until dropped (the queue alarm's tab, the auth refresh): it resolves
    /// the promise the lock's callback returned, which releases the lock.
    #[derive(Debug)]
    pub(crate) struct LockGuard {
        release: js_sys::Function,
    }

    impl Drop for LockGuard {
        fn drop(&mut self) {
            let _ = self.release.call0(&JsValue::UNDEFINED);
        }
    }

    /// A promise and the function that resolves it.
    fn resolvable() -> (js_sys::Promise, js_sys::Function) {
        let mut resolver = None;
        let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
        // The executor runs synchronously, inside `new`: the fallback is never used (calling it fails,
        // and its failure is ignored where it is called).
        (promise, resolver.unwrap_or_else(|| JsValue::UNDEFINED.unchecked_into()))
    }

    /// Asks for the exclusive lock `name` of the origin and calls `then` with its guard once this page
    /// holds it (at once with `None` where Web Locks are not available). Callbacks and promises rather
    /// than Rust channels or a task: the browser's own (BENCHMARKS.md, session 33). An error (a
    /// `navigator.locks` without `request`, a refused call) drops `then` uncalled.
    pub(crate) fn with_lock(name: &str, then: Box<dyn FnOnce(Option<LockGuard>)>) -> Result<(), Error> {
        let locks = web_sys::window()
            .and_then(|window| js_sys::Reflect::get(&window.navigator(), &"locks".into()).ok())
            .filter(|locks| !locks.is_undefined() && !locks.is_null());
        let Some(locks) = locks else {
            then(None);
            return Ok(());
        };
        let request = js_sys::Reflect::get(&locks, &"request".into())
            .ok()
            .and_then(|request| request.dyn_into::<js_sys::Function>().ok())
            .ok_or(Error::Unsupported { api: "navigator.locks.request" })?;
        let (held, release) = resolvable();
        // The lock is held until the promise the callback returns settles: until the guard is dropped.
        let callback = Closure::once_into_js(move |_lock: JsValue| -> js_sys::Promise {
            then(Some(LockGuard { release }));
            held
        });
        request
            .call2(&locks, &JsValue::from_str(name), &callback)
            .map_err(|e| Error::js("navigator.locks.request", e))?;
        Ok(())
    }

    /// Waits for the exclusive lock `name` of the origin ([`with_lock`]); `Ok(None)` when Web Locks are
    /// not available.
    #[cfg(feature = "auth")]
    pub(crate) async fn acquire(name: &str) -> Result<Option<LockGuard>, Error> {
        let (acquired, resolve) = resolvable();
        let slot = std::rc::Rc::new(std::cell::Cell::new(None));
        let given = slot.clone();
        with_lock(
            name,
            Box::new(move |guard| {
                given.set(Some(guard));
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }),
        )?;
        let _ = wasm_bindgen_futures::JsFuture::from(acquired).await;
        Ok(slot.take().flatten())
    }
}
#[cfg(feature = "auth")]
pub(crate) use web_lock::acquire;
#[cfg(feature = "queue")]
pub(crate) use web_lock::{with_lock, LockGuard};

/// Runs `future` for at most `limit`; `None` when time ran out first.
pub(crate) async fn with_timeout<T>(
    limit: Duration,
    future: impl std::future::Future<Output = T>,
) -> Option<T> {
    let millis = u32::try_from(limit.as_millis()).unwrap_or(u32::MAX);
    let timer = gloo::timers::future::TimeoutFuture::new(millis);
    match select(Box::pin(future.fuse()), timer).await {
        Either::Left((value, _)) => Some(value),
        Either::Right(((), _)) => None,
    }
}

/// Now, Unix milliseconds.
pub(crate) fn now_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// `duration` in whole milliseconds (saturating: no configured duration reaches it).
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The client's start, which every async call waits for, shared by the parts that answer calls: first a
/// purge an earlier page left unacknowledged is finished, then the worker's config is followed and the
/// session restored.
#[derive(Default)]
pub(crate) struct Started {
    purged: RefCell<Option<Shared<LocalBoxFuture<'static, ()>>>>,
    start: RefCell<Option<Shared<LocalBoxFuture<'static, ()>>>>,
}

impl Started {
    /// Begins `purge`, then `rest` once it is done, in the page's event loop.
    pub(crate) fn begin(&self, purge: LocalBoxFuture<'static, ()>, rest: LocalBoxFuture<'static, ()>) {
        let purge = purge.shared();
        *self.purged.borrow_mut() = Some(purge.clone());
        let start = Box::pin(async move {
            purge.await;
            rest.await
        }) as LocalBoxFuture<'static, ()>;
        let start = start.shared();
        *self.start.borrow_mut() = Some(start.clone());
        wasm_bindgen_futures::spawn_local(start);
    }

    /// Resolves once the whole start is done.
    pub(crate) async fn wait(&self) {
        let start = self.start.borrow().clone();
        if let Some(start) = start {
            start.await;
        }
    }

    /// Resolves once its first stage is done (an interrupted purge finished, or none found).
    pub(crate) async fn purge_settled(&self) {
        let purged = self.purged.borrow().clone();
        if let Some(purged) = purged {
            purged.await;
        }
    }
}
