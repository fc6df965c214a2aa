//! The engine's start module (cachet-worker's `sw::start`, the shim's `onEngine`/`whole`): a stopped
//! worker's fetch events are answered by the engine's fetch path alone, a smaller wasm, without the
//! whole engine; the whole engine takes over at the first event the start module does not handle (a
//! message, a mutation it leaves with the body it read), once the start module is idle (a request it
//! waits on the network for not counted), and answers
//! every event after that, reading what the start module kept in memory from storage again.
//!
//! The barrier in each story: the whole engine's wasm is gone from the shim's cache and held by the
//! server, so only the start module can answer until the story releases it. In Chromium the worker is
//! stopped on demand (DevTools' `ServiceWorker.stopAllWorkers`); in Firefox ESR, which has no such
//! command, a session whose idle workers stop after half a second meets a worker started again (the
//! Firefox story). A restarted worker imports the whole engine's glue when it takes over, which every
//! browser's rule must allow (a later start imports what the install imported, and nothing else): a
//! probe worker of the last story checks that rule in Chromium, Firefox and WebKit.

use anyhow::{ensure, Context, Result};
use cachet_e2e::browser::Browser;
use cachet_e2e::{Harness, WHOLE_WASM};
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// A GetTodos query tagged `start-test`, made distinct by the alias `name`: `{source, todos}`.
fn query(name: &str) -> String {
    format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json', 'x-cachet-tags': 'start-test'}},
           body: JSON.stringify({{query: 'query GetTodos {{ todos {{ id title }} {name}: __typename }}'}})}})
           .then(async (r) => ({{source: r.headers.get('x-cachet-source'), todos: (await r.json()).data.todos}}))"
    )
}

async fn run_query(harness: &Harness, name: &str) -> Result<Value> {
    harness.run_async(&format!("{}.then(done, (e) => done({{error: String(e)}}));", query(name))).await
}

/// Signed in, the query `a` stored (from the server, then from the cache).
async fn signed_in_with_a_stored() -> Result<Harness> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    signed_in_with_a_stored_on(harness).await
}

/// [`signed_in_with_a_stored`] on `harness`, whose page is open and controlled.
async fn signed_in_with_a_stored_on(harness: Harness) -> Result<Harness> {
    harness.login("alice").await?;
    let first = run_query(&harness, "a").await?;
    let second = run_query(&harness, "a").await?;
    ensure!(
        first["source"] == json!("network") && second["source"] == json!("cache"),
        "{first} then {second}"
    );
    Ok(harness)
}

/// [`signed_in_with_a_stored`], then the worker stopped with the whole engine's wasm dropped from the
/// shim's cache and held by the server.
async fn stopped_with_the_whole_engine_held() -> Result<Harness> {
    let harness = signed_in_with_a_stored().await?;
    stop_with_the_whole_engine_held(&harness).await?;
    Ok(harness)
}

/// Drops the whole engine's wasm from the shim's cache, has the server hold it, and stops the worker.
async fn stop_with_the_whole_engine_held(harness: &Harness) -> Result<()> {
    harness.hold_the_whole_engine().await?;
    harness.stop_service_workers_until_stopped().await
}

/// Waits (every 20 ms, at most 10 s) until the server was asked for the whole engine's wasm more than
/// `before` times.
async fn whole_engine_asked(harness: &Harness, before: u64) -> Result<()> {
    server_asked(harness, &format!("GET {WHOLE_WASM}"), before).await
}

/// Waits (every 20 ms, at most 10 s) until the server answered `route` more than `before` times.
async fn server_asked(harness: &Harness, route: &str, before: u64) -> Result<()> {
    until(&format!("{route} asked for"), || async { Ok(harness.count(route) > before) }).await
}

/// Waits (every 20 ms, at most 10 s) until `reached` says so; `what` names it when it never does.
async fn until<F: std::future::Future<Output = Result<bool>>>(
    what: &str,
    reached: impl Fn() -> F,
) -> Result<()> {
    until_within(std::time::Duration::from_secs(10), what, reached).await
}

