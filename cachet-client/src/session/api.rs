//! What the auth calls of [`crate::Client`] do (the façade, `crate::auth`, waits for the client's start
//! and hands each call here).

use std::rc::Rc;

use cachet_core::machines::auth::AuthEvent;
use cachet_core::machines::refresh::RejectReason;

use super::flight::{Origin, RefreshOutcome};
use super::Session;
use crate::locks::{millis, now_ms};
use crate::{AuthData, Error};

impl Session {
    /// `setAuth(data)`.
    pub(crate) async fn set_auth(self: &Rc<Self>, auth: AuthData) -> Result<(), Error> {
        self.keep_auth(auth).await?;
        let identity = self.sync_identity().await;
        self.apply_auth(AuthEvent::SetAuth, Origin::Page).await?;
        identity
    }

    /// `getAuth()`.
    pub(crate) async fn get_auth(self: &Rc<Self>) -> Result<Option<AuthData>, Error> {
        if let Some(auth) = self.adapter().get_auth().await? {
            self.adopt(auth.clone()).await?;
            return Ok(Some(auth));
        }
        if let Some(auth) = self.auth.borrow().clone() {
            return Ok(Some(auth));
        }
        if let Some(record) = self.store.load().await? {
            return Ok(Some(record.to_auth()));
        }
        let fetched = self.adapter().fetch_user(&self.transport.http, None).await?;
        if let Some(auth) = &fetched {
            self.adopt(auth.clone()).await?;
        }
        Ok(fetched)
    }

    /// `clearAuth()` (the push subscription is the façade's to end first).
    pub(crate) async fn clear_auth(self: &Rc<Self>) -> Result<(), Error> {
        self.apply_auth(AuthEvent::ClearAuth, Origin::Page).await
    }

    /// `clearMemoryAuth()`.
    pub(crate) async fn clear_memory_auth(self: &Rc<Self>) {
        let _ = self.apply_auth(AuthEvent::ClearMemoryAuth, Origin::Page).await;
    }

    /// `isAuthValid()`.
    pub(crate) fn is_auth_valid(&self) -> bool {
        self.auth.borrow().as_ref().is_some_and(|auth| auth.is_valid_at(now_ms()))
    }

    /// `ensureValidAuth()`.
    pub(crate) async fn ensure_valid_auth(self: &Rc<Self>) -> Result<Option<AuthData>, Error> {
        let Some(auth) = self.auth.borrow().clone() else {
            return Ok(None);
        };
        let margin = millis(self.settings.options.refresh_margin);
        if auth.is_valid_at(now_ms().saturating_add(margin)) {
            return Ok(Some(auth));
        }
        self.refresh_auth().await
    }

    /// A refresh now, whatever the expiry.
    pub(crate) async fn refresh_auth(self: &Rc<Self>) -> Result<Option<AuthData>, Error> {
        let failed = self.auth.borrow().as_ref().and_then(AuthData::authorization);
        let generation = self.refresh.generation();
        match self.after_auth_failure(failed, false, generation, Origin::Page).await {
            RefreshOutcome::Retry { .. } | RefreshOutcome::Reject(RejectReason::NotRefreshable) => {
                Ok(self.auth.borrow().clone())
            }
            RefreshOutcome::Reject(_) => match (self.auth.borrow().clone(), self.refresh.last_error()) {
                (Some(_), Some(error)) => Err(error),
                (auth, _) => Ok(auth),
            },
        }
    }

    /// `AUTH_WITH_CREDENTIALS`.
    pub(crate) fn with_credentials(&self) -> bool {
        self.adapter().auth_type().with_credentials()
    }
}
