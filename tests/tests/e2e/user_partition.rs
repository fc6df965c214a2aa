//! Per-user partitions: requests marked `X-Cachet-Auth: 1` are cached in the current user's partition,
//! so user B is never answered with user A's entries, even when nothing was purged in between.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// Tells the SW whose partition marked requests use, and waits for its acknowledgement.
async fn set_identity(harness: &Harness, request_id: u64, partition: Value) -> Result<()> {
    let script = format!(
        "const ack = new Promise((resolve) => navigator.serviceWorker.addEventListener('message', (e) => {{
           const m = JSON.parse(e.data); if (m.requestId === {request_id}) resolve(m); }}));
         navigator.serviceWorker.controller.postMessage(
           JSON.stringify({{v: 1, type: 'set-identity', requestId: {request_id}, partition: {partition}}}));
         ack.then(done);"
    );
    let answer = harness.run_async(&script).await?;
    assert_eq!(answer, json!({"v": 1, "type": "ack", "requestId": request_id}));
    Ok(())
}

/// A GraphQL call marked as authenticated: `{source, body}`.
async fn authed(harness: &Harness, query: &str) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json', 'X-Cachet-Auth': '1'}},
           body: JSON.stringify({{query: {query}}})}})
           .then(async (r) => done({{source: r.headers.get('x-cachet-source'), body: await r.json()}}));",
        query = json!(query)
    );
    harness.run_async(&script).await
}

const GET_TODOS: &str = "query GetTodos { todos { title } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_b_is_never_answered_with_user_as_entries() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;

    harness.login("alice").await?;
    set_identity(&harness, 1, json!("partition-of-alice")).await?;
    authed(&harness, "mutation CreateTodo { createTodo(title: \"alice's secret\") { id } }").await?;
    assert_eq!(authed(&harness, GET_TODOS).await?["source"], json!("network"));
    let cached = authed(&harness, GET_TODOS).await?;
    assert_eq!(cached["source"], json!("cache"));
    assert_eq!(cached["body"]["data"]["todos"], json!([{"title": "alice's secret"}]));

    // Bob logs in and nothing is purged (as if the purge had failed): his identical query goes to the
    // server and gets his own, empty, list.
    harness.login("bob").await?;
    set_identity(&harness, 2, json!("partition-of-bob")).await?;
    let bobs = authed(&harness, GET_TODOS).await?;
    assert_eq!(
        (bobs["source"].clone(), bobs["body"]["data"]["todos"].clone()),
        (json!("network"), json!([]))
    );
    assert_eq!(authed(&harness, GET_TODOS).await?["source"], json!("cache"), "bob's own entry");

    // No identity: marked requests are not cached at all.
    set_identity(&harness, 3, Value::Null).await?;
    for _ in 0..2 {
        assert_eq!(authed(&harness, GET_TODOS).await?["source"], json!("network"));
    }
    assert_eq!(harness.count("graphql GetTodos"), 4, "alice 1, bob 1, no identity 2");

    // Alice's partition still holds her entry.
    set_identity(&harness, 4, json!("partition-of-alice")).await?;
    let again = authed(&harness, GET_TODOS).await?;
    assert_eq!(
        (again["source"].clone(), again["body"]["data"]["todos"].clone()),
        (json!("cache"), json!([{"title": "alice's secret"}]))
    );
    Ok(())
}
