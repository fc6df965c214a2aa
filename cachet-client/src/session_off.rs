//! The client's auth part in a build without the cargo feature `auth`: nobody is ever signed in. It has
//! the shape of the real part (`session/mod.rs`), so that the rest of the client is written once: no
//! headers, no credentials, no retry plugin, no record to restore, no channel between tabs, and a worker
//! asking for a refresh is told that this page holds no auth. Only connectivity reaches the auth machine
//! (`Online`, `Offline`), whose one effect then is `Publish`. Calls that need auth are refused before
//! they get here ([`crate::checks::refuse_when_off`]).

use std::cell::Cell;
use std::rc::Rc;

use cachet_core::config::AuthType;
use cachet_core::engine::plugin::Plugin;
use cachet_core::machines::auth::{AuthEffect, AuthEvent, AuthState};
use cachet_core::partition::Identity;
use cachet_core::protocol::AuthChangeKind;

use crate::adapter::AuthAdapter;
use crate::http::{HttpRequest, HttpResponse};
use crate::hub::EventHub;
use crate::locks::Started;
use crate::settings::Settings;
use crate::transport::Transport;
use crate::{AuthData, AuthSnapshot, ClientEvent, Error};

/// Nobody signed in; the connectivity.
pub(crate) struct Session {
    hub: Rc<EventHub>,
    state: Cell<AuthState>,
}

impl Session {
    /// Whether the build has the auth part.
    pub(crate) const BUILT: bool = false;

    /// The signed-out session (no adapter can be given without the feature).
    pub(crate) fn new(
        _settings: Rc<Settings>,
        _transport: Rc<Transport>,
        hub: Rc<EventHub>,
        _started: Rc<Started>,
        _adapter: Option<Rc<dyn AuthAdapter>>,
        online: bool,
    ) -> Result<Rc<Self>, Error> {
        Ok(Rc::new(Session { hub, state: Cell::new(AuthState::new(online, false)) }))
    }

    /// No channel between tabs: nothing to listen to.
    pub(crate) fn channel(&self) -> Option<web_sys::BroadcastChannel> {
        None
    }

    /// Never called: there is no channel.
    pub(crate) fn on_tab_wire(self: &Rc<Self>, _text: &str) {}

    pub(crate) fn state(&self) -> AuthState {
        self.state.get()
    }

    pub(crate) fn snapshot(&self) -> AuthSnapshot {
        AuthSnapshot { authenticated: false, auth: None::<AuthData>, online: self.state.get().online }
    }

    pub(crate) fn refresh_in_flight(&self) -> bool {
        false
    }

    pub(crate) fn holds_auth(&self) -> bool {
        false
    }

    pub(crate) fn adapter_headers(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    pub(crate) fn include_credentials(&self, _request: &mut HttpRequest, _auth: bool) {}

    /// The browser went online or offline: the state's one change.
    pub(crate) async fn connectivity(self: &Rc<Self>, online: bool) {
        let event = if online { AuthEvent::Online } else { AuthEvent::Offline };
        let (next, effects) = self.state.get().reduce(event);
        self.state.set(next);
        for effect in effects {
            if let AuthEffect::Publish(state) = effect {
                self.hub.emit(ClientEvent::StateChanged(state));
            }
        }
    }

    pub(crate) fn follow_auth_type(&self, _kind: AuthType, _enabled: bool) {}

    pub(crate) async fn restore(self: Rc<Self>) {}

    /// No purge is ever marked without the auth part.
    pub(crate) async fn finish_interrupted_purge(&self) {}

    /// A worker's `logout` finds this page signed out already: nothing to do.
    pub(crate) async fn on_remote_auth(self: &Rc<Self>, _kind: AuthChangeKind, _auth: Option<AuthData>) {}

    /// This page holds no auth: a worker asking is told so.
    pub(crate) async fn answer_refresh_request(
        self: &Rc<Self>,
        _failed: Option<String>,
    ) -> (bool, Option<String>) {
        (false, None)
    }

    pub(crate) fn identity(&self) -> Option<Identity> {
        None
    }

    /// Nobody to tell the worker of.
    pub(crate) async fn sync_identity(self: &Rc<Self>) -> Result<(), Error> {
        Ok(())
    }

    pub(crate) fn retry_plugin(self: &Rc<Self>) -> Option<Rc<dyn Plugin<HttpResponse>>> {
        None
    }
}
