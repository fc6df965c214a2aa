//! The Service Worker's side of the engine: a [`Target`] (one request and its core [`Job`]) answered by
//! the core's runner ([`cachet_core::engine::run()`]) over Cache Storage (`CacheStore`), `fetch` with
//! refresh-and-retry (`WorkerNetwork`) and `waitUntil` / the `cachet` BroadcastChannel (`WorkerHost`).
//! Every decision is the core's (`cachet_core::engine::plan`); what is here only executes.
//!
//! Every response the engine returns carries `X-Cachet-Source: cache` or `X-Cachet-Source: network`, so
//! any client (not only cachet's) can tell whether it was served from the cache.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use cachet_core::config::AuthFailureRule;
use cachet_core::engine::plugin::Plugins;
use cachet_core::engine::{
    commit_decided, outlined, run, Failed, Fetched, Host, Job, Network, NotStored, Runner, Storing,
};
use cachet_core::protocol::SwEvent;
use cachet_core::protocol::headers::STALE_HEADER;
use cachet_core::protocol::NOT_STORED_HEADER;
use cachet_core::tags::CACHE_TAGS_HEADER;
use js_sys::Promise;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Request, Response};

use super::auth_retry::is_auth_failure;
use super::broadcast::broadcast;
use super::clock::increasing_ms;
use super::http::{fetch_network, read_network_answer, without_cachet_headers};
use super::persisted::Persisted;
use super::store::CacheStore;
use super::store_later::{self, LaterStore};
use super::tag_index::TagIndex;
use crate::Error;

/// One request answered with a strategy: the request, its job, and how it is sent.
#[derive(Clone)]
pub struct Target {
    /// The request as the page sent it. What goes to the network is built from it, and from `body`,
    /// only when the network is asked: a hit never pays for it.
    pub request: Request,
    /// The body of `request`, already read (a GraphQL POST); `None` for a GET.
    pub body: Option<Rc<[u8]>>,
    /// What the core decided for it (strategy, entry, tags, bounds).
    pub job: Job,
    /// The entry index (tags, last use).
    pub index: Rc<TagIndex>,
    /// The plugins it runs with, in order: refresh-and-retry for a request marked as authenticated
    /// ([`super::auth_retry::AuthRetry`]), the defaults, the app's ([`super::Options`]).
    pub plugins: Plugins<Response>,
    /// `features.auth.failure` while auth is enabled: every answer, marked or not, gets the check's
    /// verdict (the planner never stores an auth failure); `None` while auth is off.
    pub failure_rule: Option<AuthFailureRule>,
    /// A GraphQL query's operation name, for the devtools' list of answers not stored.
    pub operation: Option<String>,
    /// A navigation's preloaded answer (`FetchEvent.preloadResponse`, a promise of a `Response` or of
    /// `undefined`), or the shim's early send of the request: the network step uses it instead of a fetch
    /// of its own.
    pub preload: Option<Promise>,
    /// A query to an endpoint whose queries go as persisted-query hashes (`super::persisted`; always
    /// `None` without the `persisted-queries` feature).
    pub(crate) persisted: Option<Persisted>,
    /// In the start module, for a request that gets refresh-and-retry
    /// ([`super::auth_retry::AuthRetry::applies`]): an auth failure is not answered but left to the whole
    /// engine ([`Error::AuthFailureLeft`]), whose refresh is not linked into the start module.
    pub(crate) leaves_auth_failure: bool,
    /// The shim's naming of the request (`super::names`: a function of the request's body, read, to a
    /// promise of the name's URL, called only for a hit served alone), with the names' epoch when the
    /// request's handling began ([`super::names::epoch`]).
    pub(crate) name: Option<(js_sys::Function, u64)>,
    /// For an answer received before its job runs (the shim's copy of an answer it gave the page
    /// itself, run once the worker is quiet): this engine's invalidation count when it was received
    /// ([`super::store::invalidations_begun`]). An invalidation or a clear-all begun since covers it, as
    /// it covers an answer that arrives while it runs, and its store is dropped. `None`: the count when
    /// the job begins, before its request is sent.
    pub begun: Option<u64>,
}

