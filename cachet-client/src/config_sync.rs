//! The page follows its Service Worker's config.
//!
//! A page starts on the config it was given ([`ConfigSource`]: `ClientBuilder::config`, the
//! `window.CACHET_CONFIG` of `cachet-sw-config.js`, the config `cachet generate --bundles` wrote into the
//! bundle, or the default). The worker, which holds the data, runs on the config its own
//! `cachet-sw-config.js` set. Whenever a worker is there (controlling the page, or active for it, or
//! being installed for it on a first visit), the client asks it (`config-request`) before its first call
//! and again when a new worker takes control (`controllerchange`), sending its own config as cachet
//! writes it. When the two differ (a stale bundle, a new worker, a hand-written config), the client says
//! so on the console, naming every key that differs as the worker listed them
//! ([`cachet_core::config::Config::differences`], run by the worker: the listing and its JSON walk are
//! not in the page's wasm), and follows the worker's: its routes, GraphQL
//! endpoints, failure rule, strategies and bounds, and its auth type when the adapter is the default
//! one. An adapter the app gave is kept (the app wrote it), with a warning when its type differs.
//!
//! A worker that does not answer within `service_worker_timeout` (an older build, a broken one) leaves
//! the page on its own config, with a warning. Isolation does not depend on any of this: the worker
//! decides partitions from what it sees ([`cachet_core::partition`]).

use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::protocol::{PageToSw, SwToPage};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::ServiceWorker;

use crate::client::Inner;
use crate::locks::timer_ms;
use crate::session::Session;

pub use crate::settings::ConfigSource;

/// Reads a config cachet wrote and checked (`window.CACHET_CONFIG`, the worker's answer) as written
/// ([`Config::from_written_json`]), or with the whole reader where the build links it anyway (cargo
/// feature `whole-config-reader`, which cachet-api turns on).
pub(crate) fn read_written(text: &str) -> Result<Config, cachet_core::config::ConfigError> {
    #[cfg(feature = "whole-config-reader")]
    return Config::from_json_str(text);
    #[cfg(not(feature = "whole-config-reader"))]
    Config::from_written_json(text)
}

impl Inner {
    /// Asks the page's Service Worker for its config, when there is one, and follows it where it
    /// differs. Never fails: what goes wrong is said on the console and the page keeps its config.
    pub(crate) async fn follow_worker_config(self: &Rc<Self>) {
        let Some(worker) = self.worker_for_config().await else {
            return;
        };
        // The link's exchange waits at most `service_worker_timeout` (the link's own timeout).
        match self.ask_config(&worker).await {
            Ok((config, differences)) => self.adopt_config(config, &differences),
            Err(crate::Error::ServiceWorkerSilent { waited_ms, .. }) => web_sys::console::warn_1(
                &format!(
                    "cachet: the Service Worker did not tell its config within {waited_ms} ms; this page keeps {}",
                    self.settings.source().describe()
                )
                .into(),
            ),
            Err(error) => web_sys::console::warn_1(
                &format!(
                    "cachet: the Service Worker's config is unusable ({error}); this page keeps {}",
                    self.settings.source().describe()
                )
                .into(),
            ),
        }
    }

    /// The controller, else the registration's active worker, else (a first visit) the worker being
    /// installed, once it is active; `None` when the page has no registration at all.
    async fn worker_for_config(&self) -> Option<ServiceWorker> {
        let wait = timer_ms(self.settings.options.service_worker_timeout);
        JsFuture::from(crate::js::service_worker(Some(wait))).await.ok()?.dyn_into().ok()
    }

    /// The worker's config, and the differences it listed against the page's (sent with the request).
    async fn ask_config(&self, worker: &ServiceWorker) -> Result<(Config, Vec<String>), crate::Error> {
        let page = Some(self.config().to_json());
        let ask = |request_id| PageToSw::ConfigRequest { request_id, config: page };
        let answered = self.transport.link.exchange(worker, ask, None).await?;
        match answered.answer {
            // Written by the worker from the config it runs on: read back as written.
            SwToPage::Config { config, differences, .. } => read_written(&config)
                .map(|config| (config, differences))
                .map_err(|error| crate::Error::ServiceWorkerConfig(error.into())),
            _ => Err(answered.unexpected()),
        }
    }

    /// Follows `worker_config` where it differs from the config in force, and says so with the
    /// `differences` the worker listed (none from a worker of an earlier build: the message says so).
    pub(crate) fn adopt_config(&self, worker_config: Config, differences: &[String]) {
        if *self.config() == worker_config {
            return;
        }
        let listed = if differences.is_empty() {
            "not listed by this worker (an earlier build)".to_owned()
        } else {
            differences.join("; ")
        };
        let message = format!(
            "cachet: this page's config ({}) differs from its Service Worker's; following the worker's. \
             Differences (here = the page's, there = the worker's): {listed}",
            self.settings.source().describe(),
        );
        if self.settings.source() == ConfigSource::Default {
            // Nothing was given to disagree with: following the worker is the expected course.
            web_sys::console::info_1(&message.into());
        } else {
            web_sys::console::warn_1(&message.into());
        }
        if worker_config.features.auth.enabled && !Session::BUILT {
            let error = crate::checks::auth_not_built("the Service Worker's config, which turns auth on");
            web_sys::console::error_1(&format!("cachet: {error}; requests with auth are refused").into());
        }
        let auth = &worker_config.features.auth;
        self.session.follow_auth_type(auth.kind, auth.enabled);
        self.settings.replace(worker_config, ConfigSource::ServiceWorker);
    }
}
