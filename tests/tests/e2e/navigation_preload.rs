//! Navigation preload (issue 32): the worker enables it where the browser has it, and a navigation its
//! engine answers from the network gets the answer the browser preloaded as it started the worker: the
//! server is asked once, by the preload, never a second time by the engine. The answer is stored as a
//! fetched one is (network-first, the default for a GET): with the server gone, the same navigation is
//! served the stored page.

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
