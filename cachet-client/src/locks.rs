//! Web Locks (`navigator.locks.request`, through `js/auth.js`), so that one tab at a time refreshes the
//! token, and small timing helpers. Where Web Locks are missing (an old browser, an insecure origin)
//! [`acquire`] gives `None` and the refresh is single-flight within the tab only.

use std::cell::RefCell;

use futures::future::{LocalBoxFuture, Shared};
use futures::FutureExt;

/// Holds an exclusive Web Lock until dropped (the auth refresh): calls the function that releases it.
#[cfg(feature = "auth")]
#[derive(Debug)]
pub(crate) struct LockGuard {
    release: js_sys::Function,
}

#[cfg(feature = "auth")]
impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.release.call0(&wasm_bindgen::JsValue::UNDEFINED);
    }
}

/// Waits for the exclusive Web Lock `name` of the origin (`js/auth.js`'s `lock`); `Ok(None)` when Web
/// Locks are not available.
#[cfg(feature = "auth")]
pub(crate) async fn acquire(name: &str) -> Result<Option<LockGuard>, crate::Error> {
    use wasm_bindgen::JsCast;
    let release = wasm_bindgen_futures::JsFuture::from(crate::js::lock(name))
        .await
        .map_err(|error| crate::Error::js("navigator.locks.request", error))?;
    Ok(release.dyn_into().ok().map(|release| LockGuard { release }))
}

/// Runs `future` for at most `limit`; `None` when time ran out first (the session's waits).
#[cfg(feature = "auth")]
pub(crate) async fn with_timeout<T>(
    limit: std::time::Duration,
    future: impl std::future::Future<Output = T>,
) -> Option<T> {
    let timer = gloo::timers::future::TimeoutFuture::new(timer_ms(limit));
    match futures::future::select(Box::pin(future.fuse()), timer).await {
        futures::future::Either::Left((value, _)) => Some(value),
        futures::future::Either::Right(((), _)) => None,
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

/// `duration` in whole milliseconds for a browser timer (`setTimeout`'s delay, saturating).
pub(crate) fn timer_ms(duration: std::time::Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
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
