//! Navigation preload (issue 32): the worker enables it where the browser has it, and a navigation its
//! engine answers from the network gets the answer the browser preloaded as it started the worker: the
//! server is asked once, by the preload, never a second time by the engine. Where the browser has static
//! routes (Chromium), a GET navigation races the network against the worker instead: the page gets a 2xx
//! answer without waiting for the engine, which gets a copy of it (asked once, no preload sent). The answer is stored as a
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
    // Once, as the race's request (this story runs in Chromium, which has static routes), of which the
    // engine gets a copy: no preload is sent.
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 0),
        "the navigation reached the server once ({before:?} then {after:?})"
    );

    // Stored from the preloaded answer: offline, the preload fails and the stored page is served.
    harness.stop_server().await;
    harness.stop_service_workers().await?;
    harness.client.goto(&format!("{}/", harness.url())).await?;
    harness.open_controlled_here().await?;
    assert_eq!(harness.run_async("done(document.title);").await?, title);
    Ok(())
}

/// Waits (every 20 ms, at most 10 s) until `ready` (a script calling `done` with a boolean) is true.
async fn until(harness: &Harness, what: &str, ready: &str) -> Result<()> {
    let started = std::time::Instant::now();
    while harness.run_async(ready).await? != json!(true) {
        if started.elapsed() > std::time::Duration::from_secs(10) {
            anyhow::bail!("not after 10 s: {what}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

// Static routes (Chromium): a GET navigation races the network against the worker
// (`SwRoutes::static_routes`). The barrier: the engine cannot load (its wasm is held by the server), and the
// page is answered all the same, by the network; the engine, once loaded, still stores it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_is_answered_by_the_network_while_the_engine_cannot_load_and_then_stored() -> Result<()>
{
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    // The engine's wasm only from the server (not the copy the shim keeps), which holds it.
    let dropped =
        "caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith('cachet-sw-wasm-'))
        .map((name) => caches.delete(name)))).then((gone) => done(gone.length));";
    assert_eq!(harness.run_async(dropped).await?, json!(1), "the shim's copy of the wasm");
    let wasm = "GET /cachet-sw_bg.wasm";
    harness.test_hook("/__test/hold-static?path=/cachet-sw_bg.wasm").await?;
    harness.stop_service_workers_until_stopped().await?;
    let before = harness.count(wasm);
    let page = format!("{}{}", harness.url(), cachet_e2e::BARE_PAGE);
    // Bounded: without the race the navigation would wait for the engine, held 60 s by the server.
    tokio::time::timeout(std::time::Duration::from_secs(20), harness.client.goto(&page))
        .await
        .map_err(|_| anyhow::anyhow!("the navigation waited for the engine"))??;
    assert_eq!(harness.run_async("done(document.title);").await?, json!("bare"));
    assert_eq!(harness.run_async("done(navigator.serviceWorker.controller !== null);").await?, json!(true));
    // The worker was started for it, and its engine was waiting for the wasm (still held now).
    let asked = |harness: &Harness| harness.count(wasm) > before;
    let started = std::time::Instant::now();
    while !asked(&harness) {
        anyhow::ensure!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the engine never asked for its wasm"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    harness.test_hook("/__test/release-static").await?;

    // Once loaded, the engine answers the same event as network-first does: the page is stored.
    let stored = format!("caches.match({}).then((hit) => done(hit !== undefined));", json!(page));
    until(&harness, "the raced page stored by the engine", &stored).await?;
    harness.stop_server().await;
    harness.stop_service_workers_until_stopped().await?;
    harness.client.goto(&page).await?;
    assert_eq!(harness.run_async("done(document.title);").await?, json!("bare"), "offline: the stored page");
    Ok(())
}

// The rule before the race: a GraphQL endpoint is the engine's. A query sent by navigating to the
// endpoint is a GraphQL GET, cache-first by default: the second navigation shows the stored answer,
// though the server would now answer otherwise (raced, the network's answer would win: checked with a
// stopped worker, which the race is for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_to_a_graphql_endpoint_is_the_engines_not_raced() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    let query = format!("{}/graphql?query=%7B__typename%7D", harness.url());
    let shown = "done(document.body.innerText);";
    harness.client.goto(&query).await?;
    let first = harness.run_async(shown).await?;
    assert!(first.as_str().is_some_and(|text| text.contains("QueryRoot")), "{first}");
    // Stored (the navigation's answer, under the query's key): a fetch of it is answered from the cache.
    let source =
        format!("fetch({}).then((r) => done(r.headers.get('x-cachet-source') === 'cache'));", json!(query));
    until(&harness, "the query stored", &source).await?;
    let scripted = r#"{"data":{"__typename":"Scripted"}}"#;
    harness
        .test_hook(&format!(
            "/__test/next-graphql?content_type=application/json&body={}",
            form_urlencoded::byte_serialize(scripted.as_bytes()).collect::<String>()
        ))
        .await?;
    // A stopped worker, as the race is made for.
    harness.stop_service_workers_until_stopped().await?;
    harness.client.goto(&query).await?;
    assert_eq!(harness.run_async(shown).await?, first, "the stored answer, not the network's");
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
