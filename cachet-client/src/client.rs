//! [`Client`], its [`ClientBuilder`] and [`ClientOptions`], and the state one client holds.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use cachet_core::config::{Config, FailureCheck};
use cachet_core::engine::plugin::Plugins;
use cachet_core::machines::auth::AuthState;
use cachet_core::protocol::{encode_sw_event, PageToSw, SwEvent, BROADCAST_CHANNEL};
use futures::channel::oneshot;
use futures::future::{LocalBoxFuture, Shared};
use gloo::events::EventListener;
use web_sys::BroadcastChannel;

use crate::adapter::AuthAdapter;
use crate::config_source::ConfigSource;
use crate::dedup::InFlight;
use crate::events::{dispatch_window_event, EventStream, Subscribers, Subscription};
use crate::http::{Http, HttpResponse};
use crate::memory_cache::MemoryCache;
use crate::refresh_state::RefreshCoordinator;
use crate::store::AuthStore;
use crate::sw_link::SwLink;
use crate::tabs::{TabMessage, AUTH_CHANNEL};
use crate::{AuthData, ClientEvent, Error};

/// Tuning and names. The defaults suit every app; the names change only for tests or for two apps
/// sharing one origin.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// `ensure_valid_auth()` refreshes when the auth expires within this margin (default 30 s).
    pub refresh_margin: Duration,
    /// How long a refresh may take before the requests waiting for it fail (default 15 s).
    pub refresh_timeout: Duration,
    /// How long to wait for another tab's auth: at start-up (a reload in bearer mode asks the open tabs
    /// for the token) and when another tab refreshed first (default 1 s).
    pub peer_wait: Duration,
    /// How long the Service Worker may take to acknowledge a message (default 10 s).
    pub service_worker_timeout: Duration,
    /// IndexedDB database of the persisted auth record (default `cachet-client`).
    pub database: String,
    /// BroadcastChannel between tabs (default `cachet-auth`).
    pub auth_channel: String,
    /// BroadcastChannel of the Service Worker's events (default `cachet`).
    pub events_channel: String,
    /// Web Lock held while refreshing (default `cachet-refresh`).
    pub refresh_lock: String,
    /// Whether to fire the SPEC §6 events on `window` (default true).
    pub window_events: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            refresh_margin: Duration::from_secs(30),
            refresh_timeout: Duration::from_secs(15),
            peer_wait: Duration::from_secs(1),
            service_worker_timeout: Duration::from_secs(10),
            database: "cachet-client".to_owned(),
            auth_channel: AUTH_CHANNEL.to_owned(),
            events_channel: BROADCAST_CHANNEL.to_owned(),
            refresh_lock: "cachet-refresh".to_owned(),
            window_events: true,
        }
    }
}

/// The page client. Cheap to clone (one shared state); two clones are equal. Dropping the last clone
/// removes its listeners and closes its channels.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Rc<Inner>,
}

impl PartialEq for Client {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Client").field("state", &self.inner.state.get()).finish()
    }
}

/// The state of one client.
pub(crate) struct Inner {
    /// The config in force: the page's at first, the Service Worker's once it answered and differed
    /// ([`crate::config_sync`]).
    pub(crate) config: RefCell<Rc<Config>>,
    /// Where the config in force came from, for the console.
    pub(crate) config_source: Cell<ConfigSource>,
    pub(crate) adapter: RefCell<Rc<dyn AuthAdapter>>,
    /// Whether the adapter is the default of the config's auth type (it then follows the config).
    pub(crate) adapter_from_config: bool,
    pub(crate) http: Http,
    pub(crate) options: ClientOptions,
    /// THE auth-failure check (default: the config's rule).
    pub(crate) failure_check: FailureCheck,
    /// The engine's plugins in the page: the defaults (unless left out), then the app's.
    pub(crate) plugins: Plugins<HttpResponse>,
    pub(crate) store: AuthStore,
    pub(crate) state: Cell<AuthState>,
    pub(crate) auth: RefCell<Option<AuthData>>,
    /// Bumped whenever memory auth is dropped, so that a refresh finishing later is discarded.
    pub(crate) epoch: Cell<u64>,
    pub(crate) auth_watchers: RefCell<Vec<oneshot::Sender<()>>>,
    pub(crate) refresh: RefreshCoordinator,
    pub(crate) cache: RefCell<MemoryCache>,
    pub(crate) inflight: InFlight,
    pub(crate) subscribers: Rc<Subscribers>,
    pub(crate) sw: SwLink,
    pub(crate) events_channel: Option<BroadcastChannel>,
    pub(crate) auth_channel: Option<BroadcastChannel>,
    pub(crate) listeners: RefCell<Vec<EventListener>>,
    pub(crate) ready: RefCell<Option<Shared<LocalBoxFuture<'static, ()>>>>,
    /// The engine's background work in this page ([`crate::page_engine::Background`]).
    pub(crate) background: Rc<crate::page_engine::Background>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for channel in self.events_channel.iter().chain(self.auth_channel.iter()) {
            channel.close();
        }
    }
}

impl Inner {
    /// The config in force.
    pub(crate) fn config(&self) -> Rc<Config> {
        self.config.borrow().clone()
    }

