//! Storage full, for real (issue 20): the origin's quota, set small with CDP
//! `Storage.overrideQuotaForOrigin` before the origin first opens IndexedDB, so that Chromium itself
//! refuses writes to IndexedDB (the transaction aborts at commit with `QuotaExceededError`) and to Cache
//! Storage alike, while it keeps the origin. (Chromium caches the room IndexedDB may use for about
//! 30 s: an override made after the origin's first IndexedDB write reaches IndexedDB only then.)
//!
//! The page fills what cachet leaves of the quota with data of its own (random bytes in an IndexedDB
//! database of the page, written until the browser refuses them: the app's other data, which cachet
//! may not touch). Then, with the server down and earlier mutations queued:
//! - a queued mutation under pressure is kept: its write fails, cachet's caches give up their least
//!   recently used half, the write is tried again and commits (answer 202);
//! - once cachet has nothing left to give, the mutation is refused with a typed answer (507,
//!   `X-Cachet-Not-Queued: storage-full`, a GraphQL error), neither kept nor sent;
//! - the app keeps answering (a GET and a GraphQL query once the server is back, their answers not
//!   stored for want of room);
//! - nothing queued before is lost; after the page frees its own data, every mutation answered 202 is
//!   applied once, none answered 507 is applied, and the worker's index matches its caches.
//!
//! Runs once whatever the run count; prints a `CHAOS-SUMMARY storage-full` line.

use anyhow::Result;
use cachet_e2e::chaos::{ask_for_replay, consistency, queue_summary, start_client, stored_queue_once_empty};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// The origin's quota.
const QUOTA: u64 = 6 * 1024 * 1024;
/// Large answers stored by the worker before the pressure (the worker's wasm, about 500 KB each).
const FILLS: usize = 4;
/// Mutations queued before the pressure.
const EARLY: usize = 5;
/// Attempts to queue under pressure, each after the page filled the origin again.
const PRESSED: usize = 8;

/// Writes random bytes (incompressible) into the page's own `ballast` database, in chunks of 256 KB,
/// then 16 KB, then 1 KB, each size until the browser refuses it: the origin is then full to about a
/// kilobyte. First one write larger than the quota, refused: IndexedDB keeps its own count of the room
/// left between its checks with the quota manager (and so misses what Cache Storage used since), and
/// asks again for a write larger than that count. Returns `{written, refused}` (the last refusal).
const FILL_ORIGIN: &str = "(async () => {
  const db = await new Promise((resolve, reject) => { const open = indexedDB.open('ballast', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('b');
    open.onsuccess = () => resolve(open.result); open.onerror = () => reject(open.error); });
  let written = 0, refused = null;
  for (const size of [QUOTA, 262144, 16384, 1024]) {
    for (let n = 0; n < (size === QUOTA ? 1 : 200); n++) {
      const bytes = new Uint8Array(size);
      for (let at = 0; at < size; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
      const outcome = await new Promise((resolve) => {
        const transaction = db.transaction('b', 'readwrite');
        transaction.objectStore('b').put(bytes, 'b' + performance.now() + '-' + n);
        transaction.oncomplete = () => resolve(null);
        transaction.onabort = () => resolve(transaction.error ? transaction.error.name : 'AbortError'); });
      if (outcome) { refused = outcome; break; }
      written += size;
    }
  }
  db.close();
  return {written, refused};
})().then(done, (e) => done({error: String(e)}));";

/// Sends one `queueOffline` `CreateTodo` titled `title`; returns `{status, notQueued, reason, message}`.
fn mutate(title: &str) -> String {
    format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
           'x-cachet-queue-offline': '1', 'x-cachet-auth': '1'}},
           body: JSON.stringify({{query: 'mutation CreateTodo($t: String!) {{ createTodo(title: $t) {{ id }} }}',
             variables: {{t: {title}}}}})}})
         .then(async (r) => {{ const body = await r.json().catch(() => null);
           const error = body && body.errors && body.errors[0];
           return {{status: r.status, notQueued: r.headers.get('x-cachet-not-queued'),
             reason: error ? error.extensions.cachet.reason : null, message: error ? error.message : null}}; }})
         .then(done, (e) => done({{status: 0, error: String(e)}}));",
        title = json!(title)
    )
}