/// [`until`], at most `bound`.
async fn until_within<F: std::future::Future<Output = Result<bool>>>(
    bound: std::time::Duration,
    what: &str,
    reached: impl Fn() -> F,
) -> Result<()> {
    let started = std::time::Instant::now();
    while !reached().await? {
        ensure!(started.elapsed() < bound, "never: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Posts `invalidate-tags` of `tag` (`requestId`: `request_id`) to the worker, as any client may; its
/// answer's type is then [`answer_to`]'s.
async fn post_invalidation(harness: &Harness, request_id: u64, tag: &str) -> Result<()> {
    let posted = format!(
        "navigator.serviceWorker.startMessages();
         window.__answers = window.__answers || {{}};
         window.__answers[{request_id}] = new Promise((resolve) => navigator.serviceWorker.addEventListener('message', function listen(e) {{
           const m = JSON.parse(e.data);
           if (m.requestId === {request_id}) {{ navigator.serviceWorker.removeEventListener('message', listen); resolve(m.type); }} }}));
         navigator.serviceWorker.controller.postMessage(JSON.stringify({{v: 1, type: 'invalidate-tags', requestId: {request_id}, tags: [{tag}]}}));
         done(true);",
        tag = json!(tag)
    );
    harness.run_async(&posted).await.map(drop)
}

/// The type of the worker's answer to the message [`post_invalidation`] posted as `request_id`, once
/// it comes.
async fn answer_to(harness: &Harness, request_id: u64) -> Result<Value> {
    harness.run_async(&format!("window.__answers[{request_id}].then(done);")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_answers_a_hit_without_the_whole_engine_which_then_takes_over_and_invalidates(
) -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let asked = harness.count(&format!("GET {WHOLE_WASM}"));
    // Answered while the whole engine cannot load: by the start module, from the cache.
    let hit = run_query(&harness, "a").await?;
    assert_eq!(hit["source"], json!("cache"), "{hit}");
    // An invalidation is the whole engine's: posted now, it waits for it (the server holds its wasm).
    post_invalidation(&harness, 5151, "start-test").await?;
    whole_engine_asked(&harness, asked).await?;
    harness.test_hook("/__test/release-static").await?;
    assert_eq!(answer_to(&harness, 5151).await?, json!("ack"));
    // The whole engine answers from now on, from the generations as stored: the entry the start module
    // served is absent (a miss), and stored again.
    let after = run_query(&harness, "a").await?;
    assert_eq!(after["source"], json!("network"), "after the invalidation: {after}");
    let again = run_query(&harness, "a").await?;
    assert_eq!(again["source"], json!("cache"), "{again}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_on_a_stopped_worker_is_left_to_the_whole_engine_and_reaches_the_server_whole_once(
) -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let (asked, posts) = (harness.count(&format!("GET {WHOLE_WASM}")), harness.count("POST /graphql"));
    let mutate = "window.__mutated = fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
          body: JSON.stringify({query: 'mutation CreateTodo($t: String!) { createTodo(title: $t) { id title } }',
                                variables: {t: 'sent whole through the start module'}})})
        .then(async (r) => ({status: r.status, body: await r.json()}), (e) => ({error: String(e)}));
        done(true);";
    harness.run_async(mutate).await?;
    // The start module read the body and left the mutation to the whole engine, which is held: nothing
    // reached the server yet.
    whole_engine_asked(&harness, asked).await?;
    assert_eq!(harness.count("POST /graphql"), posts, "the mutation waits for the whole engine");
    harness.test_hook("/__test/release-static").await?;
    let mutated = harness.run_async("window.__mutated.then(done);").await?;
    assert_eq!(mutated["status"], json!(200), "{mutated}");
    assert_eq!(mutated["body"]["data"]["createTodo"]["title"], json!("sent whole through the start module"));
    assert_eq!(harness.count("POST /graphql") - posts, 1, "sent once");
    // Its tags invalidated the stored list: the next read is the server's, with the new todo.
    let after = run_query(&harness, "a").await?;
    assert_eq!(after["source"], json!("network"), "{after}");
    let titles: Vec<&str> =
        after["todos"].as_array().into_iter().flatten().filter_map(|todo| todo["title"].as_str()).collect();
    assert!(titles.contains(&"sent whole through the start module"), "{after}");
    Ok(())
}

/// How many GraphQL documents Cache Storage holds (every partition).
async fn stored_documents(harness: &Harness) -> Result<Value> {
    harness
        .run_async(
            "caches.open('cachet-graphql-v2').then((cache) => cache.keys()).then((keys) => done(keys.length));",
        )
        .await
}

// The start module links no store: a miss it answers is stored by the whole engine, which takes over for
// it and stores it before it takes any later event, so the next request is a hit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_answered_by_the_start_module_is_stored_by_the_whole_engine_before_its_next_lookup(
) -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let (asked, before) = (harness.count(&format!("GET {WHOLE_WASM}")), stored_documents(&harness).await?);
    let sent = harness.count("graphql GetTodos");
    // Answered from the network while the whole engine cannot load: by the start module.
    let miss = run_query(&harness, "b").await?;
    assert_eq!(miss["source"], json!("network"), "{miss}");
    assert_eq!(harness.count("graphql GetTodos") - sent, 1);
    // The store waits for the whole engine, which the start module's hand-over asked for.
    whole_engine_asked(&harness, asked).await?;
    assert_eq!(stored_documents(&harness).await?, before, "nothing stored before the whole engine loads");
    harness.test_hook("/__test/release-static").await?;
    let hit = run_query(&harness, "b").await?;
    assert_eq!(hit["source"], json!("cache"), "the next request after the hand-over: {hit}");
    assert_eq!(hit["todos"], miss["todos"]);
    assert_eq!(harness.count("graphql GetTodos") - sent, 1, "sent once");
    assert_eq!(stored_documents(&harness).await?, json!(before.as_u64().unwrap_or_default() + 1));
    Ok(())
}

