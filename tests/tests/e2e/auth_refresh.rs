//! Refresh-and-retry in the Service Worker (SPEC §3, §5.5–5.6), against the real backend.
//!
//! The page side here is a small JavaScript responder installed by the test, speaking the protocol any
//! client may speak (`refresh-request` → `refresh-reply` on the port, `cachet_core::protocol`): it holds
//! the bearer token in memory, runs `POST /api/refresh` when the token that failed is its current one
//! (one at a time), and answers its current header otherwise. It counts the refreshes it ran.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const BEARER_CONFIG: &str =
    r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true}}}"#;
const COOKIE_CONFIG: &str =
    r#"{"features": {"auth": {"enabled": true, "type": "cookie"}, "graphql": {"enabled": true}}}"#;

/// Defines `listen(test)`: records every broadcast in `test.events` and resolves `test.authChange` with
/// the first `auth-state-change`.
const LISTEN: &str = "const listen = (test) => {
    test.authChange = new Promise((resolve) => {
      new BroadcastChannel('cachet').onmessage = (event) => {
        const message = JSON.parse(event.data);
        test.events.push(message);
        if (message.type === 'auth-state-change') resolve(message);
      };
    });
  };";

/// Logs `user` in with a bearer token kept in `window.cachetTest.auth`, installs the responder
/// (`answer: false` installs one that never answers) and records every broadcast in `cachetTest.events`.
async fn bearer_page(harness: &Harness, user: &str, answer: bool) -> Result<()> {
    let script = format!(
        "const response = await fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({{username: {user}, password: {user} + '-password'}})}});
         const login = await response.json();
         const test = window.cachetTest = {{auth: 'Bearer ' + login.token, first: 'Bearer ' + login.token, refreshes: 0, asked: 0, events: []}};
         listen(test);
         const fingerprint = async (header) => {{
           const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('cachet-auth:' + header));
           return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('').slice(0, 16);
         }};
         let inFlight = null;
         navigator.serviceWorker.addEventListener('message', async (event) => {{
           const message = JSON.parse(event.data);
           if (message.type !== 'refresh-request') return;
           test.asked += 1;
           if (!{answer}) return;
           let authorization = test.auth;
           if (authorization !== null && message.failed !== null && message.failed === await fingerprint(test.auth)) {{
             inFlight = inFlight || (async () => {{
               test.refreshes += 1;
               const refreshed = await fetch('/api/refresh', {{method: 'POST', headers: {{authorization: test.auth}}}});
               if (!refreshed.ok) {{ test.auth = null; return null; }}
               test.auth = 'Bearer ' + (await refreshed.json()).token;
               return test.auth;
             }})().finally(() => {{ inFlight = null; }});
             authorization = await inFlight;
           }}
           event.ports[0].postMessage(JSON.stringify(
             {{v: 1, type: 'refresh-reply', id: message.id, ok: authorization !== null, authorization}}));
         }});
         navigator.serviceWorker.startMessages();
         done(response.status);",
        user = json!(user),
    );
    let status = harness.run_async(&format!("{LISTEN} (async () => {{ {script} }})();")).await?;
    anyhow::ensure!(status == json!(200), "login answered {status}");
    Ok(())
}

/// Sends `count` concurrent `GetTodos` queries marked as authenticated with the page's current token,
/// network-only, and returns `[{status, source, titles | body}]`.
async fn authed_queries(harness: &Harness, count: usize, auth_header: &str) -> Result<Value> {
    let script = format!(
        "const one = () => fetch('/graphql', {{method: 'POST',
            headers: {{'content-type': 'application/json', 'x-cachet-auth': '1', 'x-sw-strategy': 'network-only',
                       ...({auth_header} ? {{authorization: {auth_header}}} : {{}})}},
            body: JSON.stringify({{query: 'query GetTodos {{ todos {{ id title }} }}'}})}})
          .then(async (r) => ({{status: r.status, source: r.headers.get('x-cachet-source'), body: await r.text()}}),
                (e) => ({{error: String(e)}}));
         Promise.all(Array.from({{length: {count}}}, one)).then(done);"
    );
    harness.run_async(&script).await
}

async fn page_state(harness: &Harness) -> Result<Value> {
    harness
        .run_async(
            "done({refreshes: cachetTest.refreshes, asked: cachetTest.asked, events: cachetTest.events});",
        )
        .await
}

/// The page's state once the first `auth-state-change` broadcast arrived.
async fn changed_state(harness: &Harness) -> Result<Value> {
    harness
        .run_async(
            "cachetTest.authChange.then(() =>
               done({refreshes: cachetTest.refreshes, asked: cachetTest.asked, events: cachetTest.events}));",
        )
        .await
}

fn statuses(results: &Value) -> Vec<u64> {
    results
        .as_array()
        .map(|all| all.iter().map(|r| r["status"].as_u64().unwrap_or(0)).collect())
        .unwrap_or_default()
}