#[cfg(feature = "test-support")]
impl Target {
    /// A GET of `request` in the shared partition, stored by its own URL in the runtime cache with
    /// `strategy` (for the tests; the router builds its jobs with [`Job::for_request`]).
    pub fn get(
        request: &Request,
        strategy: cachet_core::strategy::Strategy,
        bounds: cachet_core::config::CacheBounds,
        index: Rc<TagIndex>,
    ) -> Self {
        let url = request.url();
        let job = Job {
            strategy,
            entry: Some(cachet_core::engine::EntryKey {
                cache: cachet_core::engine::key::RUNTIME_CACHE,
                url: url.clone(),
            }),
            tags: Vec::new(),
            document: false,
            bounds,
            announce_url: url,
            no_store_binds: true,
            shared: true,
        };
        Target {
            request: Clone::clone(request),
            body: None,
            job,
            index,
            plugins: Vec::new(),
            failure_rule: None,
            operation: None,
            preload: None,
            persisted: None,
            leaves_auth_failure: false,
            name: None,
            begun: None,
        }
    }
}

/// Answers `target` with its job's strategy. Background work (marking a hit used, the
/// stale-while-revalidate re-fetch) is handed to `background`, which should keep the worker alive until
/// it settles (`FetchEvent.waitUntil`). (The router calls [`respond_in`]; this is the tests'.)
#[cfg(feature = "test-support")]
pub async fn respond(target: Target, background: Rc<dyn Fn(Promise)>) -> Result<Response, Error> {
    respond_in::<false>(target, background.clone(), background).await.map(|(response, _)| response)
}

/// [`respond`] in either engine, with whether a served entry's re-fetch was left to the whole engine. In
/// the start module (`START`), a network answer's store is handed to the whole engine ([`LaterStore`]),
/// which `keep_alive` (the event's `waitUntil`, uncounted by `sw::busy`) waits for, and a served entry's
/// background re-fetch is left to it (its host's `REVALIDATES` is false: the start module links no
/// re-fetch; the router hands the request over, `super::router::Answered::Revalidate`). Each engine's
/// runner is its own boxed future (`outlined`): the start module's binary then links no
/// [`CacheStore::store`], and the whole engine's no hand-over (a branch on `START`
/// around an `await` would keep both: the async state machine resumes into either).
pub(crate) async fn respond_in<const START: bool>(
    target: Target,
    background: Rc<dyn Fn(Promise)>,
    keep_alive: Rc<dyn Fn(Promise)>,
) -> Result<(Response, bool), Error> {
    let store = CacheStore {
        index: target.index.clone(),
        background: background.clone(),
        request_url: target.request.url(),
        body: target.body.clone(),
        strategy: target.job.strategy,
        // The start module is never handed a copy to run later (`Target::begun` is the whole engine's).
        begun: if START {
            super::store::invalidations_begun()
        } else {
            target.begun.unwrap_or_else(super::store::invalidations_begun)
        },
        generation: super::generations::loaded(&target.index).await?,
    };
    let body = target.body.clone();
    let not_cached = target.job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
    let method = if target.body.is_some() { "POST" } else { "GET" };
    let url = target.request.url();
    let network = WorkerNetwork {
        request: target.request,
        body: target.body,
        failure_rule: target.failure_rule,
        preload: Cell::new(target.preload),
        persisted: target.persisted,
        leaves_auth_failure: target.leaves_auth_failure,
        parks: START,
    };
    let operation = target.operation;
    let plugins = target.plugins;
    let (name, entry, later) = (target.name, target.job.entry.clone(), background.clone());
    let answered = if START {
        let store = LaterStore { cache: store, announce_url: target.job.announce_url.clone(), keep_alive };
        let host = WorkerHost::<true> { background };
        let runner = Runner { store, network, host, plugins, method, url: url.clone() };
        outlined(run(target.job, Rc::new(runner))).await
    } else {
        let host = WorkerHost::<false> { background };
        let runner = Runner { store, network, host, plugins, method, url: url.clone() };
        outlined(run(target.job, Rc::new(runner))).await
    };
    match answered {
        Ok(served) => {
            if let (Some(until), Some(name), Some(entry)) = (served.alone_until, name, entry) {
                name_alone::<START>(until, name, entry, &served.response, body.as_deref(), &*later);
            }
            if let Some(Storing::Skip(reason)) = &served.storing {
                say_not_stored(&served.response, &url, operation.as_deref(), reason);
            }
            if served.stale {
                return say_stale(&served.response, &url, operation.as_deref()).map(|response| (response, false));
            }
            Ok((served.response, served.revalidate_left))
        }
        Err(Failed::NotCached) => Err(Error::NotCached { url: not_cached }),
        Err(Failed::Edge(error)) => Err(error),
    }
}