/// Runs `body` (JavaScript that may await, with the worker's database open as `db`) in the page, which
/// does not wake the worker, and returns what it returns.
async fn in_database(harness: &Harness, body: &str) -> Result<Value> {
    let script = format!(
        "(async () => {{
           const db = await new Promise((resolve, reject) => {{
             const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result); open.onerror = reject; }});
           try {{ {body} }} finally {{ db.close(); }}
         }})().then(done, (e) => done({{error: String(e)}}));"
    );
    harness.run_async(&script).await
}

/// The latest `field` (`usedAt`, `storedAt`) of the worker's GraphQL entry records.
async fn latest(harness: &Harness, field: &str) -> Result<Value> {
    let body = format!(
        "const records = await new Promise((resolve) => {{
          const r = db.transaction('entries').objectStore('entries').getAll(); r.onsuccess = () => resolve(r.result); }});
        return Math.max(...records.filter((r) => r.cache === 'cachet-graphql-v2').map((r) => r.{field}));"
    );
    in_database(harness, &body).await
}

/// The latest `usedAt` of the worker's GraphQL entry records.
async fn last_used(harness: &Harness) -> Result<Value> {
    latest(harness, "usedAt").await
}

/// The latest `storedAt` of the worker's GraphQL entry records.
async fn last_stored(harness: &Harness) -> Result<Value> {
    latest(harness, "storedAt").await
}

// A hit's mark of use (least-recently-used eviction) is an index write: the start module keeps it and
// hands it over with its idle(), and the whole engine writes it before its first event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hit_of_the_start_module_is_marked_used_by_the_whole_engine_as_it_takes_over() -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let before = last_used(&harness).await?;
    assert!(before.is_u64(), "{before}");
    let hit = run_query(&harness, "a").await?;
    assert_eq!(hit["source"], json!("cache"), "{hit}");
    harness.test_hook("/__test/release-static").await?;
    // The take-over, for a message (not a fetch of the entry, which would mark it itself): once it is
    // answered, the whole engine has written the start module's marks.
    post_invalidation(&harness, 5252, "unrelated").await?;
    assert_eq!(answer_to(&harness, 5252).await?, json!("ack"));
    let after = last_used(&harness).await?;
    assert!(after.as_u64() > before.as_u64(), "marked used: {before} then {after}");
    Ok(())
}

