//! The bundler-free `window.cachet` on the plain example page, in two windows of one browser session
//! (bearer backend): a login, a refresh and a clear in one window reach the other and fire
//! `sw-auth-state-change` there with the right type; one refresh serves both windows; the token never
//! reaches storage; queries go through the Service Worker and are cached in the user's partition; a
//! mutation in one window invalidates the other's query (cookie backend).

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use fantoccini::wd::WindowHandle;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const GET_TODOS: &str = "query GetTodos { todos { title } }";

/// Opens the plain page in the current window, waits for `window.cachet` and for the Service Worker to
/// control the page, and records the SPEC §6 events in `window.__seen`.
async fn open_plain_page(harness: &Harness) -> Result<()> {
    harness.open_plain_page("auth=bearer").await?;
    harness
        .run_async(
            "window.__seen = [];
             for (const name of ['sw-auth-state-change', 'cache-invalidated', 'cachet:cache-updated']) {
               window.addEventListener(name, (event) => window.__seen.push({name, detail: event.detail}));
             }
             done(true);",
        )
        .await?;
    Ok(())
}

/// Waits for the `sw-auth-state-change` of `kind` in the current window (already seen, or the next one).
async fn auth_event(harness: &Harness, kind: &str) -> Result<Value> {
    let script = format!(
        "const kind = {kind};
         const seen = window.__seen.find((e) => e.name === 'sw-auth-state-change' && e.detail.type === kind);
         if (seen) {{ done(seen.detail); }} else {{
           window.addEventListener('sw-auth-state-change', (event) => {{
             if (event.detail.type === kind) done(event.detail); }});
         }}",
        kind = json!(kind)
    );
    harness.run_async(&script).await
}

/// Replaces the page's adapter with JavaScript functions: the SPEC's bearer behaviour, refreshes counted
/// in `window.__refreshes`.
async fn configure_js_adapter(harness: &Harness) -> Result<()> {
    let configured = harness
        .run_async(
            "window.__refreshes = 0;
             cachet.configure({ auth: {
               type: 'bearer',
               getHeaders: (auth) => (auth && auth.token ? { Authorization: `Bearer ${auth.token}` } : {}),
               refresh: async (auth) => {
                 window.__refreshes += 1;
                 const r = await fetch('/api/refresh', { method: 'POST', headers: { Authorization: `Bearer ${auth.token}` } });
                 return r.ok ? r.json() : null;
               },
               fetchUser: async () => null,
             } }).then(() => done(cachet.AUTH_WITH_CREDENTIALS), (error) => done(String(error)));",
        )
        .await?;
    if configured != json!(false) {
        bail!("configure with JavaScript functions failed: {configured}");
    }
    Ok(())
}

