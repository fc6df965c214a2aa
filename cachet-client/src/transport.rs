//! The client's transport part: the door to the network ([`Http`]), the engine's plugins in the page, THE
//! auth-failure check, the in-page cache with its reads in flight and background work, and the link to
//! the Service Worker. Which of them answers a request is `crate::pipeline`; how the page's engine runs
//! over them is `crate::page_engine`.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use cachet_core::config::{FailureCheck, FailureResponse};
use cachet_core::engine::plugin::Plugins;
use futures::channel::oneshot;

use crate::dedup::InFlight;
use crate::http::{Http, HttpResponse};
use crate::link::WorkerLink;
use crate::memory_cache::MemoryCache;
use crate::settings::Settings;

/// What carries a request, and what the page keeps of the answers.
pub(crate) struct Transport {
    pub(crate) settings: Rc<Settings>,
    pub(crate) http: Http,
    /// The engine's plugins in the page: the defaults (unless left out), then the app's.
    pub(crate) plugins: Plugins<HttpResponse>,
    /// THE auth-failure check (default: the config's rule).
    failure_check: FailureCheck,
    pub(crate) cache: RefCell<MemoryCache>,
    pub(crate) inflight: InFlight,
    /// The engine's background work in this page.
    pub(crate) background: Rc<Background>,
    pub(crate) link: WorkerLink,
}

impl Transport {
    pub(crate) fn new(
        settings: Rc<Settings>,
        http: Http,
        plugins: Plugins<HttpResponse>,
        failure_check: FailureCheck,
    ) -> Self {
        let link = WorkerLink::new(settings.options.service_worker_timeout);
        Transport {
            settings,
            http,
            plugins,
            failure_check,
            cache: RefCell::default(),
            inflight: InFlight::default(),
            background: Rc::default(),
            link,
        }
    }

    /// THE auth-failure check: the builder's `failure_check` (default: `features.auth.failure` of the
    /// config), as the Service Worker runs it.
    pub(crate) fn is_auth_failure(&self, response: &HttpResponse) -> bool {
        let headers = |name: &str| response.header(name).map(str::to_owned);
        let view = FailureResponse::new(response.status, &headers, &response.body);
        (self.failure_check)(&self.settings.config().features.auth.failure, &view)
    }
}

/// The engine's background work in this page (a late store, a stale-while-revalidate re-fetch with its
/// store and its `cache-updated`), counted so that [`crate::Client::settled`] can wait for all of it.
#[derive(Default)]
pub(crate) struct Background {
    running: Cell<usize>,
    waiting: RefCell<Vec<oneshot::Sender<()>>>,
}

impl Background {
    /// Runs `work` in the page's event loop, counted until it ends.
    pub(crate) fn spawn(self: &Rc<Self>, work: Pin<Box<dyn Future<Output = ()>>>) {
        self.running.set(self.running.get() + 1);
        let counted = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            work.await;
            counted.running.set(counted.running.get() - 1);
            if counted.running.get() == 0 {
                for waiter in counted.waiting.borrow_mut().drain(..) {
                    let _ = waiter.send(());
                }
            }
        });
    }

    /// Resolves once no background work runs (work that spawns more is waited for too).
    pub(crate) async fn settled(&self) {
        while self.running.get() > 0 {
            let (sender, receiver) = oneshot::channel();
            self.waiting.borrow_mut().push(sender);
            let _ = receiver.await;
        }
    }
}