// A request the start module sent and the server holds (a slow query, a long poll) is not the start
// module's work while it waits, nor is a second one that joined its send: the whole engine takes over
// beside them, and a message posted meanwhile is answered while both are still open. Their answers,
// once the server gives them, are the page's, marked as the network's, and stored (by the whole engine,
// as every answer the start module got).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_engine_takes_over_beside_requests_the_start_module_waits_for() -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let held = "/cachet-sw-config.js";
    // Through the start module (the whole engine cannot load): its first event.
    harness.test_hook(&format!("/__test/hold-static?path={held}")).await?;
    let (asked, sent) = (harness.count(&format!("GET {WHOLE_WASM}")), harness.count(&format!("GET {held}")));
    let open = format!(
        "window.__held = ['waiting', 'waiting'];
         for (const i of [0, 1]) fetch({held}, {{cache: 'no-store'}}).then(async (r) => {{ await r.text(); window.__held[i] = r.headers.get('x-cachet-source'); }},
           (e) => {{ window.__held[i] = String(e); }});
         done(true);",
        held = json!(held)
    );
    harness.run_async(&open).await?;
    server_asked(&harness, &format!("GET {held}"), sent).await?;
    post_invalidation(&harness, 5353, "unrelated").await?;
    whole_engine_asked(&harness, asked).await?;
    harness.test_hook(&format!("/__test/release-static?path={WHOLE_WASM}")).await?;
    let answered = harness
        .run_async(
            "Promise.race([window.__answers[5353], new Promise((r) => setTimeout(() => r('not within 10 s'), 10000))]).then(done);",
        )
        .await?;
    assert_eq!(answered, json!("ack"), "the message answered while the requests are held");
    assert_eq!(harness.run_async("done(window.__held);").await?, json!(["waiting", "waiting"]), "still held");
    let released = harness.run_async("done(Date.now());").await?.as_f64().unwrap_or_default();
    harness.test_hook("/__test/release-static").await?;
    until("the held requests answered", || async {
        Ok(harness.run_async("done(window.__held.includes('waiting'));").await? == json!(false))
    })
    .await?;
    assert_eq!(harness.run_async("done(window.__held);").await?, json!(["network", "network"]));
    let stored_at = format!(
        "caches.match(new URL({}, location.href).href).then((hit) => done(hit ? Number(hit.headers.get('x-cachet-stored-at')) : 0));",
        json!(held)
    );
    until("the held answer stored", || async {
        Ok(harness.run_async(&stored_at).await?.as_f64().unwrap_or_default() >= released)
    })
    .await?;
    Ok(())
}

/// The `generations` record of `tag` in the worker's database; `put`: written first, as a torn write
/// would leave it.
async fn generation_record(harness: &Harness, tag: &str, put: Option<Value>) -> Result<Value> {
    let body = format!(
        "const put = {put};
         if (put !== null) await new Promise((resolve, reject) => {{
           const t = db.transaction('generations', 'readwrite'); t.objectStore('generations').put(put);
           t.oncomplete = resolve; t.onabort = reject; }});
         return await new Promise((resolve) => {{
           const r = db.transaction('generations').objectStore('generations').get({tag});
           r.onsuccess = () => resolve(r.result === undefined ? null : r.result); }});",
        put = put.unwrap_or(Value::Null),
        tag = json!(tag),
    );
    in_database(harness, &body).await
}

