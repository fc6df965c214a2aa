//! Clear-all: one message purges every cache and the tag index the SW keeps, then acknowledges.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_all_empties_the_caches_and_tag_index_and_acknowledges() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("bob").await?;
    // Something in each store: a GET in the runtime cache, a GraphQL document and its tags.
    let filled = harness
        .run_async(
            "(async () => {
               await fetch('/api/hello');
               const query = () => fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
                 body: JSON.stringify({query: 'query GetTodos { todos { id } }'})});
               await query();
               const second = await query();
               done(second.headers.get('x-cachet-source'));
             })();",
        )
        .await?;
    assert_eq!(filled, json!("cache"));

    // A garbage message is dropped; the clear-all after it is still carried out and acknowledged.
    let answer = harness
        .run_async(
            "const channel = new BroadcastChannel('cachet');
             const broadcastDone = new Promise((resolve) => channel.onmessage = (e) => {
               const m = JSON.parse(e.data); if (m.type === 'clear-all-done') resolve(m); });
             const ack = new Promise((resolve) => navigator.serviceWorker.addEventListener('message',
               (e) => resolve(JSON.parse(e.data))));
             navigator.serviceWorker.controller.postMessage('{not json');
             navigator.serviceWorker.controller.postMessage(JSON.stringify({v: 1, type: 'clear-all', requestId: 7}));
             Promise.all([ack, broadcastDone]).then(done);",
        )
        .await?;
    assert_eq!(
        answer,
        json!([{"v": 1, "type": "ack", "requestId": 7}, {"v": 1, "type": "clear-all-done", "requestId": 7}])
    );

    // Inspected from the page: only the SW's own wasm cache and the app shell (the build's files, nothing
    // of a user) are left, and the tag index is empty.
    let left = harness
        .run_async(
            "(async () => {
               const names = await caches.keys();
               const db = await new Promise((resolve, reject) => {
                 const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result);
                 open.onerror = () => reject(open.error); });
               const count = await new Promise((resolve) => {
                 const request = db.transaction('entries').objectStore('entries').count();
                 request.onsuccess = () => resolve(request.result); });
               const kept = (n) => n.startsWith('cachet-sw-wasm-') ? 'wasm' : n.startsWith('cachet-shell-') ? 'shell' : n;
               done({caches: names.map(kept).sort(), entries: count});
             })();",
        )
        .await?;
    assert_eq!(left, json!({"caches": ["shell", "wasm"], "entries": 0}));
    let after = harness
        .run_async(
            "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({query: 'query GetTodos { todos { id } }'})})
               .then((r) => done(r.headers.get('x-cachet-source')));",
        )
        .await?;
    assert_eq!(after, json!("network"), "the purged query goes back to the server");
    assert_eq!(harness.count("graphql GetTodos"), 2);
    Ok(())
}
