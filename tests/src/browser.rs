//! The three browser engines the end-to-end tests drive (issue 31): Chromium (chromedriver), Firefox
//! ESR (geckodriver) and WebKitGTK (WebKitWebDriver driving MiniBrowser under a private Xvfb). Each
//! harness starts its own driver (and display), and ends them by their PIDs when dropped.
//!
//! | engine | driver | installed by `cargo xtask test` |
//! |---|---|---|
//! | Chromium | `/usr/bin/chromedriver` | Debian's `chromium`, `chromium-driver` |
//! | Firefox ESR | `geckodriver` (crates.io, in cargo's bin) | Debian's `firefox-esr`; `cargo install geckodriver` |
//! | WebKitGTK | `/usr/bin/WebKitWebDriver` + MiniBrowser, on `Xvfb` | Debian's `webkit2gtk-driver`, `xvfb` |
//!
//! Chrome DevTools commands (forcing a worker to stop, emulating offline, overriding the quota,
//! delivering a push) exist in Chromium only: the stories that need them run there.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::{Client, ClientBuilder};

/// A browser engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    /// Debian's Chromium, headless.
    Chromium,
    /// Debian's Firefox ESR, headless.
    Firefox,
    /// WebKitGTK's MiniBrowser, on a virtual display.
    Webkit,
}

/// WebKitGTK's test browser, shipped with the library (not with the driver).
const MINIBROWSER: &str = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

impl Browser {
    /// Every engine, Chromium first.
    pub const ALL: [Browser; 3] = [Browser::Chromium, Browser::Firefox, Browser::Webkit];

    /// Its short name.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
            Browser::Webkit => "webkit",
        }
    }
}

/// A running WebDriver server (and, for WebKit, its display): ended by their PIDs when dropped.
pub struct Driver {
    /// Its URL, `http://127.0.0.1:PORT`.
    pub url: String,
    process: Child,
    display: Option<Child>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
        if let Some(display) = &mut self.display {
            end_display(display);
        }
    }
}

/// Ends an Xvfb we started: asked first (SIGTERM, so that it removes its lock file and socket), ended
/// (SIGKILL) after 5 s. A killed Xvfb leaves `/tmp/.X<n>-lock` behind, and a machine that ran the suite
/// often enough had no display number left ([`start_display`] also reuses a stale one).
fn end_display(display: &mut Child) {
    let asked = Command::new("kill").args(["-TERM", &display.id().to_string()]).status();
    if asked.is_ok_and(|status| status.success()) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = display.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = display.kill();
    let _ = display.wait();
}

/// Whether X display `number` is in use: its lock file names a process that still runs (a lock left by
/// a process that ended is stale: Xvfb removes it and takes the number), or it has a socket and no lock.
fn display_taken(number: u32) -> bool {
    match std::fs::read_to_string(format!("/tmp/.X{number}-lock")) {
        Ok(lock) => {
            lock.trim().parse::<u32>().map_or(true, |pid| Path::new(&format!("/proc/{pid}")).exists())
        }
        Err(_) => Path::new(&format!("/tmp/.X11-unix/X{number}")).exists(),
    }
}