// Damaged generations are the safe side in memory (the damaged tag's entries count as invalidated) in
// either engine, but only the whole engine writes the repair: the start module's wasm holds no write of
// the generations. It repairs them when it takes over, reading them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_generations_are_the_safe_side_in_the_start_module_and_repaired_by_the_whole_engine(
) -> Result<()> {
    let harness = signed_in_with_a_stored().await?;
    let torn = json!({"tag": "start-test", "at": "garbage"});
    assert_eq!(generation_record(&harness, "start-test", Some(torn.clone())).await?, torn);
    // Written behind the engine's back, which forgets the names before it writes the generations: a
    // stopped worker's shim would answer the named hit before any engine reads the damage
    // (RELIABILITY.md, "Request names": what they do not see). Forgotten once the worker is stopped: the
    // warm engine names the last hit once it is quiet (up to a second after it), a write that would
    // overtake a forgetting made before the stop (seen under load: the hit answered from its name).
    stop_with_the_whole_engine_held(&harness).await?;
    harness.forget_request_names().await?;
    let asked = harness.count(&format!("GET {WHOLE_WASM}"));
    // The start module reads the damage: the tag's entry counts as invalidated, and nothing is written
    // (the repair comes before any answer where it is written: this answer is the barrier).
    let miss = run_query(&harness, "a").await?;
    assert_eq!(miss["source"], json!("network"), "{miss}");
    assert_eq!(
        generation_record(&harness, "start-test", None).await?,
        torn,
        "not written by the start module"
    );
    // The miss's store brings the whole engine in: every later event is its.
    whole_engine_asked(&harness, asked).await?;
    harness.test_hook("/__test/release-static").await?;
    // The whole engine repaired it before it answered.
    run_query(&harness, "a").await?;
    // The tag invalidated past the clock, or (when the clock was never written, a lost clock) below the
    // new floor and dropped; either way the clock record is written and the torn record gone.
    let repaired = generation_record(&harness, "start-test", None).await?;
    assert!(repaired.is_null() || repaired["at"].is_u64(), "repaired: {repaired}");
    let clock = generation_record(&harness, "", None).await?;
    assert!(clock["clock"].is_u64() && clock["floor"].is_u64(), "the clock record: {clock}");
    assert_eq!(run_query(&harness, "a").await?["source"], json!("cache"));
    Ok(())
}

// Generations without their clock (here none at all, as a cleared store leaves them) need every entry
// read (the newest generation any records): the whole engine's work. The start module leaves the
// request to it before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_clock_on_a_stopped_worker_is_left_to_the_whole_engine_before_anything_is_sent() -> Result<()>
{
    let harness = signed_in_with_a_stored().await?;
    let cleared = "await new Promise((resolve, reject) => {
          const t = db.transaction('generations', 'readwrite'); t.objectStore('generations').clear();
          t.oncomplete = resolve; t.onabort = reject; });
        return true;";
    assert_eq!(in_database(&harness, cleared).await?, json!(true));
    // Written behind the engine's back, which forgets the names before it writes the generations: a
    // stopped worker's shim would answer the named hit before any engine reads the damage
    // (RELIABILITY.md, "Request names": what they do not see). Forgotten once the worker is stopped: the
    // warm engine names the last hit once it is quiet (up to a second after it), a write that would
    // overtake a forgetting made before the stop (seen under load: the hit answered from its name).
    stop_with_the_whole_engine_held(&harness).await?;
    harness.forget_request_names().await?;
    let (asked, sent) = (harness.count(&format!("GET {WHOLE_WASM}")), harness.count("graphql GetTodos"));
    harness
        .run_async(&format!(
            "window.__answered = false; window.__lost = {}.then((r) => {{ window.__answered = true; return r; }});
             done(true);",
            query("a")
        ))
        .await?;
    whole_engine_asked(&harness, asked).await?;
    // Unanswered while the whole engine is held (a start module that answered it would have answered
    // before the whole engine was ever asked for), and nothing sent.
    assert_eq!(harness.run_async("done(window.__answered);").await?, json!(false));
    assert_eq!(harness.count("graphql GetTodos"), sent, "nothing sent while the whole engine is held");
    harness.test_hook("/__test/release-static").await?;
    // No generations at all read as a new store: the clock starts at the newest generation an entry
    // records (the whole engine read them all), so the entries stay current and the query is a hit.
    let answered = harness.run_async("window.__lost.then(done, (e) => done({error: String(e)}));").await?;
    assert_eq!(answered["source"], json!("cache"), "{answered}");
    assert_eq!(harness.count("graphql GetTodos"), sent);
    let clock = generation_record(&harness, "", None).await?;
    assert!(clock["clock"].is_u64() && clock["floor"].is_u64(), "the clock record written again: {clock}");
    Ok(())
}

