//! The client's auth part (the cargo feature `auth`; without it `session_off.rs` stands in, signed out,
//! with the same shape: that is the feature's one seam). It owns who is signed in: the adapter, the auth
//! in memory and its persisted record, the auth machine's state, the tab's refresh single flight and the
//! `cachet-auth` channel between tabs. It reaches the rest of the client through the parts it is given
//! (the transport and its link to the worker, the event hub, the settings), never through the client.
//!
//! | File | What |
//! |---|---|
//! | `effects.rs` | the auth machine's effects carried out ([`Session::apply_auth`]) |
//! | [`refresh`] | the single flight of token refresh, for the page's requests and the worker's |
//! | `flight.rs` | the tab's refresh state over the core's machine |
//! | `restore.rs` | the session restored when a page starts |
//! | `plugin.rs` | refresh-and-retry in the page, as an engine plugin |
//! | `store.rs` | the persisted record (never the token) |
//! | [`tabs`] | what one tab tells the others |
//! | `api.rs` | what the auth calls of [`crate::Client`] do |

mod api;
mod effects;
mod flight;
mod plugin;
pub mod refresh;
mod restore;
mod store;
pub mod tabs;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use cachet_core::config::AuthType;
use cachet_core::machines::auth::{AuthEvent, AuthState};
use futures::channel::oneshot;
use web_sys::BroadcastChannel;

use crate::adapter::{default_adapter, AuthAdapter};
use crate::http::{Credentials, HttpRequest};
use crate::hub::EventHub;
use crate::locks::Started;
use crate::settings::Settings;
use crate::transport::Transport;
use crate::{AuthData, AuthSnapshot, Error};

use flight::{Origin, RefreshCoordinator};
use store::AuthStore;
use tabs::TabMessage;

/// Who is signed in, as this tab knows it.
pub(crate) struct Session {
    settings: Rc<Settings>,
    transport: Rc<Transport>,
    hub: Rc<EventHub>,
    started: Rc<Started>,
    adapter: RefCell<Rc<dyn AuthAdapter>>,
    /// Whether the adapter is the default of the config's auth type (it then follows the config).
    adapter_from_config: bool,
    store: AuthStore,
    state: Cell<AuthState>,
    auth: RefCell<Option<AuthData>>,
    /// Bumped whenever memory auth is dropped, so that a refresh finishing later is discarded.
    epoch: Cell<u64>,
    watchers: RefCell<Vec<oneshot::Sender<()>>>,
    refresh: RefreshCoordinator,
    /// The `cachet-auth` channel between tabs.
    channel: BroadcastChannel,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.channel.close();
    }
}

/// [`default_adapter`] for `auth_type`, or the error that `custom` needs the app's own.
fn config_adapter(auth_type: AuthType) -> Result<Rc<dyn AuthAdapter>, Error> {
    default_adapter(auth_type).map(Rc::from).ok_or(Error::NoAuthAdapter)
}

impl Session {
    /// Whether the build has the auth part.
    pub(crate) const BUILT: bool = true;

    /// The session of a client starting with `adapter` (default: the config's type's), online or not.
    pub(crate) fn new(
        settings: Rc<Settings>,
        transport: Rc<Transport>,
        hub: Rc<EventHub>,
        started: Rc<Started>,
        adapter: Option<Rc<dyn AuthAdapter>>,
        online: bool,
    ) -> Result<Rc<Self>, Error> {
        let adapter_from_config = adapter.is_none();
        let adapter = match adapter {
            Some(adapter) => adapter,
            None => config_adapter(settings.config().features.auth.kind)?,
        };
        let channel = BroadcastChannel::new(&settings.options.auth_channel)
            .map_err(|error| Error::js("new BroadcastChannel", error))?;
        Ok(Rc::new(Session {
            refresh: RefreshCoordinator::new(adapter.auth_type().refreshes()),
            store: AuthStore::new(&settings.options.database),
            state: Cell::new(AuthState::new(online, false)),
            auth: RefCell::new(None),
            epoch: Cell::new(0),
            watchers: RefCell::new(Vec::new()),
            adapter: RefCell::new(adapter),
            adapter_from_config,
            channel,
            settings,
            transport,
            hub,
            started,
        }))
    }

