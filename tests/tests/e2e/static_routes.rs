//! Static routes (issue 32): where the browser has the Static Routing API (`InstallEvent.addRoutes`,
//! Chromium 123+), the requests cachet's engine would only pass on (the pass-through paths: the auth
//! routes) go to the network without the browser starting a stopped worker; a request the engine decides
//! still starts it. Firefox and WebKit have no static routes: there the shim's own rule passes them on
//! (no `respondWith`), as before.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

/// Whether a Service Worker is running now (a DevTools `service_worker` target exists).
async fn worker_running(harness: &Harness) -> Result<bool> {
    let targets = harness.devtools("Target.getTargets", json!({})).await?;
    Ok(targets["targetInfos"]
        .as_array()
        .is_some_and(|infos| infos.iter().any(|info| info["type"] == "service_worker")))
}

/// Stops every worker and waits until none runs (bounded).
async fn stopped(harness: &Harness) -> Result<()> {
    harness.stop_service_workers().await?;
    let started = Instant::now();
    while worker_running(harness).await? {
        if started.elapsed() > Duration::from_secs(10) {
            bail!("a service worker still runs 10 s after stopAllWorkers");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_through_request_never_starts_a_stopped_worker_and_a_routed_one_does() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    // A page with no cachet client: nothing but the test's requests reaches the worker.
    harness.open_bare_controlled().await?;
    for path in ["/api/me", "/api/me?with=search", "/api/login"] {
        stopped(&harness).await?;
        let method = if path == "/api/login" { "POST" } else { "GET" };
        let status = harness
            .run_async(&format!(
                "fetch({}, {{method: '{method}'}}).then((r) => done(r.status));",
                json!(path)
            ))
            .await?;
        // The server answered it (signed out: 401; an empty login: 4xx) ...
        assert!(status.as_u64().is_some_and(|status| (400..500).contains(&status)), "{path}: {status}");
        // ... and had the worker been started for it, it would run by now: the fetch event comes before
        // the answer.
        assert!(!worker_running(&harness).await?, "{method} {path} started the stopped worker");
    }
    // Not at or below a pass-through path: the engine decides, so the browser starts the worker.
    stopped(&harness).await?;
    for path in ["/api/hello", "/api/mex"] {
        harness.run_async(&format!("fetch({}).then((r) => done(r.status));", json!(path))).await?;
        assert!(worker_running(&harness).await?, "GET {path} did not start the worker");
        stopped(&harness).await?;
    }
    Ok(())
}
