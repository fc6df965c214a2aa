//! The auth API of SPEC §4: `set_auth`, `get_auth`, `clear_auth`, `clear_memory_auth`,
//! `is_auth_valid`, `ensure_valid_auth`, `with_auth_headers`, `is_auth_url`, `AUTH_WITH_CREDENTIALS`,
//! `get_auth_state`. All but `is_auth_url` and the state (`get_auth_state`, `auth_state`: never
//! authenticated, and the connectivity) come with the cargo feature `auth`.

use cachet_core::machines::auth::AuthEvent;
use cachet_core::machines::refresh::RejectReason;
use cachet_core::partition::AUTH_HEADER;
use serde::Serialize;

use crate::http::HttpRequest;
use crate::locks::now_ms;
use crate::refresh_state::{Origin, RefreshOutcome};
use crate::{AuthData, Client, Error};

/// What `getAuthState()` returns (SPEC §2).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AuthSnapshot {
    /// Whether auth is present.
    pub authenticated: bool,
    /// The auth held in memory (the token included: it is the app's own).
    pub auth: Option<AuthData>,
    /// Connectivity (`navigator.onLine` and its events).
    pub online: bool,
}

impl Client {
    #[cfg(feature = "auth")]
    /// `setAuth(data)`, after a login: keeps `auth` in memory (the token only there), persists the user and
    /// expiry, tells the Service Worker the user's cache partition (and awaits its `ack`, so the next
    /// request lands in it), and signals `login` (or `refresh` when already authenticated) here and in
    /// every other tab.
    ///
    /// The auth is kept even when the Service Worker does not answer; the error then says so.
    pub async fn set_auth(&self, auth: AuthData) -> Result<(), Error> {
        let inner = &self.inner;
        inner.ready().await;
        inner.keep_auth(auth).await?;
        let identity = inner.sync_identity().await;
        inner.apply_auth(AuthEvent::SetAuth, Origin::Page).await?;
        identity
    }

    #[cfg(feature = "auth")]
    /// `getAuth()`: the adapter's `get_auth`, else the auth in memory, else the persisted record (user
    /// and expiry, no token), else the adapter's `fetch_user` (the server's `/api/me`). Auth found by the
    /// adapter or the server becomes the current auth when there is none (quietly: no event fires).
    pub async fn get_auth(&self) -> Result<Option<AuthData>, Error> {
        let inner = &self.inner;
        inner.ready().await;
        if let Some(auth) = inner.adapter().get_auth().await? {
            inner.adopt(auth.clone()).await?;
            return Ok(Some(auth));
        }
        if let Some(auth) = inner.auth.borrow().clone() {
            return Ok(Some(auth));
        }
        if let Some(record) = inner.store.load().await? {
            return Ok(Some(record.to_auth()));
        }
        let fetched = inner.adapter().fetch_user(&inner.http, None).await?;
        if let Some(auth) = &fetched {
            inner.adopt(auth.clone()).await?;
        }
        Ok(fetched)
    }

    #[cfg(feature = "auth")]
    /// `clearAuth()`: purges memory auth, the persisted record, the in-page cache, every cachet cache and
    /// the mutation queue (the Service Worker's `clear-all`, awaited), forgets the identity, ends this
    /// browser's push subscription ([`Client::unsubscribe_push`]), and logs out every other tab (`clear`). Every step runs even when one fails; the first failure is returned.
    pub async fn clear_auth(&self) -> Result<(), Error> {
        self.inner.ready().await;
        // The push subscription belongs to the user who made it.
        crate::push::unsubscribe_on_clear(self).await;
        self.inner.apply_auth(AuthEvent::ClearAuth, Origin::Page).await
    }

    #[cfg(feature = "auth")]
    /// `clearMemoryAuth()`: forgets the auth held in memory; IndexedDB, the caches and the other tabs are
    /// untouched.
    pub async fn clear_memory_auth(&self) {
        self.inner.ready().await;
        let _ = self.inner.apply_auth(AuthEvent::ClearMemoryAuth, Origin::Page).await;
    }

    #[cfg(feature = "auth")]
    /// `isAuthValid()`: auth is held in memory and its `expires_at` (if any) is in the future.
    pub fn is_auth_valid(&self) -> bool {
        self.inner.auth.borrow().as_ref().is_some_and(|auth| auth.is_valid_at(now_ms()))
    }

