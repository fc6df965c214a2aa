//! [`ConfigSource`]: where the config a client runs on came from (re-exported as
//! `cachet_client::config_sync::ConfigSource`; how the page follows its worker's config is
//! `crate::config_sync`).

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
