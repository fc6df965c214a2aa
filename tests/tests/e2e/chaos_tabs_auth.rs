//! Concurrency across tabs (issue 20): four windows of the plain page share one bearer session
//! (`window.cachet`, the JavaScript adapter refreshing with `POST /api/refresh`). The server expires every
//! token at once, then each window sends 50 authenticated GraphQL queries at once (200 in all, each its
//! own document, network-only): every one must succeed, after exactly one refresh. Then the refresh
//! endpoint fails and the tokens expire again: the next 200 requests must all settle (none left waiting
//! 10 s after the last was sent), and every window must end logged out.
//!
//! Prints `CHAOS-SUMMARY` lines (`cargo xtask chaos` writes them into RELIABILITY.md).

use anyhow::{bail, Result};
use cachet_e2e::app::BEARER_CONFIG;
use cachet_e2e::Harness;
use fantoccini::wd::WindowHandle;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const TABS: usize = 4;
const PER_TAB: usize = 50;

/// Opens the plain page in the current window with the JavaScript bearer adapter.
async fn open_tab(harness: &Harness) -> Result<()> {
    harness.open_plain_page("auth=bearer").await?;
    let configured = harness
        .run_async(
            "cachet.configure({ auth: {
               type: 'bearer',
               getHeaders: (auth) => (auth && auth.token ? { Authorization: `Bearer ${auth.token}` } : {}),
               refresh: async (auth) => {
                 const r = await fetch('/api/refresh', { method: 'POST', headers: { Authorization: `Bearer ${auth.token}` } });
                 return r.ok ? r.json() : null;
               },
               fetchUser: async () => null,
             } }).then(() => done(true), (error) => done(String(error)));",
        )
        .await?;
    if configured != json!(true) {
        bail!("configure failed: {configured}");
    }
    Ok(())
}

/// Sends this window's `PER_TAB` queries at once; `window.sent` settles to `[{ok, error}]`.
fn fire(round: &str) -> String {
    format!(
        "window.sent = Promise.all(Array.from({{length: {PER_TAB}}}, (_, i) =>
           cachet.queryGql('query GetTodos {{ todos {{ id }} {round}' + i + ': __typename }}', {{}},
             {{auth: true, strategy: 'network-only'}})
             .then((r) => ({{ok: !!(r && r.data && r.data.todos)}}), (e) => ({{ok: false, error: String(e)}}))));
         window.sentAt = Date.now(); done(true);"
    )
}

async fn switch(harness: &Harness, tab: &WindowHandle) -> Result<()> {
    Ok(harness.client.switch_to_window(tab.clone()).await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_tabs_whose_tokens_expire_together_refresh_once_or_all_log_out() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    open_tab(&harness).await?;
    let mut tabs = vec![harness.client.window().await?];
    for _ in 1..TABS {
        let tab = harness.client.new_window(false).await?.handle;
        switch(&harness, &tab).await?;
        open_tab(&harness).await?;
        tabs.push(tab);
    }
    switch(&harness, &tabs[0]).await?;
    let login = harness
        .run_async(
            "fetch('/api/login', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({username: 'alice', password: 'alice-password'})})
             .then((r) => r.json()).then((body) => cachet.setAuth(body)).then(() => done(true), (e) => done(String(e)));",
        )
        .await?;
    assert_eq!(login, json!(true));
    for tab in &tabs {
        switch(&harness, tab).await?;
        let state = harness.run_async("cachet.getAuthState().then((s) => done(s.authenticated));").await?;
        assert_eq!(state, json!(true), "every tab holds the session");
    }

    // 1. Every token expires at once; 200 requests; one refresh.
    harness.test_hook("/__test/expire-tokens").await?;
    let refreshes_before = harness.count("POST /api/refresh");
    for tab in &tabs {
        switch(&harness, tab).await?;
        harness.run_async(&fire("a")).await?;
    }
    let mut succeeded = 0;
    for tab in &tabs {
        switch(&harness, tab).await?;
        let results = harness.run_async("window.sent.then(done);").await?;
        if let Some(failure) = results.as_array().into_iter().flatten().find(|r| r["ok"] != json!(true)) {
            println!("a request failed: {failure}");
        }
        succeeded += results.as_array().into_iter().flatten().filter(|r| r["ok"] == json!(true)).count();
    }
    let refreshes = harness.count("POST /api/refresh") - refreshes_before;
    println!(
        "CHAOS-SUMMARY tabs-auth tokens-expired tabs={TABS} requests={} succeeded={succeeded} refreshes={refreshes}",
        TABS * PER_TAB
    );

    // 2. The refresh endpoint fails; every token expires again: all settle, every tab logs out.
    harness.test_hook("/__test/fail-refresh?on=true").await?;
    harness.test_hook("/__test/expire-tokens").await?;
    for tab in &tabs {
        switch(&harness, tab).await?;
        harness.run_async(&fire("b")).await?;
    }
    let (mut waiting, mut settled_ok) = (0, 0);
    let mut logged_out = 0;
    for tab in &tabs {
        switch(&harness, tab).await?;
        // Settled, or still waiting 10 s after this window sent its requests.
        let results = harness
            .run_async(
                "const left = Math.max(0, window.sentAt + 10000 - Date.now());
                 Promise.race([window.sent, new Promise((r) => setTimeout(() => r(null), left))]).then(done);",
            )
            .await?;
        match results {
            Value::Array(results) => {
                settled_ok += results.iter().filter(|r| r["ok"] == json!(true)).count();
            }
            _ => waiting += PER_TAB,
        }
        let state = harness.run_async("cachet.getAuthState().then((s) => done(s.authenticated));").await?;
        if state == json!(false) {
            logged_out += 1;
        }
    }
    println!(
        "CHAOS-SUMMARY tabs-auth refresh-failing tabs={TABS} requests={} succeeded={settled_ok} left_waiting_after_10s={waiting} tabs_logged_out={logged_out}",
        TABS * PER_TAB
    );
    assert_eq!((succeeded, refreshes), (TABS * PER_TAB, 1), "all succeed after exactly one refresh");
    assert_eq!((waiting, logged_out), (0, TABS), "none left waiting, every tab logged out");
    Ok(())
}
