//! The auth API of SPEC §4 on [`Client`], with the cargo feature `auth`: `set_auth`, `get_auth`,
//! `clear_auth`, `clear_memory_auth`, `is_auth_valid`, `ensure_valid_auth`, `with_auth_headers`,
//! `AUTH_WITH_CREDENTIALS`; and the adapter of [`ClientBuilder`]. Each call waits for the client's start
//! and is carried out by the auth part (`crate::session`). `is_auth_url` and the state
//! (`get_auth_state`, `auth_state`: never authenticated without the feature, and the connectivity) are
//! in every build (`crate::client`).

use std::rc::Rc;

use cachet_core::partition::AUTH_HEADER;

use crate::adapter::AuthAdapter;
use crate::http::HttpRequest;
use crate::{AuthData, Client, ClientBuilder, Error};

impl Client {
    /// `setAuth(data)`, after a login: keeps `auth` in memory (the token only there), persists the user and
    /// expiry, tells the Service Worker the user's cache partition (and awaits its `ack`, so the next
    /// request lands in it), and signals `login` (or `refresh` when already authenticated) here and in
    /// every other tab.
    ///
    /// The auth is kept even when the Service Worker does not answer; the error then says so.
    #[inline(never)]
    pub fn set_auth<'a>(&'a self, auth: AuthData) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            self.inner.session.set_auth(auth).await
        })
    }

    /// `getAuth()`: the adapter's `get_auth`, else the auth in memory, else the persisted record (user
    /// and expiry, no token), else the adapter's `fetch_user` (the server's `/api/me`). Auth found by the
    /// adapter or the server becomes the current auth when there is none (quietly: no event fires).
    #[inline(never)]
    pub fn get_auth<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            self.inner.session.get_auth().await
        })
    }

    /// `clearAuth()`: purges memory auth, the persisted record, the in-page cache, every cachet cache and
    /// the mutation queue (the Service Worker's `clear-all`, awaited), forgets the identity, ends this
    /// browser's push subscription ([`Client::unsubscribe_push`], with the cargo feature `push`), and
    /// logs out every other tab (`clear`). Every step runs even when one fails; the first failure is
    /// returned.
    #[inline(never)]
    pub fn clear_auth<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            // The push subscription belongs to the user who made it; a failure is said on the console,
            // never in the way of the purge.
            #[cfg(feature = "push")]
            if let Err(error) = self.unsubscribe_push().await {
                web_sys::console::warn_1(
                    &format!("cachet: clearAuth could not end the push subscription: {error}").into(),
                );
            }
            self.inner.session.clear_auth().await
        })
    }

    /// `clearMemoryAuth()`: forgets the auth held in memory; IndexedDB, the caches and the other tabs are
    /// untouched.
    #[inline(never)]
    pub fn clear_memory_auth<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.inner.ready().await;
            self.inner.session.clear_memory_auth().await;
        })
    }

    /// `isAuthValid()`: auth is held in memory and its `expires_at` (if any) is in the future.
    pub fn is_auth_valid(&self) -> bool {
        self.inner.session.is_auth_valid()
    }

    /// `ensureValidAuth()`: the current auth, refreshed first when it expires within
    /// [`crate::ClientOptions::refresh_margin`] (the same single flight as a request's auth failure, so
    /// tabs and requests share it). `Ok(None)` without auth or when the server ended the session; cookie
    /// auth is returned as it is (the server manages its lifetime). An `Err` is a refresh that could not
    /// be carried out (for example offline): the auth stays.
    #[inline(never)]
    pub fn ensure_valid_auth<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            self.inner.session.ensure_valid_auth().await
        })
    }

    /// Refreshes now, whatever the expiry (the same single flight as `ensure_valid_auth`).
    #[inline(never)]
    pub fn refresh_auth<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(async move {
            self.inner.ready().await;
            self.inner.session.refresh_auth().await
        })
    }

    /// The adapter's headers for the current auth (`Authorization: Bearer <token>` in bearer mode).
    pub fn auth_headers(&self) -> Vec<(String, String)> {
        self.inner.session.adapter_headers()
    }

    /// `withAuthHeaders(request)`: `request` with the adapter's headers, the `X-Cachet-Auth: 1` mark (the
    /// Service Worker caches its answer in the user's partition) and, for cookie auth, credentials.
    pub fn with_auth_headers(&self, request: &HttpRequest) -> HttpRequest {
        let mut marked = self.inner.with_adapter_headers(request, true);
        marked.set_header(AUTH_HEADER, "1");
        marked
    }

    /// `AUTH_WITH_CREDENTIALS`: whether auth requests send cookies (`credentials: 'include'`): true for
    /// cookie and custom auth, false for bearer.
    pub fn auth_with_credentials(&self) -> bool {
        self.inner.session.with_credentials()
    }
}

impl ClientBuilder {
    /// The auth adapter; default: the SPEC's adapter for `features.auth.type` (required for `custom`).
    pub fn adapter(self, adapter: impl AuthAdapter + 'static) -> Self {
        self.shared_adapter(Rc::new(adapter))
    }

    /// An adapter already shared.
    pub fn shared_adapter(mut self, adapter: Rc<dyn AuthAdapter>) -> Self {
        self.adapter = Some(adapter);
        self
    }
}