/// Tells the worker whose partition marked requests use (`set-identity`), and waits for its ack.
async fn set_identity(harness: &Harness, request_id: u64, partition: &str) -> Result<Value> {
    let script = format!(
        "navigator.serviceWorker.startMessages();
         const ack = new Promise((resolve) => navigator.serviceWorker.addEventListener('message', (e) => {{
           const m = JSON.parse(e.data); if (m.requestId === {request_id}) resolve(m.type); }}));
         navigator.serviceWorker.controller.postMessage(
           JSON.stringify({{v: 1, type: 'set-identity', requestId: {request_id}, partition: {partition}}}));
         ack.then(done);",
        partition = json!(partition)
    );
    harness.run_async(&script).await
}

/// GetTodos marked as authenticated (`X-Cachet-Auth: 1`, cached in the signed-in user's partition):
/// its `X-Cachet-Source`.
async fn authed_source(harness: &Harness) -> Result<Value> {
    let script = "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json', 'X-Cachet-Auth': '1'},
          body: JSON.stringify({query: 'query GetTodos { todos { title } }'})})
        .then((r) => done(r.headers.get('x-cachet-source')), (e) => done(String(e)));";
    harness.run_async(script).await
}

// What the start module kept in memory (here, who is signed in) is the whole engine's to read again
// once it takes over: the next user is never answered from the partition the start module served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_whole_engine_takes_over_the_next_user_is_never_answered_from_the_start_modules_partition(
) -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    assert_eq!(set_identity(&harness, 6101, "alice").await?, json!("ack"));
    assert_eq!(authed_source(&harness).await?, json!("network"));
    assert_eq!(authed_source(&harness).await?, json!("cache"));
    stop_with_the_whole_engine_held(&harness).await?;
    // The start module answers alice's entry (the whole engine cannot load).
    assert_eq!(authed_source(&harness).await?, json!("cache"), "alice, by the start module");
    harness.test_hook("/__test/release-static").await?;
    // bob signs in: the whole engine takes over and keeps him.
    harness.login("bob").await?;
    assert_eq!(set_identity(&harness, 6102, "bob").await?, json!("ack"));
    assert_eq!(
        authed_source(&harness).await?,
        json!("network"),
        "bob is not answered from alice's partition"
    );
    Ok(())
}

// The start module links no background re-fetch: a stored entry it serves under stale-while-revalidate
// is answered at once, and its re-fetch is the whole engine's, which runs the request again once it
// loads (nothing is sent before) and stores the server's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_while_revalidate_hit_of_the_start_module_is_re_fetched_by_the_whole_engine() -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let (asked, sent) = (harness.count(&format!("GET {WHOLE_WASM}")), harness.count("graphql GetTodos"));
    let swr = query("a").replacen(
        "'x-cachet-tags'",
        "'x-sw-strategy': 'stale-while-revalidate', 'x-cachet-tags'",
        1,
    );
    let hit = harness.run_async(&format!("{swr}.then(done, (e) => done({{error: String(e)}}));")).await?;
    assert_eq!(hit["source"], json!("cache"), "the stored entry at once: {hit}");
    // The barrier: the whole engine is asked for only after the start module's answer was given (its
    // re-fetch, were it the start module's, would have been sent by then, and its store asked for the
    // whole engine after it).
    whole_engine_asked(&harness, asked).await?;
    assert_eq!(harness.count("graphql GetTodos"), sent, "nothing re-fetched by the start module");
    let before = last_stored(&harness).await?;
    harness.test_hook("/__test/release-static").await?;
    server_asked(&harness, "graphql GetTodos", sent).await?;
    // The re-fetch's store: the entry's record written again.
    let stored = || async { Ok(last_stored(&harness).await?.as_u64() > before.as_u64()) };
    until("the re-fetch stored", stored).await?;
    assert_eq!(harness.count("graphql GetTodos") - sent, 1, "re-fetched once");
    assert_eq!(run_query(&harness, "a").await?["source"], json!("cache"));
    Ok(())
}

