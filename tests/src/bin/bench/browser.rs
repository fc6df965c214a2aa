//! One headless Chromium for the whole run, and the page calls the workloads are made of.

use std::process::Child;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use fantoccini::wd::TimeoutConfiguration;
use fantoccini::Client;
use serde_json::{json, Value};

use crate::variants::Variant;

/// The longest one page call may take (WebDriver's script timeout).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);

/// A browser session with its own chromedriver and fresh profile.
pub struct Browser {
    client: Client,
    chromedriver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a fresh profile and the `extra` flags.
    pub async fn start(extra: &[String]) -> Result<Self> {
        let profile = tempfile::tempdir()?;
        let (mut chromedriver, driver_url) = cachet_e2e::start_chromedriver().await?;
        let client = match cachet_e2e::connect_browser_with(&driver_url, profile.path(), extra).await {
            Ok(client) => client,
            Err(error) => {
                let _ = chromedriver.kill();
                let _ = chromedriver.wait();
                return Err(error);
            }
        };
        client.update_timeouts(TimeoutConfiguration::new(Some(SCRIPT_TIMEOUT), None, None)).await?;
        Ok(Browser { client, chromedriver, _profile: profile })
    }

    /// The browser's own DevTools address (`host:port`), as chromedriver reports it.
    pub fn debugger_address(&self) -> Option<String> {
        self.client
            .capabilities()
            .and_then(|capabilities| capabilities.get("goog:chromeOptions"))
            .and_then(|options| options["debuggerAddress"].as_str())
            .map(str::to_owned)
    }

    /// Opens the bench page at `origin` and registers `variant`'s worker; resolves once it controls the page.
    pub async fn open(&self, origin: &str, variant: Variant) -> Result<()> {
        self.open_with(origin, variant, variant.sw_url()).await
    }

    /// Navigates to `url` (a page that sets itself up).
    pub async fn goto(&self, url: &str) -> Result<()> {
        Ok(self.client.goto(url).await?)
    }

    /// [`Browser::open`] registering `sw_url` instead of the variant's own worker script.
    pub async fn open_with(&self, origin: &str, variant: Variant, sw_url: Option<&str>) -> Result<()> {
        self.client.goto(&format!("{origin}/")).await?;
        let setup = self.call(&format!("bench.setup({})", json!(sw_url))).await?;
        if setup["controlled"] != json!(variant.sw_url().is_some()) {
            bail!("{}: the page's control is not as expected: {setup}", variant.name());
        }
        Ok(())
    }

    /// Runs the page expression `expression` (a promise) and returns what it resolves to; a rejection
    /// (a wrong answer, a failed request) is an error carrying the page's message.
    pub async fn call(&self, expression: &str) -> Result<Value> {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             Promise.resolve().then(() => {expression}).then(
               (value) => done({{ok: value}}),
               (error) => done({{error: String(error && error.stack || error)}}));"
        );
        let outcome = tokio::time::timeout(SCRIPT_TIMEOUT + Duration::from_secs(10), async {
            self.client.execute_async(&script, vec![]).await
        })
        .await
        .with_context(|| format!("the page did not answer {expression} in time"))?
        .with_context(|| format!("running {expression}"))?;
        match outcome.get("ok") {
            Some(value) => Ok(value.clone()),
            None => bail!("{expression} failed in the page: {}", outcome["error"]),
        }
    }

    /// Stops every Service Worker (Chrome DevTools `ServiceWorker.stopAllWorkers`) and waits until no
    /// worker target is left running, so that the next request starts its worker cold.
    pub async fn stop_service_workers(&self) -> Result<()> {
        cachet_e2e::stop_all_service_workers(&self.client).await
    }

    /// Whether any Service Worker is running now (a DevTools `service_worker` target exists).
    pub async fn service_worker_running(&self) -> Result<bool> {
        cachet_e2e::service_worker_running(&self.client).await
    }
}

impl Drop for Browser {
    /// Closes the session first (chromedriver ends the Chromium of a closed session; killing chromedriver
    /// alone would leave it running), then ends the chromedriver this run started, by its handle.
    fn drop(&mut self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
                let client = self.client.clone();
                let _ = tokio::task::block_in_place(|| {
                    runtime.block_on(tokio::time::timeout(Duration::from_secs(20), client.close()))
                });
            }
        }
        let _ = self.chromedriver.kill();
        let _ = self.chromedriver.wait();
    }
}
