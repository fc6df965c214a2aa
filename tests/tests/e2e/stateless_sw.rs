//! Nothing lives only in Service Worker memory: the SW is stopped between every step (as Chromium stops
//! an idle SW), and the document cache, the tag index and the offline restart all still hold.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

async fn query(harness: &Harness, body: Value) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: JSON.stringify({body})}})
           .then(async (r) => done({{source: r.headers.get('x-cachet-source'), body: await r.json()}}),
                 (e) => done({{error: String(e)}}));"
    );
    harness.run_async(&script).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_step_holds_when_the_service_worker_is_stopped_in_between() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    let get_todos = json!({"query": "query GetTodos { todos { id title } }"});

    assert_eq!(query(&harness, get_todos.clone()).await?["source"], json!("network"));
    // Stored after it was given (in `waitUntil`); a forced stop right now could cut that store short (a
    // miss later, never a stale answer). The same worker asked again waits for its store.
    assert_eq!(query(&harness, get_todos.clone()).await?["source"], json!("cache"));
    harness.stop_service_workers().await?;
    assert_eq!(
        query(&harness, get_todos.clone()).await?["source"],
        json!("cache"),
        "the cache outlives the SW"
    );

    // The invalidation after a restart finds the entry through the tag index in IndexedDB.
    harness.stop_service_workers().await?;
    let create = json!({"query": "mutation CreateTodo { createTodo(title: \"bread\") { id } }"});
    assert_eq!(query(&harness, create).await?["source"], json!("network"));
    harness.stop_service_workers().await?;
    let fresh = query(&harness, get_todos.clone()).await?;
    assert_eq!(fresh["source"], json!("network"), "{fresh}");
    assert_eq!(fresh["body"]["data"]["todos"][0]["title"], json!("bread"));
    assert_eq!(harness.count("graphql GetTodos"), 2);
    assert_eq!(query(&harness, get_todos.clone()).await?["source"], json!("cache"), "stored before the stop");

    // Server down and SW stopped: the SW restarts from the wasm it keeps in Cache Storage and answers.
    harness.stop_server().await;
    harness.stop_service_workers().await?;
    let offline = query(&harness, get_todos).await?;
    assert_eq!(offline["source"], json!("cache"), "{offline}");
    assert_eq!(offline["body"]["data"]["todos"][0]["title"], json!("bread"));
    Ok(())
}
