//! The runner: carries out the planner's decisions over three small traits, so that the Service Worker
//! (Cache Storage and its IndexedDB index, `fetch`, `waitUntil`, the `cachet` BroadcastChannel) and the page
//! with no worker (its memory cache, its HTTP client, `spawn_local`, its event listeners) run the same
//! steps. It decides nothing itself: every branch is a [`super::plan`] answer.
//!
//! The edges keep only what is theirs: how a response is read, marked (`X-Cachet-Source`) and stored, how
//! the auth-failure check is run and a refresh-and-retry happens inside [`Network::fetch`], and how
//! storage-full is handled inside [`Store::store`].

use std::fmt::Display;
use std::rc::Rc;

use super::commit;
pub use super::edge::{Host, Network, Store, Stored};
use super::flights;
use super::key::EntryKey;
use super::mutation::Mutation;
use super::plan::{self, AfterFailure, AfterLookup, Failure, Job, Start, Storing};
use super::plugin::{AfterFetch, Call, Plugin, Plugins};
pub use super::response::{Fetched, Hit, Message, Source};
use crate::shared::Shared;

/// What the runner answered, and what it did on the way (the parity suite compares these).
#[derive(Debug, Clone)]
pub struct Served<R> {
    /// The answer.
    pub response: R,
    /// Where it came from.
    pub source: Source,
    /// For a network answer: whether it was stored (with its tags) or why not.
    pub storing: Option<Storing>,
    /// A stored answer given under stale-if-error (past its life, or in place of a server's 5xx): the
    /// edge marks it `X-Cachet-Stale: 1` ([`crate::protocol::headers::STALE_HEADER`]) and says so.
    pub stale: bool,
    /// A stored answer whose background re-fetch the runner left to another engine, as an edge whose
    /// [`Host::REVALIDATES`] is false asks (the worker's start module): the edge hands the request to the
    /// engine that re-fetches.
    pub revalidate_left: bool,
    /// A stored answer served alone (a fresh cache-first or cache-only hit, through plugins none of
    /// which shapes cached answers: [`super::plugin::Plugin::shapes_cached_answers`]): until when
    /// (Unix ms) a lookup of the same request is answered the same way ([`plan::served_alone_until`]).
    /// The worker names it for its shim (cachet-worker's `sw::names`); the page ignores it.
    pub alone_until: Option<u64>,
}

impl<R> Served<R> {
    /// An answer from `source`, nothing stored, not stale, nothing left.
    fn plain(response: R, source: Source) -> Self {
        Served { response, source, storing: None, stale: false, revalidate_left: false, alone_until: None }
    }
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

impl<E: Display> Display for Failed<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::NotCached => f.write_str("cache-only: nothing cached"),
            Failed::Edge(error) => error.fmt(f),
        }
    }
}

/// One edge, for one request: its store, network, host and plugins, and the request as the page sent it.
pub struct Runner<R: 'static, S, N, H> {
    /// Where entries live.
    pub store: S,
    /// Where answers come from.
    pub network: N,
    /// Background work, clock, announcements.
    pub host: H,
    /// The plugins, in order (the edge's built-ins first, then the app's).
    pub plugins: Plugins<R>,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The URL the page asked for.
    pub url: String,
}

impl<R: 'static, S, N, H> Runner<R, S, N, H> {
    fn call<'a>(&'a self, job: Option<&'a Job>) -> Call<'a> {
        Call { method: self.method, url: &self.url, job }
    }
}

/// Answers `job` with its strategy, through the runner's plugins.
pub async fn run<R, E, S, N, H>(job: Job, runner: Rc<Runner<R, S, N, H>>) -> Result<Served<R>, Failed<E>>
where
    R: Clone + Message + 'static,
    E: Clone + Display + 'static,
    S: Store<R, E> + 'static,
    N: Network<R, E> + 'static,
    H: Host + 'static,
{
    let job = Rc::new(keyed(job, runner.method, &runner.url, &runner.plugins));
    let answered = answer(&job, &runner).await;
    finish(runner.call(Some(&job)), &runner.plugins, answered, N::leaves).await
}

