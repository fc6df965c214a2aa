//! Navigation preload (issue 32): the worker enables it where the browser has it, and a navigation its
//! engine answers from the network gets the answer the browser preloaded as it started the worker: the
//! server is asked once, by the preload, never a second time by the engine. The answer is stored as a
//! fetched one is (network-first, the default for a GET): with the server gone, the same navigation is
//! served the stored page.
//!
//! Where the preload brings a 2xx answer and the navigation's job begins with the network (network-first
//! by default), the shim hands that answer to the page without waiting for the engine, as it does for
//! the scripts, stylesheets and images the page loads (`cachet_core::config::SwRoutes::hands_over`); the
//! engine, once loaded, runs the job on a copy and stores it.
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

    // Stored from the preloaded answer (the engine's work on a copy, once the page's requests are over):
    // offline, the preload fails and the stored page is served.
    let stored = format!(
        "caches.match({}).then((hit) => done(hit !== undefined));",
        json!(format!("{}/", harness.url()))
    );
    until(&harness, "the page stored", &stored).await?;
    harness.stop_server().await;
    harness.stop_service_workers().await?;
    harness.client.goto(&format!("{}/", harness.url())).await?;
    harness.open_controlled_here().await?;
    assert_eq!(harness.run_async("done(document.title);").await?, title);
    Ok(())
}

