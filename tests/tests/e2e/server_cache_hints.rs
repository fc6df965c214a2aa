//! The server's cache hints (issue 35 item 2), end to end: the example backend computes `Cache-Control`
//! with async-graphql's `cache_control` on its fields, and the Service Worker follows it within what the
//! app configured: `motd` (`max-age=600`) is served from the store, `serverTime` (`no-cache`) is asked
//! again each time, `todoCount` (`max-age=60, private`) is never stored in the shared partition (nobody
//! signed in at the worker) and is stored in the user's partition once the page tells the worker who is
//! signed in. The devtools snapshot shows each entry's partition (`anonymous`: the shared one).

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// `query <name> { <field> }` posted with a plain `fetch`: `{status, source, cacheControl, notStored}`.
async fn ask(harness: &Harness, name: &str, field: &str) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({{query: {query}}})}})
           .then((r) => done({{status: r.status, source: r.headers.get('x-cachet-source'),
             cacheControl: r.headers.get('cache-control'), notStored: r.headers.get('x-cachet-not-stored')}}),
             (e) => done({{error: String(e)}}));",
        query = json!(format!("query {name} {{ {field} }}"))
    );
    harness.run_async(&script).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_hints_set_each_entrys_life_and_partition() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_plain_page("auth=cookie").await?;
    // Signed in at the server only (a cookie): the worker knows nobody, its partition is the shared one.
    harness.login("alice").await?;

    let motd = ask(&harness, "Motd", "motd").await?;
    assert_eq!(
        motd,
        json!({"status": 200, "source": "network", "cacheControl": "max-age=600", "notStored": null})
    );
    assert_eq!(ask(&harness, "Motd", "motd").await?["source"], json!("cache"), "fresh for ten minutes");
    assert_eq!(harness.count("graphql Motd"), 1);

    let clock = ask(&harness, "Clock", "serverTime").await?;
    assert_eq!(clock["cacheControl"], json!("no-cache"), "{clock}");
    assert_eq!(ask(&harness, "Clock", "serverTime").await?["source"], json!("network"), "never fresh");
    assert_eq!(harness.count("graphql Clock"), 2);

    let count = ask(&harness, "Count", "todoCount").await?;
    assert_eq!(
        count,
        json!({"status": 200, "source": "network", "cacheControl": "max-age=60, private", "notStored": "server-private"})
    );
    assert_eq!(ask(&harness, "Count", "todoCount").await?["source"], json!("network"));

    // The page tells the worker who is signed in: alice's answer goes to her partition.
    harness.set_auth("alice").await?;
    assert_eq!(ask(&harness, "Count", "todoCount").await?["notStored"], json!(null));
    assert_eq!(ask(&harness, "Count", "todoCount").await?["source"], json!("cache"));
    assert_eq!(harness.count("graphql Count"), 3);

    let snapshot = harness.eval("cachet.getSnapshot({})").await?;
    let entries = snapshot["entries"]["items"].as_array().cloned().unwrap_or_default();
    let partition_of = |request: &str| {
        entries
            .iter()
            .find(|entry| entry["request"] == json!(request))
            .map(|entry| entry["partition"].clone())
    };
    // The shared partition's segment is `anonymous`; alice's is the identity the page gave the worker.
    assert_eq!(partition_of("Motd"), Some(json!("anonymous")), "{snapshot}");
    assert_eq!(partition_of("Count"), Some(snapshot["identity"]["partition"].clone()), "{snapshot}");
    assert_ne!(snapshot["identity"]["partition"], json!("anonymous"));
    Ok(())
}
