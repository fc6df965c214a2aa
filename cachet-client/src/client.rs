//! [`Client`], the façade, and what ties its parts together. Each part has its own state and file:
//!
//! | Part | File | Owns |
//! |---|---|---|
//! | settings | `settings.rs` | the config in force, where it came from, the [`crate::ClientOptions`] |
//! | transport | `transport.rs` (and `link.rs`) | the network, the plugins, the auth-failure check, the in-page cache, reads in flight, background work, the link to the Service Worker |
//! | event hub | `hub.rs` | the subscribers, the `window` events, the `cachet` channel |
//! | session | `session/` (`session_off.rs` without the cargo feature `auth`) | who is signed in: adapter, auth, record, auth machine, refresh, the tabs' channel |
//!
//! A part never reaches the client: the session is given the transport, the hub and the settings; the
//! flows that span parts (`pipeline`, `page_engine`, `listeners`, `config_sync`, `handover`) are
//! `impl Inner` in their own files.

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::protocol::{PageToSw, SwEvent};

use crate::events::{EventStream, Subscription};
use crate::hub::EventHub;
use crate::locks::Started;
use crate::session::Session;
use crate::settings::ConfigSource;
use crate::settings::Settings;
use crate::transport::Transport;
use crate::{AuthSnapshot, ClientEvent, Error};

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
        formatter.debug_struct("Client").field("state", &self.inner.session.state()).finish()
    }
}

/// The state of one client: its parts, each with its own state and file, and what ties them.
pub(crate) struct Inner {
    pub(crate) settings: Rc<Settings>,
    pub(crate) transport: Rc<Transport>,
    pub(crate) hub: Rc<EventHub>,
    /// The auth part (`crate::session`; signed out for good without the cargo feature `auth`).
    pub(crate) session: Rc<Session>,
    pub(crate) listeners: RefCell<Option<crate::js::Listening>>,
    pub(crate) started: Rc<Started>,
    /// The offline queue's alarm (`crate::queue_alarm`; cargo feature `queue`).
    #[cfg(feature = "queue")]
    pub(crate) alarm: Rc<crate::queue_alarm::Alarm>,
}

impl Inner {
    /// The config in force.
    pub(crate) fn config(&self) -> Rc<Config> {
        self.settings.config()
    }

    /// Resolves once the client's start is done (the worker's config followed, the session restored).
    pub(crate) async fn ready(&self) {
        self.started.wait().await;
    }

    /// Resolves once the start's first stage is done: a purge an earlier page left unfinished is finished.
    pub(crate) async fn purge_settled(&self) {
        self.started.purge_settled().await;
    }

    /// Whether a Service Worker controls the page.
    pub(crate) fn is_controlled(&self) -> bool {
        self.transport.link.is_controlled()
    }

    /// Removes the entries tagged `tags` from the in-page cache and fires `cache-invalidated`; with
    /// `announce`, the other tabs and agents hear it too (the page did what a Service Worker would).
    pub(crate) fn invalidate_locally(&self, tags: &[String], announce: bool) {
        self.transport.cache.borrow_mut().invalidate(tags);
        if announce {
            self.hub.post_event(&SwEvent::CacheInvalidated { tags: tags.to_vec() });
        }
        self.hub.emit(ClientEvent::CacheInvalidated { tags: tags.to_vec() });
    }

    /// Invalidates `tags` in the in-page cache and in the Service Worker's, when one exists (even one not
    /// controlling the page yet, after a hard reload: its cache is used again later). The Service Worker
    /// then broadcasts `cache-invalidated` to every page, this one included; without one, the page
    /// announces it itself.
    pub(crate) async fn invalidate_everywhere(&self, tags: &[String]) -> Result<(), Error> {
        let link = &self.transport.link;
        if link.service_worker().await.is_none() {
            self.invalidate_locally(tags, true);
            return Ok(());
        }
        self.transport.cache.borrow_mut().invalidate(tags);
        let outcome =
            link.request(|request_id| PageToSw::InvalidateTags { request_id, tags: tags.to_vec() }).await;
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
        self.inner.transport.cache.borrow_mut().invalidate(tags);
    }

    /// The config this client follows (the Service Worker's, once it answered).
    pub fn config(&self) -> Rc<Config> {
        self.inner.config()
    }

    /// Where the config in force came from.
    pub fn config_source(&self) -> ConfigSource {
        self.inner.settings.source()
    }

    /// Calls `callback` with every [`ClientEvent`] until the returned [`Subscription`] is dropped.
    pub fn subscribe(&self, callback: impl Fn(&ClientEvent) + 'static) -> Subscription {
        self.inner.hub.subscribers.add(Rc::new(callback))
    }

    /// Every [`ClientEvent`] from now on, as a stream.
    pub fn events(&self) -> EventStream {
        EventStream::new(&self.inner.hub.subscribers)
    }

    /// Resolves once the client restored the persisted auth (every async call waits for it anyway).
    #[inline(never)]
    pub fn ready<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.inner.ready().await;
        })
    }

    /// Resolves once the first step of the client's start is done: a purge an earlier page began and
    /// could not finish (a [`Client::clear_auth`] the Service Worker never acknowledged: the page closed,
    /// the worker stopped) is finished, so that nothing read from the caches after it is what the purge
    /// was asked to remove. Earlier than [`Client::ready`]: it waits for no config and no session restore.
    #[inline(never)]
    pub fn purge_settled<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.inner.purge_settled().await;
        })
    }

    /// Whether a Service Worker controls the page (requests then go through it).
    pub fn is_controlled(&self) -> bool {
        self.inner.is_controlled()
    }

    /// Entries of the in-page cache (used while no Service Worker controls the page).
    pub fn memory_cache_len(&self) -> usize {
        self.inner.transport.cache.borrow().len()
    }

    /// Reads in flight (deduplicated).
    pub fn reads_in_flight(&self) -> usize {
        self.inner.transport.inflight.len()
    }

    /// Whether a token refresh is running in this tab.
    pub fn refresh_in_flight(&self) -> bool {
        self.inner.session.refresh_in_flight()
    }

    /// Resolves once the background work the engine started in this page has ended: an answer stored
    /// after it was given, a stale-while-revalidate re-fetch with its store and its `cache-updated`
    /// (work started meanwhile is waited for too). With a Service Worker in control that work runs in
    /// the worker, and this resolves at once. For tests and for code that must read what was stored.
    #[inline(never)]
    pub fn settled<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.inner.transport.background.settled().await;
        })
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

    /// `getAuthState()`: `{ authenticated, auth, online }`, once the persisted auth is restored.
    #[inline(never)]
    pub fn get_auth_state<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, AuthSnapshot> {
        Box::pin(async move {
            self.inner.ready().await;
            self.auth_state()
        })
    }

    /// The auth state now, without waiting for the restore.
    pub fn auth_state(&self) -> AuthSnapshot {
        self.inner.session.snapshot()
    }

    /// `invalidateByTag(tags)`: removes every cached entry carrying one of `tags`, here and in the Service
    /// Worker's cache (awaited), and fires `cache-invalidated` in every tab.
    #[inline(never)]
    pub fn invalidate_by_tag<'a>(
        &'a self,
        tags: &'a [&str],
    ) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let tags =
                crate::checks::checked_tags(tags.iter().map(|tag| (*tag).to_owned()).collect(), "tags")?;
            self.inner.ready().await;
            self.inner.invalidate_everywhere(&tags).await
        })
    }
}
