//! The plugins the worker's engine runs ([`cachet_core::engine::plugin`]): what an app installs with
//! [`Options`] in its worker binary, and the list one request runs with.
//!
//! ```no_run
//! use cachet_core::engine::CacheControl;
//! use cachet_worker::sw::Options;
//!
//! // In `src/bin/cachet-sw.rs`: refuse `Cache-Control: private` answers too.
//! Options::new().plugin(CacheControl::strict()).install();
//! ```
//!
//! A request runs, in order: refresh-and-retry when it is marked as authenticated
//! ([`super::auth_retry::AuthRetry`]), the offline queue for a mutation that asks for it
//! ([`super::queue_plugin`]), then the app's plugins in the order it gave them. The server's
//! `Cache-Control` is the planner's rule ([`cachet_core::engine::plan`]), not a plugin's.

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::FailureCheck;
use cachet_core::engine::plugin::{Plugin, Plugins};
use web_sys::Response;

use super::auth_retry::set_failure_check;

/// How the worker's engine is installed: the app's auth-failure check and plugins.
#[derive(Clone, Default)]
pub struct Options {
    failure_check: Option<FailureCheck>,
    plugins: Plugins<Response>,
}

impl Options {
    /// No check of the app's own (the config's rule), no plugin of the app's.
    pub fn new() -> Self {
        Options::default()
    }

    /// The app's auth-failure check (SPEC §5.5): the function the page client got with
    /// `cachet_client::ClientBuilder::failure_check`, so that both sides agree.
    pub fn failure_check(mut self, check: FailureCheck) -> Self {
        self.failure_check = Some(check);
        self
    }

    /// Adds `plugin` after those already given: it runs on every request the engine sends or answers.
    pub fn plugin(mut self, plugin: impl Plugin<Response> + 'static) -> Self {
        self.plugins.push(Rc::new(plugin));
        self
    }

    /// Installs the engine with these options ([`super::install`]).
    pub fn install(self) {
        self.keep();
        super::install();
    }

    /// Keeps the check and the plugins for the engine about to be installed (the whole engine, or the
    /// start module: `Options::install_start`, in `super::start`).
    pub(crate) fn keep(self) {
        if let Some(check) = self.failure_check {
            set_failure_check(check);
        }
        INSTALLED.with(|installed| *installed.borrow_mut() = Some(self.plugins));
    }
}

thread_local! {
    /// The app's plugins, once [`Options::install`] ran (one worker, one thread).
    static INSTALLED: RefCell<Option<Plugins<Response>>> = const { RefCell::new(None) };
}

/// Whether an installed plugin of the app's may change a network answer the page gets
/// (`Plugin::shapes_network_answers`): then the shim hands no navigation over before the engine runs.
pub(crate) fn app_shapes_network_answers() -> bool {
    INSTALLED.with(|installed| {
        installed
            .borrow()
            .as_ref()
            .is_some_and(|plugins| plugins.iter().any(|plugin| plugin.shapes_network_answers()))
    })
}

/// The plugins of one request: its refresh-and-retry (`auth`, a [`super::auth_retry::AuthRetry`]), then the installed
/// ones (none when the engine was installed without [`Options`]). Given as a plugin already, so that the
/// start module, which passes none, links no refresh-and-retry.
pub(crate) fn for_request(auth: Option<Rc<dyn Plugin<Response>>>) -> Plugins<Response> {
    let mut plugins: Plugins<Response> = Vec::new();
    plugins.extend(auth);
    INSTALLED.with(|installed| {
        if let Some(installed) = &*installed.borrow() {
            plugins.extend(installed.iter().cloned());
        }
    });
    plugins
}