/// `job` with its entry as the plugins' `cache_key_will_be_used` leave it.
pub(super) fn keyed<R: 'static>(mut job: Job, method: &str, url: &str, plugins: &[Rc<dyn Plugin<R>>]) -> Job {
    if let Some(entry) = job.entry.clone() {
        let call = Call { method, url, job: Some(&job) };
        let entry = plugins.iter().fold(entry, |entry, plugin| plugin.cache_key_will_be_used(&call, entry));
        job.entry = Some(entry);
    }
    job
}

/// Answers a request that has no job (a mutation, a request the engine does not cache) from the network,
/// through `plugins`: the same sends, retries and hooks as a job's network step, never stored.
pub async fn pass<R: 'static, E, N>(
    call: Call<'_>,
    network: &N,
    plugins: &[Rc<dyn Plugin<R>>],
) -> Result<Served<R>, Failed<E>>
where
    E: Display,
    N: Network<R, E>,
{
    let answered = send(&call, network, plugins)
        .await
        .map(|fetched| Served::plain(fetched.response, Source::Network))
        .map_err(Failed::Edge);
    finish(call, plugins, answered, N::leaves).await
}

/// A mutation's answer, and the tags that answer invalidates ([`Mutation::invalidated_by`]), which the edge
/// carries out (after the answer is given, or before: the edge's choice; never for a failed send).
#[derive(Debug, Clone)]
pub struct Mutated<R> {
    /// The answer.
    pub served: Served<R>,
    /// The tags to invalidate.
    pub invalidate: Vec<String>,
}

/// Sends `mutation` as [`pass`] does (the same sends, retries and plugins: the offline queue keeps it
/// when the network is unreachable), and says which tags its answer invalidates.
pub async fn mutate<R: Message + 'static, E, N>(
    mutation: &Mutation,
    call: Call<'_>,
    network: &N,
    plugins: &[Rc<dyn Plugin<R>>],
) -> Result<Mutated<R>, Failed<E>>
where
    E: Display,
    N: Network<R, E>,
{
    let served = pass(call, network, plugins).await?;
    let invalidate = mutation.invalidated_by(served.response.status(), served.source).to_vec();
    Ok(Mutated { served, invalidate })
}

/// The last hooks: `handler_did_error` for a failure, then `handler_will_respond`. A request the edge
/// `leaves` to another engine ([`Network::leaves`]) gets neither: that engine runs them.
async fn finish<R: 'static, E: Display>(
    call: Call<'_>,
    plugins: &[Rc<dyn Plugin<R>>],
    answered: Result<Served<R>, Failed<E>>,
    leaves: fn(&E) -> bool,
) -> Result<Served<R>, Failed<E>> {
    let mut served = match answered {
        Ok(served) => served,
        Err(Failed::Edge(error)) if leaves(&error) => return Err(Failed::Edge(error)),
        Err(failed) => {
            let mut instead = None;
            for plugin in plugins {
                instead = plugin.handler_did_error(&call, &failed).await;
                if instead.is_some() {
                    break;
                }
            }
            let Some(response) = instead else { return Err(failed) };
            Served::plain(response, Source::Plugin)
        }
    };
    for plugin in plugins {
        served.response = plugin.handler_will_respond(&call, served.response, served.source);
    }
    Ok(served)
}

