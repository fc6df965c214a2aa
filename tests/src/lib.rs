//! The end-to-end harness: the real todo app (built into `dist/` by trunk) served by the real backend,
//! driven in headless Chromium through chromedriver with fantoccini.
//!
//! Each test builds a [`Harness`]: a backend on a free 127.0.0.1 port with a fresh SQLite file, a
//! chromedriver process of its own, and a browser session with a fresh profile. Dropping the harness ends
//! the chromedriver it started (by its PID) and everything under it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub mod app;
pub mod browser;
mod browser_log;
mod cdp;
pub mod chaos;
pub mod foreign;
mod server_state;

pub use browser::Browser;
pub use browser_log::{browser_log, LogEntry};
pub use cdp::{devtools, service_worker_running, stop_all_service_workers};
pub use foreign::{Foreign, ForeignServer};

use anyhow::{bail, Context, Result};
use fantoccini::{Client, ClientBuilder, Locator};
use todo_backend::{AuthMode, RunningServer, ServerConfig};

/// The whole engine's wasm, as the app's build serves it (the start module's is `cachet-sw-start_bg.wasm`).
pub const WHOLE_WASM: &str = "/cachet-sw_bg.wasm";

/// A page expression: a promise of the worker's devtools snapshot (its first page), asked by hand with
/// `snapshot-request`, as any client may ask it: for a page with no cachet client of its own.
pub const WORKER_SNAPSHOT: &str = "new Promise((resolve) => {
    const requestId = Math.floor(Math.random() * 1e9);
    navigator.serviceWorker.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'snapshot' && message.requestId === requestId) resolve(message.snapshot);
    });
    navigator.serviceWorker.controller.postMessage(
      JSON.stringify({v: 1, type: 'snapshot-request', requestId, query: {limit: 1}}));
  })";

/// A page expression: a promise of how many request names the origin's names caches hold
/// (`cachet-names-<build>`, cachet-worker's `sw::names`), read from the page without waking the worker.
pub const COUNT_NAMES: &str =
    "caches.keys().then((all) => Promise.all(all.filter((name) => name.startsWith('cachet-names-'))
  .map((name) => caches.open(name).then((cache) => cache.keys()))))
  .then((keys) => keys.reduce((sum, list) => sum + list.length, 0))";

/// How long any single wait for the page may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running backend, chromedriver and browser session.
pub struct Harness {
    /// The browser session.
    pub client: Client,
    server: Option<RunningServer>,
    /// The foreign GraphQL server the app is served by instead of the todo backend (the interop matrix).
    foreign: Option<(Foreign, ForeignServer)>,
    /// The foreign server [`Harness::stop_server`] stopped, started again by [`Harness::restart_server`].
    foreign_stopped: Option<Foreign>,
    server_config: ServerConfig,
    /// The WebDriver server (chromedriver unless [`Harness::start_foreign`] chose another engine).
    _driver: browser::Driver,
    /// The engine the session runs in.
    pub browser: Browser,
    _scratch: tempfile::TempDir,
}

/// How long [`wait_controlled`] waits: under the WebDriver's own script timeout (30 s unless a story sets
/// another), so that the page answers with what it knows before the driver gives up on the script.
pub const CONTROL_WAIT: Duration = Duration::from_secs(25);

/// Waits until the Service Worker controls the page in `client` (at once when it does), at most
/// [`CONTROL_WAIT`], and returns how long that took. When it does not, the error says what the page
/// knows of its worker: its registration's workers and their states (an install still running, one that
/// failed and left nothing, no registration at all), read by the same script when its time is up (a
/// second script would queue behind it in the driver), and what the page wrote to its console (the
/// app's `cachet:` errors among it; Chromium's driver only).
pub async fn wait_controlled(client: &Client) -> Result<Duration> {
    let script = format!(
        "const done = arguments[arguments.length - 1];
        const state = () => navigator.serviceWorker.getRegistration().then((registration) => registration ? {{
            scope: registration.scope,
            installing: registration.installing && registration.installing.state,
            waiting: registration.waiting && registration.waiting.state,
            active: registration.active && registration.active.state,
            controlled: navigator.serviceWorker.controller !== null,
          }} : 'no registration', (error) => 'getRegistration failed: ' + error);
        const late = setTimeout(() => state().then((registration) => done({{ registration }})), {});
        navigator.serviceWorker.ready.then(() => {{
          const controlled = () => {{ clearTimeout(late); done(true); }};
          if (navigator.serviceWorker.controller) return controlled();
          navigator.serviceWorker.addEventListener('controllerchange', controlled);
        }});",
        CONTROL_WAIT.as_millis()
    );
    let began = Instant::now();
    let why = match client.execute_async(&script, vec![]).await {
        Ok(serde_json::Value::Bool(true)) => return Ok(began.elapsed()),
        Ok(answer) => {
            format!("after {} ms, the registration: {}", began.elapsed().as_millis(), answer["registration"])
        }
        Err(error) => format!("after {} ms, the driver: {error}", began.elapsed().as_millis()),
    };
    let console = match browser_log(client).await {
        Ok(entries) if entries.is_empty() => " nothing".to_owned(),
        Ok(entries) => entries.iter().map(|entry| format!("\n  {} {}", entry.level, entry.message)).collect(),
        Err(error) => format!(" not read ({error})"),
    };
    bail!("the page was not controlled by the service worker {why}; the page's console:{console}")
}

