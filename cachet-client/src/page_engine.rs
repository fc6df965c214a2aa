//! The page's side of the engine, for requests no Service Worker answers (first visit, hard reload, a
//! request the worker does not route): a core [`Job`] answered by the core's runner
//! ([`cachet_core::engine::run`]) over the page's [`MemoryCache`](crate::memory_cache) ([`PageStore`]), the
//! page's HTTP client ([`PageNetwork`]) and `spawn_local` / the client's listeners; a request without a
//! job goes through the same plugins ([`cachet_core::engine::pass`]), a mutation through the core's
//! [`cachet_core::engine::mutate`], which also names the tags its answer invalidates. The same runner answers
//! in the Service Worker (`cachet_worker::sw::engine`): every decision is the core planner's.
//!
//! Plugins, in order: refresh-and-retry for a request sent with auth (the session's), then the app's
//! (`ClientBuilder::plugin`).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::engine::plugin::{Call, Plugins};
use cachet_core::engine::{
    mutate, pass, run, EntryKey, Failed, Fetched, Hit, Host, Job, Mutated, Mutation, Network, NotStored,
    Runner, Served, Source, Store, Stored, Storing,
};
use cachet_core::handover::HandedRequest;
use cachet_core::protocol::headers::STALE_HEADER;
use cachet_core::protocol::SwEvent;
use cachet_core::protocol::NOT_STORED_HEADER;
use cachet_core::tags::CACHE_TAGS_HEADER;

use crate::client::Inner;
use crate::http::{HttpRequest, HttpResponse};
use crate::locks::now_ms;
use crate::Error;

impl Inner {
    /// Answers `job` by sending `outgoing` (cachet's headers already removed) with the adapter's headers
    /// when `auth`: the response, and whether it came from the in-page store.
    /// `handed`: the request with cachet's headers, recorded with a stored answer for the worker that
    /// takes control ([`crate::handover`]).
    pub(crate) async fn run_job(
        self: &Rc<Self>,
        job: Job,
        outgoing: HttpRequest,
        auth: bool,
        handed: Option<HandedRequest>,
    ) -> Result<(HttpResponse, bool), Error> {
        let url = outgoing.url.clone();
        let method = if job.document { "POST" } else { "GET" };
        let plugins = self.plugins_for(auth);
        let sent = Rc::new(RefCell::new(None));
        let network = PageNetwork { inner: self.clone(), outgoing, auth, sent: Some(sent.clone()) };
        let begun = self.transport.cache.borrow().invalidations.begun();
        let edge = PageStore { inner: self.clone(), handed, sent, begun };
        let runner = Runner { store: edge.clone(), network, host: edge, plugins, method, url: url.clone() };
        match run(job, Rc::new(runner)).await {
            Ok(mut served) => {
                // Why it was not stored, as the worker says it: on the answer and on the console.
                if let Some(Storing::Skip(reason)) = &served.storing {
                    served.response.headers.push((NOT_STORED_HEADER.to_owned(), reason.code().to_owned()));
                    say_not_stored(&url, reason);
                }
                if served.stale {
                    served.response.headers.push((STALE_HEADER.to_owned(), "1".to_owned()));
                    web_sys::console::info_1(&cachet_core::engine::plan::stale_line(&url, None).into());
                }
                Ok((served.response, served.source == Source::Cache))
            }
            Err(Failed::NotCached) => {
                Err(Error::Network { url, message: "cache-only: nothing cached".to_owned() })
            }
            Err(Failed::Edge(error)) => Err(error),
        }
    }

    /// Sends `outgoing` (cachet's headers already removed; a request without a job) from the page, with
    /// the adapter's headers and refresh-and-retry when `auth`, through the plugins.
    pub(crate) async fn pass(
        self: &Rc<Self>,
        outgoing: HttpRequest,
        auth: bool,
    ) -> Result<HttpResponse, Error> {
        let url = outgoing.url.clone();
        let method = outgoing.method.clone();
        let plugins = self.plugins_for(auth);
        let network = PageNetwork { inner: self.clone(), outgoing, auth, sent: None };
        match pass(Call { method: &method, url: &url, job: None }, &network, &plugins).await {
            Ok(Served { response, .. }) => Ok(response),
            Err(Failed::NotCached) => Err(Error::Network { url, message: "not answered".to_owned() }),
            Err(Failed::Edge(error)) => Err(error),
        }
    }

    /// Sends the mutation `outgoing` as [`Inner::pass`] does, through the core's runner
    /// ([`cachet_core::engine::mutate`]): its answer, and the tags that answer invalidates.
    pub(crate) async fn mutate(
        self: &Rc<Self>,
        mutation: &Mutation,
        outgoing: HttpRequest,
        auth: bool,
    ) -> Result<Mutated<HttpResponse>, Error> {
        let url = outgoing.url.clone();
        let method = outgoing.method.clone();
        let plugins = self.plugins_for(auth);
        let network = PageNetwork { inner: self.clone(), outgoing, auth, sent: None };
        match mutate(mutation, Call { method: &method, url: &url, job: None }, &network, &plugins).await {
            Ok(mutated) => Ok(mutated),
            Err(Failed::NotCached) => Err(Error::Network { url, message: "not answered".to_owned() }),
            Err(Failed::Edge(error)) => Err(error),
        }
    }