/// The strategy's steps, before the last hooks.
async fn answer<R, E, S, N, H>(job: &Rc<Job>, runner: &Rc<Runner<R, S, N, H>>) -> Result<Served<R>, Failed<E>>
where
    R: Clone + Message + 'static,
    E: Clone + Display + 'static,
    S: Store<R, E> + 'static,
    N: Network<R, E> + 'static,
    H: Host + 'static,
{
    let first = plan::start(job);
    if let (Start::Lookup { read_body }, Some(entry)) = (first, &job.entry) {
        let hit = lookup(job, runner, entry, read_body).await?;
        let now = runner.host.now();
        // Read only where it counts (a GET's hints never set its life): a hit pays for no header it
        // does not need.
        let hinted = hit.as_ref().filter(|_| plan::reads_hints(job));
        let stored_cache_control = hinted.and_then(|hit| hit.response.header("cache-control"));
        let freshness = plan::freshness(job, stored_cache_control.as_deref());
        let found = plan::found(hit.as_ref().map(|hit| hit.stored_at), now, freshness);
        match (plan::after_lookup(job, found), hit) {
            (AfterLookup::Serve { revalidate }, Some(hit)) => {
                runner.store.used(entry, now);
                // A constant per edge: where it is false, the re-fetch is not linked.
                if revalidate && H::REVALIDATES {
                    let stale = hit.body.clone().unwrap_or_default();
                    let (job, background) = (job.clone(), runner.clone());
                    runner.host.background(Box::pin(async move {
                        revalidate_in_background(&job, &background, &stale).await;
                    }));
                }
                let revalidate_left = revalidate && !H::REVALIDATES;
                let alone =
                    !revalidate && runner.plugins.iter().all(|plugin| !plugin.shapes_cached_answers());
                let alone_until =
                    alone.then(|| plan::served_alone_until(job, hit.stored_at, freshness)).flatten();
                return Ok(Served {
                    revalidate_left,
                    alone_until,
                    ..Served::plain(hit.response, Source::Cache)
                });
            }
            (AfterLookup::NotCached, _) => return Err(Failed::NotCached),
            _ => {}
        }
    }
    // Behind a box, as its own function (`outlined`): a hit never runs the network path, and a worker's
    // cold hit then never compiles it (wasm is compiled function by function as first called).
    match outlined(fetch_then_store(job, runner)).await {
        Ok((response, status, storing)) => {
            if let Some(failure) = Failure::of_status(status).filter(|_| plan::looks_up_after(job)) {
                if let Some(served) = outlined(instead_of_failure(job, runner, first, failure)).await {
                    return Ok(served);
                }
            }
            Ok(Served { storing: Some(storing), ..Served::plain(response, Source::Network) })
        }
        Err(error) if N::unreachable(&error) && plan::looks_up_after(job) => {
            match outlined(instead_of_failure(job, runner, first, Failure::Unreachable)).await {
                Some(served) => Ok(served),
                None => Err(Failed::Edge(error)),
            }
        }
        Err(error) => Err(Failed::Edge(error)),
    }
}

/// `future` behind a box and a `dyn`: its state machine becomes a function of its own that the caller's
/// does not inline. On wasm, where a module's functions are compiled lazily as first called, a path not
/// taken (the network path of a hit) is then never compiled, and a future awaited from several places
/// is in the module once.
pub fn outlined<'a, T>(
    future: impl std::future::Future<Output = T> + 'a,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>> {
    Box::pin(future)
}

/// The entry served in place of a failed network step, when [`plan::after_failure`] says so (network-first's
/// fallback, or stale-if-error); `None` leaves the failure standing. A lookup that fails counts as no
/// entry: the network's failure is the one reported.
async fn instead_of_failure<R, E, S, N, H>(
    job: &Job,
    runner: &Runner<R, S, N, H>,
    start: Start,
    failure: Failure,
) -> Option<Served<R>>
where
    R: Message + 'static,
    S: Store<R, E>,
    H: Host,
{
    let entry = job.entry.as_ref()?;
    let hit = lookup(job, runner, entry, false).await.ok().flatten();
    let now = runner.host.now();
    let age = hit.as_ref().map(|hit| hit.stored_at.map(|at| now.saturating_sub(at)));
    let hinted = hit.as_ref().and_then(|hit| hit.response.header("cache-control"));
    let life = plan::freshness(job, hinted.as_deref()).life_ms;
    let window = plan::stale_if_error_ms(job, hinted.as_deref());
    let AfterFailure::Serve { stale } = plan::after_failure(job, start, failure, age, life, window) else {
        return None;
    };
    let hit = hit?;
    runner.store.used(entry, now);
    Some(Served { stale, ..Served::plain(hit.response, Source::Cache) })
}