/// A page of the app's origin with no script: the harness adds it to the served copy of `dist/`.
pub const BARE_PAGE: &str = "/__bare.html";
const BARE_PAGE_HTML: &str = "<!doctype html><html><head><title>bare</title></head><body></body></html>\n";

/// Copies the directory tree `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// A copy of the built app in `scratch/dist`, with the harness's bare page and, when `config` is given
/// (a `cachet.config.json` text), the Service Worker settings generated from it by the CLI's generator.
fn served_copy(scratch: &Path, config: Option<&str>) -> Result<PathBuf> {
    let built = workspace_root().join("dist");
    if !built.join("index.html").exists() {
        bail!("{} has no built app: run `cargo xtask test` (it builds the app first)", built.display());
    }
    // Always a copy, so that the harness can add its bare page (and, when asked, the SW settings).
    let dist = scratch.join("dist");
    copy_dir(&built, &dist)?;
    std::fs::write(dist.join(BARE_PAGE.trim_start_matches('/')), BARE_PAGE_HTML)?;
    if let Some(text) = config {
        let config = cachet_core::config::Config::from_json_str(text)
            .map_err(|error| anyhow::anyhow!("the test's config is invalid: {error}"))?;
        std::fs::write(dist.join("cachet-sw-config.js"), cachet_cli::render_sw_config(&config))?;
    }
    Ok(dist)
}

/// Writes `text` to the served file `path` so that the browser sees the change. The server answers a
/// revalidation by `Last-Modified`, to the second: a file rewritten within the second it was copied in
/// would be "not modified", and a Service Worker's update check would keep the old script and find no
/// new worker (a rare timeout of the stories that redeploy). Its time is set past the old one's second.
pub fn rewrite_served(path: &Path, text: &str) -> Result<()> {
    let before = std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok();
    std::fs::write(path, text)?;
    if let Some(before) = before {
        let later = before + std::time::Duration::from_secs(2);
        if std::fs::metadata(path)?.modified()? < later {
            std::fs::File::options().write(true).open(path)?.set_modified(later)?;
        }
    }
    Ok(())
}

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

impl Harness {
    /// Starts everything with the backend in `auth_mode`, serving the app as built.
    pub async fn start(auth_mode: AuthMode) -> Result<Self> {
        Self::start_with(auth_mode, None).await
    }

    /// Starts everything with the backend in `auth_mode`, serving a copy of the built app whose Service
    /// Worker settings (`cachet-sw-config.js`) are generated from `config` (a `cachet.config.json` text)
    /// by the CLI's own generator, so a test can run the SW with, say, bearer auth on.
    pub async fn start_with_config(auth_mode: AuthMode, config: &str) -> Result<Self> {
        Self::start_with(auth_mode, Some(config)).await
    }

    /// Starts everything with the browser's profile at `profile` (a directory on a size-limited
    /// filesystem, say) instead of the harness's scratch directory.
    pub async fn start_with_profile(auth_mode: AuthMode, profile: &Path) -> Result<Self> {
        Self::start_full(auth_mode, None, Some(profile)).await
    }

    async fn start_with(auth_mode: AuthMode, config: Option<&str>) -> Result<Self> {
        Self::start_full(auth_mode, config, None).await
    }

    /// Starts everything with `foreign` (a GraphQL server of the interop matrix, with its defaults)
    /// serving a copy of the built app whose Service Worker runs on `config`, in place of the todo
    /// backend. [`Harness::url`], [`Harness::stop_server`] and [`Harness::restart_server`] act on it.
    pub async fn start_foreign(foreign: Foreign, config: &str) -> Result<Self> {
        Self::start_foreign_in(Browser::Chromium, foreign, config).await
    }

