//! One request for every tab (issue 35 item 3): identical queries in flight from several tabs share one
//! network call in the Service Worker (`cachet_core::engine::flights`), each tab getting its own answer.
//! Four tabs send the same 50 queries at once to the real backend, slowed so that the calls overlap: the
//! server counts one request per distinct query, and most answers in the later tabs are the shared
//! network answer (not a cache hit after the first tab's store).

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

const QUERIES: usize = 50;
const TABS: usize = 4;

/// In the current tab: `window.__coalesced`, a promise of the sources of the 50 queries' answers, sent
/// when `go` says so (`'now'`: at once; `'channel'`: on a message of the `coalesce-go` channel).
async fn arm(harness: &Harness, go: &str) -> Result<()> {
    let script = format!(
        "const send = () => Promise.all(Array.from({{length: {QUERIES}}}, (_, i) =>
           fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'}},
             body: JSON.stringify({{query: 'query Coalesce' + i + ' {{ todos {{ id }} }}'}})}})
             .then(async (r) => {{ const body = await r.json();
               return r.status === 200 && body.data ? r.headers.get('x-cachet-source') : 'failed ' + r.status; }})));
         if ({go} === 'now') {{
           window.__coalesced = send();
           new BroadcastChannel('coalesce-go').postMessage('go');
         }} else {{
           window.__coalesced = new Promise((resolve) => {{
             const channel = new BroadcastChannel('coalesce-go');
             channel.onmessage = () => resolve(send());
           }});
         }}
         done(true);",
        go = json!(go)
    );
    if harness.run_async(&script).await? != json!(true) {
        bail!("arming the tab failed");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_tabs_sending_the_same_queries_cost_the_server_one_request_each() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.login("alice").await?;
    let mut tabs = vec![harness.client.window().await?];
    arm(&harness, "channel").await?;
    for _ in 1..TABS {
        harness.open_second_tab().await?;
        tabs.push(harness.client.window().await?);
        if tabs.len() < TABS {
            arm(&harness, "channel").await?;
        }
    }
    // Every answer waits 0.6 s at the server (the browser sends at most six at once): the calls overlap.
    harness.test_hook("/__test/slow-graphql?ms=600").await?;
    arm(&harness, "now").await?;

    let mut from_network = 0;
    for tab in &tabs {
        harness.client.switch_to_window(tab.clone()).await?;
        let sources: Vec<String> =
            serde_json::from_value(harness.run_async("window.__coalesced.then(done);").await?)?;
        assert_eq!(sources.len(), QUERIES);
        for source in &sources {
            assert!(source == "network" || source == "cache", "an answer failed: {sources:?}");
        }
        from_network += sources.iter().filter(|source| *source == "network").count();
    }
    for query in 0..QUERIES {
        assert_eq!(
            harness.count(&format!("graphql Coalesce{query}")),
            1,
            "Coalesce{query} reached the server more than once"
        );
    }
    // Shared, not merely cached after the first store: more network answers than distinct queries.
    assert!(
        from_network > QUERIES,
        "only {from_network} answers from the network: the calls did not overlap"
    );
    Ok(())
}
