//! The page is the single flight of token refresh, for its own requests and for the Service Worker's.
//!
//! Within a tab, [`cachet_core::machines::refresh::RefreshState`] decides: the first auth failure starts
//! a refresh, later ones wait behind it, each request is retried once, a clear rejects every waiter.
//! Across tabs, the refresh itself (`Session::refresh_once`) runs under the Web Lock `cachet-refresh`:
//!
//! 1. the tab's current `Authorization` differs from the one that failed: someone already refreshed (this
//!    tab, or another whose token arrived over `cachet-auth`): done, retry with the current one;
//! 2. the persisted record names another `Authorization` fingerprint: another tab refreshed and its
//!    message is on its way: wait for it (bounded by `peer_wait`);
//! 3. otherwise run the adapter's `refresh` with the current auth (with no token when the tab is signed
//!    in from the record after a reload: that is the session's restore, see `restore.rs`): new auth is
//!    kept in memory, persisted without its token, announced to the other tabs (`refresh`) before the
//!    lock is released; `None` ends the session (`RefreshRefused`: purge, `logout`; a refused restore
//!    forgets the session without a purge); an error (offline) rejects the waiting requests and keeps
//!    the user logged in.
//!
//! A refresh is bounded by `refresh_timeout` (the core requires the edge to turn a refresh that never
//! answers into a failure).

use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::machines::auth::AuthEvent;
use cachet_core::machines::refresh::{RefreshEvent, RejectReason};
use futures::channel::oneshot;

use super::flight::{Origin, RefreshOutcome};
use super::Session;
use crate::locks::{self, with_timeout};
use crate::Error;

impl Session {
    /// A request sent with `failed` (its `Authorization`, if any) at `generation` met an auth failure:
    /// resolves once it may be retried, or must give up.
    pub(crate) async fn after_auth_failure(
        self: &Rc<Self>,
        failed: Option<String>,
        retried: bool,
        generation: u64,
        origin: Origin,
    ) -> RefreshOutcome {
        let token = failed.as_deref().map(auth_fingerprint);
        let (outcome, start) = self.refresh.auth_failed(retried, generation, token);
        if start {
            let session = self.clone();
            wasm_bindgen_futures::spawn_local(async move { session.run_refresh(failed, origin).await });
        }
        outcome.await.unwrap_or(RefreshOutcome::Reject(RejectReason::Cleared))
    }

    /// Rejects every waiter (auth was cleared); a refresh finishing later is ignored.
    pub(crate) fn reset_refresh(&self) {
        self.refresh.apply(RefreshEvent::Reset);
    }

    async fn run_refresh(self: Rc<Self>, failed: Option<String>, origin: Origin) {
        let outcome =
            with_timeout(self.settings.options.refresh_timeout, self.refresh_once(failed, origin)).await;
        let event = match outcome {
            Some(Ok(true)) => RefreshEvent::Succeeded,
            Some(Ok(false)) => RefreshEvent::Refused,
            Some(Err(error)) => {
                web_sys::console::warn_1(&format!("cachet: token refresh failed: {error}").into());
                *self.refresh.last_error.borrow_mut() = Some(error);
                RefreshEvent::Failed
            }
            None => {
                let error = Error::RefreshTimedOut {
                    waited_ms: locks::millis(self.settings.options.refresh_timeout),
                };
                *self.refresh.last_error.borrow_mut() = Some(error);
                RefreshEvent::Failed
            }
        };
        if self.refresh.apply(event) {
            // A new failure arrived between the outcome and now: the machine asks for another refresh.
            let current = self.auth.borrow().as_ref().and_then(crate::AuthData::authorization);
            Box::pin(self.run_refresh(current, origin)).await;
        }
    }

    /// One refresh under the cross-tab lock: `Ok(true)` fresh auth is in memory, `Ok(false)` the session
    /// is over (or was cleared meanwhile), `Err` the refresh could not be carried out.
    async fn refresh_once(self: &Rc<Self>, failed: Option<String>, origin: Origin) -> Result<bool, Error> {
        let _lock = locks::acquire(&self.settings.options.refresh_lock).await?;
        let Some(current) = self.auth.borrow().clone() else {
            return Ok(false);
        };
        if current.authorization() != failed {
            return Ok(true);
        }
        // The token this tab last knew: the failed one, or with none in memory (signed in from the record
        // after a reload) the record's it was restored from.
        let failed_fingerprint = match failed.as_deref() {
            Some(failed) => Some(auth_fingerprint(failed)),
            None => self.refresh.restored_from.borrow().clone(),
        };
        let record = self.store.load().await.ok().flatten();
        if let Some(stored) = record.and_then(|record| record.auth_fingerprint) {
            if Some(&stored) != failed_fingerprint.as_ref() {
                return match self.wait_for_authorization_change(failed.as_deref()).await {
                    true => Ok(true),
                    false => {
                        Err(Error::RefreshLost { waited_ms: locks::millis(self.settings.options.peer_wait) })
                    }
                };
            }
        }
        let epoch = self.epoch.get();
        match self.adapter().refresh(&self.transport.http, &current).await? {
            Some(mut fresh) if self.epoch.get() == epoch => {
                if fresh.user.is_none() {
                    fresh.user = current.user.clone();
                }
                self.keep_auth(fresh).await?;
                if origin == Origin::Page {
                    // The worker learns a refresh it asked for from the page's answer itself.
                    if let Err(error) = self.sync_identity().await {
                        web_sys::console::warn_1(
                            &format!("cachet: telling the service worker the new token: {error}").into(),
                        );
                    }
                }
                self.apply_auth(AuthEvent::TokenRefreshed, origin).await?;
                Ok(true)
            }
            // Logged out while the refresh ran: the new token is dropped.
            Some(_) => Ok(false),
            None => {
                self.apply_auth(AuthEvent::RefreshRefused, origin).await?;
                Ok(false)
            }
        }
    }

    /// Waits until the memory `Authorization` is no longer `failed`, at most `peer_wait`.
    pub(crate) async fn wait_for_authorization_change(&self, failed: Option<&str>) -> bool {
        let changed =
            || self.auth.borrow().as_ref().and_then(crate::AuthData::authorization).as_deref() != failed;
        let wait = async {
            while !changed() {
                let (sender, receiver) = oneshot::channel();
                self.watchers.borrow_mut().push(sender);
                let _ = receiver.await;
            }
        };
        with_timeout(self.settings.options.peer_wait, wait).await.is_some()
    }
    /// `(ok, authorization)` for a Service Worker's `refresh-request` whose failed request carried the
    /// fingerprint `failed` (the table of [`cachet_core::protocol::SwToPage::RefreshRequest`]): the page
    /// runs the refresh only when `failed` is the fingerprint of its current `Authorization`.
    pub(crate) async fn answer_refresh_request(
        self: &Rc<Self>,
        failed: Option<String>,
    ) -> (bool, Option<String>) {
        self.started.wait().await;
        let current = self.auth.borrow().as_ref().and_then(crate::AuthData::authorization);
        let current_fingerprint = current.as_deref().map(auth_fingerprint);
        let stale = failed.is_none() || failed != current_fingerprint;
        if stale {
            return (self.state.get().authenticated, current);
        }
        let generation = self.refresh.generation();
        match self.after_auth_failure(current, false, generation, Origin::ServiceWorker).await {
            RefreshOutcome::Retry { .. } => {
                (true, self.auth.borrow().as_ref().and_then(crate::AuthData::authorization))
            }
            RefreshOutcome::Reject(_) => (false, None),
        }
    }
}
