//! Carrying out the auth machine ([`cachet_core::machines::auth`]): every auth change of the client goes
//! through [`Session::apply_auth`], which feeds the core one event and performs the effects it returns.
//!
//! | Effect | What the client does |
//! |---|---|
//! | `PurgeAll` | memory auth, the persisted record, the in-page cache, the waiting refreshes; then the Service Worker's `clear-all` (caches, entry index, identity, queue), awaited, and `set-identity null` |
//! | `DropMemoryAuth` | memory auth and the waiting refreshes |
//! | `ForgetSession` | memory auth, the persisted record, the in-page cache, the waiting refreshes; then `set-identity null` (the worker's caches and queue stay) |
//! | `ReloadAuth` | memory auth from the other tab's message, else from the persisted record |
//! | `Broadcast(kind)` | `auth-changed` to the other tabs (with the new auth for login/refresh), and `sw-auth-state-change` here |
//! | `Publish(state)` | [`crate::ClientEvent::StateChanged`] to subscribers |
//! | `RestoreSession` | asks the server to confirm a session signed in from the record (`restore.rs`), awaited |

use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::machines::auth::{AuthEffect, AuthEvent};
use cachet_core::partition::Identity;
use cachet_core::protocol::{AuthChangeKind, PageToSw};

use super::flight::Origin;
use super::store::PersistedAuth;
use super::tabs::TabMessage;
use super::Session;
use crate::{AuthData, ClientEvent, Error};

