//! The auth state machine (SPEC §3): online × authenticated, and what each auth operation must do.
//!
//! | Event | From | To | Effects, in order |
//! |---|---|---|---|
//! | [`AuthEvent::SetAuth`] (`setAuth`) | unauthenticated | authenticated | broadcast `login`, publish |
//! | [`AuthEvent::SetAuth`] | authenticated | authenticated | broadcast `refresh`, publish |
//! | [`AuthEvent::TokenRefreshed`] (silent refresh) | authenticated | authenticated | broadcast `refresh`, publish |
//! | [`AuthEvent::TokenRefreshed`] | unauthenticated | unchanged | none: a refresh finishing after a logout never brings auth back |
//! | [`AuthEvent::RefreshRefused`] (`refresh` gave null) | authenticated | unauthenticated | purge all, broadcast `logout`, publish |
//! | [`AuthEvent::LoggedOut`] (logout route succeeded) | any | unauthenticated | purge all, broadcast `logout`, publish if changed |
//! | [`AuthEvent::ClearAuth`] (`clearAuth()`) | any | unauthenticated | purge all, broadcast `clear`, publish if changed |
//! | [`AuthEvent::ClearMemoryAuth`] (`clearMemoryAuth()`) | any | unauthenticated | drop memory auth (IndexedDB untouched), publish if changed |
//! | [`AuthEvent::Remote`] `login` / `refresh` (another tab) | any | authenticated | reload auth from storage, publish if changed |
//! | [`AuthEvent::Remote`] `logout` / `clear` (another tab) | any | unauthenticated | drop memory auth, publish if changed; no purge and no broadcast: the other tab did both, and echoing would loop |
//! | [`AuthEvent::Online`] / [`AuthEvent::Offline`] | any | same authentication, new connectivity | publish if changed |
//! | [`AuthEvent::Online`] | authenticated, restore pending | online | publish, restore the session |
//! | [`AuthEvent::RecordRestored`] (a page starts with the persisted record, no peer lent it auth) | unauthenticated | authenticated (restore pending when the record cannot vouch alone) | publish, and restore the session when pending and online |
//! | [`AuthEvent::RefreshRefused`] | authenticated, restore pending | unauthenticated | forget the session (not a purge), broadcast `logout`, publish |
//!
//! **Restoring a session on start** (issue 36). The persisted record holds the user and the expiry,
//! never a token. A page that starts with a record the server must confirm (bearer: the token was in
//! memory only; cookie: the record's expiry has passed) is *signed in from the record* at once, so that
//! offline the user's cache stays theirs and the page says so, with `restore_pending` set. Online, the
//! edge restores the session ([`AuthEffect::RestoreSession`]: bearer through its refresh, which with no
//! token in memory is the server's refresh cookie; cookie by asking who is signed in). Its outcome is an
//! ordinary event: [`AuthEvent::TokenRefreshed`] (restored: pending cleared), [`AuthEvent::RefreshRefused`]
//! (the session ended while no page held it: [`AuthEffect::ForgetSession`] and `logout`), or nothing
//! (the server could not be reached: still signed in from the record, and the next
//! [`AuthEvent::Online`] tries again).
//!
//! A refused restore is not a logout: nobody asked to forget the user's data, and the queue may hold
//! their unsent work (a refresh cut off by a navigation can leave a rotated-away refresh token behind).
//! The page is signed out, the persisted record goes, and the worker is told nobody is signed in, so it
//! stores nothing more in that user's partition and answers nobody from it; the user's entries and
//! queue wait for the same user's next login. `clearAuth()` (or the logout route) purges them.
//!
//! "Purge all" is SPEC §1's list: memory auth, IndexedDB, runtime caches and the mutation queue.
//! Clearing is always carried out, even when already unauthenticated: with cookie auth the page may not
//! know a session exists, and clearing twice is harmless.

use crate::protocol::AuthChangeKind;
use serde::{Deserialize, Serialize};

/// One of the four states of SPEC §3 (the shape of `getAuthState()` without the `auth` data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AuthState {
    /// Connectivity.
    pub online: bool,
    /// Whether auth is present.
    pub authenticated: bool,
    /// Signed in from the persisted record alone: the server has not yet confirmed the session since
    /// this page started (see the module docs).
    pub restore_pending: bool,
}