    #[cfg(feature = "auth")]
    /// `ensureValidAuth()`: the current auth, refreshed first when it expires within
    /// [`crate::ClientOptions::refresh_margin`] (the same single flight as a request's auth failure, so
    /// tabs and requests share it). `Ok(None)` without auth or when the server ended the session; cookie
    /// auth is returned as it is (the server manages its lifetime). An `Err` is a refresh that could not
    /// be carried out (for example offline): the auth stays.
    pub async fn ensure_valid_auth(&self) -> Result<Option<AuthData>, Error> {
        let inner = &self.inner;
        inner.ready().await;
        let Some(auth) = inner.auth.borrow().clone() else {
            return Ok(None);
        };
        let margin = crate::locks::millis(inner.options.refresh_margin);
        if auth.is_valid_at(now_ms().saturating_add(margin)) {
            return Ok(Some(auth));
        }
        self.refresh_auth().await
    }

    #[cfg(feature = "auth")]
    /// Refreshes now, whatever the expiry (the same single flight as `ensure_valid_auth`).
    pub async fn refresh_auth(&self) -> Result<Option<AuthData>, Error> {
        let inner = &self.inner;
        inner.ready().await;
        let failed = inner.auth.borrow().as_ref().and_then(AuthData::authorization);
        let generation = inner.refresh.generation();
        match inner.after_auth_failure(failed, false, generation, Origin::Page).await {
            RefreshOutcome::Retry { .. } | RefreshOutcome::Reject(RejectReason::NotRefreshable) => {
                Ok(inner.auth.borrow().clone())
            }
            RefreshOutcome::Reject(_) => match (inner.auth.borrow().clone(), inner.refresh.last_error()) {
                (Some(_), Some(error)) => Err(error),
                (auth, _) => Ok(auth),
            },
        }
    }

    #[cfg(feature = "auth")]
    /// The adapter's headers for the current auth (`Authorization: Bearer <token>` in bearer mode).
    pub fn auth_headers(&self) -> Vec<(String, String)> {
        self.inner.adapter().get_headers(self.inner.auth.borrow().as_ref())
    }

    #[cfg(feature = "auth")]
    /// `withAuthHeaders(request)`: `request` with the adapter's headers, the `X-Cachet-Auth: 1` mark (the
    /// Service Worker caches its answer in the user's partition) and, for cookie auth, credentials.
    pub fn with_auth_headers(&self, request: &HttpRequest) -> HttpRequest {
        let mut marked = self.inner.with_adapter_headers(request, true);
        marked.set_header(AUTH_HEADER, "1");
        marked
    }

    /// `isAuthUrl(url)`: whether `url` (absolute or relative to the page) is at or under an auth route of
    /// the config (`features.auth.routePaths`, when auth is enabled) on the page's origin.
    pub fn is_auth_url(&self, url: &str) -> bool {
        let location = web_sys::window().and_then(|window| window.location().href().ok()).unwrap_or_default();
        let Ok(parsed) = web_sys::Url::new_with_base(url, &location) else {
            return false;
        };
        let same_origin = web_sys::Url::new(&location).is_ok_and(|page| page.origin() == parsed.origin());
        same_origin && self.inner.config().is_auth_route(&parsed.pathname())
    }

    #[cfg(feature = "auth")]
    /// `AUTH_WITH_CREDENTIALS`: whether auth requests send cookies (`credentials: 'include'`): true for
    /// cookie and custom auth, false for bearer.
    pub fn auth_with_credentials(&self) -> bool {
        self.inner.adapter().auth_type().with_credentials()
    }

    /// `getAuthState()`: `{ authenticated, auth, online }`, once the persisted auth is restored.
    pub async fn get_auth_state(&self) -> AuthSnapshot {
        self.inner.ready().await;
        self.auth_state()
    }

    /// The auth state now, without waiting for the restore.
    pub fn auth_state(&self) -> AuthSnapshot {
        let state = self.inner.state.get();
        AuthSnapshot {
            authenticated: state.authenticated,
            auth: self.inner.auth.borrow().clone(),
            online: state.online,
        }
    }

    /// `invalidateByTag(tags)`: removes every cached entry carrying one of `tags`, here and in the Service
    /// Worker's cache (awaited), and fires `cache-invalidated` in every tab.
    pub async fn invalidate_by_tag(&self, tags: &[&str]) -> Result<(), Error> {
        let tags = crate::checks::checked_tags(tags.iter().map(|tag| (*tag).to_owned()).collect(), "tags")?;
        let inner = &self.inner;
        inner.ready().await;
        inner.invalidate_everywhere(&tags).await
    }
}
