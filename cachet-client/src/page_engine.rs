//! The page's side of the engine, for requests no Service Worker answers (first visit, hard reload): a
//! core [`Job`] answered by the core's runner ([`cachet_core::engine::run`]) over the page's
//! [`MemoryCache`](crate::memory_cache) ([`PageStore`]), the page's HTTP client with refresh-and-retry
//! ([`PageNetwork`]) and `spawn_local` / the client's listeners ([`PageHost`]). The same runner answers in
//! the Service Worker (`cachet_worker::sw::engine`): every decision is the core planner's.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use cachet_core::engine::{run, EntryKey, Failed, Fetched, Hit, Host, Job, Network, Source, Store};
use cachet_core::protocol::SwEvent;
use cachet_core::tags::CACHE_TAGS_HEADER;

use crate::client::Inner;
use crate::http::{HttpRequest, HttpResponse};
use crate::locks::now_ms;
use crate::Error;

impl Inner {
    /// Answers `job` by sending `outgoing` (cachet's headers already removed) with the adapter's headers
    /// when `auth`: the response, and whether it came from the in-page store.
    pub(crate) async fn run_job(
        self: &Rc<Self>,
        job: Job,
        outgoing: HttpRequest,
        auth: bool,
    ) -> Result<(HttpResponse, bool), Error> {
        let url = outgoing.url.clone();
        let network = Rc::new(PageNetwork { inner: self.clone(), outgoing, auth });
        let edge = Rc::new(PageStore(self.clone()));
        match run(Rc::new(job), edge.clone(), network, edge).await {
            Ok(served) => Ok((served.response, served.source == Source::Cache)),
            Err(Failed::NotCached) => {
                Err(Error::Network { url, message: "cache-only: nothing cached".to_owned() })
            }
            Err(Failed::Edge(error)) => Err(error),
        }
    }
}

/// The memory cache as the runner's store, and the page as its host.
struct PageStore(Rc<Inner>);

impl Store<HttpResponse, Error> for PageStore {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<HttpResponse>>, Error> {
        Ok(self.0.cache.borrow().get(entry).map(|(response, stored_at)| Hit {
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
    ) -> Result<bool, Error> {
        self.0.cache.borrow_mut().put(entry, &fetched.response, tags, keep, now);
        Ok(true)
    }

    fn used(&self, entry: &EntryKey, _now: u64) {
        self.0.cache.borrow_mut().touch(entry);
    }
}

impl Host for PageStore {
    fn now(&self) -> u64 {
        now_ms()
    }

    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        wasm_bindgen_futures::spawn_local(work);
    }

    /// What the worker would broadcast, told to this page's listeners as the worker's events are.
    fn announce(&self, event: SwEvent) {
        self.0.on_sw_event(event);
    }

    fn warn(&self, message: &str) {
        web_sys::console::warn_1(&format!("cachet: {message}").into());
    }
}

/// The page's HTTP client, with the adapter's headers and refresh-and-retry for `auth`.
struct PageNetwork {
    inner: Rc<Inner>,
    outgoing: HttpRequest,
    auth: bool,
}

impl Network<HttpResponse, Error> for PageNetwork {
    async fn fetch(&self) -> Result<Fetched<HttpResponse>, Error> {
        let response = self.inner.send_with_auth(&self.outgoing, self.auth, true).await?;
        let auth_failure =
            self.inner.config().auth_failure_rule().is_some() && self.inner.is_auth_failure(&response);
        Ok(Fetched {
            status: response.status,
            body: response.body.clone(),
            server_tags: response.header(CACHE_TAGS_HEADER).map(str::to_owned),
            auth_failure,
            response,
        })
    }

    fn unreachable(error: &Error) -> bool {
        matches!(error, Error::Network { .. })
    }
}
