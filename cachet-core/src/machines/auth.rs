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
}

/// What the edge must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthEffect {
    /// Purge memory auth, IndexedDB, runtime caches and the mutation queue.
    PurgeAll,
    /// Forget the auth held in memory only.
    DropMemoryAuth,
    /// Read auth again (another tab changed it).
    ReloadAuth,
    /// Broadcast `sw-auth-state-change` with this kind to the other tabs.
    Broadcast(AuthChangeKind),
    /// The observable state changed: notify subscribers.
    Publish(AuthState),
}

impl AuthState {
    /// The state at start-up.
    pub fn new(online: bool, authenticated: bool) -> Self {
        AuthState { online, authenticated }
    }

    /// Applies one event.
    pub fn reduce(self, event: AuthEvent) -> (Self, Vec<AuthEffect>) {
        let mut next = self;
        let mut effects = Vec::new();
        match event {
            AuthEvent::SetAuth => {
                let kind = if self.authenticated { AuthChangeKind::Refresh } else { AuthChangeKind::Login };
                next.authenticated = true;
                effects.push(AuthEffect::Broadcast(kind));
                effects.push(AuthEffect::Publish(next));
                return (next, effects);
            }
            AuthEvent::TokenRefreshed if self.authenticated => {
                effects.push(AuthEffect::Broadcast(AuthChangeKind::Refresh));
                effects.push(AuthEffect::Publish(next));
                return (next, effects);
            }
            AuthEvent::TokenRefreshed => {}
            AuthEvent::RefreshRefused if self.authenticated => {
                next.authenticated = false;
                effects.push(AuthEffect::PurgeAll);
                effects.push(AuthEffect::Broadcast(AuthChangeKind::Logout));
            }
            AuthEvent::RefreshRefused => {}
            AuthEvent::LoggedOut | AuthEvent::ClearAuth => {
                next.authenticated = false;
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
                effects.push(AuthEffect::DropMemoryAuth);
            }
            AuthEvent::Online => next.online = true,
            AuthEvent::Offline => next.online = false,
            AuthEvent::Remote(AuthChangeKind::Login | AuthChangeKind::Refresh) => {
                next.authenticated = true;
                effects.push(AuthEffect::ReloadAuth);
            }
            AuthEvent::Remote(AuthChangeKind::Logout | AuthChangeKind::Clear) => {
                next.authenticated = false;
                effects.push(AuthEffect::DropMemoryAuth);
            }
        }
        if next != self {
            effects.push(AuthEffect::Publish(next));
        }
        (next, effects)
    }
}
