//! The runner: carries out the planner's decisions over three small traits, so that the Service Worker
//! (Cache Storage and its IndexedDB index, `fetch`, `waitUntil`, the `cachet` BroadcastChannel) and the page
//! with no worker (its memory cache, its HTTP client, `spawn_local`, its event listeners) run the same
//! steps. It decides nothing itself: every branch is a [`super::plan`] answer.
//!
//! The edges keep only what is theirs: how a response is read, marked (`X-Cachet-Source`) and stored, how
//! the auth-failure check is run and a refresh-and-retry happens inside [`Network::fetch`], and how
//! storage-full is handled inside [`Store::store`].

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::protocol::SwEvent;

use super::key::EntryKey;
use super::plan::{self, AfterLookup, AfterNetworkFailure, Answered, Job, NotStored, Start, Storing};

/// An entry the store holds.
#[derive(Debug, Clone)]
pub struct Hit<R> {
    /// The stored response, ready to be answered with (marked as coming from the cache).
    pub response: R,
    /// When it was stored (Unix ms); `None` when the entry carries no readable time.
    pub stored_at: Option<u64>,
    /// Its body, when the lookup was asked for it.
    pub body: Option<Vec<u8>>,
}

/// An answer from the network.
#[derive(Debug, Clone)]
pub struct Fetched<R> {
    /// The response, ready to be answered with (marked as coming from the network).
    pub response: R,
    /// Its status.
    pub status: u16,
    /// Its body (already read: the planner checks it, the store keeps it).
    pub body: Vec<u8>,
    /// The configured auth-failure check's verdict, after any refresh-and-retry.
    pub auth_failure: bool,
    /// The server's `X-SW-Cache-Tags`.
    pub server_tags: Option<String>,
}

/// Where entries live.
#[allow(async_fn_in_trait)] // single-threaded wasm: no `Send` bound wanted
pub trait Store<R, E> {
    /// The entry at `entry`, with its body when `read_body`.
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<R>>, E>;
    /// Stores `fetched` at `entry` with `tags` (recorded for invalidation), stored at `now`, then keeps at
    /// most `keep` entries in `entry.cache`, least recently used evicted first. `Ok(false)`: storage refused
    /// it (full even after the store's own eviction).
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<R>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<bool, E>;
    /// A hit at `now` on `entry`: mark it used (least-recently-used eviction).
    fn used(&self, entry: &EntryKey, now: u64);
}

/// Where answers come from.
#[allow(async_fn_in_trait)]
pub trait Network<R, E> {
    /// Sends the request (again, for a background re-fetch) and reads the answer.
    async fn fetch(&self) -> Result<Fetched<R>, E>;
    /// Whether `error` means the network could not be reached (network-first then falls back).
    fn unreachable(error: &E) -> bool;
}

/// Work in the background, the clock, announcements.
pub trait Host {
    /// Now, Unix milliseconds.
    fn now(&self) -> u64;
    /// Keeps `work` running after the answer is given (`waitUntil`, `spawn_local`).
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>);
    /// Tells every page (the worker's broadcast, the client's listeners).
    fn announce(&self, event: SwEvent);
    /// Reports something ignored (a console warning).
    fn warn(&self, message: &str);
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The store.
    Cache,
    /// The network.
    Network,
}

/// What the runner answered, and what it did on the way (the parity suite compares these).
#[derive(Debug, Clone)]
pub struct Served<R> {
    /// The answer.
    pub response: R,
    /// Where it came from.
    pub source: Source,
    /// For a network answer: whether it was stored (with its tags) or why not.
    pub storing: Option<Storing>,
}

/// Why the runner gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failed<E> {
    /// Cache-only with nothing (fresh) stored.
    NotCached,
    /// The store or the network failed (for network-first: with nothing fresh to fall back on).
    Edge(E),
}

impl<E> From<E> for Failed<E> {
    fn from(error: E) -> Self {
        Failed::Edge(error)
    }
}