/// geckodriver as `cargo install` put it.
fn geckodriver() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .unwrap_or_default();
    home.join("bin/geckodriver")
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts `browser`'s WebDriver server on a free 127.0.0.1 port and waits until it is ready.
pub async fn start_driver(browser: Browser) -> Result<Driver> {
    if browser == Browser::Chromium {
        let (process, url) = crate::start_chromedriver().await?;
        return Ok(Driver { url, process, display: None });
    }
    let port = free_port()?;
    let (mut command, display) = match browser {
        Browser::Firefox => {
            let mut command = Command::new(geckodriver());
            command.args(["--host", "127.0.0.1", "--port", &port.to_string(), "--websocket-port", "0"]);
            (command, None)
        }
        _ => {
            let (display, number) = start_display()?;
            let mut command = Command::new("/usr/bin/WebKitWebDriver");
            command.arg(format!("--port={port}")).env("DISPLAY", format!(":{number}"));
            (command, Some(display))
        }
    };
    let process = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().with_context(|| {
        format!("starting the {} driver (install it with `cargo xtask setup`)", browser.name())
    })?;
    let mut driver = Driver { url: format!("http://127.0.0.1:{port}"), process, display };
    let started = Instant::now();
    while !crate::status_ready(port).await {
        if started.elapsed() > crate::WAIT {
            bail!("the {} driver on port {port} was not ready after {:?}", browser.name(), crate::WAIT);
        }
        if let Ok(Some(status)) = driver.process.try_wait() {
            bail!("the {} driver exited with {status}", browser.name());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(driver)
}

/// An Xvfb on the first free display number from 90 ([`display_taken`]), without TCP.
fn start_display() -> Result<(Child, u32)> {
    for number in 90..190 {
        if display_taken(number) {
            continue;
        }
        // A stale lock and its socket (their Xvfb ended without removing them): removed, as Xvfb would,
        // so that the socket this loop waits for is the new server's.
        let _ = std::fs::remove_file(format!("/tmp/.X{number}-lock"));
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{number}"));
        let mut display = Command::new("/usr/bin/Xvfb")
            .args([format!(":{number}").as_str(), "-nolisten", "tcp", "-screen", "0", "1280x900x24"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting /usr/bin/Xvfb (install it with `cargo xtask setup`)")?;
        let socket = format!("/tmp/.X11-unix/X{number}");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if Path::new(&socket).exists() {
                return Ok((display, number));
            }
            if let Ok(Some(_)) = display.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        end_display(&mut display);
    }
    bail!("no free X display between :90 and :189 for Xvfb")
}

/// A session of `browser` through `driver` with a fresh profile at `profile` (Chromium; Firefox and
/// WebKit make a fresh one of their own for each session).
pub async fn connect(browser: Browser, driver: &Driver, profile: &Path) -> Result<Client> {
    connect_with(browser, driver, profile, serde_json::json!({})).await
}

/// How long Firefox lets an idle Service Worker run in a session of [`connect_stopping_idle_workers`]
/// (its preference `dom.serviceWorkers.idle_timeout`; 30 s by default).
pub const FIREFOX_WORKER_IDLE_MS: u64 = 500;

/// [`connect`] for Firefox with its idle Service Workers stopped after [`FIREFOX_WORKER_IDLE_MS`], as
/// browsers stop idle workers: how a story there meets a worker that starts again (Chromium's are
/// stopped on demand, `stop_all_service_workers`; Firefox has no such command).
pub async fn connect_stopping_idle_workers(driver: &Driver) -> Result<Client> {
    let prefs = serde_json::json!({ "dom.serviceWorkers.idle_timeout": FIREFOX_WORKER_IDLE_MS });
    connect_with(Browser::Firefox, driver, Path::new(""), prefs).await
}

/// [`connect`], with Firefox's preferences `firefox_prefs`.
async fn connect_with(
    browser: Browser,
    driver: &Driver,
    profile: &Path,
    firefox_prefs: serde_json::Value,
) -> Result<Client> {
    let mut capabilities = serde_json::Map::new();
    match browser {
        Browser::Chromium => return crate::connect_browser(&driver.url, profile).await,
        Browser::Firefox => {
            capabilities.insert("browserName".into(), "firefox".into());
            capabilities.insert(
                "moz:firefoxOptions".into(),
                serde_json::json!({ "binary": "/usr/bin/firefox-esr", "args": ["-headless"], "prefs": firefox_prefs }),
            );
        }
        Browser::Webkit => {
            capabilities.insert(
                "webkitgtk:browserOptions".into(),
                serde_json::json!({ "binary": MINIBROWSER, "args": ["--automation"] }),
            );
        }
    }
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    Ok(ClientBuilder::new(connector).capabilities(capabilities).connect(&driver.url).await?)
}
