//! The GraphQL document cache, end to end, through plain `fetch` calls from the page (SPEC: no generated
//! wrapper is needed; the headers are the whole contract): queries cached by body hash and tagged,
//! mutations invalidating by operation name or explicit tags, `cache-invalidated` broadcast.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// Defines `gql(query, variables, headers)` in the page: resolves to `{status, source, body}`.
const GQL: &str = "const gql = (query, variables, headers) => fetch('/graphql', {
    method: 'POST',
    headers: Object.assign({'content-type': 'application/json'}, headers || {}),
    body: JSON.stringify({query, variables: variables || {}}),
  }).then(async (r) => ({status: r.status, source: r.headers.get('x-cachet-source'), body: await r.json()}));";

async fn gql(harness: &Harness, query: &str, variables: Value, headers: Value) -> Result<Value> {
    let call = format!(
        "{GQL}\ngql({}, {variables}, {headers}).then(done, (e) => done({{error: String(e)}}));",
        json!(query)
    );
    harness.run_async(&call).await
}

const GET_TODOS: &str = "query GetTodos { todos { id title done } }";
// Neither selects `todos`: the example backend tags every answer that does (`X-SW-Cache-Tags: todos`),
// which any todo mutation reaches.
const DASHBOARD: &str = "query Dashboard { me { id } }";
const ANONYMOUS: &str = "{ me { username } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_are_cached_by_body_and_invalidated_by_mutation_tags() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    // Listen to what the SW broadcasts, as any page may: a promise of the first `cache-invalidated`.
    harness
        .run_async(
            "window.cachetChannel = new BroadcastChannel('cachet');
             window.firstInvalidation = new Promise((resolve) => window.cachetChannel.onmessage = (e) => {
               const message = JSON.parse(e.data); if (message.type === 'cache-invalidated') resolve(message); });
             done(true);",
        )
        .await?;

    // A query: network, then the cache; the server saw one request.
    let first = gql(&harness, GET_TODOS, json!({}), json!({})).await?;
    assert_eq!((first["status"].clone(), first["source"].clone()), (json!(200), json!("network")), "{first}");
    assert_eq!(first["body"], json!({"data": {"todos": []}}));
    let second = gql(&harness, GET_TODOS, json!({}), json!({})).await?;
    assert_eq!(second["source"], json!("cache"), "{second}");
    assert_eq!(harness.count("graphql GetTodos"), 1);
    // The anonymous query and the explicitly tagged one are cached too.
    for (query, headers) in [(ANONYMOUS, json!({})), (DASHBOARD, json!({"X-Cachet-Tags": "dashboard"}))] {
        assert_eq!(gql(&harness, query, json!({}), headers.clone()).await?["source"], json!("network"));
        assert_eq!(gql(&harness, query, json!({}), headers).await?["source"], json!("cache"));
    }

    // CreateTodo invalidates `todo` and `todos`: GetTodos goes back to the server and sees the new todo.
    let created = gql(
        &harness,
        "mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }",
        json!({"t": "milk"}),
        json!({}),
    )
    .await?;
    assert_eq!(created["source"], json!("network"), "{created}");
    let event = harness.run_async("window.firstInvalidation.then(done);").await?;
    assert_eq!(event, json!({"v": 1, "type": "cache-invalidated", "tags": ["todo", "todos"]}));
    let third = gql(&harness, GET_TODOS, json!({}), json!({})).await?;
    assert_eq!(third["source"], json!("network"), "{third}");
    assert_eq!(third["body"]["data"]["todos"][0]["title"], json!("milk"));
    assert_eq!(harness.count("graphql GetTodos"), 2);
    // SPEC §4 rule 6: the anonymous query has no tags and was not invalidated.
    let anonymous = gql(&harness, ANONYMOUS, json!({}), json!({})).await?;
    assert_eq!(
        (anonymous["source"].clone(), anonymous["body"].clone()),
        (json!("cache"), json!({"data": {"me": {"username": "alice"}}}))
    );
    // Rule 5: UpdateTodo does not reach a query tagged `dashboard`; its explicit `invalidate` does (rule 4).
    let update = "mutation UpdateTodo($id: ID!) { updateTodo(id: $id, done: true) { id } }";
    let id = third["body"]["data"]["todos"][0]["id"].clone();
    gql(&harness, update, json!({"id": id}), json!({})).await?;
    assert_eq!(
        gql(&harness, DASHBOARD, json!({}), json!({"X-Cachet-Tags": "dashboard"})).await?["source"],
        json!("cache")
    );
    gql(&harness, update, json!({"id": id}), json!({"X-Cachet-Invalidate": "dashboard"})).await?;
    assert_eq!(
        gql(&harness, DASHBOARD, json!({}), json!({"X-Cachet-Tags": "dashboard"})).await?["source"],
        json!("network")
    );

    // An answer with GraphQL `errors` is passed on, never cached.
    for _ in 0..2 {
        let failed = gql(&harness, "query Broken { noSuchField }", json!({}), json!({})).await?;
        assert_eq!(failed["source"], json!("network"), "{failed}");
        assert!(failed["body"]["errors"].is_array(), "{failed}");
    }
    assert_eq!(harness.count("graphql Broken"), 2);
    Ok(())
}