// The start module links no app shell: a GET it cannot answer (here a cache-only request of a page the
// runtime cache never stored) is left to the whole engine, which runs it again and answers from the app
// shell (the build's files, kept at install).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_the_start_module_cannot_answer_is_answered_by_the_whole_engine_from_the_app_shell(
) -> Result<()> {
    let harness = stopped_with_the_whole_engine_held().await?;
    let asked = harness.count(&format!("GET {WHOLE_WASM}"));
    harness
        .run_async(
            "window.__answered = false;
             window.__shell = fetch('/index.html', {headers: {'x-sw-strategy': 'cache-only'}})
               .then(async (r) => ({status: r.status, source: r.headers.get('x-cachet-source'), html: (await r.text()).includes('<html')}))
               .then((r) => { window.__answered = true; return r; });
             done(true);",
        )
        .await?;
    whole_engine_asked(&harness, asked).await?;
    // Unanswered while the whole engine is held: the start module answered nothing from the shell.
    assert_eq!(harness.run_async("done(window.__answered);").await?, json!(false));
    harness.test_hook("/__test/release-static").await?;
    let answered = harness.run_async("window.__shell.then(done, (e) => done({error: String(e)}));").await?;
    assert_eq!(answered, json!({"status": 200, "source": null, "html": true}), "from the shell");
    Ok(())
}

// Firefox ESR, whose Service Workers this suite cannot stop on demand: in a session whose idle workers
// stop after half a second (a preference), the worker stops between requests as browsers stop idle
// workers, and the next request starts it again. The start module answers that worker's hit while the
// whole engine is held, then the whole engine takes over (for a message) once released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_firefox_a_restarted_worker_answers_a_hit_from_its_start_module_and_the_whole_engine_takes_over(
) -> Result<()> {
    let harness = Harness::start_in_firefox_stopping_idle_workers(AuthMode::Cookie).await?;
    // A page with no cachet client (the app's would message the worker, which a stopped worker would
    // start again for, and hand to the whole engine, held below).
    harness.open_bare_controlled().await?;
    let harness = signed_in_with_a_stored_on(harness).await?;
    harness.hold_the_whole_engine().await?;
    let asked = harness.count(&format!("GET {WHOLE_WASM}"));
    // Each round: a pause past the idle timeout (pacing, not a proof), then a hit. The proof that a new
    // worker answered is its asking for the whole engine's wasm as it goes quiet (the worker that ran
    // before had it in memory); it was then its start module that answered, the whole engine being held.
    let pause = std::time::Duration::from_millis(3 * cachet_e2e::browser::FIREFOX_WORKER_IDLE_MS);
    let mut restarted = false;
    for _ in 0..10 {
        tokio::time::sleep(pause).await;
        let hit = run_query(&harness, "a").await?;
        assert_eq!(hit["source"], json!("cache"), "{hit}");
        let whole_asked = || async { Ok(harness.count(&format!("GET {WHOLE_WASM}")) > asked) };
        // The start-up work asks for it a second after a new worker's last fetch event.
        if until_within(std::time::Duration::from_secs(3), "the whole engine asked for", whole_asked)
            .await
            .is_ok()
        {
            restarted = true;
            break;
        }
    }
    ensure!(restarted, "no hit was answered by a worker that started again");
    harness.test_hook("/__test/release-static").await?;
    // The whole engine takes the message, and its invalidation makes the entry a miss.
    post_invalidation(&harness, 5353, "start-test").await?;
    assert_eq!(answer_to(&harness, 5353).await?, json!("ack"));
    assert_eq!(run_query(&harness, "a").await?["source"], json!("network"));
    Ok(())
}