fn logouts(state: &Value) -> usize {
    state["events"]
        .as_array()
        .map(|events| {
            events.iter().filter(|e| e["type"] == "auth-state-change" && e["kind"] == "logout").count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_once_for_twenty_concurrent_queries_and_all_are_retried() -> Result<()>
{
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_bare_controlled().await?;
    bearer_page(&harness, "alice", true).await?;
    let create = "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json', authorization: cachetTest.auth},
        body: JSON.stringify({query: 'mutation CreateTodo { createTodo(title: \"milk\") { id } }'})}).then((r) => done(r.status));";
    assert_eq!(harness.run_async(create).await?, json!(200));
    let fresh = authed_queries(&harness, 1, "cachetTest.auth").await?;
    assert_eq!(statuses(&fresh), vec![200], "{fresh}");

    // The SW is stopped in between, as Chromium stops an idle one: nothing of this lives in its memory.
    // Its start module takes the twenty queries; it has no refresh-and-retry, so it leaves each auth
    // failure to the whole engine with the answer it got (`Error::AuthFailureLeft`), which retries
    // without sending the failed query again: the count below is 41, not 61.
    harness.stop_service_workers().await?;
    let expired = harness
        .run_async("fetch('/__test/expire-tokens', {method: 'POST'}).then((r) => done(r.status));")
        .await?;
    assert_eq!(expired, json!(200));
    let results = authed_queries(&harness, 20, "cachetTest.auth").await?;
    assert_eq!(statuses(&results), vec![200; 20], "every caller sees only the successful answer: {results}");
    for result in results.as_array().into_iter().flatten() {
        assert!(result["body"].as_str().unwrap_or_default().contains("milk"), "{result}");
        assert_eq!(result["source"], json!("network"));
    }
    let state = page_state(&harness).await?;
    assert_eq!(state["refreshes"], json!(1), "one refresh for twenty failures: {state}");
    assert_eq!(harness.count("POST /api/refresh"), 1);
    assert_eq!(harness.count("graphql GetTodos"), 1 + 20 + 20, "each failed query was retried exactly once");
    assert_eq!(logouts(&state), 0, "{state}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_answers_every_waiter_with_the_failure_and_announces_one_logout() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_bare_controlled().await?;
    bearer_page(&harness, "bob", true).await?;
    let setup = "Promise.all([fetch('/__test/fail-refresh?on=true', {method: 'POST'}), fetch('/__test/expire-tokens', {method: 'POST'})])
        .then((all) => done(all.map((r) => r.status)));";
    assert_eq!(harness.run_async(setup).await?, json!([200, 200]));
    let results = authed_queries(&harness, 5, "cachetTest.auth").await?;
    assert_eq!(statuses(&results), vec![401; 5], "the original failure reaches every caller: {results}");
    let state = changed_state(&harness).await?;
    assert_eq!(state["refreshes"], json!(1), "{state}");
    assert_eq!(logouts(&state), 1, "one logout for all waiters: {state}");
    assert_eq!(harness.count("POST /api/refresh"), 1);

    // A later failure of the refused token is answered at once: the SW does not ask the page again
    // (it would ask before answering, so `asked` would already have grown when the answer arrives).
    let late = authed_queries(&harness, 1, "cachetTest.first").await?;
    assert_eq!(statuses(&late), vec![401], "{late}");
    let after = page_state(&harness).await?;
    assert_eq!(after["asked"], state["asked"], "no new question for a refused token: {after}");
    assert_eq!(after["refreshes"], json!(1), "{after}");
    assert_eq!(harness.count("POST /api/refresh"), 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_page_times_out_and_no_request_hangs() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_bare_controlled().await?;
    bearer_page(&harness, "alice", false).await?;
    harness
        .run_async("fetch('/__test/expire-tokens', {method: 'POST'}).then((r) => done(r.status));")
        .await?;
    let results = authed_queries(&harness, 3, "cachetTest.auth").await?;
    assert_eq!(statuses(&results), vec![401; 3], "answered with the failure after the timeout: {results}");
    let state = page_state(&harness).await?;
    assert_eq!(state["asked"], json!(1), "one question for the three failures: {state}");
    assert_eq!(harness.count("POST /api/refresh"), 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookie_auth_never_refreshes_and_reports_a_failure_as_logout() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Cookie, COOKIE_CONFIG).await?;
    harness.open_bare_controlled().await?;
    harness.login("bob").await?;
    harness
        .run_async(&format!(
            "{LISTEN} window.cachetTest = {{asked: 0, refreshes: 0, events: []}};
             listen(cachetTest);
             navigator.serviceWorker.addEventListener('message', () => {{ cachetTest.asked += 1; }});
             navigator.serviceWorker.startMessages();
             done(true);"
        ))
        .await?;
    let fresh = authed_queries(&harness, 1, "null").await?;
    assert_eq!(statuses(&fresh), vec![200], "{fresh}");
    harness
        .run_async("fetch('/__test/expire-tokens', {method: 'POST'}).then((r) => done(r.status));")
        .await?;
    let results = authed_queries(&harness, 1, "null").await?;
    assert_eq!(statuses(&results), vec![401], "{results}");
    let state = changed_state(&harness).await?;
    assert_eq!(logouts(&state), 1, "{state}");
    assert_eq!(state["asked"], json!(0), "cookie auth never asks the page to refresh: {state}");
    assert_eq!(harness.count("POST /api/refresh"), 0);
    Ok(())
}