/// The store's entry, as the plugins let it be used (`cached_response_will_be_used`: refused counts as
/// absent). A store of the entry still running in the background is waited for first
/// (`commit::settled`).
async fn lookup<R: 'static, E, S: Store<R, E>, N, H>(
    job: &Job,
    runner: &Runner<R, S, N, H>,
    entry: &EntryKey,
    read_body: bool,
) -> Result<Option<Hit<R>>, E> {
    commit::settled(&entry.url).await;
    let Some(mut hit) = runner.store.lookup(entry, read_body).await? else { return Ok(None) };
    let call = runner.call(Some(job));
    for plugin in &runner.plugins {
        let Some(response) = plugin.cached_response_will_be_used(&call, hit.response) else {
            return Ok(None);
        };
        hit.response = response;
    }
    Ok(Some(hit))
}

/// Sends the request through the plugins: `request_will_fetch` before each send, `fetch_did_succeed` after
/// an answer (one retry when a plugin asks for it), `fetch_did_fail` when the network is unreachable.
pub async fn send<R: 'static, E, N: Network<R, E>>(
    call: &Call<'_>,
    network: &N,
    plugins: &[Rc<dyn Plugin<R>>],
) -> Result<Fetched<R>, E>
where
    E: Display,
{
    let mut retried = false;
    loop {
        let mut headers = Vec::new();
        for plugin in plugins {
            plugin.request_will_fetch(call, &mut headers);
        }
        let fetched = match network.fetch(&headers).await {
            Ok(fetched) => fetched,
            Err(error) => {
                if N::unreachable(&error) {
                    for plugin in plugins {
                        plugin.fetch_did_fail(call, &error).await;
                    }
                }
                return Err(error);
            }
        };
        let mut again = false;
        for plugin in plugins {
            again |= plugin.fetch_did_succeed(call, &fetched, retried).await == AfterFetch::Retry;
        }
        if !again || retried {
            return Ok(fetched);
        }
        retried = true;
    }
}

/// Asks the network and answers with what it said; the answer is stored, when `commit::decide` says so,
/// in the background (Workbox's order: the store costs the answer nothing). The storing decided is
/// returned, with the answer's status; what the store made of it is reported to the host.
///
/// A request for an entry whose network call is already running joins it ([`flights`]): it gets a copy
/// of that answer ([`Network::answer_copy`]) and the same storing, and sends nothing.
async fn fetch_then_store<R, E, S, N, H>(
    job: &Rc<Job>,
    runner: &Rc<Runner<R, S, N, H>>,
) -> Result<(R, u16, Storing), E>
where
    R: Clone + 'static,
    E: Clone + Display + 'static,
    S: Store<R, E> + 'static,
    N: Network<R, E> + 'static,
    H: Host + 'static,
{
    let Some(entry) = job.entry.clone() else {
        let (fetched, storing) = send_then_commit(job, runner, None).await?;
        return Ok((fetched.response.clone(), fetched.status, storing));
    };
    let fallback = entry.clone();
    let (outcome, sent_here) = match flights::join::<R, E>(&entry.url) {
        Some((done, outcome)) => {
            runner.network.waits_joined(true);
            done.await;
            runner.network.waits_joined(false);
            (outcome, false)
        }
        None => {
            let outcome: Rc<flights::Outcome<R, E>> = Rc::default();
            let (job, runner, filled, url) =
                (job.clone(), runner.clone(), outcome.clone(), entry.url.clone());
            let work = Shared::new(Box::pin(async move {
                let answered = send_then_commit(&job, &runner, Some(entry)).await;
                *filled.borrow_mut() = Some(answered);
            }));
            flights::start(url, work.clone(), outcome.clone());
            work.clone().await;
            flights::end(&work);
            (outcome, true)
        }
    };
    let shared = outcome.borrow().clone();
    // Always filled: the work fills it before it ends. Were it not, this request sends its own.
    let answered = match shared {
        Some(answered) => answered,
        None => send_then_commit(job, runner, Some(fallback)).await,
    };
    let (fetched, storing) = answered?;
    let response = if sent_here { fetched.response.clone() } else { runner.network.answer_copy(&fetched)? };
    Ok((response, fetched.status, storing))
}