/// Names a hit served alone until `until` for the shim (`super::names`), after the answer; the start
/// module writes none (the whole engine does as it takes over).
fn name_alone<const START: bool>(
    until: u64,
    (name, epoch): (js_sys::Function, u64),
    entry: cachet_core::engine::EntryKey,
    response: &Response,
    body: Option<&[u8]>,
    later: &dyn Fn(Promise),
) {
    if START {
        super::names::hand_over(&name, body, entry, response, until);
        return;
    }
    // The whole engine names an entry once per time in a worker instance: the shim's hash is not even
    // computed again.
    if super::names::written(&entry.url, until) {
        return;
    }
    let Some(naming) = super::names::Naming::of(&name, body, entry, response, until, epoch) else { return };
    super::http::after_answer(later, Box::pin(naming.write()));
}

/// Says why an answer from the network was not stored, where a developer looks: on the answer
/// (`X-Cachet-Not-Stored`, a header of the worker's own rebuilt response, so it can be set) and on the
/// console (`console.warn` when one of cachet's bounds declined it, [`NotStored::is_bound`]; else
/// `console.debug`).
/// With the cargo feature `devtools`, the snapshot's list names it too (`snapshot::not_stored`).
fn say_not_stored(response: &Response, url: &str, operation: Option<&str>, reason: &NotStored) {
    let _ = response.headers().set(NOT_STORED_HEADER, reason.code());
    report_not_stored(url, operation, reason);
}

/// [`say_not_stored`]'s console line and devtools' entry.
fn report_not_stored(url: &str, operation: Option<&str>, reason: &NotStored) {
    let line = reason.line(url, operation);
    // A bound of cachet's that declined what the app asked to store is a warning; the rest is debug.
    if reason.is_bound() {
        web_sys::console::warn_1(&line.into());
    } else {
        web_sys::console::debug_1(&line.into());
    }
    #[cfg(feature = "devtools")]
    super::snapshot::not_stored(url, operation, reason);
    #[cfg(not(feature = "devtools"))]
    let _ = operation;
}

/// Marks a stored answer given under stale-if-error (`X-Cachet-Stale: 1`, on a response around the
/// stored one: Cache Storage's headers are immutable) and says so on the console: the page shows the
/// last good data, not the server's word now.
fn say_stale(response: &Response, url: &str, operation: Option<&str>) -> Result<Response, Error> {
    let marked = super::http::remark(response, &[(STALE_HEADER, "1")])?;
    web_sys::console::info_1(&cachet_core::engine::plan::stale_line(url, operation).into());
    Ok(marked)
}