    /// The plugins of one request: the session's refresh-and-retry when `auth`, then the installed ones.
    fn plugins_for(&self, auth: bool) -> Plugins<HttpResponse> {
        let installed = &self.transport.plugins;
        let mut plugins: Plugins<HttpResponse> = Vec::with_capacity(installed.len() + 1);
        if auth {
            // Without the cargo feature `auth` there is none (and no request is sent with auth:
            // `refuse_when_off`).
            plugins.extend(self.session.retry_plugin());
        }
        plugins.extend(installed.iter().cloned());
        plugins
    }
}

/// The memory cache as the runner's store, and the page as its host; what a stored answer is recorded
/// with for the worker: the request (`handed`) and the `Authorization` its last send carried (`sent`),
/// by fingerprint only.
#[derive(Clone)]
struct PageStore {
    inner: Rc<Inner>,
    handed: Option<HandedRequest>,
    sent: Rc<RefCell<Option<String>>>,
    /// The memory cache's last invalidation when the job began: an answer whose request began before an
    /// invalidation of its tags or a clear may predate it.
    begun: u64,
}

impl Store<HttpResponse, Error> for PageStore {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<HttpResponse>>, Error> {
        Ok(self.inner.transport.cache.borrow().get(entry).map(|(response, stored_at)| Hit {
            body: read_body.then(|| response.body.clone()),
            response,
            stored_at: Some(stored_at),
        }))
    }

    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<HttpResponse>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        if self.inner.transport.cache.borrow().invalidations.since(self.begun, tags) {
            // Its tags invalidated, or everything cleared, since the request began (the answer is stored
            // after it is given): not kept, as in the worker.
            return Ok(Stored::Overtaken);
        }
        let handed = self.handed.clone().map(|mut request| {
            request.authorization = self.sent.borrow().as_deref().map(auth_fingerprint);
            request
        });
        self.inner.transport.cache.borrow_mut().put(entry, &fetched.response, tags, keep, now, handed);
        if self.inner.is_controlled() {
            // A worker took control while this answer was on its way: hand it over now.
            let inner = self.inner.clone();
            wasm_bindgen_futures::spawn_local(async move { inner.hand_over().await });
        }
        Ok(Stored::Kept)
    }

    fn used(&self, entry: &EntryKey, _now: u64) {
        self.inner.transport.cache.borrow_mut().touch(entry);
    }
}

impl Host for PageStore {
    fn now(&self) -> u64 {
        now_ms()
    }

    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        self.inner.transport.background.spawn(work);
    }

    /// What the worker would broadcast, told to this page's listeners as the worker's events are.
    fn announce(&self, event: SwEvent) {
        self.inner.on_sw_event(event);
    }

    fn warn(&self, message: &str) {
        web_sys::console::warn_1(&format!("cachet: {message}").into());
    }

    /// On the console, as [`Inner::run_job`] says an answer's own reason.
    fn not_stored(&self, url: &str, reason: &NotStored) {
        say_not_stored(url, reason);
    }
}

/// The page's HTTP client: the plugins' headers set, cookies included for cookie-like auth when `auth`,
/// the auth-failure check's verdict on each answer.
struct PageNetwork {
    inner: Rc<Inner>,
    outgoing: HttpRequest,
    auth: bool,
    /// Where the `Authorization` of the last send is kept, when the store records it.
    sent: Option<Rc<RefCell<Option<String>>>>,
}

impl Network<HttpResponse, Error> for PageNetwork {
    async fn fetch(&self, headers: &[(String, String)]) -> Result<Fetched<HttpResponse>, Error> {
        let mut request = self.outgoing.clone();
        self.inner.session.include_credentials(&mut request, self.auth);
        for (name, value) in headers {
            request.set_header(name, value);
        }
        if let Some(sent) = &self.sent {
            *sent.borrow_mut() = request.header("authorization").map(str::to_owned);
        }
        let response = self.inner.transport.http.send(&request).await?;
        let auth_failure = self.inner.config().auth_failure_rule().is_some()
            && self.inner.transport.is_auth_failure(&response);
        Ok(Fetched {
            status: response.status,
            body: response.body.clone(),
            server_tags: response.header(CACHE_TAGS_HEADER).map(str::to_owned),
            cache_control: response.header("cache-control").map(str::to_owned),
            auth_failure,
            response,
        })
    }

    fn unreachable(error: &Error) -> bool {
        matches!(error, Error::Network { .. })
    }

    fn answer_copy(&self, fetched: &Fetched<HttpResponse>) -> Result<HttpResponse, Error> {
        Ok(fetched.response.clone())
    }
}

/// Says on the console that an answer to `url` was not stored, and why (`console.warn` when one of
/// cachet's bounds declined it, else `console.debug`), as the worker says it.
fn say_not_stored(url: &str, reason: &NotStored) {
    let line = reason.line(url, None);
    if reason.is_bound() {
        web_sys::console::warn_1(&line.into());
    } else {
        web_sys::console::debug_1(&line.into());
    }
}
