//! Invalidation by generations (issue 16): an invalidation only bumps its tags' generations before it
//! answers; an entry stored before is absent from then on (a miss: the server answers), in this worker
//! and in the next one, and is deleted afterwards: by the sweep that follows the invalidation, or by the
//! pass of the next worker start, which also heals the index (records without entries, entries without
//! records).

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const TAG: &str = "gen-test";

/// A GetTodos query tagged [`TAG`], made distinct by the alias `name`; `done({source, todos})`.
fn query(name: &str) -> String {
    format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json', 'x-cachet-tags': '{TAG}'}},
           body: JSON.stringify({{query: 'query GetTodos {{ todos {{ id }} {name}: __typename }}'}})}})
           .then(async (r) => ({{source: r.headers.get('x-cachet-source'), todos: (await r.json()).data.todos.length}}))"
    )
}

async fn run_query(harness: &Harness, name: &str) -> Result<Value> {
    harness.run_async(&format!("{}.then(done, (e) => done({{error: String(e)}}));", query(name))).await
}

/// Stores the query `name` (from the server) and checks that it is then answered from the cache.
async fn stored(harness: &Harness, name: &str) -> Result<()> {
    let first = run_query(harness, name).await?;
    let second = run_query(harness, name).await?;
    if first["source"] != json!("network") || second["source"] != json!("cache") {
        bail!("storing {name}: {first} then {second}");
    }
    Ok(())
}

/// Posts `invalidate-tags [TAG]`. When the broadcast `cache-invalidated` arrives, the query `on_broadcast`
/// (when given) is sent at once; after the ack, `after_ack`. Returns `{ack, onBroadcast, afterAck}`.
async fn invalidate(harness: &Harness, on_broadcast: Option<&str>, after_ack: Option<&str>) -> Result<Value> {
    let on_broadcast = on_broadcast.map_or("Promise.resolve(null)".to_owned(), query);
    let after_ack = after_ack.map_or("Promise.resolve(null)".to_owned(), query);
    let script = format!(
        "const channel = new BroadcastChannel('cachet');
         const heard = new Promise((resolve) => channel.onmessage = (e) => {{
           const m = JSON.parse(e.data);
           if (m.type === 'cache-invalidated' && m.tags.includes('{TAG}')) {{ channel.close(); resolve({on_broadcast}); }} }});
         const ack = new Promise((resolve) => navigator.serviceWorker.addEventListener('message', function listen(e) {{
           const m = JSON.parse(e.data);
           if (m.requestId === 4242) {{ navigator.serviceWorker.removeEventListener('message', listen); resolve(m); }} }}));
         navigator.serviceWorker.startMessages();
         navigator.serviceWorker.controller.postMessage(JSON.stringify({{v: 1, type: 'invalidate-tags', requestId: 4242, tags: ['{TAG}']}}));
         (async () => {{
           const acked = await ack;
           const afterAck = await {after_ack};
           return {{ack: acked.type, onBroadcast: await heard, afterAck}};
         }})().then(done, (e) => done({{error: String(e)}}));"
    );
    harness.run_async(&script).await
}

/// Reads, in the page (which does not wake the worker), the entries and records of cachet's GraphQL
/// cache: `{entries: [urls], records: [{url, tags, generation}], generations: [{tag, at, clock, floor}]}`.
const STORE: &str = "(async () => {
  const cache = await caches.open('cachet-graphql-v2');
  const entries = (await cache.keys()).map((r) => r.url);
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result); open.onerror = reject; });
  const all = (name) => new Promise((resolve) => {
    const request = db.transaction(name).objectStore(name).getAll(); request.onsuccess = () => resolve(request.result); });
  const records = (await all('entries')).filter((r) => r.cache === 'cachet-graphql-v2');
  const generations = await all('generations');
  db.close();
  return {entries, records, generations};
})()";

async fn store(harness: &Harness) -> Result<Value> {
    harness.run_async(&format!("{STORE}.then(done, (e) => done({{error: String(e)}}));")).await
}

/// The URLs of the records tagged [`TAG`].
fn tagged(store: &Value) -> Vec<String> {
    let records = store["records"].as_array().into_iter().flatten();
    let tagged =
        records.filter(|record| record["tags"].as_array().is_some_and(|tags| tags.contains(&json!(TAG))));
    tagged.filter_map(|record| record["url"].as_str().map(str::to_owned)).collect()
}

fn has_entry(store: &Value, url: &str) -> bool {
    store["entries"].as_array().is_some_and(|entries| entries.contains(&json!(url)))
}