/// The network as the worker reaches it: cachet's headers removed, the plugins' headers set, the
/// auth-failure check's verdict on each answer (the auth plugin retries on it).
///
/// A navigation's first network step takes the answer the browser preloaded (navigation preload, which
/// the shim enables where the browser has it), and another request's the shim's early send of it (a
/// request whose job begins with the network: `cachet_core::config::SwRoutes::fetches_early`): it was
/// sent as the worker started, so the network's time and the worker's start overlap rather than add up.
/// It is taken once, and only by a step that sets no header of its own (a plugin's retry, or an app
/// plugin's `request_will_fetch` headers: the request is then sent again with them); a preload that resolves to nothing (none
/// was made) leaves the step to a fetch, and one that fails is the network's failure, as a fetch's is.
pub(crate) struct WorkerNetwork {
    pub(crate) request: Request,
    pub(crate) body: Option<Rc<[u8]>>,
    pub(crate) failure_rule: Option<AuthFailureRule>,
    pub(crate) preload: Cell<Option<Promise>>,
    #[cfg_attr(not(feature = "persisted-queries"), allow(dead_code))]
    pub(crate) persisted: Option<Persisted>,
    /// See [`Target::leaves_auth_failure`].
    pub(crate) leaves_auth_failure: bool,
    /// The start module's: its waits on the network are not counted as its work
    /// ([`super::busy::park`]), so that the whole engine may take over meanwhile.
    pub(crate) parks: bool,
}

impl WorkerNetwork {
    /// `response` as the planner reads it ([`fetched`]), or, when this request's auth failure is the
    /// whole engine's ([`Target::leaves_auth_failure`]), [`Error::AuthFailureLeft`].
    fn answered(&self, response: &Response, body: Vec<u8>, answer: Response) -> Result<Fetched<Response>, Error> {
        let fetched = fetched(response, body, answer, self.failure_rule.as_ref());
        if self.leaves_auth_failure && fetched.auth_failure {
            return Err(Error::AuthFailureLeft { answer: fetched.response, body: Rc::from(fetched.body) });
        }
        Ok(fetched)
    }
}

impl Network<Response, Error> for WorkerNetwork {
    async fn fetch(&self, headers: &[(String, String)]) -> Result<Fetched<Response>, Error> {
        let _parked = super::busy::park(self.parks);
        let preload = if headers.is_empty() { self.preload.take() } else { None };
        if let Some(response) = preloaded(preload, &self.request.url()).await? {
            let (body, answer) = read_network_answer(&response).await?;
            return self.answered(&response, body, answer);
        }
        #[cfg(feature = "persisted-queries")]
        if let (Some(persisted), Some(body)) = (&self.persisted, self.body.as_deref()) {
            let (response, body, answer) = super::persisted::send(&self.request, body, headers, persisted).await?;
            return self.answered(&response, body, answer);
        }
        let outgoing = without_cachet_headers(&self.request, self.body.as_deref(), headers)?;
        let (response, body, answer) = fetch_network(&outgoing).await?;
        self.answered(&response, body, answer)
    }

    /// Waiting for another request's send ([`cachet_core::engine::flights`]) is a wait on the network:
    /// not counted, as [`Network::fetch`]'s is not.
    fn waits_joined(&self, waits: bool) {
        if self.parks {
            super::busy::waits(waits);
        }
    }

    fn unreachable(error: &Error) -> bool {
        matches!(error, Error::Network { .. })
    }

    fn leaves(error: &Error) -> bool {
        matches!(error, Error::AuthFailureLeft { .. })
    }

    /// A new response around the bytes and headers of the shared one (whose body its first caller's
    /// `respondWith` may have read).
    fn answer_copy(&self, fetched: &Fetched<Response>) -> Result<Response, Error> {
        super::http::rebuild(&fetched.response, &fetched.body, &[])
    }
}

/// What `preload` (a navigation's `FetchEvent.preloadResponse`, or the shim's early send) resolved to: the preloaded answer, or
/// `None` when there is none (no preload made, or none asked for); a rejected preload is
/// [`Error::Network`] for `url`, as a failed fetch is.
pub(crate) async fn preloaded(preload: Option<Promise>, url: &str) -> Result<Option<Response>, Error> {
    let Some(preload) = preload else { return Ok(None) };
    match wasm_bindgen_futures::JsFuture::from(preload).await {
        Ok(value) => Ok(value.dyn_into::<Response>().ok()),
        Err(error) => {
            Err(Error::Network { url: url.to_owned(), message: crate::error::js_name_and_message(&error).1 })
        }
    }
}

