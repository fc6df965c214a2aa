//! Navigation preload (issue 32): the worker enables it where the browser has it, and a navigation its
//! engine answers from the network gets the answer the browser preloaded as it started the worker: the
//! server is asked once, by the preload, never a second time by the engine. The answer is stored as a
//! fetched one is (network-first, the default for a GET): with the server gone, the same navigation is
//! served the stored page.
//!
//! Other requests whose job begins with the network (a GET without cachet's headers, network-first by
//! default) are sent by the shim as the event arrives, and the engine takes that answer: the same, sent
//! once, stored; a request that names a strategy waits for the engine.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_gets_its_preloaded_answer_the_server_asked_once_and_it_is_stored() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let state = harness
        .run_async("navigator.serviceWorker.ready.then((r) => r.navigationPreload.getState()).then(done);")
        .await?;
    assert_eq!(state, json!({"enabled": true, "headerValue": "true"}));
    let title = harness.run_async("done(document.title);").await?;

    // A stopped worker, as about a third of navigations find it: the browser starts it and sends the
    // preload at the same time.
    harness.stop_service_workers().await?;
    let asked = |harness: &Harness| (harness.count("GET /"), harness.count("preload GET /"));
    let before = asked(&harness);
    harness.client.goto(&format!("{}/", harness.url())).await?;
    harness.open_controlled_here().await?;
    let after = asked(&harness);
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 1),
        "the navigation reached the server once, as the browser's preload ({before:?} then {after:?})"
    );

    // Stored from the preloaded answer: offline, the preload fails and the stored page is served.
    harness.stop_server().await;
    harness.stop_service_workers().await?;
    harness.client.goto(&format!("{}/", harness.url())).await?;
    harness.open_controlled_here().await?;
    assert_eq!(harness.run_async("done(document.title);").await?, title);
    Ok(())
}

/// `fetch(path)` from the page with `headers` (a JS object), never from the HTTP cache: the answer's
/// `X-Cachet-Source` and length.
fn fetch_script(path: &str, headers: &str) -> String {
    format!(
        "fetch({path}, {{cache: 'no-store', headers: {headers}}})
           .then(async (r) => done({{source: r.headers.get('x-cachet-source'), length: (await r.text()).length}}),
                 (e) => done({{error: String(e)}}));",
        path = json!(path)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_that_begins_with_the_network_is_sent_once_as_the_worker_starts_and_stored() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let path = "/cachet-build.js";
    let asked = |harness: &Harness| harness.count(&format!("GET {path}"));

    // A stopped worker: the shim sends it at once, the engine answers with that answer.
    harness.stop_service_workers_until_stopped().await?;
    let before = asked(&harness);
    let first = harness.run_async(&fetch_script(path, "{}")).await?;
    assert_eq!(first["source"], json!("network"), "{first}");
    assert_eq!(asked(&harness) - before, 1, "sent once, not again by the engine");
    // A running worker: the same.
    let again = harness.run_async(&fetch_script(path, "{}")).await?;
    assert_eq!(again["source"], json!("network"), "{again}");
    assert_eq!(asked(&harness) - before, 2);

    // Stored as a fetched answer is: a request naming cache-first is answered from the cache, and is
    // not sent early (the server is not asked).
    let cached = harness.run_async(&fetch_script(path, "{'x-sw-strategy': 'cache-first'}")).await?;
    assert_eq!(cached["source"], json!("cache"), "{cached}");
    assert_eq!(cached["length"], first["length"]);
    assert_eq!(asked(&harness) - before, 2, "a request naming its strategy waits for the engine");

    // Offline, the early send fails and network-first falls back to the stored answer.
    harness.stop_server().await;
    harness.stop_service_workers_until_stopped().await?;
    let offline = harness.run_async(&fetch_script(path, "{}")).await?;
    assert_eq!(offline["source"], json!("cache"), "{offline}");
    Ok(())
}