    /// [`Harness::start_foreign`] in `browser`.
    pub async fn start_foreign_in(browser: Browser, foreign: Foreign, config: &str) -> Result<Self> {
        let scratch = tempfile::tempdir()?;
        let dist = served_copy(scratch.path(), Some(config))?;
        let server = ForeignServer::start(foreign, &dist, 0).await?;
        let server_config = ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], server.port())),
            static_dir: Some(dist),
            db_path: scratch.path().join("unused.sqlite"),
            auth_mode: AuthMode::Bearer,
            token_ttl: Duration::from_secs(900),
            test_hooks: true,
        };
        let driver = browser::start_driver(browser).await?;
        let client = browser::connect(browser, &driver, &scratch.path().join("chromium-profile")).await?;
        Ok(Harness {
            client,
            server: None,
            foreign: Some((foreign, server)),
            foreign_stopped: None,
            server_config,
            _driver: driver,
            browser,
            _scratch: scratch,
        })
    }

    /// The foreign server the app is served by, if any ([`Harness::start_foreign`]).
    pub fn foreign(&self) -> Option<&ForeignServer> {
        self.foreign.as_ref().map(|(_, server)| server)
    }

    /// [`Harness::start_with_config`] in `browser`.
    pub async fn start_with_config_in(browser: Browser, auth_mode: AuthMode, config: &str) -> Result<Self> {
        Self::start_full_in(browser, auth_mode, Some(config), None).await
    }

    /// Starts everything in Firefox, whose idle Service Workers this session stops after
    /// [`browser::FIREFOX_WORKER_IDLE_MS`] (see [`browser::connect_stopping_idle_workers`]).
    pub async fn start_in_firefox_stopping_idle_workers(auth_mode: AuthMode) -> Result<Self> {
        Self::start_session(Browser::Firefox, auth_mode, None, None, true).await
    }

    async fn start_full(auth_mode: AuthMode, config: Option<&str>, profile: Option<&Path>) -> Result<Self> {
        Self::start_full_in(Browser::Chromium, auth_mode, config, profile).await
    }

    async fn start_full_in(
        browser: Browser,
        auth_mode: AuthMode,
        config: Option<&str>,
        profile: Option<&Path>,
    ) -> Result<Self> {
        Self::start_session(browser, auth_mode, config, profile, false).await
    }

    async fn start_session(
        browser: Browser,
        auth_mode: AuthMode,
        config: Option<&str>,
        profile: Option<&Path>,
        stopping_idle_workers: bool,
    ) -> Result<Self> {
        let scratch = tempfile::tempdir()?;
        let dist = served_copy(scratch.path(), config)?;
        let server_config = ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            static_dir: Some(dist),
            db_path: scratch.path().join("todo.sqlite"),
            auth_mode,
            token_ttl: Duration::from_secs(900),
            test_hooks: true,
        };
        let server = todo_backend::start(server_config.clone()).await?;
        let server_config = ServerConfig { addr: server.addr(), ..server_config };
        let driver = browser::start_driver(browser).await?;
        let profile = profile.map_or_else(|| scratch.path().join("chromium-profile"), Path::to_path_buf);
        let client = if stopping_idle_workers {
            browser::connect_stopping_idle_workers(&driver).await?
        } else {
            browser::connect(browser, &driver, &profile).await?
        };
        Ok(Harness {
            client,
            server: Some(server),
            foreign: None,
            foreign_stopped: None,
            server_config,
            _driver: driver,
            browser,
            _scratch: scratch,
        })
    }

    /// A new deployment of the Service Worker's settings: rewrites the served `cachet-sw-config.js` from
    /// `config` (a `cachet.config.json` text) with the CLI's generator. The browser installs the new
    /// worker at its next update check (`registration.update()`), which compares imported scripts too.
    pub fn redeploy_sw_config(&self, config: &str) -> Result<()> {
        let config = cachet_core::config::Config::from_json_str(config)
            .map_err(|error| anyhow::anyhow!("the test's config is invalid: {error}"))?;
        rewrite_served(
            &self._scratch.path().join("dist/cachet-sw-config.js"),
            &cachet_cli::render_sw_config(&config),
        )
    }

    /// The copy of the built app the server serves (files written there are served at once).
    pub fn static_dir(&self) -> Option<&Path> {
        self.server_config.static_dir.as_deref()
    }

    /// The browser's profile directory (unique to this harness).
    pub fn profile_dir(&self) -> PathBuf {
        self._scratch.path().join("chromium-profile")
    }

    /// The app's origin, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.server_config.addr)
    }

    /// The backend's per-route request counts (see `todo_backend::RunningServer::counts`).
    pub fn count(&self, route: &str) -> u64 {
        self.server.as_ref().and_then(|server| server.counts().get(route).copied()).unwrap_or(0)
    }

    /// Stops the backend: afterwards the browser gets network errors.
    pub async fn stop_server(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await;
        }
        if let Some((kind, server)) = self.foreign.take() {
            server.stop().await;
            self.foreign_stopped = Some(kind);
        }
    }

    /// Starts the backend again on the same port (same origin) with the same database (a foreign server
    /// starts empty: its data lives in its memory).
    pub async fn restart_server(&mut self) -> Result<()> {
        self.stop_server().await;
        if let Some(kind) = self.foreign_stopped.take() {
            let dist = self.server_config.static_dir.clone().unwrap_or_default();
            let server = ForeignServer::start(kind, &dist, self.server_config.addr.port()).await?;
            self.foreign = Some((kind, server));
            return Ok(());
        }
        self.server = Some(todo_backend::start(self.server_config.clone()).await?);
        Ok(())
    }

    /// Opens the app and waits until the Service Worker controls the page.
    pub async fn open_controlled(&self) -> Result<()> {
        self.open_controlled_at("/").await
    }

    /// Lets the app register the Service Worker, then opens [`BARE_PAGE`] (no cachet client of its own:
    /// nothing there answers the Service Worker but the test) and waits until it is controlled. For
    /// stories that speak the protocol by hand, as any client may.
    pub async fn open_bare_controlled(&self) -> Result<()> {
        self.open_controlled_at("/").await?;
        self.open_controlled_at(BARE_PAGE).await
    }

    async fn open_controlled_at(&self, path: &str) -> Result<()> {
        self.client.goto(&format!("{}{path}", self.url())).await?;
        self.open_controlled_here().await
    }

    /// Waits until the Service Worker controls the current page (after a reload, say): [`wait_controlled`].
    pub async fn open_controlled_here(&self) -> Result<()> {
        wait_controlled(&self.client).await.map(|_| ())
    }

    /// Logs `user` in from the page (`POST /api/login` with the seeded password `<user>-password`); the
    /// backend answers with the session cookie or token of its auth mode. Fails unless it answers 200.
    pub async fn login(&self, user: &str) -> Result<()> {
        let script = format!(
            "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
               body: JSON.stringify({{username: {user}, password: {password}}})}}).then((r) => done(r.status));",
            user = serde_json::json!(user),
            password = serde_json::json!(format!("{user}-password")),
        );
        match self.run_async(&script).await? {
            serde_json::Value::Number(status) if status.as_u64() == Some(200) => Ok(()),
            other => bail!("logging {user} in answered {other}"),
        }
    }

    /// Runs `body` as an async script in the page; `body` calls `done(value)` to finish.
    pub async fn run_async(&self, body: &str) -> Result<serde_json::Value> {
        let script = format!("const done = arguments[arguments.length - 1];\n{body}");
        Ok(self.client.execute_async(&script, vec![]).await?)
    }

    /// Waits (at most [`WAIT`]) for an element matching `css`.
    pub async fn element(&self, css: &str) -> Result<fantoccini::elements::Element> {
        self.client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
            .with_context(|| format!("waiting for {css}"))
    }

    /// Waits for an element matching `css` and returns its text.
    pub async fn text_of(&self, css: &str) -> Result<String> {
        Ok(self.element(css).await?.text().await?)
    }

    /// Opens the plain example page (`/plain-page/?<query>`, `window.cachet` without a bundler) in the
    /// current window, and waits until `cachet.ready` and until the Service Worker controls the page.
    pub async fn open_plain_page(&self, query: &str) -> Result<()> {
        self.client.goto(&format!("{}/plain-page/?{query}", self.url())).await?;
        // Bounded in the page (below WebDriver's 30 s script timeout), so that a page that never gets
        // ready says how far it got: which stage, and the resources that had loaded by then.
        let ready = self
            .run_async(
                "let stage = typeof cachet === 'undefined' ? 'no window.cachet' : 'cachet.ready';
                 const late = setTimeout(() => done(`not ready within 20 s, waiting for ${stage}; controlled: ${
                   !!navigator.serviceWorker.controller}; loaded: ${performance.getEntriesByType('resource')
                   .map((entry) => new URL(entry.name).pathname).join(', ')}`), 20000);
                 const finish = (value) => { clearTimeout(late); done(value); };
                 (typeof cachet === 'undefined' ? new Promise(() => {}) : cachet.ready).then(() => { stage = 'navigator.serviceWorker.ready'; return navigator.serviceWorker.ready; })
                   .then(() => {
                     stage = 'controllerchange';
                     if (navigator.serviceWorker.controller) return finish(true);
                     navigator.serviceWorker.addEventListener('controllerchange', () => finish(true));
                   }, (error) => finish(String(error)));",
            )
            .await?;
        if ready != serde_json::Value::Bool(true) {
            bail!("the plain page did not start: {ready}");
        }
        Ok(())
    }

    /// Waits, without polling, until the element matching `css` has a text starting with `prefix`, and
    /// returns that text: a `MutationObserver` in the page answers as soon as the DOM changes. Bounded by
    /// the WebDriver script timeout.
    pub async fn wait_for_text_starting_with(&self, css: &str, prefix: &str) -> Result<String> {
        let script = format!(
            "const css = {css}, prefix = {prefix};
             const found = () => {{ const element = document.querySelector(css);
               return element && element.textContent.startsWith(prefix) ? element.textContent : null; }};
             if (found() !== null) {{ done(found()); }} else {{
               const observer = new MutationObserver(() => {{
                 if (found() !== null) {{ observer.disconnect(); done(found()); }} }});
               observer.observe(document.body, {{subtree: true, childList: true, characterData: true}});
             }}",
            css = serde_json::json!(css),
            prefix = serde_json::json!(prefix),
        );
        match self.run_async(&script).await? {
            serde_json::Value::String(text) => Ok(text),
            other => bail!("{css} never read {prefix:?}...: {other}"),
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // Close the browser session first: chromedriver ends the Chromium of a closed session, but killing
        // chromedriver alone leaves that Chromium running. The tests run on tokio's multi-thread runtime,
        // where a blocking wait inside `drop` is allowed.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
                let client = self.client.clone();
                let _ = tokio::task::block_in_place(|| {
                    runtime.block_on(tokio::time::timeout(WAIT, client.close()))
                });
            }
        }
        // Then only the driver (and display) this harness started: `browser::Driver`'s own drop.
    }
}