/// An answer as the planner reads it: `response` as the server sent it, its `body`, `answer` (the
/// response handed on), the auth-failure check's verdict under `failure_rule` (none while auth is off).
/// The network's answers and a page's hand-over alike.
pub(crate) fn fetched(
    response: &Response,
    body: Vec<u8>,
    answer: Response,
    failure_rule: Option<&AuthFailureRule>,
) -> Fetched<Response> {
    Fetched {
        auth_failure: failure_rule.is_some_and(|rule| is_auth_failure(rule, response, &body)),
        server_tags: response.headers().get(CACHE_TAGS_HEADER).ok().flatten(),
        cache_control: response.headers().get("cache-control").ok().flatten(),
        status: response.status(),
        response: answer,
        body,
    }
}

/// `waitUntil`, the worker's clock, the `cachet` BroadcastChannel, the console. The start module's
/// (`START`) runs no re-fetch of a served entry: it leaves it to the whole engine.
pub(crate) struct WorkerHost<const START: bool> {
    pub(crate) background: Rc<dyn Fn(Promise)>,
}

impl<const START: bool> Host for WorkerHost<START> {
    const REVALIDATES: bool = !START;

    fn now(&self) -> u64 {
        increasing_ms()
    }

    /// Begun once the answer is given (`super::http::after_answer`): the store of a network answer, a
    /// stale-while-revalidate re-fetch. A lookup that waits for a store still running
    /// (`cachet_core::engine::commit`) drives it itself, and does not wait for that.
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        super::http::after_answer(&*self.background, Box::pin(async move {
            work.await;
            Ok(JsValue::UNDEFINED)
        }));
    }

    fn announce(&self, event: SwEvent) {
        if let Err(error) = broadcast(&event) {
            self.warn(&error.to_string());
        }
    }

    fn warn(&self, message: &str) {
        web_sys::console::warn_1(&format!("cachet: {message}").into());
    }

    /// On the console and in the devtools' list, as [`say_not_stored`] says it (the answer is given:
    /// no header). The start module keeps no store of its own: the whole engine says it.
    fn not_stored(&self, url: &str, reason: &NotStored) {
        if !START {
            report_not_stored(url, None, reason);
        }
    }
}

/// Stores what the start module handed over (`job`, written by [`LaterStore`]) as this engine stores its
/// own network answers (`cachet_core::engine::commit_decided`): known to every lookup from this call on,
/// so the shim calls it before it gives this engine any later event. The promise settles once the store
/// has run; what became of it is said as for the engine's own stores (the console).
pub fn store_handed(job: &JsValue) -> Result<Promise, Error> {
    let handed = store_later::read(job)?;
    // The same object as the answer: the store reads its status and headers only.
    let fetched = fetched(&handed.response, handed.body, Clone::clone(&handed.response), None);
    let running = Rc::new(std::cell::RefCell::new(js_sys::Array::new()));
    let kept = running.clone();
    let host = Rc::new(WorkerHost::<false> { background: Rc::new(move |promise: Promise| {
        kept.borrow().push(&promise);
    }) });
    commit_decided(host, handed.entry, handed.announce_url, fetched, handed.tags, handed.keep, handed.store, handed.now);
    let running = running.borrow();
    Ok(Promise::all(&running))
}

/// Writes the marks of use the start module kept (`touched`, from its `idle()`:
/// [`store_later::take_touches`]) as a hit of this engine writes its own (`TagIndex::touch`), each
/// after the other. A malformed list marks nothing ([`Error::HandedStore`]).
pub async fn touch_handed(touched: JsValue) -> Result<(), Error> {
    let touched = store_later::read_touches(&touched)?;
    if touched.is_empty() {
        return Ok(());
    }
    let index = super::tag_index::shared().await?;
    for (url, at) in touched {
        index.touch(&url, at).await?;
    }
    Ok(())
}
