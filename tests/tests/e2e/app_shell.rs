//! The app shell offline, whatever its size (issue 36): the build's own files, listed by the build-stamp
//! hook in `cachet-build.js`, are kept by the worker at install in `cachet-shell-<stamp>`, and answer a
//! GET the engine cannot (the network down, nothing of its own); `cache.maxBodyBytes` bounds what the
//! engine stores as it runs, not the shell. Here the bound is set below the app's wasm (about 850 KB),
//! as a release app over 1 MiB meets the default bound: the engine declines to store the wasm (and says
//! so), and a reload with the server down and the browser offline still renders the app, from the shell.
//! A next build's worker keeps its own set whole before it activates, then the old set goes.

use anyhow::{ensure, Result};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// The example's features, with a body bound the app's wasm is over.
const SMALL_BODIES: &str = r#"{"features": {"auth": {"enabled": true}, "graphql": {"enabled": true}},
  "cache": {"maxBodyBytes": 200000}}"#;

/// The app shell caches and the paths each holds.
const SHELLS: &str =
    "caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith('cachet-shell-'))
    .map((name) => caches.open(name).then((cache) => cache.keys())
      .then((requests) => [name, requests.map((request) => new URL(request.url).pathname).sort()]))))";

/// Every cached path outside the app shell and the worker's own wasm (what the engine stored as it ran).
const RUNTIME_PATHS: &str = "caches.keys().then((names) => Promise.all(names
    .filter((name) => !name.startsWith('cachet-shell-') && !name.startsWith('cachet-sw-wasm-'))
    .map((name) => caches.open(name).then((cache) => cache.keys()))))
    .then((lists) => lists.flat().map((request) => new URL(request.url).pathname))";

/// Reloads the page and waits until the Service Worker controls it again.
async fn reload(harness: &Harness) -> Result<()> {
    harness.client.refresh().await?;
    harness.open_controlled_here().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_whose_wasm_the_cache_declines_reloads_offline_from_the_shell() -> Result<()> {
    let mut harness = Harness::start_with_config(AuthMode::Cookie, SMALL_BODIES).await?;
    harness.open_controlled().await?;

    // Installed only once the shell was whole: the build's files, not the worker's own.
    let shells = harness.eval(SHELLS).await?;
    let shells = shells.as_array().cloned().unwrap_or_default();
    ensure!(shells.len() == 1, "one app shell: {shells:?}");
    let held: Vec<&str> = shells[0][1].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    for path in
        ["/index.html", "/todo-app.js", "/todo-app_bg.wasm", "/cachet-agent.js", "/cachet-agent_bg.wasm"]
    {
        ensure!(held.contains(&path), "the shell holds {path}: {held:?}");
    }
    for path in ["/service-worker.js", "/cachet-sw-config.js", "/cachet-sw_bg.wasm", "/cachet-build.js"] {
        ensure!(!held.contains(&path), "the worker's own {path} is not the shell's: {held:?}");
    }

    // Online, the engine answers the app's files itself and declines the wasm for the bound, saying so.
    reload(&harness).await?;
    harness.wait_for("the app", "document.body.innerText.includes('Sign in')").await?;
    // The worker's snapshot's `notStored`.
    let declined = harness
        .eval(&format!("{}.then((snapshot) => snapshot.notStored)", cachet_e2e::WORKER_SNAPSHOT))
        .await?;
    let wasm = json!({"request": "/todo-app_bg.wasm", "reason": "too-large"});
    let named = declined
        .as_array()
        .into_iter()
        .flatten()
        .any(|view| view["request"] == wasm["request"] && view["reason"] == wasm["reason"]);
    ensure!(named, "the worker names the wasm it did not store: {declined}");
    let runtime = harness.eval(RUNTIME_PATHS).await?;
    ensure!(!runtime.to_string().contains("todo-app_bg.wasm"), "the engine kept no wasm: {runtime}");

    // Offline: the page's files come from the shell, and the app renders.
    harness.stop_server().await;
    harness.emulate_offline(true).await?;
    reload(&harness).await?;
    harness.wait_for("the app, offline", "document.body.innerText.includes('Sign in')").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_build_replaces_the_shell_whole() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Cookie, SMALL_BODIES).await?;
    harness.open_controlled().await?;
    let before = harness.eval(SHELLS).await?;

    // A new build: another stamp (the files are the same here; a new build's would differ).
    let dist = harness.static_dir().map(std::path::Path::to_path_buf).unwrap_or_default();
    let stamp = std::fs::read_to_string(dist.join("cachet-build.js"))?;
    let next = stamp.replacen("self.CACHET_BUILD = \"", "self.CACHET_BUILD = \"next-", 1);
    ensure!(next != stamp, "the stamp's form: {stamp}");
    cachet_e2e::rewrite_served(&dist.join("cachet-build.js"), &next)?;
    let activated = harness
        .run_async(
            "navigator.serviceWorker.getRegistration().then((registration) => registration.update()
               .then(() => new Promise((resolve) => {
                 const waitFor = (worker) => worker.state === 'activated' ? resolve(true)
                   : worker.addEventListener('statechange', () => worker.state === 'activated' && resolve(true));
                 const worker = registration.installing || registration.waiting;
                 worker ? waitFor(worker) : resolve(false);
               }))).then(done, (error) => done(String(error)));",
        )
        .await?;
    ensure!(activated == json!(true), "the next build's worker activated: {activated}");
    let after = harness.eval(SHELLS).await?;
    let names = |shells: &Value| -> Vec<String> {
        shells
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|shell| shell[0].as_str().map(str::to_owned))
            .collect()
    };
    ensure!(names(&after).len() == 1 && names(&after)[0].contains("next-"), "only the new set: {after}");
    ensure!(before[0][1] == after[0][1], "the new set is whole: {before} / {after}");
    Ok(())
}