    /// The auth adapter in force.
    pub(crate) fn adapter(&self) -> Rc<dyn AuthAdapter> {
        self.adapter.borrow().clone()
    }

    /// Resolves once the persisted auth has been restored.
    pub(crate) async fn ready(&self) {
        let ready = self.ready.borrow().clone();
        if let Some(ready) = ready {
            ready.await;
        }
    }

    /// Tells subscribers, and `window` for the SPEC §6 events.
    pub(crate) fn emit(&self, event: ClientEvent) {
        if self.options.window_events {
            if let Some((name, detail)) = event.window_event() {
                dispatch_window_event(name, &detail);
            }
        }
        self.subscribers.emit(&event);
    }

    /// Posts to the other tabs (this tab's own channel object never hears its posts).
    pub(crate) fn post_tab(&self, message: &TabMessage) {
        if let Some(channel) = &self.auth_channel {
            if let Err(error) = channel.post_message(&message.to_wire().into()) {
                web_sys::console::warn_1(
                    &Error::js("BroadcastChannel.postMessage", error).to_string().into(),
                );
            }
        }
    }

    /// Posts an event in the Service Worker's format on `cachet`, for the other tabs and agents.
    pub(crate) fn post_event(&self, event: &SwEvent) {
        if let Some(channel) = &self.events_channel {
            let _ = channel.post_message(&encode_sw_event(event).into());
        }
    }

    /// Removes the entries tagged `tags` from the in-page cache and fires `cache-invalidated`; with
    /// `announce`, the other tabs and agents hear it too (the page did what a Service Worker would).
    pub(crate) fn invalidate_locally(&self, tags: &[String], announce: bool) {
        self.cache.borrow_mut().invalidate(tags);
        if announce {
            self.post_event(&SwEvent::CacheInvalidated { tags: tags.to_vec() });
        }
        self.emit(ClientEvent::CacheInvalidated { tags: tags.to_vec() });
    }

    /// Invalidates `tags` in the in-page cache and in the Service Worker's, when one exists (even one not
    /// controlling the page yet, after a hard reload: its cache is used again later). The Service Worker
    /// then broadcasts `cache-invalidated` to every page, this one included; without one, the page
    /// announces it itself.
    pub(crate) async fn invalidate_everywhere(&self, tags: &[String]) -> Result<(), Error> {
        if self.service_worker().await.is_none() {
            self.invalidate_locally(tags, true);
            return Ok(());
        }
        self.cache.borrow_mut().invalidate(tags);
        let outcome =
            self.sw_request(|request_id| PageToSw::InvalidateTags { request_id, tags: tags.to_vec() }).await;
        if outcome.is_err() {
            self.invalidate_locally(tags, true);
        }
        outcome
    }
}

impl Client {
    /// Drops the entries tagged `tags` from this page's in-memory cache, and does nothing else (no
    /// event, no message): for a consumer that heard of an invalidation from elsewhere (another tab,
    /// the agent) and is about to read again, so that the read cannot be answered by an entry the
    /// client's own listener has not dropped yet. Idempotent; the Service Worker's cache is not touched
    /// (it removes its entries before it announces them).
    pub fn forget_cached(&self, tags: &[String]) {
        self.inner.cache.borrow_mut().invalidate(tags);
    }

    /// The config this client follows (the Service Worker's, once it answered).
    pub fn config(&self) -> Rc<Config> {
        self.inner.config()
    }

    /// Where the config in force came from.
    pub fn config_source(&self) -> ConfigSource {
        self.inner.config_source.get()
    }

    /// Calls `callback` with every [`ClientEvent`] until the returned [`Subscription`] is dropped.
    pub fn subscribe(&self, callback: impl Fn(&ClientEvent) + 'static) -> Subscription {
        self.inner.subscribers.add(Rc::new(callback))
    }

    /// Every [`ClientEvent`] from now on, as a stream.
    pub fn events(&self) -> EventStream {
        EventStream::new(&self.inner.subscribers)
    }

    /// Resolves once the client restored the persisted auth (every async call waits for it anyway).
    pub async fn ready(&self) {
        self.inner.ready().await;
    }

    /// Whether a Service Worker controls the page (requests then go through it).
    pub fn is_controlled(&self) -> bool {
        self.inner.is_controlled()
    }

    /// Entries of the in-page cache (used while no Service Worker controls the page).
    pub fn memory_cache_len(&self) -> usize {
        self.inner.cache.borrow().len()
    }

    /// Reads in flight (deduplicated).
    pub fn reads_in_flight(&self) -> usize {
        self.inner.inflight.len()
    }

    /// Whether a token refresh is running in this tab.
    pub fn refresh_in_flight(&self) -> bool {
        self.inner.refresh.in_flight()
    }

    /// Resolves once the background work the engine started in this page has ended: an answer stored
    /// after it was given, a stale-while-revalidate re-fetch with its store and its `cache-updated`
    /// (work started meanwhile is waited for too). With a Service Worker in control that work runs in
    /// the worker, and this resolves at once. For tests and for code that must read what was stored.
    pub async fn settled(&self) {
        self.inner.background.settled().await;
    }
}