impl Session {
    /// Feeds the auth machine `event` and carries out its effects, all of them even when one fails; the
    /// first failure is returned.
    pub(crate) async fn apply_auth(self: &Rc<Self>, event: AuthEvent, origin: Origin) -> Result<(), Error> {
        let (next, effects) = self.state.get().reduce(event);
        self.state.set(next);
        self.wake_auth_watchers();
        let mut first_error = None;
        // The requests waiting for a refresh are rejected after every effect, so that a call failing
        // because the session ended settles after its `sw-auth-state-change` was dispatched: the event
        // and `getAuthState()` never disagree with what the call saw (issue 31).
        let mut dropped_auth = false;
        for effect in effects {
            dropped_auth |= matches!(
                effect,
                AuthEffect::PurgeAll | AuthEffect::DropMemoryAuth | AuthEffect::ForgetSession
            );
            let outcome = match effect {
                AuthEffect::Publish(state) => {
                    self.hub.emit(ClientEvent::StateChanged(state));
                    Ok(())
                }
                AuthEffect::PurgeAll => self.purge().await,
                AuthEffect::DropMemoryAuth => {
                    self.drop_memory_auth();
                    Ok(())
                }
                AuthEffect::ReloadAuth => self.reload_auth().await,
                AuthEffect::ForgetSession => self.forget_session().await,
                AuthEffect::RestoreSession => {
                    // Boxed: the restore's outcome is applied through this function again.
                    Box::pin(self.restore_session()).await;
                    Ok(())
                }
                AuthEffect::Broadcast(kind) => {
                    self.announce(kind, origin);
                    Ok(())
                }
            };
            if let Err(error) = outcome {
                first_error.get_or_insert(error);
            }
        }
        if dropped_auth {
            self.reset_refresh();
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Keeps `auth` in memory and persists its non-secret part.
    pub(crate) async fn keep_auth(&self, auth: AuthData) -> Result<(), Error> {
        let record = PersistedAuth::of(&auth);
        self.set_memory_auth(Some(auth));
        self.store.save(&record).await
    }

    /// Replaces the memory auth and wakes whoever waits for it to change.
    pub(crate) fn set_memory_auth(&self, auth: Option<AuthData>) {
        *self.auth.borrow_mut() = auth;
        self.wake_auth_watchers();
    }

    /// Wakes whoever waits for the auth or the auth state to change.
    pub(crate) fn wake_auth_watchers(&self) {
        for watcher in self.watchers.borrow_mut().drain(..) {
            let _ = watcher.send(());
        }
    }

    /// Forgets the memory auth; a refresh finishing later is dropped (the epoch). The requests waiting
    /// for a refresh are rejected by [`Session::apply_auth`], after the other effects.
    fn drop_memory_auth(&self) {
        self.epoch.set(self.epoch.get() + 1);
        self.set_memory_auth(None);
    }

    async fn reload_auth(&self) -> Result<(), Error> {
        if self.auth.borrow().is_some() {
            return Ok(());
        }
        let record = self.store.load().await?;
        self.set_memory_auth(record.map(|record| record.to_auth()));
        Ok(())
    }

    /// A session that ended while no page held it: memory auth, the in-page cache and the persisted
    /// record go, and the worker hears that nobody is signed in; its caches and queue stay.
    async fn forget_session(self: &Rc<Self>) -> Result<(), Error> {
        self.sign_out(false).await
    }

    /// [`Session::forget_session`], and the worker's caches, entry index and queue purged (`clear-all`).
    async fn purge(self: &Rc<Self>) -> Result<(), Error> {
        self.sign_out(true).await
    }

    async fn sign_out(self: &Rc<Self>, purge: bool) -> Result<(), Error> {
        self.drop_memory_auth();
        self.transport.cache.borrow_mut().clear();
        // Marked first: a page closed (or a worker stopped) before the worker acknowledged `clear-all`
        // leaves the mark, and the next client start finishes the purge ([`Session::finish_clear`]).
        let marked = if purge { self.store.set_clear_pending(true).await } else { Ok(()) };
        let stored = self.store.clear().await;
        let cleared = match purge {
            true => self.finish_clear().await.and(marked),
            false => Ok(()),
        };
        let identity = self
            .transport
            .link
            .request(|request_id| PageToSw::SetIdentity { request_id, partition: None, authorization: None })
            .await;
        stored.and(cleared).and(identity)
    }

    /// The worker's `clear-all`, asked once more when the first goes unanswered (a worker stopped in the
    /// middle: the message starts a new one); once acknowledged, the purge's mark is removed.
    pub(crate) async fn finish_clear(&self) -> Result<(), Error> {
        let clear = |request_id| PageToSw::ClearAll { request_id };
        if let Err(error) = self.transport.link.request(clear).await {
            web_sys::console::warn_1(&format!("cachet: clear-all, asking again: {error}").into());
            self.transport.link.request(clear).await?;
        }
        self.store.set_clear_pending(false).await
    }

    /// Tells the other tabs (unless the Service Worker does) and fires the event here.
    fn announce(&self, kind: AuthChangeKind, origin: Origin) {
        let service_worker_announces = origin == Origin::ServiceWorker && kind == AuthChangeKind::Logout;
        if !service_worker_announces {
            let auth = match kind {
                AuthChangeKind::Login | AuthChangeKind::Refresh => self.auth.borrow().clone(),
                AuthChangeKind::Logout | AuthChangeKind::Clear => None,
            };
            self.post_tab(&TabMessage::Changed { kind, auth });
        }
        self.hub.emit(ClientEvent::AuthStateChange { kind });
    }

    /// Another tab (or the Service Worker) announced `kind`, with the auth it now holds for login/refresh.
    pub(crate) async fn on_remote_auth(self: &Rc<Self>, kind: AuthChangeKind, auth: Option<AuthData>) {
        let before = self.state.get();
        let signs_in = matches!(kind, AuthChangeKind::Login | AuthChangeKind::Refresh);
        if let (true, Some(auth)) = (signs_in, auth) {
            self.set_memory_auth(Some(auth));
        }
        if !signs_in {
            self.transport.cache.borrow_mut().clear();
        }
        if let Err(error) = self.apply_auth(AuthEvent::Remote(kind), Origin::Page).await {
            web_sys::console::warn_1(
                &format!("cachet: applying another tab's {}: {error}", kind.as_str()).into(),
            );
        }
        if signs_in || self.state.get() != before {
            self.hub.emit(ClientEvent::AuthStateChange { kind });
        }
    }

    /// Takes auth found elsewhere (another tab's answer, the adapter, the server's `/api/me`) as the
    /// current auth, quietly: the state changes (subscribers hear it) but no `sw-auth-state-change` fires,
    /// because nobody logged in.
    pub(crate) async fn adopt(self: &Rc<Self>, auth: AuthData) -> Result<(), Error> {
        // A page signed in from its stored record (no token yet) takes a token lent by another tab.
        if self.auth.borrow().is_some() && !self.state.get().restore_pending {
            return Ok(());
        }
        self.keep_auth(auth.clone()).await?;
        self.apply_auth(AuthEvent::Remote(AuthChangeKind::Login), Origin::Page).await?;
        self.sync_identity().await
    }

    /// Tells the Service Worker the current user's partition (or none) and vouches for the
    /// `Authorization` this page sends for them ([`cachet_core::partition`]).
    pub(crate) async fn sync_identity(self: &Rc<Self>) -> Result<(), Error> {
        let identity = self.identity();
        let (partition, authorization) = match identity {
            Some(Identity { partition, credentials }) => (Some(partition), credentials.into_iter().next()),
            None => (None, None),
        };
        self.transport
            .link
            .request(|request_id| PageToSw::SetIdentity { request_id, partition, authorization })
            .await
    }

    /// The signed-in user as this page knows them: their partition and the fingerprint of the
    /// `Authorization` the adapter adds for them, if any. The pipeline partitions the in-page cache by it
    /// with the worker's rule.
    pub(crate) fn identity(&self) -> Option<Identity> {
        let auth = self.auth.borrow();
        let partition = auth.as_ref().and_then(AuthData::partition)?;
        let authorization = self
            .adapter()
            .get_headers(auth.as_ref())
            .into_iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            .map(|(_, value)| auth_fingerprint(&value));
        Some(Identity { partition, credentials: authorization.into_iter().collect() })
    }
}
