//! Request names (cachet-worker's `sw::names`, the shim's `servedAlone`): a stopped worker's shim answers
//! a fresh cache-first hit from the name the engine wrote for it, before any engine loads, and answers
//! exactly as the engine would: every change that could alter the engine's answer (an invalidation,
//! another user signed in, clear-all) forgets the names before it is acknowledged, a name whose time has
//! passed or whose entry changed answers nothing, and a request the engine never named is the engine's.
//!
//! The barrier in each story: both of the engine's wasm files are gone from the shim's cache and the
//! server answers them `503`, so a stopped worker can load no engine at all. A request the shim does
//! not answer from a name then goes to the network as if there were no worker (no `X-Cachet-Source`),
//! and one it answers says `cache` without reaching the server.

use anyhow::{ensure, Result};
use cachet_e2e::{Harness, COUNT_NAMES};
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// GetTodos marked as authenticated (cached in the signed-in user's partition) and tagged
/// `alone-test`, made distinct by the alias `name`: `{source, titles}`.
async fn query(harness: &Harness, name: &str) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json', 'X-Cachet-Auth': '1',
           'x-cachet-tags': 'alone-test'}},
           body: JSON.stringify({{query: 'query GetTodos {{ todos {{ title }} {name}: __typename }}'}})}})
           .then(async (r) => done({{source: r.headers.get('x-cachet-source'),
                                    titles: (await r.json()).data.todos.map((todo) => todo.title)}}),
                 (e) => done({{error: String(e)}}));"
    );
    harness.run_async(&script).await
}

/// How many request names the names caches hold (every build's).
async fn names(harness: &Harness) -> Result<u64> {
    let count = harness.run_async(&format!("{COUNT_NAMES}.then(done);")).await?;
    Ok(count.as_u64().unwrap_or_default())
}