/// Reads the store every 200 ms until `gone` holds (at most [`cachet_e2e::WAIT`]); returns the last read.
async fn until(harness: &Harness, what: &str, gone: impl Fn(&Value) -> bool) -> Result<Value> {
    let started = std::time::Instant::now();
    loop {
        let read = store(harness).await?;
        if gone(&read) {
            return Ok(read);
        }
        if started.elapsed() > cachet_e2e::WAIT {
            bail!("{what}: still not done after {:?}: {read}", cachet_e2e::WAIT);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

async fn signed_in() -> Result<Harness> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    Ok(harness)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalidated_entry_is_a_miss_right_after_the_broadcast_and_the_ack_then_swept() -> Result<()> {
    let harness = signed_in().await?;
    stored(&harness, "a").await?;
    stored(&harness, "b").await?;
    let before = store(&harness).await?;
    let urls = tagged(&before);
    assert_eq!(urls.len(), 2, "{before}");
    let queries = harness.count("graphql GetTodos");
    let answered = invalidate(&harness, Some("a"), Some("b")).await?;
    assert_eq!(answered["ack"], json!("ack"), "{answered}");
    // The broadcast follows the state change: a query sent as it arrives already misses.
    assert_eq!(answered["onBroadcast"]["source"], json!("network"), "{answered}");
    assert_eq!(answered["afterAck"]["source"], json!("network"), "{answered}");
    assert_eq!(harness.count("graphql GetTodos"), queries + 2);
    // Their fresh answers replaced them, current again.
    assert_eq!(run_query(&harness, "a").await?["source"], json!("cache"));
    assert_eq!(run_query(&harness, "b").await?["source"], json!("cache"));

    // Invalidated again and not asked for: the sweep deletes the entries and their records.
    let answered = invalidate(&harness, None, None).await?;
    assert_eq!(answered["ack"], json!("ack"), "{answered}");
    let after = until(&harness, "the sweep", |read| tagged(read).is_empty()).await?;
    for url in &urls {
        assert!(!has_entry(&after, url), "{url} left in the cache: {after}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalidation_holds_across_a_worker_stopped_between_the_ack_and_the_query() -> Result<()> {
    let harness = signed_in().await?;
    stored(&harness, "a").await?;
    let queries = harness.count("graphql GetTodos");
    let answered = invalidate(&harness, None, None).await?;
    assert_eq!(answered["ack"], json!("ack"), "{answered}");
    harness.stop_service_workers().await?;
    let again = run_query(&harness, "a").await?;
    assert_eq!(again["source"], json!("network"), "the next worker knows: {again}");
    assert_eq!(harness.count("graphql GetTodos"), queries + 1);
    // Stored after it was given (in `waitUntil`); a forced stop right now could cut that store short (a
    // miss later, never a stale answer). The same worker asked again waits for its store.
    assert_eq!(run_query(&harness, "a").await?["source"], json!("cache"), "stored by the same worker");
    harness.stop_service_workers().await?;
    assert_eq!(run_query(&harness, "a").await?["source"], json!("cache"), "the fresh answer is current");
    assert_eq!(harness.count("graphql GetTodos"), queries + 1);
    Ok(())
}

/// The entries of the queries `names` put back as a worker that stopped before its sweep leaves them
/// once their tag was invalidated: the stored copy and its record, begun at generation 0. Their sweep
/// can then not hide a lookup that serves them (it would have deleted them first).
async fn left_unswept(harness: &Harness, names: &[&str]) -> Result<()> {
    for name in names {
        stored(harness, name).await?;
    }
    let before = store(harness).await?;
    let urls = tagged(&before);
    assert_eq!(urls.len(), names.len(), "{before}");
    let answered = invalidate(harness, None, None).await?;
    assert_eq!(answered["ack"], json!("ack"), "{answered}");
    until(harness, "the sweep", |read| tagged(read).is_empty()).await?;
    for url in &urls {
        let stamp = format!("0 {TAG}");
        assert_eq!(harness.run_async(&seed(Some((url, &stamp)), Some((url, "0", 0)))).await?, json!(true));
    }
    let seeded = store(harness).await?;
    assert!(urls.iter().all(|url| has_entry(&seeded, url)), "{seeded}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_entry_not_yet_swept_is_a_miss_in_this_worker_and_the_next() -> Result<()> {
    let harness = signed_in().await?;
    left_unswept(&harness, &["a", "b"]).await?;
    let queries = harness.count("graphql GetTodos");
    let this_worker = run_query(&harness, "a").await?;
    assert_eq!(this_worker["source"], json!("network"), "{this_worker}");
    harness.stop_service_workers().await?;
    let next_worker = run_query(&harness, "b").await?;
    assert_eq!(next_worker["source"], json!("network"), "the next worker reads the bump back: {next_worker}");
    assert_eq!(harness.count("graphql GetTodos"), queries + 2);
    assert_eq!(run_query(&harness, "b").await?["source"], json!("cache"), "the fresh answer is current");
    Ok(())
}

/// An entry as the worker stores it, written from the page: `entry` (URL, `X-Cachet-Generation`, none
/// when empty) in the cache, `record` (URL, generation as JavaScript) in the index.
/// `record`: `(url, generation, age)`, its `storedAt` `age` ms ago.
fn seed(entry: Option<(&str, &str)>, record: Option<(&str, &str, u64)>) -> String {
    let entry = entry.map_or(String::new(), |(url, stamp)| {
        let stamp = if stamp.is_empty() { String::new() } else { format!("'x-cachet-generation': '{stamp}'") };
        format!(
            "await cache.put('{url}', new Response('{{\"data\":{{\"todos\":[]}}}}',
               {{headers: {{'content-type': 'application/json', 'x-cachet-stored-at': String(Date.now()), {stamp}}}}}));"
        )
    });
    let record = record.map_or(String::new(), |(url, generation, age)| {
        format!(
            "await new Promise((resolve, reject) => {{
               const t = db.transaction('entries', 'readwrite');
               t.objectStore('entries').put({{url: '{url}', cache: 'cachet-graphql-v2', tags: ['{TAG}'],
                 generation: {generation}, storedAt: Date.now() - {age}, usedAt: Date.now()}});
               t.oncomplete = resolve; t.onerror = () => reject(t.error); }});"
        )
    });
    format!(
        "(async () => {{
           const cache = await caches.open('cachet-graphql-v2');
           const db = await new Promise((resolve, reject) => {{
             const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result); open.onerror = reject; }});
           {record}
           {entry}
           db.close();
           return true;
         }})().then(done, (e) => done(String(e)));"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_worker_start_sweeps_what_was_left_stale_and_heals_the_index() -> Result<()> {
    let harness = signed_in().await?;
    stored(&harness, "a").await?;
    let answered = invalidate(&harness, None, None).await?;
    assert_eq!(answered["ack"], json!("ack"), "{answered}");
    until(&harness, "the sweep", |read| tagged(read).is_empty()).await?;
    let origin = harness.url();
    let [stale, legacy, orphan, lost, landing] = ["stale", "legacy", "orphan", "lost", "landing"]
        .map(|name| format!("{origin}/__cachet/gql/test/{name}"));
    // As a worker stopped before its sweep leaves them: an entry with its record begun before the
    // invalidation (generation 0), and one stored by an earlier version (no generation); and the
    // leftovers the pass heals: an entry no record names, a record whose entry has been gone for longer
    // than an entry takes to land (`sweep::LANDING_MS`). A record stored just now whose entry is not
    // there yet stays: a stopped worker's put may still land.
    let current = "999999999";
    let long_ago = 60_000;
    for (entry, record) in [
        (Some((stale.as_str(), format!("0 {TAG}"))), Some((stale.as_str(), "0", 0))),
        (Some((legacy.as_str(), String::new())), Some((legacy.as_str(), "undefined", 0))),
        (Some((orphan.as_str(), format!("{current} {TAG}"))), None),
        (None, Some((lost.as_str(), current, long_ago))),
        (None, Some((landing.as_str(), current, 0))),
    ] {
        let entry = entry.as_ref().map(|(url, stamp)| (*url, stamp.as_str()));
        assert_eq!(harness.run_async(&seed(entry, record)).await?, json!(true));
    }
    let seeded = store(&harness).await?;
    for url in [&stale, &legacy, &orphan] {
        assert!(has_entry(&seeded, url), "{url}: {seeded}");
    }
    assert_eq!(tagged(&seeded).len(), 4, "{seeded}");
    // Absent to the reader already: the stale entry's query would miss (shown above for real entries).

    harness.stop_service_workers().await?;
    // The next worker's first answer starts its pass.
    assert_eq!(run_query(&harness, "b").await?["source"], json!("network"));
    // And the query's own entry has landed: its record is written before its entry is put, after the
    // answer (CI once read the store between the two).
    let healed = until(&harness, "the start-up pass", |read| {
        [&stale, &legacy, &orphan].iter().all(|url| !has_entry(read, url))
            && tagged(read).iter().all(|url| !url.contains("/test/") || url.ends_with("/landing"))
            && tagged(read).iter().filter(|url| !url.contains("/test/")).all(|url| has_entry(read, url))
    })
    .await?;
    assert!(
        tagged(&healed).iter().any(|url| url.ends_with("/landing")),
        "the landing record stays: {healed}"
    );
    let entries = healed["entries"].as_array().map_or(0, Vec::len);
    let records = healed["records"].as_array().map_or(0, Vec::len);
    assert_eq!(entries + 1, records, "in step but for the landing record: {healed}");
    Ok(())
}
