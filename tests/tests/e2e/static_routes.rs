//! Static routes (issue 32): where the browser has the Static Routing API (`InstallEvent.addRoutes`,
//! Chromium 123+), the requests cachet's engine would only pass on (the pass-through paths: the auth
//! routes; another origin; a method other than GET and POST; a POST not to a GraphQL endpoint) go to the
//! network without the browser starting a stopped worker; a request the engine decides still starts it. Firefox and WebKit have no static routes: there the shim's own rule passes them on
//! (no `respondWith`), as before.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_through_request_never_starts_a_stopped_worker_and_a_routed_one_does() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    // A page with no cachet client: nothing but the test's requests reaches the worker.
    harness.open_bare_controlled().await?;
    for path in ["/api/me", "/api/me?with=search", "/api/login"] {
        harness.stop_service_workers_until_stopped().await?;
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
        assert!(!harness.service_worker_running().await?, "{method} {path} started the stopped worker");
    }
    // Not at or below a pass-through path: the engine decides, so the browser starts the worker.
    harness.stop_service_workers_until_stopped().await?;
    for path in ["/api/hello", "/api/mex"] {
        harness.run_async(&format!("fetch({}).then((r) => done(r.status));", json!(path))).await?;
        assert!(harness.service_worker_running().await?, "GET {path} did not start the worker");
        harness.stop_service_workers_until_stopped().await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_shim_never_routes_never_starts_a_stopped_worker() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    // The same server under another origin (`localhost` for `127.0.0.1`): a cross-origin request.
    let other_origin = harness.url().replace("127.0.0.1", "localhost");
    let never_routed = [
        ("PUT", "/api/hello".to_owned(), "{}"),
        ("DELETE", "/api/hello".to_owned(), "{}"),
        ("POST", "/api/hello".to_owned(), "{}"),
        ("GET", format!("{other_origin}/api/hello"), "{mode: 'no-cors'}"),
    ];
    for (method, url, extra) in &never_routed {
        harness.stop_service_workers_until_stopped().await?;
        let outcome = harness
            .run_async(&format!(
                "fetch({url}, Object.assign({{method: '{method}'}}, {extra}))
                   .then((r) => done(r.status), (e) => done(String(e)));",
                url = json!(url)
            ))
            .await?;
        // Answered (or refused) by the network; had the worker been started for it, it would run by now:
        // the fetch event comes before the answer.
        assert!(
            !harness.service_worker_running().await?,
            "{method} {url} ({outcome}) started the stopped worker"
        );
    }
    // A POST to the GraphQL endpoint is the engine's: the browser starts the worker for it.
    harness.stop_service_workers_until_stopped().await?;
    let query = "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
        body: JSON.stringify({query: '{ __typename }'})}).then((r) => done(r.status));";
    let status = harness.run_async(query).await?;
    assert!(status.as_u64().is_some(), "POST /graphql: {status}");
    assert!(harness.service_worker_running().await?, "POST /graphql did not start the worker");
    Ok(())
}