/// Answers `job` with its strategy.
pub async fn run<R, E, S, N, H>(
    job: Rc<Job>,
    store: Rc<S>,
    network: Rc<N>,
    host: Rc<H>,
) -> Result<Served<R>, Failed<E>>
where
    R: 'static,
    E: 'static,
    S: Store<R, E> + 'static,
    N: Network<R, E> + 'static,
    H: Host + 'static,
{
    let first = plan::start(&job);
    if let (Start::Lookup { read_body }, Some(entry)) = (first, &job.entry) {
        let hit = store.lookup(entry, read_body).await?;
        let now = host.now();
        let found = plan::found(&job, hit.as_ref().map(|hit| hit.stored_at), now);
        match (plan::after_lookup(&job, found), hit) {
            (AfterLookup::Serve { revalidate }, Some(hit)) => {
                store.used(entry, now);
                if revalidate {
                    let stale = hit.body.clone().unwrap_or_default();
                    let (job, store, network, background) = (job.clone(), store, network, host.clone());
                    host.background(Box::pin(async move {
                        revalidate_in_background(&job, &*store, &*network, &*background, &stale).await;
                    }));
                }
                return Ok(Served { response: hit.response, source: Source::Cache, storing: None });
            }
            (AfterLookup::NotCached, _) => return Err(Failed::NotCached),
            _ => {}
        }
    }
    match fetch_and_store(&job, &*store, &*network, &*host).await {
        Ok((fetched, storing)) => {
            Ok(Served { response: fetched.response, source: Source::Network, storing: Some(storing) })
        }
        Err(error) if N::unreachable(&error) => {
            let (AfterNetworkFailure::FallBack, Some(entry)) =
                (plan::after_network_failure(&job, first), &job.entry)
            else {
                return Err(Failed::Edge(error));
            };
            let hit = store.lookup(entry, false).await?;
            let now = host.now();
            match (plan::found(&job, hit.as_ref().map(|hit| hit.stored_at), now), hit) {
                (plan::Found::Fresh, Some(hit)) => {
                    store.used(entry, now);
                    Ok(Served { response: hit.response, source: Source::Cache, storing: None })
                }
                _ => Err(Failed::Edge(error)),
            }
        }
        Err(error) => Err(Failed::Edge(error)),
    }
}

/// Asks the network, then stores the answer when the planner says so.
async fn fetch_and_store<R, E>(
    job: &Job,
    store: &impl Store<R, E>,
    network: &impl Network<R, E>,
    host: &impl Host,
) -> Result<(Fetched<R>, Storing), E> {
    let fetched = network.fetch().await?;
    let answered = Answered {
        status: fetched.status,
        auth_failure: fetched.auth_failure,
        body: &fetched.body,
        server_tags: fetched.server_tags.as_deref(),
    };
    let mut storing = plan::storing(job, &answered);
    if let (Storing::Store { tags, keep, ignored_server_tags }, Some(entry)) = (&storing, &job.entry) {
        if let Some(warning) = ignored_server_tags {
            host.warn(warning);
        }
        if !store.store(entry, &fetched, tags, *keep, host.now()).await? {
            storing = Storing::Skip(NotStored::StoreFull);
        }
    }
    Ok((fetched, storing))
}

/// Stale-while-revalidate's re-fetch: stores the fresh answer and announces a change. A failure keeps the
/// stale copy and is only reported: nobody waits for this answer.
async fn revalidate_in_background<R, E, N: Network<R, E>>(
    job: &Job,
    store: &impl Store<R, E>,
    network: &N,
    host: &impl Host,
    stale: &[u8],
) {
    match fetch_and_store(job, store, network, host).await {
        Ok((fetched, storing)) => {
            let stored = matches!(storing, Storing::Store { .. });
            if let Some(event) = plan::after_revalidate(job, stale, &fetched.body, stored) {
                host.announce(event);
            }
        }
        // Offline: nothing worth reporting, the stale copy stays.
        Err(error) if N::unreachable(&error) => {}
        Err(_) => {
            host.warn(&format!("background re-fetch of {} failed; the stale copy stays", job.announce_url))
        }
    }
}
