//! Restoring the session when a page starts (issue 36; the rule is the core's auth machine, "Restoring
//! a session on start"). Every async call of the client waits for this first (the client's start).
//!
//! 1. A purge interrupted before the worker acknowledged its `clear-all` is finished first, as the
//!    start's own first stage ([`crate::Client::purge_settled`]): nothing of the signed-out user may be
//!    served to this page.
//! 2. No persisted record: signed out, nothing to do.
//! 3. The page is signed in from the record at once (`RecordRestored`: no login form flashes while the
//!    rest runs), and the worker is told the user (`set-identity`, the partition it knows).
//! 4. When the record cannot vouch alone (no token survives a reload; a cookie record past its expiry),
//!    the machine asks for [`Session::restore_session`] while online: first the other tabs are asked for
//!    the token (`auth-query`, at most `peer_wait`; one that holds it lends it), then the server: bearer
//!    and custom auth go through the refresh single flight with no token (the adapter's `refresh`, which
//!    for [`crate::adapter::bearer_refresh`] sends the refresh cookie alone); cookie auth asks who is
//!    signed in (`fetch_user`). Restored: the new auth is kept, the worker vouches for the new token,
//!    `refresh` is announced. Refused: the session ended while no page held it; the page is signed out,
//!    the record goes and the worker forgets who is signed in (it stores nothing more in that user's
//!    partition), but nothing is purged: the user's entries and queued mutations wait for their next
//!    login (`logout` is announced). Unreachable (offline, a 5xx): still signed in from the record, the
//!    user's cache still theirs; the next `online` event, or the next request's auth failure, tries
//!    again.

use super::flight::Origin;
use super::tabs::TabMessage;
use super::Session;
use crate::locks::now_ms;
use cachet_core::machines::auth::AuthEvent;
use std::rc::Rc;

/// What the console says when the server could not confirm a session signed in from the record.
const UNREACHABLE: &str =
    "cachet: the session could not be restored: signed in from the stored record until the server answers";

impl Session {
    /// Step 1 (see the module docs), the client start's first stage: a purge interrupted before the
    /// worker acknowledged its `clear-all` is finished.
    pub(crate) async fn finish_interrupted_purge(&self) {
        match self.store.clear_pending().await {
            Ok(false) => {}
            Ok(true) => {
                if let Err(error) = self.finish_clear().await {
                    let line = format!("cachet: finishing an interrupted purge: {error}");
                    web_sys::console::error_1(&line.into());
                }
            }
            // Said, never swallowed: a purge left unfinished here would keep a signed-out user's answers.
            Err(error) => {
                let line = format!("cachet: reading the mark of an interrupted purge: {error}; not finished");
                web_sys::console::error_1(&line.into());
            }
        }
    }

    /// Restores the persisted auth (steps 2 to 4 of the module docs; step 1 ran before the worker's
    /// config was followed).
    pub(crate) async fn restore(self: Rc<Self>) {
        let record = match self.store.load().await {
            Ok(record) => record,
            Err(error) => {
                web_sys::console::warn_1(&format!("cachet: reading the persisted auth: {error}").into());
                None
            }
        };
        let Some(record) = record else {
            return;
        };
        let auth = record.to_auth();
        let needs_server = record.auth_fingerprint.is_some() || !auth.is_valid_at(now_ms());
        self.refresh.restored_from.replace(record.auth_fingerprint.clone());
        self.set_memory_auth(Some(auth));
        if let Err(error) = self.sync_identity().await {
            web_sys::console::warn_1(&format!("cachet: telling the service worker the user: {error}").into());
        }
        if let Err(error) = self.apply_auth(AuthEvent::RecordRestored { needs_server }, Origin::Page).await {
            web_sys::console::warn_1(&format!("cachet: restoring the session: {error}").into());
        }
    }

    /// The auth machine's `RestoreSession`: asks the server to confirm the session signed in from the
    /// record (see the module docs). Its outcome reaches the machine as an ordinary event; a server that
    /// could not be reached leaves the page signed in from the record, and is logged.
    pub(crate) async fn restore_session(self: &Rc<Self>) {
        // Another tab may hold the token: it lends it, with no round trip to the server (and no
        // rotation of a refresh cookie).
        let tokenless = self.auth.borrow().as_ref().is_some_and(|auth| auth.authorization().is_none());
        if tokenless && self.refresh.restored_from.borrow().is_some() {
            self.post_tab(&TabMessage::Query);
            if self.wait_for_authorization_change(None).await {
                return;
            }
        }
        if self.refresh.refreshes() {
            let generation = self.refresh.generation();
            let _ = self.after_auth_failure(None, false, generation, Origin::Page).await;
            if self.state.get().restore_pending {
                let why = self
                    .refresh
                    .last_error()
                    .map_or_else(|| "no answer".to_owned(), |error| error.to_string());
                web_sys::console::warn_1(&format!("{UNREACHABLE} ({why})").into());
            }
            return;
        }
        let epoch = self.epoch.get();
        let event = match self.adapter().fetch_user(&self.transport.http, None).await {
            Ok(Some(_)) if self.epoch.get() != epoch => return,
            Ok(Some(mut found)) => {
                if found.user.is_none() {
                    found.user = self.auth.borrow().as_ref().and_then(|auth| auth.user.clone());
                }
                if let Err(error) = self.keep_auth(found).await {
                    web_sys::console::warn_1(
                        &format!("cachet: keeping the restored session: {error}").into(),
                    );
                }
                AuthEvent::TokenRefreshed
            }
            Ok(None) => AuthEvent::RefreshRefused,
            Err(error) => {
                web_sys::console::warn_1(&format!("{UNREACHABLE} ({error})").into());
                return;
            }
        };
        if let Err(error) = Box::pin(self.apply_auth(event, Origin::Page)).await {
            web_sys::console::warn_1(&format!("cachet: restoring the session: {error}").into());
        }
    }
}
