//! An app upgraded in place (issue 32): what a build before the worker's one IndexedDB database left in
//! its three databases (`cachet-sw-identity`, `cachet-sw-queue`, `cachet-sw`) is moved in by the next
//! worker start, and the user notices nothing: the signed-in user's stored answer is still a hit (which
//! needs the identity: a cookie request carries no `Authorization`), the mutation queued offline is
//! replayed once, and the old databases are gone.
//!
//! The earlier layout is written by the page from what the current worker stored (the same records, the
//! stores of 0.x builds before the move), with the worker stopped: the worker that starts next meets
//! exactly what an upgrade meets.

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// Moves every record of the worker's database into the three databases of earlier builds, then deletes
/// it; answers the names of the origin's databases afterwards.
const TO_EARLIER_LAYOUT: &str = "(async () => {
  const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
  const current = await request(indexedDB.open('cachet'));
  const read = async (store) => {
    const keys = await request(current.transaction(store).objectStore(store).getAllKeys());
    const values = await request(current.transaction(store).objectStore(store).getAll());
    return keys.map((key, i) => [key, values[i]]);
  };
  const moved = {};
  for (const store of ['entries', 'generations', 'identity', 'queue']) moved[store] = await read(store);
  current.close();
  const create = (name, version, upgrade, fill) => new Promise((resolve, reject) => {
    const open = indexedDB.open(name, version);
    open.onupgradeneeded = () => upgrade(open.result);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => { const db = open.result; const stores = [...db.objectStoreNames];
      const transaction = db.transaction(stores, 'readwrite'); fill(transaction);
      transaction.oncomplete = () => { db.close(); resolve(); }; transaction.onabort = () => reject(transaction.error); };
  });
  await create('cachet-sw-identity', 1, (db) => db.createObjectStore('identity'),
    (t) => moved.identity.forEach(([key, value]) => t.objectStore('identity').put(value, key)));
  await create('cachet-sw-queue', 1, (db) => db.createObjectStore('queue'),
    (t) => moved.queue.forEach(([key, value]) => t.objectStore('queue').put(value, key)));
  await create('cachet-sw', 2, (db) => {
      const entries = db.createObjectStore('entries', {keyPath: 'url'});
      entries.createIndex('tags', 'tags', {multiEntry: true});
      entries.createIndex('cacheUsedAt', ['cache', 'usedAt']);
      db.createObjectStore('generations', {keyPath: 'tag'}); },
    (t) => { moved.entries.forEach(([, value]) => t.objectStore('entries').put(value));
             moved.generations.forEach(([, value]) => t.objectStore('generations').put(value)); });
  await request(indexedDB.deleteDatabase('cachet'));
  return {names: (await indexedDB.databases()).map((d) => d.name).sort(),
          counts: Object.fromEntries(Object.entries(moved).map(([store, records]) => [store, records.length]))};
})().then(done, (e) => done({error: String(e)}));";

async fn gql(harness: &Harness, body: Value, queue: bool) -> Result<Value> {
    let queue = if queue { ", 'x-cachet-queue-offline': '1'" } else { "" };
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'{queue}}}, body: JSON.stringify({body})}})
           .then(async (r) => done({{status: r.status, source: r.headers.get('x-cachet-source'), body: await r.json()}}),
                 (e) => done({{error: String(e)}}));"
    );
    harness.run_async(&script).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_upgraded_in_place_keeps_its_user_its_entries_and_its_queue() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    let get_todos = json!({"query": "query GetTodos { todos { id title } }"});
    assert_eq!(gql(&harness, get_todos.clone(), false).await?["source"], json!("network"));
    assert_eq!(gql(&harness, get_todos.clone(), false).await?["source"], json!("cache"));
    harness.stop_server().await;
    let create = json!({"query": "mutation CreateTodo { createTodo(title: \"kept\") { id } }"});
    let queued = gql(&harness, create, true).await?;
    assert_eq!(queued["status"], json!(202), "{queued}");

    harness.stop_service_workers_until_stopped().await?;
    let earlier = harness.run_async(TO_EARLIER_LAYOUT).await?;
    if earlier.get("error").is_some() {
        bail!("writing the earlier layout: {earlier}");
    }
    assert_eq!(
        earlier["names"],
        json!(["cachet-client", "cachet-sw", "cachet-sw-identity", "cachet-sw-queue"])
    );
    assert_eq!(earlier["counts"]["identity"], json!(1), "alice: {earlier}");
    assert_eq!(earlier["counts"]["queue"], json!(1), "the queue's record: {earlier}");
    assert!(earlier["counts"]["entries"].as_u64() >= Some(1), "{earlier}");

    // The server is still down: only the moved identity finds alice's stored answer.
    let after = gql(&harness, get_todos.clone(), false).await?;
    assert_eq!(after["source"], json!("cache"), "{after}");

    // The moved queue replays once the server is back, and invalidates as always.
    harness.restart_server().await?;
    let online = json!({"v": 1, "type": "connectivity-changed", "online": true});
    let replayed = harness
        .run_async(&format!(
            "const channel = new BroadcastChannel('cachet');
             channel.onmessage = (e) => {{ const m = JSON.parse(e.data);
               if (m.type === 'mutation-replayed') {{ channel.close(); done(m); }} }};
             navigator.serviceWorker.controller.postMessage(JSON.stringify({online}));"
        ))
        .await?;
    assert!(replayed["invalidated"].to_string().contains("todos"), "{replayed}");
    assert_eq!(harness.count("graphql CreateTodo"), 1, "replayed once");
    let fresh = gql(&harness, get_todos, false).await?;
    assert_eq!(fresh["source"], json!("network"), "invalidated by the replay: {fresh}");

    // The earlier databases are deleted after the move (in the worker's background: polled, 5 s at most).
    let names = harness
        .run_async(
            "const started = Date.now();
             const poll = async () => { const names = (await indexedDB.databases()).map((d) => d.name).sort();
               if (!names.some((n) => n.startsWith('cachet-sw')) || Date.now() - started > 5000) done(names);
               else setTimeout(poll, 20); };
             poll();",
        )
        .await?;
    assert_eq!(names, json!(["cachet", "cachet-client"]), "the earlier databases are deleted");
    Ok(())
}