    /// The `cachet-auth` channel, which the client's listeners hear for this part.
    pub(crate) fn channel(&self) -> Option<BroadcastChannel> {
        Some(self.channel.clone())
    }

    /// A message of another tab on the `cachet-auth` channel (see [`tabs`]).
    pub(crate) fn on_tab_wire(self: &Rc<Self>, text: &str) {
        if let Some(message) = TabMessage::from_wire(text) {
            self.on_tab_message(message);
        }
    }

    /// The auth machine's state.
    pub(crate) fn state(&self) -> AuthState {
        self.state.get()
    }

    /// What `getAuthState()` returns now.
    pub(crate) fn snapshot(&self) -> AuthSnapshot {
        let state = self.state.get();
        AuthSnapshot {
            authenticated: state.authenticated,
            auth: self.auth.borrow().clone(),
            online: state.online,
        }
    }

    /// Whether a token refresh is running in this tab.
    pub(crate) fn refresh_in_flight(&self) -> bool {
        self.refresh.in_flight()
    }

    /// Whether this tab holds auth (signed in, or signed in from the record).
    pub(crate) fn holds_auth(&self) -> bool {
        self.auth.borrow().is_some()
    }

    /// The auth adapter in force.
    fn adapter(&self) -> Rc<dyn AuthAdapter> {
        self.adapter.borrow().clone()
    }

    /// The adapter's headers for the auth held now.
    pub(crate) fn adapter_headers(&self) -> Vec<(String, String)> {
        self.adapter().get_headers(self.auth.borrow().as_ref())
    }

    /// Makes `request` send cookies when it is sent with `auth` and the auth type sends them.
    pub(crate) fn include_credentials(&self, request: &mut HttpRequest, auth: bool) {
        if auth && self.adapter().auth_type().with_credentials() {
            request.credentials = Credentials::Include;
        }
    }

    /// The browser went online or offline.
    pub(crate) async fn connectivity(self: &Rc<Self>, online: bool) {
        let event = if online { AuthEvent::Online } else { AuthEvent::Offline };
        let _ = self.apply_auth(event, Origin::Page).await;
    }

    /// The config in force now says `kind` (auth on or not): a default adapter follows it; an adapter
    /// the app gave is kept, with a warning when its type differs.
    pub(crate) fn follow_auth_type(&self, kind: AuthType, enabled: bool) {
        if self.adapter_from_config {
            match config_adapter(kind) {
                Ok(adapter) => {
                    self.refresh.set_refreshes(adapter.auth_type().refreshes());
                    *self.adapter.borrow_mut() = adapter;
                }
                Err(error) => {
                    web_sys::console::warn_1(&format!("cachet: {error}; the adapter is kept").into())
                }
            }
        } else if self.adapter().auth_type() != kind && enabled {
            web_sys::console::warn_1(
                &format!(
                    "cachet: the page's auth adapter is {} but the Service Worker's config says {}; the adapter is kept",
                    self.adapter().auth_type().as_str(),
                    kind.as_str()
                )
                .into(),
            );
        }
    }

    /// Posts to the other tabs (this tab's own channel object never hears its posts).
    fn post_tab(&self, message: &TabMessage) {
        if let Err(error) = self.channel.post_message(&message.to_wire().into()) {
            web_sys::console::warn_1(&Error::js("BroadcastChannel.postMessage", error).to_string().into());
        }
    }

    fn on_tab_message(self: &Rc<Self>, message: TabMessage) {
        let session = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            match message {
                TabMessage::Changed { kind, auth } => session.on_remote_auth(kind, auth).await,
                TabMessage::Query => {
                    session.started.wait().await;
                    let auth = session.auth.borrow().clone();
                    // A page signed in from its stored record holds no token to lend.
                    let state = session.state.get();
                    if let (true, false, Some(auth)) = (state.authenticated, state.restore_pending, auth) {
                        session.post_tab(&TabMessage::Answer { auth });
                    }
                }
                TabMessage::Answer { auth } => {
                    if let Err(error) = session.adopt(auth).await {
                        web_sys::console::warn_1(
                            &format!("cachet: adopting another tab's auth: {error}").into(),
                        );
                    }
                }
            }
        });
    }
}
