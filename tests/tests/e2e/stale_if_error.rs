//! Stale-if-error (issue 35 item 4), end to end: the real backend fails a query (503, its test hook),
//! the Service Worker answers with the signed-in user's last good stored answer, marked
//! `X-Cachet-Stale: 1`, and `window.cachet` says `stale: true`; the next good answer is not marked; a
//! user with no stored answer of their own gets the 503 (never another user's entry). The window is the
//! config's `cache.staleIfErrorSeconds` here; the rules (the window past an entry's life, the server's own
//! `stale-if-error`, no window at all) are the core's table and the parity suite's.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const CONFIG: &str = r#"{
  "features": {"auth": {"enabled": true}, "graphql": {"enabled": true}},
  "cache": {"staleIfErrorSeconds": 600}
}"#;

const GET_TODOS: &str = "query GetTodos { todos { title } }";

/// `cachet.queryGql(GET_TODOS, {}, {auth: true, strategy: 'network-first'})`: `{fromCache, stale,
/// titles}`, or `{error: kind}`.
async fn query(harness: &Harness) -> Result<Value> {
    harness
        .eval(&format!(
            "cachet.queryGql({query}, {{}}, {{ auth: true, strategy: 'network-first' }})
               .then((r) => ({{fromCache: r.fromCache, stale: r.stale, titles: r.data.todos.map((t) => t.title)}}))",
            query = json!(GET_TODOS)
        ))
        .await
}

/// The same query as a plain `fetch` (no cachet client): the worker's marks on the answer.
async fn plain_fetch(harness: &Harness) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
           'x-sw-strategy': 'network-first', 'x-cachet-auth': '1'}}, body: JSON.stringify({{query: {query}}})}})
           .then((r) => done({{status: r.status, source: r.headers.get('x-cachet-source'),
             stale: r.headers.get('x-cachet-stale')}}), (e) => done({{error: String(e)}}));",
        query = json!(GET_TODOS)
    );
    harness.run_async(&script).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_query_is_answered_with_the_users_last_good_answer_marked_stale() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Cookie, CONFIG).await?;
    harness.open_plain_page("auth=cookie").await?;
    harness.set_auth("alice").await?;
    let created = harness
        .eval(
            "cachet.mutateGql('mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }', {t: 'milk'}, {auth: true})",
        )
        .await?;
    assert!(created.get("error").is_none(), "{created}");

    let good = query(&harness).await?;
    assert_eq!(good, json!({"fromCache": false, "stale": false, "titles": ["milk"]}));
    let asked = harness.count("graphql GetTodos");

    // The server fails: alice's stored answer stands in, marked, and the server was asked.
    harness.test_hook("/__test/fail-graphql?status=503").await?;
    let stale = query(&harness).await?;
    assert_eq!(stale, json!({"fromCache": true, "stale": true, "titles": ["milk"]}));
    assert_eq!(harness.count("graphql GetTodos"), asked + 1, "the server was asked first");
    // Any client sees the marks on the answer.
    harness.test_hook("/__test/fail-graphql?status=502").await?;
    let marked = plain_fetch(&harness).await?;
    assert_eq!(marked, json!({"status": 200, "source": "cache", "stale": "1"}));

    // The server is back: its answer, unmarked.
    let again = query(&harness).await?;
    assert_eq!(again, json!({"fromCache": false, "stale": false, "titles": ["milk"]}));

    // Bob has nothing stored: the 503 is his answer, never alice's entry.
    harness.eval("cachet.clearAuth()").await?;
    harness.set_auth("bob").await?;
    harness.test_hook("/__test/fail-graphql?status=503").await?;
    let bobs = query(&harness).await?;
    assert_eq!(bobs, json!({"error": "http"}), "bob got alice's list or no error");
    harness.test_hook("/__test/fail-graphql?status=503").await?;
    let plain = plain_fetch(&harness).await?;
    assert_eq!(plain, json!({"status": 503, "source": "network", "stale": null}));
    Ok(())
}