/// An input to the auth machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthEvent {
    /// `setAuth(data)`.
    SetAuth,
    /// A silent token refresh succeeded.
    TokenRefreshed,
    /// The adapter's `refresh` returned null: the session is over.
    RefreshRefused,
    /// A request to the logout route succeeded.
    LoggedOut,
    /// `clearAuth()`.
    ClearAuth,
    /// `clearMemoryAuth()`.
    ClearMemoryAuth,
    /// The browser went online.
    Online,
    /// The browser went offline.
    Offline,
    /// Another tab announced an auth change.
    Remote(AuthChangeKind),
    /// The page started with the persisted record and took it as its auth (no other tab lent it auth).
    RecordRestored {
        /// The record cannot vouch for the session alone (no token survives a reload; an expired
        /// cookie session): the server must confirm it.
        needs_server: bool,
    },
}

/// What the edge must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthEffect {
    /// Purge memory auth, IndexedDB, runtime caches and the mutation queue.
    PurgeAll,
    /// Forget the auth held in memory only.
    DropMemoryAuth,
    /// The session ended while no page held it (a refused restore): forget memory auth and the persisted
    /// record, and tell the worker nobody is signed in; the caches and the queue stay (see the module
    /// docs).
    ForgetSession,
    /// Read auth again (another tab changed it).
    ReloadAuth,
    /// Broadcast `sw-auth-state-change` with this kind to the other tabs.
    Broadcast(AuthChangeKind),
    /// The observable state changed: notify subscribers.
    Publish(AuthState),
    /// Ask the server to restore the session signed in from the record (after `Publish`).
    RestoreSession,
}

impl AuthState {
    /// The state at start-up.
    pub fn new(online: bool, authenticated: bool) -> Self {
        AuthState { online, authenticated, restore_pending: false }
    }

    /// Applies one event.
    pub fn reduce(self, event: AuthEvent) -> (Self, Vec<AuthEffect>) {
        let mut next = self;
        let mut effects = Vec::new();
        match event {
            AuthEvent::SetAuth => {
                let kind = if self.authenticated { AuthChangeKind::Refresh } else { AuthChangeKind::Login };
                next.authenticated = true;
                next.restore_pending = false;
                effects.push(AuthEffect::Broadcast(kind));
                effects.push(AuthEffect::Publish(next));
                return (next, effects);
            }
            AuthEvent::TokenRefreshed if self.authenticated => {
                next.restore_pending = false;
                effects.push(AuthEffect::Broadcast(AuthChangeKind::Refresh));
                effects.push(AuthEffect::Publish(next));
                return (next, effects);
            }
            AuthEvent::TokenRefreshed => {}
            AuthEvent::RefreshRefused if self.authenticated && self.restore_pending => {
                next.authenticated = false;
                next.restore_pending = false;
                effects.push(AuthEffect::ForgetSession);
                effects.push(AuthEffect::Broadcast(AuthChangeKind::Logout));
            }
            AuthEvent::RefreshRefused if self.authenticated => {
                next.authenticated = false;
                effects.push(AuthEffect::PurgeAll);
                effects.push(AuthEffect::Broadcast(AuthChangeKind::Logout));
            }
            AuthEvent::RefreshRefused => {}
            AuthEvent::LoggedOut | AuthEvent::ClearAuth => {
                next.authenticated = false;
                next.restore_pending = false;
                effects.push(AuthEffect::PurgeAll);
                let kind = if event == AuthEvent::LoggedOut {
                    AuthChangeKind::Logout
                } else {
                    AuthChangeKind::Clear
                };
                effects.push(AuthEffect::Broadcast(kind));
            }
            AuthEvent::ClearMemoryAuth => {
                next.authenticated = false;
                next.restore_pending = false;
                effects.push(AuthEffect::DropMemoryAuth);
            }
            AuthEvent::Online if self.authenticated && self.restore_pending => {
                next.online = true;
                if next != self {
                    effects.push(AuthEffect::Publish(next));
                }
                effects.push(AuthEffect::RestoreSession);
                return (next, effects);
            }
            AuthEvent::Online => next.online = true,
            AuthEvent::Offline => next.online = false,
            AuthEvent::Remote(AuthChangeKind::Login | AuthChangeKind::Refresh) => {
                next.authenticated = true;
                next.restore_pending = false;
                effects.push(AuthEffect::ReloadAuth);
            }
            AuthEvent::Remote(AuthChangeKind::Logout | AuthChangeKind::Clear) => {
                next.authenticated = false;
                next.restore_pending = false;
                effects.push(AuthEffect::DropMemoryAuth);
            }
            AuthEvent::RecordRestored { needs_server } => {
                next.authenticated = true;
                next.restore_pending = needs_server;
                if next != self {
                    effects.push(AuthEffect::Publish(next));
                }
                if needs_server && self.online {
                    effects.push(AuthEffect::RestoreSession);
                }
                return (next, effects);
            }
        }
        if next != self {
            effects.push(AuthEffect::Publish(next));
        }
        (next, effects)
    }
}
