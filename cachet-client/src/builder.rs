//! [`ClientBuilder`]: how a [`Client`] is made (config, adapter, network, failure check, plugins,
//! options).

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::{rule_check, Config, FailureCheck};
use cachet_core::engine::plugin::{Plugin, Plugins};
use web_sys::BroadcastChannel;

use crate::adapter::AuthAdapter;
use crate::client::{Client, Inner};
use crate::http::{Http, HttpResponse};
use crate::hub::EventHub;
use crate::locks::Started;
use crate::session::Session;
use crate::settings::ConfigSource;
use crate::settings::{ClientOptions, Settings};
use crate::transport::Transport;
use crate::Error;

/// Builds a [`Client`].
#[derive(Default)]
pub struct ClientBuilder {
    config: Option<Rc<Config>>,
    config_source: ConfigSource,
    /// Set by `adapter` (with the cargo feature `auth`).
    pub(crate) adapter: Option<Rc<dyn AuthAdapter>>,
    http: Option<Http>,
    options: ClientOptions,
    failure_check: Option<FailureCheck>,
    plugins: Plugins<HttpResponse>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ClientBuilder")
            .field("config", &self.config)
            .field("options", &self.options)
            .finish()
    }
}

impl ClientBuilder {
    /// The config (`cachet.config.json`); default: [`Config::default`]. Once a Service Worker answers,
    /// the client follows the worker's config where the two differ, and says so on the console.
    pub fn config(self, config: Config) -> Self {
        self.config_shared(Rc::new(config))
    }

    /// [`Self::config`], shared rather than copied (the provider's `config` prop).
    pub fn config_shared(mut self, config: Rc<Config>) -> Self {
        self.config = Some(config);
        self.config_source = ConfigSource::Given;
        self
    }

    /// Names where the config given to [`Self::config`] came from (for the console message).
    pub fn config_source(mut self, source: ConfigSource) -> Self {
        self.config_source = source;
        self
    }

    /// The config set so far, if any.
    pub fn config_ref(&self) -> Option<&Config> {
        self.config.as_deref()
    }

    /// Where the config set so far came from ([`ConfigSource::Default`] when none was set).
    pub fn config_source_ref(&self) -> ConfigSource {
        if self.config.is_some() {
            self.config_source
        } else {
            ConfigSource::Default
        }
    }

    /// The config from the text of `cachet.config.json`.
    pub fn config_json(self, text: &str) -> Result<Self, Error> {
        let config = Config::from_json_str(text).map_err(cachet_core::Error::from)?;
        Ok(self.config(config))
    }

    /// The config `cachet-sw-config.js` sets as `window.CACHET_CONFIG` when the page loads it, read as
    /// `cachet generate` wrote it ([`Config::from_written_json`]: a hand edit that breaks its shape is
    /// an error naming the key); the builder is unchanged when the global is absent.
    pub fn config_from_global(self) -> Result<Self, Error> {
        let value = web_sys::window()
            .and_then(|window| js_sys::Reflect::get(&window, &"CACHET_CONFIG".into()).ok())
            .filter(|value| !value.is_undefined() && !value.is_null());
        match value.and_then(|value| js_sys::JSON::stringify(&value).ok()).and_then(|text| text.as_string()) {
            // Written by `cachet generate` from a config the whole reader accepted: read back as written.
            Some(text) => {
                // The whole reader where the build links it anyway (`config_json`, cargo feature
                // `whole-config-reader`): see `config_sync::read_written`.
                #[cfg(feature = "whole-config-reader")]
                let builder = self.config_json(&text)?;
                #[cfg(not(feature = "whole-config-reader"))]
                let builder =
                    self.config(Config::from_written_json(&text).map_err(cachet_core::Error::from)?);
                Ok(builder.config_source(ConfigSource::Global))
            }
            None => Ok(self),
        }
    }

    /// The door to the network; default: [`Http::browser`].
    pub fn http(mut self, http: Http) -> Self {
        self.http = Some(http);
        self
    }

    /// The auth-failure check (SPEC §5.5 `isAuthFailureResponse`); default: `features.auth.failure` of
    /// the config ([`cachet_core::config::rule_check`]). Give the Service Worker the same function
    /// (`cachet_worker::sw::install_with`), so that both sides agree; `cachet add auth` creates it as
    /// `src/cachet/auth/check.rs` and wires both.
    pub fn failure_check(mut self, check: FailureCheck) -> Self {
        self.failure_check = Some(check);
        self
    }

    /// Adds an engine plugin ([`cachet_core::engine::plugin`]) after those already given: it runs on every
    /// request the page answers or sends itself (no Service Worker controls the page, or the request is
    /// not one the worker routes). Install the same plugin in the worker binary
    /// (`cachet_worker::sw::Options::plugin`) for the requests the worker answers.
    pub fn plugin(mut self, plugin: impl Plugin<HttpResponse> + 'static) -> Self {
        self.plugins.push(Rc::new(plugin));
        self
    }

    /// Tuning and names.
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Starts the client: listens to the Service Worker, the other tabs and connectivity, and restores the
    /// persisted auth in the background (every async call waits for that first).
    pub fn build(self) -> Result<Client, Error> {
        let window = web_sys::window().ok_or(Error::Unsupported { api: "window" })?;
        let config_source = self.config_source_ref();
        let config = self.config.unwrap_or_default();
        if config.features.auth.enabled && !Session::BUILT {
            return Err(crate::checks::warned(crate::checks::auth_not_built(
                "a config with features.auth.enabled",
            )));
        }
        let settings = Rc::new(Settings::new(config, config_source, self.options));
        let events = BroadcastChannel::new(&settings.options.events_channel)
            .map_err(|error| Error::js("new BroadcastChannel", error))?;
        let hub = Rc::new(EventHub::new(events, settings.options.window_events));
        let failure_check = self.failure_check.unwrap_or(rule_check);
        let http = self.http.unwrap_or_else(Http::browser);
        let transport = Rc::new(Transport::new(settings.clone(), http, self.plugins, failure_check));
        let started = Rc::new(Started::default());
        let online = window.navigator().on_line();
        let session = Session::new(
            settings.clone(),
            transport.clone(),
            hub.clone(),
            started.clone(),
            self.adapter,
            online,
        )?;
        #[cfg(feature = "queue")]
        let alarm = crate::queue_alarm::Alarm::new(transport.clone());
        let inner = Rc::new(Inner {
            settings,
            transport,
            hub,
            session,
            listeners: RefCell::new(None),
            started,
            #[cfg(feature = "queue")]
            alarm,
        });
        inner.listen();
        let (purging, starting) = (inner.clone(), inner.clone());
        inner.started.begin(
            Box::pin(async move { purging.session.finish_interrupted_purge().await }),
            Box::pin(async move {
                starting.follow_worker_config().await;
                starting.session.clone().restore().await
            }),
        );
        Ok(Client { inner })
    }
}

impl Client {
    /// A builder with the default config, adapter, network and options.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }
}
