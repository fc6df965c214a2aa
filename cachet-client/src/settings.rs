//! The client's settings part: the config in force and where it came from ([`ConfigSource`], re-exported
//! as `cachet_client::config_sync::ConfigSource`), and the [`ClientOptions`] (tuning and names). Every other part reads the config here; how the page follows its Service Worker's
//! config is `crate::config_sync`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use cachet_core::config::Config;
use cachet_core::protocol::BROADCAST_CHANNEL;

/// The name of the page-only channel between tabs (`cachet_client::tabs`, with the cargo feature `auth`).
pub const AUTH_CHANNEL: &str = "cachet-auth";

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

/// The config in force (the page's at first, the Service Worker's once it answered and differed) and
/// the options.
pub(crate) struct Settings {
    config: RefCell<Rc<Config>>,
    source: Cell<ConfigSource>,
    pub(crate) options: ClientOptions,
}

impl Settings {
    pub(crate) fn new(config: Rc<Config>, source: ConfigSource, options: ClientOptions) -> Self {
        Settings { config: RefCell::new(config), source: Cell::new(source), options }
    }

    /// The config in force.
    pub(crate) fn config(&self) -> Rc<Config> {
        self.config.borrow().clone()
    }

    /// Where the config in force came from, for the console.
    pub(crate) fn source(&self) -> ConfigSource {
        self.source.get()
    }

    /// Follows `config`, which came from `source`.
    pub(crate) fn replace(&self, config: Config, source: ConfigSource) {
        *self.config.borrow_mut() = Rc::new(config);
        self.source.set(source);
    }
}

/// Where the config in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConfigSource {
    /// No config was given: [`Config::default()`](cachet_core::config::Config).
    #[default]
    Default,
    /// `ClientBuilder::config` (or `configure({ config })`).
    Given,
    /// `window.CACHET_CONFIG`, set by `cachet-sw-config.js`.
    Global,
    /// The config `cachet generate --bundles` wrote into `cachet-api.bundle.js`.
    Bundled,
    /// The Service Worker's, after it answered a `config-request`.
    ServiceWorker,
}

impl ConfigSource {
    /// A short name: `default`, `given`, `global`, `bundled` or `service-worker`.
    pub fn name(self) -> &'static str {
        match self {
            ConfigSource::Default => "default",
            ConfigSource::Given => "given",
            ConfigSource::Global => "global",
            ConfigSource::Bundled => "bundled",
            ConfigSource::ServiceWorker => "service-worker",
        }
    }

    /// How the console names it.
    pub fn describe(self) -> &'static str {
        match self {
            ConfigSource::Default => "the default config",
            ConfigSource::Given => "the config given to the client",
            ConfigSource::Global => "window.CACHET_CONFIG (cachet-sw-config.js)",
            ConfigSource::Bundled => "the config in cachet-api.bundle.js",
            ConfigSource::ServiceWorker => "the Service Worker's config",
        }
    }
}
