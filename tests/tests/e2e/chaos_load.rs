//! Load (issue 20): 4 tabs × 250 concurrent GraphQL queries over 1000 distinct documents (each tab draws
//! its documents at random among the 1000, so tabs share entries and hit each other's), with mutations
//! interleaved (one tab sends 10 `CreateTodo`s one after the other while the queries run; each invalidates every
//! stored document: they all carry the tag `todos`).
//!
//! Checked against the server's truth: each acknowledged mutation added one todo, so an answer to a
//! query that started after the k-th acknowledgement (the mutation's answer reaches the page after its
//! invalidation) must list at least k todos: no answer older than the last acknowledged invalidation of
//! its tags. Afterwards the caches and the entry index agree (no entry without its record, none the
//! other way), and one more burst of 300 new documents leaves exactly `cache.maxEntries` (200) entries in
//! the document cache.
//!
//! Rounds: `CACHET_CHAOS_RUNS` / 25, at least 1 (`cargo xtask chaos`: 4). Prints `CHAOS-SUMMARY` lines.

use anyhow::{bail, Result};
use cachet_e2e::chaos::{runs, settled_consistency, start_client, Random};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const TABS: usize = 4;
const PER_TAB: usize = 250;
const DOCUMENTS: u64 = 1000;
const MUTATIONS: usize = 10;
const MAX_ENTRIES: usize = 200;

/// Starts, in the current tab, `documents.length` queries at once; each answer is recorded in
/// `window.load` as `{start, todos, status, source}` (`Date.now()` before the request, the todos it lists).
fn fire(documents: &[u64], prefix: &str) -> String {
    format!(
        "window.load = Promise.all({documents}.map(async (d) => {{
           const start = Date.now();
           try {{
             const r = await fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'}},
               body: JSON.stringify({{query: 'query GetTodos {{ todos {{ id }} {prefix}' + d + ': __typename }}'}})}});
             const body = await r.json();
             return {{start, status: r.status, source: r.headers.get('x-cachet-source'),
                      todos: body.data && body.data.todos ? body.data.todos.length : -1}};
           }} catch (e) {{ return {{start, status: 0, error: String(e)}}; }}
         }})); done(true);",
        documents = json!(documents)
    )
}

/// Sends `MUTATIONS` `CreateTodo`s one after the other (no timer: a hidden tab's are throttled), recording `Date.now()` at each
/// acknowledgement in `window.acks`.
fn mutate(round: usize) -> String {
    format!(
        "window.acks = (async () => {{ const acks = [];
           for (let i = 0; i < {MUTATIONS}; i++) {{
             const r = await fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'}},
               body: JSON.stringify({{query: 'mutation CreateTodo($t: String!) {{ createTodo(title: $t) {{ id }} }}',
                 variables: {{t: 'load-{round}-' + i}}}})}});
             if (r.status === 200) acks.push(Date.now());
           }}
           return acks; }})(); done(true);"
    )
}

/// The entries of the GraphQL document cache.
fn documents_kept(found: &cachet_e2e::chaos::Consistency) -> usize {
    found.per_cache.get("cachet-graphql-v2").copied().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_tabs_of_concurrent_queries_never_see_data_older_than_an_acknowledged_invalidation() -> Result<()>
{
    let rounds = (runs(25) / 25).max(1);
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    start_client(&harness, "cookie", "alice").await?;
    let mut tabs = vec![harness.client.window().await?];
    for _ in 1..TABS {
        let tab = harness.client.new_window(true).await?.handle;
        harness.client.switch_to_window(tab.clone()).await?;
        harness.client.goto(&format!("{}{}", harness.url(), cachet_e2e::BARE_PAGE)).await?;
        harness.open_controlled_here().await?;
        tabs.push(tab);
    }
    let mut random = Random::seeded();
    println!("CHAOS load seed={}", random.0);
    let (mut answers, mut stale, mut failed, mut from_cache, mut acked) = (0, 0, 0, 0, 0);
    let mut todos_before = harness.server_todos("alice")?.len();
    for round in 0..rounds {
        for (index, tab) in tabs.iter().enumerate() {
            harness.client.switch_to_window(tab.clone()).await?;
            let documents: Vec<u64> = (0..PER_TAB).map(|_| random.below(DOCUMENTS)).collect();
            harness.run_async(&fire(&documents, &format!("r{round}d"))).await?;
            if index == 0 {
                harness.run_async(&mutate(round)).await?;
            }
        }
        harness.client.switch_to_window(tabs[0].clone()).await?;
        let started = std::time::Instant::now();
        let acks = harness.run_async("window.acks.then(done, (e) => done(String(e)));").await?;
        let acknowledged_in = started.elapsed();
        let acks: Vec<u64> = acks.as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
        acked += acks.len();
        println!("round {round}: {} mutations acknowledged, the last {acknowledged_in:?} after the queries were fired", acks.len());
        for tab in &tabs {
            harness.client.switch_to_window(tab.clone()).await?;
            let results = harness.run_async("window.load.then(done);").await?;
            for result in results.as_array().into_iter().flatten() {
                answers += 1;
                if result["status"] != json!(200) {
                    failed += 1;
                    println!("a query failed: {result}");
                    continue;
                }
                if result["source"] == json!("cache") {
                    from_cache += 1;
                }
                let start = result["start"].as_u64().unwrap_or_default();
                let acknowledged_before = acks.iter().filter(|&&ack| ack < start).count();
                let listed = result["todos"].as_i64().unwrap_or(-1);
                if listed < (todos_before + acknowledged_before) as i64 {
                    stale += 1;
                    println!("stale: {result} after {acknowledged_before} acknowledged mutations");
                }
            }
        }
        todos_before = harness.server_todos("alice")?.len();
    }
    let found = settled_consistency(&harness).await?;
    // The kept count: 300 new documents, nothing invalidating them, leave exactly `maxEntries` entries.
    harness.client.switch_to_window(tabs[0].clone()).await?;
    let documents: Vec<u64> = (0..300).collect();
    harness.run_async(&fire(&documents, "kept")).await?;
    harness.run_async("window.load.then(done);").await?;
    let kept = settled_consistency(&harness).await?;
    println!(
        "CHAOS-SUMMARY load queries rounds={rounds} tabs={TABS} concurrent_per_tab={PER_TAB} answers={answers} from_cache={from_cache} failed={failed} mutations_acknowledged={acked} stale={stale}"
    );
    println!(
        "CHAOS-SUMMARY load store-after entries={} entries_without_record={} records_without_entry={} kept_after_300_more={} max_entries={MAX_ENTRIES}",
        found.entries, found.entries_without_record, found.records_without_entry, documents_kept(&kept)
    );
    if answers != rounds * TABS * PER_TAB {
        bail!("{answers} answers for {} queries", rounds * TABS * PER_TAB);
    }
    assert_eq!((failed, stale), (0, 0), "failed and stale answers");
    assert_eq!((found.entries_without_record, found.records_without_entry), (0, 0));
    assert_eq!(
        (documents_kept(&kept), kept.entries_without_record, kept.records_without_entry),
        (MAX_ENTRIES, 0, 0)
    );
    Ok(())
}