/// Waits (every 20 ms, at most 10 s) until the server answered `route` more than `before` times; else
/// fails saying `never`.
async fn server_asked(harness: &Harness, route: &str, before: u64, never: &str) -> Result<()> {
    let started = std::time::Instant::now();
    while harness.count(route) == before {
        anyhow::ensure!(started.elapsed() < std::time::Duration::from_secs(10), "{never}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Deletes `url` from every cache of the origin.
async fn forget(harness: &Harness, url: &str) -> Result<()> {
    let forget = format!(
        "caches.keys().then((names) => Promise.all(names.map((name) => caches.open(name).then((cache) => cache.delete({})))))
           .then(() => done(true));",
        json!(url)
    );
    harness.run_async(&forget).await?;
    Ok(())
}

/// Waits (every 20 ms, at most 10 s) until `ready` (a script calling `done` with a boolean) is true.
async fn until(harness: &Harness, what: &str, ready: &str) -> Result<()> {
    let started = std::time::Instant::now();
    while harness.run_async(ready).await? != json!(true) {
        anyhow::ensure!(started.elapsed() < std::time::Duration::from_secs(10), "not after 10 s: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

// The barrier: the engine cannot load (the server holds the wasm a stopped worker loads first, the
// start module's, and the shim's copies are gone), and the navigation is answered all the same, by its
// preload, and a script it loads by the shim's early send; once the wasm is released, the engine stores
// both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_is_answered_by_its_preload_while_the_engine_cannot_load_and_then_stored() -> Result<()>
{
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    // The shim's copies of the wasm dropped (the record next to them, that this build hands over, kept).
    let dropped = "caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith('cachet-sw-wasm-'))
        .map((name) => caches.open(name).then((cache) => Promise.all(['/cachet-sw_bg.wasm', '/cachet-sw-start_bg.wasm']
          .map((path) => cache.delete(new URL(path, location.href).href)))))))
        .then((gone) => done(gone));";
    assert_eq!(harness.run_async(dropped).await?, json!([[true, true]]), "the shim's copies of the wasm");
    // The page as the opening navigation stored it, dropped.
    let page = format!("{}{}", harness.url(), cachet_e2e::BARE_PAGE);
    forget(&harness, &page).await?;
    let wasm = "GET /cachet-sw-start_bg.wasm";
    harness.test_hook("/__test/hold-static?path=/cachet-sw-start_bg.wasm").await?;
    harness.stop_service_workers_until_stopped().await?;
    let before = (harness.count(wasm), harness.count("preload GET /__bare.html"));
    // Bounded: without the hand-over the navigation would wait for the engine, held 60 s by the server.
    tokio::time::timeout(std::time::Duration::from_secs(20), harness.client.goto(&page))
        .await
        .map_err(|_| anyhow::anyhow!("the navigation waited for the engine"))??;
    assert_eq!(harness.run_async("done(document.title);").await?, json!("bare"));
    assert_eq!(harness.run_async("done(navigator.serviceWorker.controller !== null);").await?, json!(true));
    assert_eq!(harness.count("preload GET /__bare.html") - before.1, 1, "answered by its preload");
    // The worker was started for it, and its engine is waiting for the wasm (still held now).
    server_asked(&harness, wasm, before.0, "the engine never asked for its wasm").await?;
    // A script the page loads (a destination: no code reads its headers) is answered the same way, by
    // the shim's early send, while the engine still cannot load.
    let script = format!("{}/cachet-sw-config.js", harness.url());
    let load = format!(
        "const script = document.createElement('script'); script.src = {};
         script.onload = () => done(true); script.onerror = () => done(false); document.head.append(script);",
        json!(script)
    );
    let loaded = tokio::time::timeout(std::time::Duration::from_secs(20), harness.run_async(&load))
        .await
        .map_err(|_| anyhow::anyhow!("the script waited for the engine"))??;
    assert_eq!(loaded, json!(true), "the script loaded");
    let stored = |url: &str| format!("caches.match({}).then((hit) => done(hit !== undefined));", json!(url));
    assert_eq!(harness.run_async(&stored(&page)).await?, json!(false), "not stored before the engine runs");
    harness.test_hook("/__test/release-static").await?;

    // Once loaded, the engine runs each job on its copy: both are stored, and the page is served offline.
    until(&harness, "the handed page stored by the engine", &stored(&page)).await?;
    until(&harness, "the handed script stored by the engine", &stored(&script)).await?;
    harness.stop_server().await;
    harness.stop_service_workers_until_stopped().await?;
    harness.client.goto(&page).await?;
    assert_eq!(harness.run_async("done(document.title);").await?, json!("bare"), "offline: the stored page");
    Ok(())
}

// The copies' work waits while an answer is open (the shim's `whenQuiet`: the page's requests are not
// held up by the engine's work on a copy), but never for ever. A `fetch` the server holds is open in the
// worker; a frame's navigation, handed over, is answered meanwhile, and its copy is stored while the
// fetch is still unanswered, a second (the shim's MOST_MS) after it was queued, not 50 ms after the
// last fetch event (the stored-at mark, the worker's clock, against the page's before the frame: the
// same clock); released, the fetch is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_frame_is_stored_a_second_later_while_another_answer_stays_open() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let page = format!("{}{}", harness.url(), cachet_e2e::BARE_PAGE);
    forget(&harness, &page).await?;
    // A worker started again reads the record that this build hands answers over (kept at install).
    harness.stop_service_workers_until_stopped().await?;
    let held = "/cachet-sw-config.js";
    harness.test_hook(&format!("/__test/hold-static?path={held}")).await?;
    let before = harness.count(&format!("GET {held}"));
    let open = format!(
        "window.__held = 'waiting';
         fetch({}, {{cache: 'no-store'}}).then((r) => r.text()).then(() => {{ window.__held = 'answered'; }}, () => {{ window.__held = 'failed'; }});
         done(true);",
        json!(held)
    );
    harness.run_async(&open).await?;
    server_asked(&harness, &format!("GET {held}"), before, "the fetch never reached the server").await?;
    let frame = format!(
        "window.__before = Date.now(); const frame = document.createElement('iframe'); frame.src = {};
         frame.onload = () => done(frame.contentDocument.title); document.body.append(frame);",
        json!(page)
    );
    assert_eq!(harness.run_async(&frame).await?, json!("bare"), "the frame answered while the fetch is held");
    let stored_at = format!(
        "caches.match({}).then((hit) => done(hit ? Number(hit.headers.get('x-cachet-stored-at')) - window.__before : null));",
        json!(page)
    );
    let started = std::time::Instant::now();
    let waited = loop {
        match harness.run_async(&stored_at).await? {
            serde_json::Value::Number(waited) => break waited.as_f64().unwrap_or_default(),
            _ => {
                anyhow::ensure!(
                    started.elapsed() < std::time::Duration::from_secs(10),
                    "the frame never stored"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    };
    assert_eq!(harness.run_async("done(window.__held);").await?, json!("waiting"), "the fetch still held");
    // The shim's bound is 1000 ms from the queueing, which came after `__before`; a few ms of slack for
    // the two clocks' rounding.
    anyhow::ensure!(
        waited >= 990.0,
        "the frame's copy was stored {waited} ms after it, while an answer was open"
    );
    harness.test_hook("/__test/release-static").await?;
    until(&harness, "the fetch answered", "done(window.__held === 'answered');").await?;
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

// Where the engine cannot load (the server fails its wasm, the shim's copy gone), a routed POST (a
// GraphQL query) goes to the network as if there were no worker: it reaches the server whole, and its
// answer is the page's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_reaches_the_server_whole_when_the_engine_cannot_load() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    let dropped =
        "caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith('cachet-sw-wasm-'))
        .map((name) => caches.delete(name)))).then((gone) => done(gone.length));";
    assert_eq!(harness.run_async(dropped).await?, json!(1), "the shim's copies of the wasm");
    // Both engines: the start module's wasm and the whole engine's.
    harness.test_hook("/__test/fail-static?path=/cachet-sw*_bg.wasm").await?;
    harness.stop_service_workers_until_stopped().await?;
    let before = (harness.count("POST /graphql"), harness.count("GET /cachet-sw_bg.wasm"));
    let query = "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
        body: JSON.stringify({query: 'query GetTodos { todos { id title } }'})})
      .then(async (r) => { const text = await r.text();
                           done({status: r.status, source: r.headers.get('x-cachet-source'), body: text}); },
            (e) => done(String(e)));";
    let answer = harness.run_async(query).await?;
    // Straight from the server: no `X-Cachet-Source`; its answer to the query it got whole.
    assert_eq!((&answer["status"], &answer["source"]), (&json!(200), &json!(null)), "{answer}");
    let body: serde_json::Value = serde_json::from_str(answer["body"].as_str().unwrap_or_default())?;
    assert!(body["data"]["todos"].is_array(), "the query arrived whole: {body}");
    assert_eq!(harness.count("POST /graphql") - before.0, 1, "sent once");
    assert!(harness.count("GET /cachet-sw_bg.wasm") > before.1, "the whole engine tried to load, and failed");
    harness.test_hook("/__test/release-static").await?;
    Ok(())
}

// A copy's job runs once the worker is quiet, after the shim gave the page the answer: a clear-all that
// begins in between overtakes it as it overtakes an answer on its way (the shim notes the whole engine's
// invalidation count as the copy arrives: cachet-worker's `Target::begun`), so nothing received before
// the purge is stored after it. The whole engine's wasm is held so that the clear-all's message reaches
// it before the copy's job; the barrier is the worker's own word: the copy listed as not stored,
// `overtaken` (with the count not passed on, the copy was stored and never listed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_received_before_a_clear_all_is_not_stored_after_it() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    // A page with no cachet client: nothing but the story speaks to the worker.
    harness.open_bare_controlled().await?;
    let whole = cachet_e2e::WHOLE_WASM;
    harness.hold_the_whole_engine().await?;
    harness.stop_service_workers_until_stopped().await?;
    let asked = harness.count(&format!("GET {whole}"));
    // A script the page loads (handed over by the shim), then at once the clear-all, both before the
    // copy's job can run (it waits for quiet, then for the whole engine, which the message asks for).
    let script = format!("{}/cachet-sw-config.js?copy-before-clear-all", harness.url());
    let load_then_clear = format!(
        "const script = document.createElement('script'); script.src = {};
         script.onload = () => {{
           const channel = new BroadcastChannel('cachet');
           window.__cleared = new Promise((resolve) => {{ channel.onmessage = (e) => {{ const m = JSON.parse(e.data);
             if (m.type === 'clear-all-done' && m.requestId === 4242) {{ channel.close(); resolve(true); }} }}; }});
           navigator.serviceWorker.controller.postMessage(JSON.stringify({{v: 1, type: 'clear-all', requestId: 4242}}));
           done(true); }};
         script.onerror = () => done(false); document.head.append(script);",
        json!(script)
    );
    assert_eq!(harness.run_async(&load_then_clear).await?, json!(true), "the script loaded");
    server_asked(&harness, &format!("GET {whole}"), asked, "the whole engine was never asked for").await?;
    harness.test_hook("/__test/release-static").await?;
    assert_eq!(harness.run_async("window.__cleared.then(done);").await?, json!(true), "the clear-all done");
    // The worker's snapshot's `notStored`.
    let said = format!(
        "{}.then((snapshot) => done((snapshot.notStored || []).some((n) =>
           JSON.stringify(n).includes('copy-before-clear-all') && n.reason === 'overtaken')));",
        cachet_e2e::WORKER_SNAPSHOT
    );
    until(&harness, "the copy listed as not stored, overtaken", &said).await?;
    let stored = format!("caches.match({}).then((hit) => done(hit !== undefined));", json!(script));
    assert_eq!(harness.run_async(&stored).await?, json!(false), "not stored after the purge");
    Ok(())
}