async fn switch(harness: &Harness, window: &WindowHandle) -> Result<()> {
    Ok(harness.client.switch_to_window(window.clone()).await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_refresh_and_clear_in_one_window_reach_the_other() -> Result<()> {
    let harness = Harness::start(AuthMode::Bearer).await?;
    open_plain_page(&harness).await?;
    configure_js_adapter(&harness).await?;
    let first = harness.client.window().await?;
    let second = harness.client.new_window(false).await?.handle;
    switch(&harness, &second).await?;
    open_plain_page(&harness).await?;
    configure_js_adapter(&harness).await?;

    // Login in the first window; the token expires in 10 s, within the 30 s refresh margin.
    switch(&harness, &first).await?;
    let token = harness
        .eval(
            "fetch('/api/login', {method: 'POST', headers: {'content-type': 'application/json'},
           body: JSON.stringify({username: 'alice', password: 'alice-password'})})
           .then((r) => r.json())
           .then((body) => cachet.setAuth({...body, expiresAt: Date.now() + 10000}).then(() => body.token))",
        )
        .await?;
    assert!(token.as_str().is_some_and(|token| token.len() > 10), "{token}");
    assert_eq!(auth_event(&harness, "login").await?, json!({"type": "login"}), "the acting window hears it");

    switch(&harness, &second).await?;
    assert_eq!(auth_event(&harness, "login").await?, json!({"type": "login"}));
    let state = harness.eval("cachet.getAuthState()").await?;
    assert_eq!(state["authenticated"], json!(true));
    assert_eq!(state["auth"]["token"], token, "the token reached the other window, in memory");
    assert_eq!(state["auth"]["user"]["username"], json!("alice"));
    let query = format!("cachet.queryGql({}, {{}}, {{auth: true}})", json!(GET_TODOS));
    assert_eq!(
        harness.eval(&query).await?,
        json!({"data": {"todos": []}, "fromCache": false, "stale": false})
    );
    assert_eq!(
        harness.eval(&query).await?["fromCache"],
        json!(true),
        "cached in alice's partition by the SW"
    );

    // Both windows find the token about to expire: the first starts refreshing, the second asks while it
    // runs (WebDriver runs one script at a time, so the first one's promise is kept and awaited later).
    switch(&harness, &first).await?;
    harness.run_async("window.__refreshed = cachet.ensureValidAuth(); done(true);").await?;
    switch(&harness, &second).await?;
    let from_second = harness.eval("cachet.ensureValidAuth().then((auth) => auth.token)").await?;
    switch(&harness, &first).await?;
    let from_first = harness.eval("window.__refreshed.then((auth) => auth.token)").await?;
    assert_ne!(from_first, token, "a new token");
    assert_eq!(from_first, from_second, "both windows hold the one new token");
    assert_eq!(harness.count("POST /api/refresh"), 1, "one refresh for two windows");
    assert_eq!(harness.eval("Promise.resolve(window.__refreshes)").await?, json!(1), "by the JS adapter");
    switch(&harness, &second).await?;
    assert_eq!(auth_event(&harness, "refresh").await?, json!({"type": "refresh"}));
    let fresh =
        format!("cachet.queryGql({}, {{}}, {{auth: true, strategy: 'network-only'}})", json!(GET_TODOS));
    assert_eq!(harness.eval(&fresh).await?["data"], json!({"todos": []}), "the new token works");

    let stored = harness.stored().await?.text();
    let token_text = from_first.as_str().unwrap_or_default();
    assert!(stored.contains("alice"), "the user is persisted: {stored}");
    for secret in [token.as_str().unwrap_or_default(), token_text] {
        assert!(!stored.contains(secret), "a token reached storage: {stored}");
    }

    // Clear in the second window logs the first out and purges the SW's caches.
    assert_eq!(harness.eval("cachet.clearAuth()").await?, Value::Null);
    switch(&harness, &first).await?;
    assert_eq!(auth_event(&harness, "clear").await?, json!({"type": "clear"}));
    let state = harness.eval("cachet.getAuthState()").await?;
    assert_eq!((state["authenticated"].clone(), state["auth"].clone()), (json!(false), Value::Null));
    let names = harness
        .eval("caches.keys().then((names) => names.filter((n) => !/^cachet-(sw-wasm|shell)-/.test(n)))");
    assert_eq!(
        names.await?,
        json!([]),
        "clear-all purged every cache of answers (the worker's wasm and the app shell stay)"
    );
    assert_eq!(harness.eval(&query).await?, json!({"error": "unauthorized"}), "no token, no data");

    // One event per change and window, whoever announced it (the other window, or the Service Worker).
    let kinds = "Promise.resolve(window.__seen.filter((e) => e.name === 'sw-auth-state-change').map((e) => e.detail.type))";
    assert_eq!(harness.eval(kinds).await?, json!(["login", "refresh", "clear"]));
    switch(&harness, &second).await?;
    assert_eq!(harness.eval(kinds).await?, json!(["login", "refresh", "clear"]));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_in_one_window_invalidates_the_query_of_the_other() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    open_plain_page(&harness).await?;
    let first = harness.client.window().await?;
    let login = "fetch('/api/login', {method: 'POST', headers: {'content-type': 'application/json'},
                   body: JSON.stringify({username: 'bob', password: 'bob-password'})})
                 .then((r) => r.json()).then((body) => cachet.setAuth(body))";
    harness.eval(login).await?;
    let state = harness.eval("cachet.getAuthState()").await?;
    assert_eq!(state["auth"]["token"], Value::Null, "cookie auth holds no token");
    assert_eq!(state["auth"]["user"]["username"], json!("bob"));
    let query = format!("cachet.queryGql({}, {{}}, {{auth: true}})", json!(GET_TODOS));
    assert_eq!(harness.eval(&query).await?["fromCache"], json!(false));
    assert_eq!(harness.eval(&query).await?["fromCache"], json!(true));

    let second = harness.client.new_window(false).await?.handle;
    switch(&harness, &second).await?;
    open_plain_page(&harness).await?;
    let state = harness.eval("cachet.getAuthState()").await?;
    assert_eq!(
        state["authenticated"],
        json!(true),
        "a new window knows bob from IndexedDB (the cookie is the browser's)"
    );
    let mutation =
        "cachet.mutateGql('mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }',
                      {title: 'from the other window'}, {auth: true})";
    assert!(harness.eval(mutation).await?["data"]["createTodo"]["id"].is_string());

    switch(&harness, &first).await?;
    let invalidated = harness
        .run_async(
            "const seen = window.__seen.find((e) => e.name === 'cache-invalidated');
             if (seen) { done(seen.detail); } else {
               window.addEventListener('cache-invalidated', (event) => done(event.detail)); }",
        )
        .await?;
    assert_eq!(invalidated, json!({"tags": ["todo", "todos"]}));
    // The page itself re-runs its query on `cache-invalidated`, so this one may be answered by the entry
    // that re-run stored: either way it holds the new todo, never the stale list.
    let again = harness.eval(&query).await?;
    assert_eq!(again["data"], json!({"todos": [{"title": "from the other window"}]}));
    Ok(())
}