/// Waits (every 20 ms, at most 10 s) until the names caches hold at least `at_least` names: the engine
/// writes a name after its answer.
async fn named(harness: &Harness, at_least: u64) -> Result<()> {
    let started = std::time::Instant::now();
    while names(harness).await? < at_least {
        ensure!(started.elapsed() < std::time::Duration::from_secs(10), "never named: {at_least}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Tells the worker who is signed in (`set-identity`): the type of its answer.
async fn set_identity(harness: &Harness, request_id: u64, partition: &str) -> Result<Value> {
    message(
        harness,
        &json!({"v": 1, "type": "set-identity", "requestId": request_id, "partition": partition}),
    )
    .await
}

/// Posts `message` to the worker and waits for its answer with the same `requestId`: its type.
async fn message(harness: &Harness, message: &Value) -> Result<Value> {
    let script = format!(
        "navigator.serviceWorker.startMessages();
         const message = {message};
         const answer = new Promise((resolve) => navigator.serviceWorker.addEventListener('message', (e) => {{
           const m = JSON.parse(e.data); if (m.requestId === message.requestId) resolve(m.type); }}));
         navigator.serviceWorker.controller.postMessage(JSON.stringify(message));
         answer.then(done);"
    );
    harness.run_async(&script).await
}

/// Alice signed in, her query `a` stored (from the server, then from the cache) and named.
async fn alice_with_a_named() -> Result<Harness> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    alice_with_a_named_on(harness).await
}

/// [`alice_with_a_named`] on `harness`, whose page is open and controlled.
async fn alice_with_a_named_on(harness: Harness) -> Result<Harness> {
    harness.login("alice").await?;
    assert_eq!(set_identity(&harness, 7001, "alice").await?, json!("ack"));
    let first = query(&harness, "a").await?;
    let second = query(&harness, "a").await?;
    ensure!(
        first["source"] == json!("network") && second["source"] == json!("cache"),
        "{first} then {second}"
    );
    named(&harness, 1).await?;
    Ok(harness)
}

/// Has the server answer both of the engine's wasm files `503`, stops the worker, drops the files from
/// the shim's cache and stops it again (a worker an event started meanwhile may have loaded them): the
/// next start can load no engine until `/__test/release-static`.
async fn stop_with_no_engine(harness: &Harness) -> Result<()> {
    harness.stop_service_workers_until_stopped().await?;
    no_engine_from_now_on(harness).await?;
    harness.stop_service_workers_until_stopped().await
}

/// Has the server answer both of the engine's wasm files `503` and drops them from the shim's cache: a
/// worker that starts from now on can load no engine (one running keeps what it loaded).
async fn no_engine_from_now_on(harness: &Harness) -> Result<()> {
    harness.test_hook("/__test/fail-static?path=/cachet-sw*_bg.wasm").await?;
    let dropped = "const files = ['/cachet-sw_bg.wasm', '/cachet-sw-start_bg.wasm'].map((path) => new URL(path, location.href).href);
         caches.keys().then((all) => Promise.all(all.filter((name) => name.startsWith('cachet-sw-wasm-'))
           .map((name) => caches.open(name).then((cache) => Promise.all(files.map((file) => cache.delete(file)))))))
         .then(() => Promise.all(files.map((file) => caches.match(file))))
         .then((left) => done(left.filter((file) => file !== undefined).length));";
    assert_eq!(harness.run_async(dropped).await?, json!(0), "the shim's copies of the engine");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_answers_a_named_hit_with_no_engine_and_leaves_the_rest_to_the_network() -> Result<()>
{
    let harness = alice_with_a_named().await?;
    let stored = query(&harness, "a").await?;
    stop_with_no_engine(&harness).await?;
    let posts = harness.count("POST /graphql");
    // No engine can load: only the shim's name can answer it, from the cache, as the engine did.
    let alone = query(&harness, "a").await?;
    assert_eq!(alone, stored, "the named hit");
    assert_eq!(harness.count("POST /graphql"), posts, "the server was not asked");
    // A request never named (another alias: another body) is not the shim's: with no engine it goes to
    // the network as if there were no worker.
    let other = query(&harness, "b").await?;
    assert_eq!(other["source"], Value::Null, "{other}");
    assert_eq!(harness.count("POST /graphql"), posts + 1);
    harness.test_hook("/__test/release-static").await?;
    Ok(())
}

// Cookie auth: alice's and bob's requests are the same bytes (no `Authorization`), so a name alone
// could answer bob with alice's entry. The identity's change forgets every name before its ack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_signed_in_is_never_answered_from_the_last_users_names() -> Result<()> {
    let harness = alice_with_a_named().await?;
    assert_eq!(set_identity(&harness, 7002, "bob").await?, json!("ack"));
    assert_eq!(names(&harness).await?, 0, "forgotten before the ack");
    stop_with_no_engine(&harness).await?;
    let posts = harness.count("POST /graphql");
    let bob = query(&harness, "a").await?;
    assert_eq!(bob["source"], Value::Null, "bob's request went to the network: {bob}");
    assert_eq!(harness.count("POST /graphql"), posts + 1);
    harness.test_hook("/__test/release-static").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalidation_or_a_clear_all_forgets_every_name_before_its_ack() -> Result<()> {
    let harness = alice_with_a_named().await?;
    let invalidate = json!({"v": 1, "type": "invalidate-tags", "requestId": 7003, "tags": ["alone-test"]});
    assert_eq!(message(&harness, &invalidate).await?, json!("ack"));
    assert_eq!(names(&harness).await?, 0, "forgotten before the invalidation's ack");
    stop_with_no_engine(&harness).await?;
    let posts = harness.count("POST /graphql");
    let after = query(&harness, "a").await?;
    assert_eq!(after["source"], Value::Null, "the invalidated entry is not the shim's answer: {after}");
    assert_eq!(harness.count("POST /graphql"), posts + 1);
    harness.test_hook("/__test/release-static").await?;
    // Named again (the engine stores the miss, then names the hit), then cleared.
    assert_eq!(query(&harness, "a").await?["source"], json!("network"));
    assert_eq!(query(&harness, "a").await?["source"], json!("cache"));
    named(&harness, 1).await?;
    let clear = json!({"v": 1, "type": "clear-all", "requestId": 7004});
    assert_eq!(message(&harness, &clear).await?, json!("ack"));
    assert_eq!(names(&harness).await?, 0, "forgotten before clear-all's ack");
    Ok(())
}

/// Rewrites the one request name: `header` set to what `value` (a JS expression over the name's
/// `pointer`) gives.
async fn rewrite_the_name(harness: &Harness, header: &str, value: &str) -> Result<()> {
    let script = format!(
        "caches.keys().then(async (all) => {{
           const cache = await caches.open(all.find((name) => name.startsWith('cachet-names-')));
           const [key] = await cache.keys();
           const pointer = await cache.match(key);
           const headers = new Headers(pointer.headers);
           headers.set({header}, String({value}));
           await cache.put(key, new Response(null, {{headers}}));
           done(headers.get({header}));
         }});",
        header = json!(header),
    );
    harness.run_async(&script).await.map(drop)
}