/// The keys of the large answers in cachet's runtime cache (under the signed-in user's partition).
const STORED_FILLS: &str = "caches.open('cachet-runtime-v1').then((c) => c.keys()).then((keys) => done(keys
  .map((k) => decodeURIComponent(k.url)).filter((url) => url.includes('?fill='))));";

async fn count(harness: &Harness, script: &str) -> Result<usize> {
    Ok(harness.run_async(script).await?.as_array().map_or(0, Vec::len))
}

/// [`count`] once the worker's background stores settled: read every 250 ms until two reads agree (at
/// most 10 s).
async fn settled_count(harness: &Harness, script: &str) -> Result<usize> {
    let mut last = count(harness, script).await?;
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let now = count(harness, script).await?;
        if now == last && now > 0 {
            break;
        }
        last = now;
    }
    Ok(last)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_origin_keeps_the_queue_refuses_typed_and_the_app_answers() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    // Before the origin's first IndexedDB write (see the module docs).
    harness
        .devtools("Storage.overrideQuotaForOrigin", json!({"origin": harness.url(), "quotaSize": QUOTA}))
        .await?;
    harness.open_bare_controlled().await?;
    start_client(&harness, "cookie", "alice").await?;
    let fills = harness
        .run_async(&format!(
            "(async () => {{ const lengths = [];
               for (let n = 0; n < {FILLS}; n++) {{
                 const r = await fetch('/cachet-sw_bg.wasm?fill=' + n, {{headers: {{'X-SW-Strategy': 'cache-first'}}}});
                 lengths.push((await r.arrayBuffer()).byteLength); }}
               return lengths; }})().then(done, (e) => done(String(e)));"
        ))
        .await?;
    let stored_before = settled_count(&harness, STORED_FILLS).await?;
    assert!(stored_before >= 2, "large answers stored before the pressure: {stored_before} ({fills})");

    // Mutations queued before the pressure (the server down): they must survive it.
    harness.stop_server().await;
    let mut accepted = Vec::new();
    for i in 0..EARLY {
        let title = format!("early-{i}");
        let answer = harness.run_async(&mutate(&title)).await?;
        assert_eq!(answer["status"], json!(202), "queued before the pressure: {answer}");
        accepted.push(title);
    }

    // Under pressure: the origin filled again before each attempt.
    let (mut refused, mut ballast) = (Vec::new(), 0);
    let mut first_refusal = None;
    for i in 0..PRESSED {
        let fill = harness.run_async(&FILL_ORIGIN.replace("QUOTA", &QUOTA.to_string())).await?;
        assert_eq!(
            fill["refused"],
            json!("QuotaExceededError"),
            "the browser refused the page's data: {fill}"
        );
        ballast += fill["written"].as_u64().unwrap_or_default();
        let title = format!("pressed-{i}");
        let answer = harness.run_async(&mutate(&title)).await?;
        match answer["status"].as_u64() {
            Some(202) => accepted.push(title),
            Some(507) => {
                assert_eq!(
                    (&answer["notQueued"], &answer["reason"]),
                    (&json!("storage-full"), &json!("storage-full")),
                    "a typed refusal: {answer}"
                );
                first_refusal.get_or_insert(answer);
                refused.push(title);
            }
            _ => panic!("neither queued nor refused with a typed answer: {answer}"),
        }
    }
    let stored_after = count(&harness, STORED_FILLS).await?;
    let queued = stored_queue_once_empty(&harness, 0).await?;
    let kept: Vec<&str> = queued["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["request"]["body"].as_str())
        .collect();
    let queued_count = kept.len();
    let missing: Vec<&String> =
        accepted.iter().filter(|title| !kept.iter().any(|body| body.contains(title.as_str()))).collect();
    assert!(
        missing.is_empty(),
        "answered 202 but not in the stored queue: {missing:?} ({})",
        queue_summary(&queued)
    );
    assert!(
        stored_after < stored_before,
        "cachet's caches gave way to the queue: {stored_before} -> {stored_after}"
    );
    assert!(accepted.len() > EARLY, "a mutation under pressure was queued after freeing cache space");
    assert!(!refused.is_empty(), "with nothing left to free, a mutation was refused");
    println!("first refusal: {}", first_refusal.unwrap_or_default());

    // The app keeps answering while the origin is full, the server back: a GET and a GraphQL query, their
    // answers not stored for want of room.
    harness.restart_server().await?;
    let cached = harness
        .run_async(
            "fetch('/cachet-sw_bg.wasm?fill=full', {headers: {'X-SW-Strategy': 'cache-first'}})
               .then(async (r) => done({status: r.status, length: (await r.arrayBuffer()).byteLength}), (e) => done(String(e)));",
        )
        .await?;
    let live = harness
        .run_async(
            "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({query: 'query GetTodos { todos { id } }'})})
             .then((r) => r.json()).then((b) => done(b.data ? b.data.todos.length : JSON.stringify(b)), (e) => done(String(e)));",
        )
        .await?;
    assert!(matches!(live, Value::Number(_)), "a query answers while the origin is full: {live}");

    // Replays with the origin still full (measured, not required: the queue's writes after each send
    // may be refused, which sends the head again later under its key, never twice applied).
    ask_for_replay(&harness).await?;
    let while_full = stored_queue_once_empty(&harness, 5_000).await?;
    let applied_while_full = harness.server_todos("alice")?.len();

    // The page frees its own data; the queue replays to its end.
    let freed = harness
        .run_async(
            "const request = indexedDB.deleteDatabase('ballast');
             request.onsuccess = () => done(true); request.onerror = () => done(String(request.error));",
        )
        .await?;
    assert_eq!(freed, json!(true));
    ask_for_replay(&harness).await?;
    let stored = stored_queue_once_empty(&harness, 20_000).await?;
    let applied: Vec<String> = harness.server_todos("alice")?.into_iter().map(|todo| todo.title).collect();
    let lost = accepted.iter().filter(|title| !applied.contains(title)).count();
    let sent_though_refused = refused.iter().filter(|title| applied.contains(title)).count();
    let twice = applied.len() - applied.iter().collect::<std::collections::BTreeSet<_>>().len();
    let store = consistency(&harness).await?;
    println!(
        "CHAOS-SUMMARY storage-full origin quota_mb={} large_answers_stored={stored_before} kept_after_pressure={stored_after} page_data_kb={} mutations={} queued={} refused_typed={} lost={lost} refused_but_applied={sent_though_refused} applied_twice={twice} applied_while_full={applied_while_full} left_while_full={} get_while_full={} query_while_full={live} entries_without_record={}",
        QUOTA / 1_048_576,
        ballast / 1024,
        EARLY + PRESSED,
        accepted.len(),
        refused.len(),
        while_full["items"].as_array().map_or(0, Vec::len),
        cached["status"],
        store.entries_without_record,
    );
    assert_eq!(queued_count, accepted.len(), "the stored queue under pressure held every accepted mutation");
    assert_eq!(
        queue_summary(&stored),
        "0 items, 0 dead letters",
        "the queue drained once the page freed room"
    );
    assert_eq!((lost, sent_though_refused, twice), (0, 0, 0), "lost, refused but applied, applied twice");
    assert_eq!(
        (&cached["status"], &cached["length"]),
        (&json!(200), &fills[0]),
        "a GET while the origin is full: {cached}"
    );
    assert_eq!(store.entries_without_record, 0, "every cache entry has its index record: {store:?}");
    Ok(())
}