/// Starts `/usr/bin/chromedriver` on a free 127.0.0.1 port and waits until it is ready; returns the
/// process (end it by its PID when done) and its URL.
pub async fn start_chromedriver() -> Result<(Child, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = Command::new("/usr/bin/chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting /usr/bin/chromedriver (install it with `cargo xtask setup`)")?;
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    // A bare TCP connect is not enough: chromedriver once reset the first session request. Poll /status.
    loop {
        if status_ready(port).await {
            return Ok((child, url));
        }
        if started.elapsed() > WAIT {
            let _ = child.kill();
            bail!("chromedriver on port {port} not ready after {WAIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether the WebDriver server on `port` says it is ready (`GET /status`).
pub(crate) async fn status_ready(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    // chromedriver may keep the connection open despite `Connection: close`: read until the answer
    // says whether it is ready, bounded in time.
    let mut answer = Vec::new();
    let read = async {
        let mut chunk = [0_u8; 4096];
        while let Ok(count @ 1..) = stream.read(&mut chunk).await {
            answer.extend_from_slice(&chunk[..count]);
            let text: String = String::from_utf8_lossy(&answer).split_whitespace().collect();
            if text.contains("\"ready\":true") {
                return true;
            }
            if text.contains("\"ready\":false") {
                return false;
            }
        }
        false
    };
    tokio::time::timeout(Duration::from_secs(2), read).await.unwrap_or(false)
}

/// Opens a headless Chromium session with a fresh profile at `profile` through the chromedriver at
/// `driver_url`.
pub async fn connect_browser(driver_url: &str, profile: &Path) -> Result<Client> {
    connect_browser_with(driver_url, profile, &[]).await
}

/// [`connect_browser`], with `extra` Chromium flags after the usual ones (the bench's `--chromium-flag`,
/// e.g. `--js-flags=--no-wasm-lazy-compilation` to see what compiling on first call costs).
pub async fn connect_browser_with(driver_url: &str, profile: &Path, extra: &[String]) -> Result<Client> {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ];
    let mut args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    args.extend(extra.iter().cloned());
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": "/usr/bin/chromium", "args": args }),
    );
    // The browser's console (pages and their workers) for [`Harness::browser_log`].
    capabilities.insert("goog:loggingPrefs".into(), serde_json::json!({ "browser": "ALL" }));
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    Ok(ClientBuilder::new(connector).capabilities(capabilities).connect(driver_url).await?)
}