// Time injected through the state: the name's time, set in the past, stands for the entry's life
// having ended (the core computes the time: `plan::served_alone_until`, tested natively); the stored-at
// mark, changed, stands for the entry replaced since it was named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_whose_time_passed_or_whose_entry_changed_answers_nothing() -> Result<()> {
    let harness = alice_with_a_named().await?;
    for (header, value) in [
        ("x-cachet-served-alone-until", "Date.now() - 1"),
        ("x-cachet-stored-at", "Number(pointer.headers.get('x-cachet-stored-at')) + 1"),
    ] {
        rewrite_the_name(&harness, header, value).await?;
        stop_with_no_engine(&harness).await?;
        let posts = harness.count("POST /graphql");
        let answered = query(&harness, "a").await?;
        assert_eq!(answered["source"], Value::Null, "{header}: {answered}");
        assert_eq!(harness.count("POST /graphql"), posts + 1);
        harness.test_hook("/__test/release-static").await?;
        // The engine answers the hit again, and names it again (a new worker instance).
        harness.stop_service_workers_until_stopped().await?;
        let before = names_written(&harness).await?;
        assert_eq!(query(&harness, "a").await?["source"], json!("cache"));
        rewritten_by_the_engine(&harness, &before).await?;
    }
    Ok(())
}

/// The one name's headers, as text.
async fn names_written(harness: &Harness) -> Result<Value> {
    harness
        .run_async(
            "caches.keys().then(async (all) => {
               const cache = await caches.open(all.find((name) => name.startsWith('cachet-names-')));
               const [key] = await cache.keys();
               done(JSON.stringify([...(await cache.match(key)).headers]));
             });",
        )
        .await
}

/// Waits (every 20 ms, at most 10 s) until the one name's headers are no longer `before`.
async fn rewritten_by_the_engine(harness: &Harness, before: &Value) -> Result<()> {
    let started = std::time::Instant::now();
    while names_written(harness).await? == *before {
        ensure!(started.elapsed() < std::time::Duration::from_secs(10), "the name was never written again");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

// The start module writes no name: it hands the naming of a hit it served alone to the whole engine,
// which writes it as it takes over (here, once the worker is quiet), and the next stopped worker's shim
// answers from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hit_the_start_module_serves_is_named_when_the_whole_engine_takes_over() -> Result<()> {
    let harness = alice_with_a_named().await?;
    // Forgotten once the worker is stopped, so that no naming of the warm engine's overtakes it.
    harness.stop_service_workers_until_stopped().await?;
    harness.forget_request_names().await?;
    let posts = harness.count("POST /graphql");
    assert_eq!(query(&harness, "a").await?["source"], json!("cache"), "the start module's hit");
    named(&harness, 1).await?;
    stop_with_no_engine(&harness).await?;
    assert_eq!(query(&harness, "a").await?["source"], json!("cache"), "the shim's, from the handed naming");
    assert_eq!(harness.count("POST /graphql"), posts, "the server was not asked");
    harness.test_hook("/__test/release-static").await?;
    Ok(())
}

// Firefox ESR, whose Service Workers this suite cannot stop on demand: in a session whose idle workers
// stop after half a second (a preference), the worker stops between requests as browsers stop idle
// workers. Once no engine can load, each round pauses past the idle timeout (pacing, not a proof) and
// asks the named hit, then at once a request never named: that one reaching the network unmarked is the
// proof that the worker answering both had no engine, so the named hit was the shim's, from the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_firefox_a_restarted_worker_answers_a_named_hit_with_no_engine() -> Result<()> {
    let harness = Harness::start_in_firefox_stopping_idle_workers(AuthMode::Cookie).await?;
    // A page with no cachet client (the app's would message the worker, which would start it again).
    harness.open_bare_controlled().await?;
    let harness = alice_with_a_named_on(harness).await?;
    let stored = query(&harness, "a").await?;
    no_engine_from_now_on(&harness).await?;
    let posts = harness.count("POST /graphql");
    let pause = std::time::Duration::from_millis(3 * cachet_e2e::browser::FIREFOX_WORKER_IDLE_MS);
    let mut rounds = 0;
    let mut restarted = false;
    while rounds < 10 && !restarted {
        rounds += 1;
        tokio::time::sleep(pause).await;
        assert_eq!(query(&harness, "a").await?, stored, "the named hit");
        let other = query(&harness, "b").await?;
        restarted = other["source"].is_null() && other["titles"].is_array();
    }
    ensure!(restarted, "no round was answered by a worker with no engine");
    // Only the requests never named reached the server, one a round.
    assert_eq!(harness.count("POST /graphql"), posts + rounds, "the named hit never reached the server");
    Ok(())
}