/// Sends `job`'s request, decides its storing and hands the store of `entry` (when it has one) to the
/// background.
async fn send_then_commit<R, E, S, N, H>(
    job: &Rc<Job>,
    runner: &Rc<Runner<R, S, N, H>>,
    entry: Option<EntryKey>,
) -> Result<(Rc<Fetched<R>>, Storing), E>
where
    R: 'static,
    E: Display + 'static,
    S: Store<R, E> + 'static,
    N: Network<R, E> + 'static,
    H: Host + 'static,
{
    let call = runner.call(Some(job));
    let fetched = Rc::new(send(&call, &runner.network, &runner.plugins).await?);
    let storing = commit::decide(&call, &fetched, &runner.host, &runner.plugins);
    if let (Storing::Store { .. }, Some(entry)) = (&storing, entry) {
        let (decided, now) = (storing.clone(), runner.host.now());
        let (url, job, background, kept) = (entry.url.clone(), job.clone(), runner.clone(), fetched.clone());
        let work = async move {
            let (store, host) = (&background.store, &background.host);
            commit::commit(&entry, &job.announce_url, &kept, decided, store, host, now).await;
        };
        commit::in_background(&runner.host, url, Box::pin(work));
    }
    Ok((fetched, storing))
}

/// Asks the network, then stores the answer as [`keep`] decides, before it returns (a background
/// re-fetch: what it announces follows the store).
async fn fetch_and_store<R: 'static, E: Display, S: Store<R, E>, N: Network<R, E>, H: Host>(
    job: &Job,
    runner: &Runner<R, S, N, H>,
) -> Result<(Fetched<R>, Storing), E> {
    let call = runner.call(Some(job));
    let fetched = send(&call, &runner.network, &runner.plugins).await?;
    let (store, host) = (&runner.store, &runner.host);
    let storing = keep(&call, &fetched, store, host, &runner.plugins, host.now()).await;
    Ok((fetched, storing))
}

/// Stores `fetched` for `call`'s job at `now` when `commit::decide` says so, and returns what became of
/// it: for a background re-fetch, and for a hand-over ([`super::adopt()`]; one copy for both: wasm size).
pub(super) async fn keep<R: 'static, E: Display, S: Store<R, E>, H: Host>(
    call: &Call<'_>,
    fetched: &Fetched<R>,
    store: &S,
    host: &H,
    plugins: &[Rc<dyn Plugin<R>>],
    now: u64,
) -> Storing {
    let storing = commit::decide(call, fetched, host, plugins);
    let Some((job, entry)) = call.job.and_then(|job| Some((job, job.entry.as_ref()?))) else {
        return storing;
    };
    commit::commit(entry, &job.announce_url, fetched, storing, store, host, now).await
}

/// Stale-while-revalidate's re-fetch: stores the fresh answer and announces a change. A failure keeps the
/// stale copy and is only reported: nobody waits for this answer.
async fn revalidate_in_background<R: 'static, E: Display, S: Store<R, E>, N: Network<R, E>, H: Host>(
    job: &Job,
    runner: &Runner<R, S, N, H>,
    stale: &[u8],
) {
    match fetch_and_store(job, runner).await {
        Ok((fetched, storing)) => {
            let stored = matches!(storing, Storing::Store { .. });
            if let Some(event) = plan::after_revalidate(job, stale, &fetched.body, stored) {
                runner.host.announce(event);
            }
        }
        // Offline: nothing worth reporting, the stale copy stays. Left to another engine (an auth
        // failure met by the worker's start module): the stale copy stays until a request sent by the
        // whole engine refreshes.
        Err(error) if N::unreachable(&error) || N::leaves(&error) => {}
        Err(error) => runner.host.warn(&format!(
            "background re-fetch of {} failed ({error}); the stale copy stays",
            job.announce_url
        )),
    }
}