/// The probe worker of the next story (scope `/probe/`): imports `at-start.js` as it is evaluated and
/// `first-only.js` in its first evaluation alone (the shim's test for the whole engine's glue), notes its
/// state then, and, asked on a port after its activation, imports each again and one it never imported,
/// answering `imported` or the error's name for each.
const PROBE_WORKER: &str = r#"
self.firstState = self.serviceWorker ? self.serviceWorker.state : 'unknown';
importScripts('./at-start.js');
if (!self.serviceWorker || self.serviceWorker.state === 'parsed') importScripts('./first-only.js');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('message', (event) => {
  const tried = (url) => { try { importScripts(url); return 'imported'; } catch (error) { return error.name; } };
  event.ports[0].postMessage({
    firstState: self.firstState,
    atStart: tried('./at-start.js'),
    firstOnly: tried('./first-only.js'),
    never: tried('./never.js'),
    runs: self.firstOnlyRuns,
  });
});
"#;

/// Registers the probe worker, waits for its activation and asks it (see [`PROBE_WORKER`]).
const ASK_PROBE: &str = r#"(async () => {
  const registration = await navigator.serviceWorker.register('/probe/sw.js', { scope: '/probe/' });
  const worker = registration.installing || registration.waiting || registration.active;
  if (worker.state !== 'activated') {
    await new Promise((resolve) => worker.addEventListener('statechange', () => {
      if (worker.state === 'activated') resolve();
    }));
  }
  const channel = new MessageChannel();
  const answer = new Promise((resolve) => { channel.port1.onmessage = (event) => resolve(event.data); });
  worker.postMessage('probe', [channel.port2]);
  return answer;
})()"#;

// The shim imports the whole engine's glue in the worker's first evaluation only (its install's), and
// when the whole engine takes over in a later start: each browser must let an installed worker import
// again what its first evaluation imported, and refuse what it never imported (the Service Worker spec's
// script map). A worker's first evaluation must also say so (`self.serviceWorker.state`, `parsed`), or
// not be able to (then the shim imports both glues at every start). Checked in every browser of the
// suite with a probe worker of its own, after its activation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_browser_lets_an_installed_worker_import_what_its_first_evaluation_imported_and_nothing_else(
) -> Result<()> {
    for browser in Browser::ALL {
        let config = r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#;
        let harness = Harness::start_with_config_in(browser, AuthMode::Cookie, config).await?;
        let probe = harness.static_dir().context("the harness serves no files")?.join("probe");
        std::fs::create_dir_all(&probe)?;
        std::fs::write(probe.join("sw.js"), PROBE_WORKER)?;
        std::fs::write(probe.join("at-start.js"), "self.atStartRuns = (self.atStartRuns || 0) + 1;\n")?;
        std::fs::write(probe.join("first-only.js"), "self.firstOnlyRuns = (self.firstOnlyRuns || 0) + 1;\n")?;
        std::fs::write(probe.join("never.js"), "self.neverRuns = true;\n")?;
        harness.open_bare_controlled().await?;
        let answer = harness.eval(ASK_PROBE).await?;
        let first_state = answer["firstState"].as_str().unwrap_or_default();
        ensure!(
            first_state == "parsed" || first_state == "unknown",
            "{browser:?}: a worker's first evaluation reads its state as {first_state} ({answer})"
        );
        assert_eq!(answer["atStart"], json!("imported"), "{browser:?}: {answer}");
        assert_eq!(answer["firstOnly"], json!("imported"), "{browser:?}: {answer}");
        assert_eq!(answer["runs"], json!(2), "{browser:?}: evaluated again when imported again: {answer}");
        assert_eq!(answer["never"], json!("NetworkError"), "{browser:?}: {answer}");
        eprintln!("{browser:?}: {answer}");
    }
    Ok(())
}
