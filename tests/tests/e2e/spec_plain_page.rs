//! SPEC §1's bundler-free page exactly as SPEC writes it: `/cachet/client-injector.bundle.js`, then
//! `/cachet/cachet-api.bundle.js`, then `cachet.configure({ auth })`, and nothing else (issue 14).
//!
//! - two scripts are enough: the page runs on the app's `cachet.config.json` (carried by the bundle), and
//!   when its Service Worker runs on another config the page says so on the console and follows it;
//! - no user's answer ever reaches another: the worker decides the partition from what it sees (the
//!   request's own `Authorization`, the identity it keeps), whatever the page marked or forgot;
//! - every method of `window.cachet` against the real backend.

use anyhow::{bail, Result};
use cachet_e2e::app::BEARER_CONFIG;
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const GET_TODOS: &str = "query GetTodos { todos { title } }";

/// Records what the pages of this tab write with `console.warn` and `console.info`, from the next
/// navigation on, in `window.__console`.
async fn record_console(harness: &Harness) -> Result<()> {
    let source = "window.__console = [];
      for (const level of ['warn', 'info']) {
        const original = console[level].bind(console);
        console[level] = (...args) => { window.__console.push(level + ': ' + args.join(' ')); original(...args); };
      }";
    harness.devtools("Page.enable", json!({})).await?;
    harness.devtools("Page.addScriptToEvaluateOnNewDocument", json!({ "source": source })).await?;
    Ok(())
}

/// The console lines recorded so far that contain `text`.
async fn console_lines(harness: &Harness, text: &str) -> Result<Vec<String>> {
    let lines: Vec<String> = serde_json::from_value(harness.eval("window.__console").await?)?;
    Ok(lines.into_iter().filter(|line| line.contains(text)).collect())
}

/// Logs `user` in with `POST /api/login` and returns the backend's answer (`{user, expiresAt, token?}`).
async fn login_answer(harness: &Harness, user: &str) -> Result<Value> {
    let script = format!(
        "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({{username: {user}, password: {user} + '-password'}})}})
           .then((r) => r.json()).then(done, (e) => done({{error: String(e)}}));",
        user = json!(user)
    );
    let answer = harness.run_async(&script).await?;
    if answer.get("user").is_none() {
        bail!("logging {user} in answered {answer}");
    }
    Ok(answer)
}

/// `cachet.setAuth(<login answer of user>)` in the page.
async fn set_auth(harness: &Harness, user: &str) -> Result<Value> {
    let answer = login_answer(harness, user).await?;
    let outcome = harness.eval(&format!("cachet.setAuth({answer})")).await?;
    if outcome.get("error").is_some() {
        bail!("setAuth({user}): {outcome}");
    }
    Ok(answer)
}

/// A plain `fetch` of `query` to `/graphql`, as a client that knows nothing of cachet sends it: no
/// cachet header, the given `Authorization` (or none). Returns `{source, titles}`.
async fn plain_fetch(harness: &Harness, query: &str, authorization: Option<&str>) -> Result<Value> {
    let script = format!(
        "const headers = {{'content-type': 'application/json'}};
         if ({authorization} !== null) headers.authorization = {authorization};
         fetch('/graphql', {{method: 'POST', headers, body: JSON.stringify({{query: {query}}})}})
           .then(async (r) => {{ const body = await r.json();
             done({{source: r.headers.get('x-cachet-source'), status: r.status,
                    titles: body.data && body.data.todos ? body.data.todos.map((t) => t.title) : body}}); }},
             (e) => done({{error: String(e)}}));",
        authorization = json!(authorization),
        query = json!(query),
    );
    harness.run_async(&script).await
}

/// `cachet.queryGql(query, {}, {auth: true})`: `{fromCache, titles}`.
async fn query_as_user(harness: &Harness, query: &str) -> Result<Value> {
    harness
        .eval(&format!(
            "cachet.queryGql({query}, {{}}, {{ auth: true }})
               .then((r) => ({{fromCache: r.fromCache, titles: r.data.todos.map((t) => t.title)}}))",
            query = json!(query)
        ))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_scripts_run_the_page_on_the_apps_config() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    record_console(&harness).await?;
    harness.open_plain_page("auth=cookie").await?;
    let page_html = harness.eval("document.documentElement.outerHTML").await?;
    let scripts: Vec<&str> = page_html.as_str().unwrap_or_default().matches("<script src=").collect();
    assert_eq!(scripts.len(), 2, "exactly SPEC's two scripts: {page_html}");

    // The page started on the config the bundle carries (the app's), which is the worker's too.
    let config = harness.eval("cachet.getConfig()").await?;
    assert_eq!(config["source"], json!("bundled"), "{config}");
    assert_eq!(config["config"]["features"]["graphql"]["endpoints"], json!(["/graphql"]));
    assert_eq!(config["config"]["features"]["auth"]["type"], json!("cookie"));
    assert!(console_lines(&harness, "differs from its Service Worker").await?.is_empty());

    // Behaves as the config says: auth routes, GraphQL cached by the worker, the queue.
    assert_eq!(harness.eval("cachet.isAuthUrl('/api/refresh')").await?, json!(true));
    set_auth(&harness, "alice").await?;
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["fromCache"], json!(false));
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["fromCache"], json!(true));
    harness.stop_server().await;
    let queued = harness
        .eval(
            "cachet.mutateGql('mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }', {t: 'later'},
                              {auth: true, queueOffline: true})",
        )
        .await?;
    assert!(queued["queued"].as_u64().is_some(), "queued by the worker: {queued}");
    harness.restart_server().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_config_than_its_worker_says_so_and_follows_the_worker() -> Result<()> {
    // The worker runs on bearer auth; the bundle carries the app's cookie config.
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    record_console(&harness).await?;
    // A page that loads the two scripts and configures nothing: it starts on the bundled (cookie) config.
    harness.open_bare_controlled().await?;
    let loaded = harness
        .run_async(
            "const load = (src) => new Promise((resolve, reject) => {
               const script = document.createElement('script'); script.src = src;
               script.onload = resolve; script.onerror = reject; document.head.append(script); });
             load('/cachet/client-injector.bundle.js').then(() => load('/cachet/cachet-api.bundle.js'))
               .then(() => cachet.ready).then(() => done(true), (e) => done(String(e)));",
        )
        .await?;
    assert_eq!(loaded, json!(true));
    let config = harness.eval("cachet.getConfig()").await?;
    assert_eq!(config["source"], json!("service-worker"), "{config}");
    assert_eq!(config["config"]["features"]["auth"]["type"], json!("bearer"));
    let warnings = console_lines(&harness, "differs from its Service Worker").await?;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("warn: "), "{warnings:?}");
    assert!(
        warnings[0].contains(r#"features.auth.type: "cookie" here, "bearer" there"#),
        "names the key: {warnings:?}"
    );
    assert_eq!(harness.eval("cachet.AUTH_WITH_CREDENTIALS").await?, json!(false), "the bearer adapter now");

    // Configured by hand with GraphQL off: still follows the worker (GraphQL on), and says so.
    let configured = harness
        .eval(
            "cachet.configure({ config: { features: { auth: { enabled: true, type: 'bearer' } } } })
                 .then(() => cachet.getConfig())",
        )
        .await?;
    assert_eq!(configured["source"], json!("service-worker"), "{configured}");
    assert_eq!(configured["config"]["features"]["graphql"]["enabled"], json!(true));
    let warnings = console_lines(&harness, "features.graphql.enabled: false here, true there").await?;
    assert_eq!(warnings.len(), 1, "{warnings:?}");

    // It works as the worker's config says: bearer through the worker, cached in the user's partition,
    // an expired token refreshed once by the worker's refresh-and-retry.
    set_auth(&harness, "alice").await?;
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["fromCache"], json!(false));
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["fromCache"], json!(true));
    harness.test_hook("/__test/expire-tokens").await?;
    let after_expiry = query_as_user(&harness, "query GetTodos { todos { title done } }").await?;
    assert_eq!(after_expiry["fromCache"], json!(false), "{after_expiry}");
    assert_eq!(harness.count("POST /api/refresh"), 1, "one refresh, through the worker");
    Ok(())
}

/// A worker that never tells its config (a build that does not answer `config-request`, or one whose
/// whole engine cannot load to answer it) leaves the page on the config it was given, and the page says
/// so on the console once its wait is over (`service_worker_timeout`, 10 s), naming it. The silence is
/// made in the page, which drops its `config-request`s before they are posted: a worker whose whole
/// engine the server held (this story until session 39) also held every request after its take-over,
/// which a second of quiet begins, and on a loaded machine the page's own wasm came after it (CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_never_tells_its_config_is_named_on_the_console() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    record_console(&harness).await?;
    harness.open_plain_page("auth=cookie").await?;
    // From the next page on, no config request reaches the worker.
    let silence = "const post = ServiceWorker.prototype.postMessage;
      ServiceWorker.prototype.postMessage = function (message, ...rest) {
        if (typeof message === 'string' && JSON.parse(message).type === 'config-request') return;
        return post.call(this, message, ...rest);
      };";
    harness.devtools("Page.addScriptToEvaluateOnNewDocument", json!({ "source": silence })).await?;
    harness.open_plain_page("auth=cookie").await?;
    harness
        .run_async(
            "cachet.queryGql('query GetTodos { todos { title } }').catch(() => undefined); done(true);",
        )
        .await?;
    let line = harness
        .wait_for(
            "the page to say the worker did not tell its config",
            "window.__console.find((line) => line.includes('did not tell its config'))",
        )
        .await?;
    assert_eq!(
        line,
        json!("warn: cachet: the Service Worker did not tell its config within 10000 ms; this page keeps the config in cachet-api.bundle.js")
    );
    assert_eq!(harness.eval("cachet.getConfig()").await?["source"], json!("bundled"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_worker_on_another_config_is_followed_by_the_open_page() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    record_console(&harness).await?;
    harness.open_plain_page("auth=cookie").await?;
    assert_eq!(harness.eval("cachet.getConfig()").await?["source"], json!("bundled"));
    let app_config =
        std::fs::read_to_string(cachet_e2e::workspace_root().join("examples/todo-app/cachet.config.json"))?;
    let mut deployed: Value = serde_json::from_str(&app_config)?;
    deployed["cache"] = json!({"maxEntries": 50});
    harness.redeploy_sw_config(&deployed.to_string())?;
    let changed = harness
        .run_async(
            "navigator.serviceWorker.addEventListener('controllerchange', () => done(true));
             navigator.serviceWorker.getRegistration().then((registration) => registration.update());",
        )
        .await?;
    assert_eq!(changed, json!(true), "the new worker took control");
    let line = harness
        .wait_for(
            "the page to say it follows the new worker",
            "window.__console.find((line) => line.includes('cache.maxEntries: 200 here, 50 there'))",
        )
        .await?;
    assert!(line.as_str().is_some_and(|line| line.starts_with("warn: ")), "{line}");
    let config = harness.eval("cachet.getConfig()").await?;
    assert_eq!(config["source"], json!("service-worker"), "{config}");
    assert_eq!(config["config"]["cache"]["maxEntries"], json!(50));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_users_answer_ever_reaches_another_user() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_plain_page("auth=bearer").await?;

    // Alice, through window.cachet: her secret, cached in her partition.
    let alice = set_auth(&harness, "alice").await?;
    let alice_token = format!("Bearer {}", alice["token"].as_str().unwrap_or_default());
    let created = harness
        .eval(
            "cachet.mutateGql('mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }',
                              {t: \"alice's secret\"}, {auth: true})",
        )
        .await?;
    assert!(created.get("error").is_none(), "{created}");
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["titles"], json!(["alice's secret"]));
    assert_eq!(query_as_user(&harness, GET_TODOS).await?["fromCache"], json!(true));
    // A plain fetch with her token, unmarked: her partition (she vouched for the token).
    let plain = plain_fetch(&harness, GET_TODOS, Some(&alice_token)).await?;
    assert_eq!(plain, json!({"source": "cache", "status": 200, "titles": ["alice's secret"]}));

    // Bob signs in with no purge in between (setAuth over setAuth, as if clearAuth had failed).
    let bob = set_auth(&harness, "bob").await?;
    let bob_token = format!("Bearer {}", bob["token"].as_str().unwrap_or_default());
    let bobs = query_as_user(&harness, GET_TODOS).await?;
    assert_eq!(bobs, json!({"fromCache": false, "titles": []}), "bob's own list, from the server");
    assert_eq!(query_as_user(&harness, GET_TODOS).await?, json!({"fromCache": true, "titles": []}));
    // Plain clients: with bob's token, bob's partition; with alice's token, never bob's partition and
    // never stored (nobody vouched for it now): the server answers her, every time.
    assert_eq!(plain_fetch(&harness, GET_TODOS, Some(&bob_token)).await?["titles"], json!([]));
    for _ in 0..2 {
        let hers = plain_fetch(&harness, GET_TODOS, Some(&alice_token)).await?;
        assert_eq!(hers, json!({"source": "network", "status": 200, "titles": ["alice's secret"]}));
    }
    // No credentials at all while bob is signed in: bob's partition, never a shared one.
    let anonymous = plain_fetch(&harness, GET_TODOS, None).await?;
    assert_eq!(anonymous, json!({"source": "cache", "status": 200, "titles": []}), "bob's entry");

    // What is stored: alice's secret only ever under alice's partition.
    let partition = |answer: &Value| {
        let id = match &answer["user"]["id"] {
            Value::String(id) => id.clone(),
            other => other.to_string(),
        };
        cachet_core::cache_key::partition_id(&id)
    };
    let (alice_partition, bob_partition) = (partition(&alice), partition(&bob));
    let stored = harness.stored_when(|stored| stored.text().contains("alice's secret")).await?;
    let entries = stored.records(&format!("cache:{}", cachet_core::engine::key::DOCUMENT_CACHE));
    let holding_secret: Vec<&Value> =
        entries.iter().filter(|entry| entry.to_string().contains("alice's secret")).collect();
    assert!(!holding_secret.is_empty(), "alice's entry is there: {entries:?}");
    for entry in holding_secret {
        let url = entry[0].as_str().unwrap_or_default();
        assert!(url.contains(&format!("/{alice_partition}/")), "{url} is not in alice's partition");
        assert!(!url.contains(&bob_partition) && !url.contains("/anonymous/"), "{url}");
    }

    // Nobody signed in (clearAuth): a token is never cached, and nothing earlier is served for it.
    harness.eval("cachet.clearAuth()").await?;
    for token in [&alice_token, &bob_token] {
        for _ in 0..2 {
            let answer = plain_fetch(&harness, GET_TODOS, Some(token)).await?;
            assert_eq!(answer["source"], json!("network"), "{token}: {answer}");
        }
    }
    let bob_again = plain_fetch(&harness, GET_TODOS, Some(&bob_token)).await?;
    assert_eq!(bob_again["titles"], json!([]), "0 of alice's answers reached bob");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_worker_cannot_tie_to_the_signed_in_user_is_never_cached() -> Result<()> {
    // A bare page that never tells the worker who is signed in (urql with its own auth, say): requests
    // carrying a token are answered by the server every time, for every user.
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_bare_controlled().await?;
    let alice = login_answer(&harness, "alice").await?;
    let alice_token = format!("Bearer {}", alice["token"].as_str().unwrap_or_default());
    let bob = login_answer(&harness, "bob").await?;
    let bob_token = format!("Bearer {}", bob["token"].as_str().unwrap_or_default());
    let create = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json', authorization: {alice_token}}},
           body: JSON.stringify({{query: 'mutation {{ createTodo(title: \"alice only\") {{ id }} }}'}})}})
           .then((r) => done(r.status));",
        alice_token = json!(alice_token)
    );
    assert_eq!(harness.run_async(&create).await?, json!(200));
    let before = harness.count("graphql GetTodos");
    for _ in 0..2 {
        let hers = plain_fetch(&harness, GET_TODOS, Some(&alice_token)).await?;
        assert_eq!(hers, json!({"source": "network", "status": 200, "titles": ["alice only"]}));
        let his = plain_fetch(&harness, GET_TODOS, Some(&bob_token)).await?;
        assert_eq!(his, json!({"source": "network", "status": 200, "titles": []}));
    }
    assert_eq!(harness.count("graphql GetTodos") - before, 4, "every one reached the server");
    let stored = harness.stored().await?;
    assert!(!stored.text().contains("alice only"), "nothing stored: {}", stored.text());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_of_window_cachet_against_the_real_backend() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_plain_page("auth=cookie").await?;
    harness
        .eval("(window.__updated = [], window.addEventListener('cachet:cache-updated', (e) => window.__updated.push(e.detail)), true)")
        .await?;

    // AUTH_WITH_CREDENTIALS, isAuthUrl: from the auth type and the config's routes.
    assert_eq!(harness.eval("cachet.AUTH_WITH_CREDENTIALS").await?, json!(true), "cookie auth");
    assert_eq!(harness.eval("cachet.isAuthUrl('/api/me')").await?, json!(true));
    assert_eq!(harness.eval("cachet.isAuthUrl('/api/me/avatar?x=1')").await?, json!(true));
    assert_eq!(harness.eval("cachet.isAuthUrl('/graphql')").await?, json!(false));
    assert_eq!(harness.eval("cachet.isAuthUrl('https://elsewhere.invalid/api/me')").await?, json!(false));

    // Before a login: getAuth asks the server last (GET /api/me answers 401: null), nothing is valid.
    assert_eq!(harness.eval("cachet.getAuth()").await?, Value::Null);
    assert_eq!(harness.count("GET /api/me"), 1, "fetchUser was the last resort");
    assert_eq!(harness.eval("cachet.isAuthValid()").await?, json!(false));
    assert_eq!(harness.eval("cachet.ensureValidAuth()").await?, Value::Null);

    set_auth(&harness, "alice").await?;
    let auth = harness.eval("cachet.getAuth()").await?;
    assert_eq!(auth["user"]["username"], json!("alice"), "{auth}");
    assert_eq!(harness.eval("cachet.isAuthValid()").await?, json!(true));
    let ensured = harness.eval("cachet.ensureValidAuth()").await?;
    assert_eq!(ensured["user"]["username"], json!("alice"), "cookie auth is returned as it is: {ensured}");
    let state = harness.eval("cachet.getAuthState()").await?;
    assert_eq!((state["authenticated"].clone(), state["online"].clone()), (json!(true), json!(true)));

    // fetchWithCache: the result's shape, a strategy, tags; auth routes never cached.
    let first = harness
        .eval("cachet.fetchWithCache('/api/hello', { strategy: 'cache-first', tags: ['hello'] })")
        .await?;
    assert_eq!(
        (first["status"].clone(), first["ok"].clone(), first["fromCache"].clone()),
        (json!(200), json!(true), json!(false)),
        "{first}"
    );
    assert!(first["data"].is_object() && first["headers"]["x-cachet-source"] == json!("network"), "{first}");
    let second = harness.eval("cachet.fetchWithCache('/api/hello', { strategy: 'cache-first' })").await?;
    assert_eq!((second["fromCache"].clone(), second["data"].clone()), (json!(true), first["data"].clone()));
    // The answer's headers, by name (the first's mark is checked above): the second came from the cache.
    assert_eq!(second["headers"]["x-cachet-source"], json!("cache"), "{second}");
    assert!(first["headers"]["content-type"].as_str().is_some_and(|t| t.contains("json")), "{first}");
    for _ in 0..2 {
        let me =
            harness.eval("cachet.fetchWithCache('/api/me', { auth: true, strategy: 'cache-first' })").await?;
        assert_eq!(
            (me["data"]["user"]["username"].clone(), me["fromCache"].clone()),
            (json!("alice"), json!(false))
        );
    }

    // fetchWithGql: the whole result; invalidateByTag reaches the worker's entries.
    let gql = "cachet.fetchWithGql('query GetTodos { todos { title } }', {}, { auth: true })";
    let result = harness.eval(gql).await?;
    assert_eq!(
        result,
        json!({"result": {"data": {"todos": []}}, "fromCache": false, "stale": false, "status": 200, "queued": null})
    );
    assert_eq!(harness.eval(gql).await?["fromCache"], json!(true));
    assert_eq!(harness.count("graphql GetTodos"), 1, "two calls, one request");
    // (The example page re-runs its own list on `cache-invalidated`: another GetTodos, another text.)
    assert_eq!(harness.eval("cachet.invalidateByTag('todos')").await?, Value::Null);
    assert_eq!(harness.eval(gql).await?["fromCache"], json!(false), "the worker's entry is gone");

    // A stale-while-revalidate re-fetch that brings changed content fires cachet:cache-updated on window.
    let swr = "cachet.fetchWithCache('/api/hello?swr=1', { strategy: 'stale-while-revalidate' })";
    assert_eq!(harness.eval(swr).await?["fromCache"], json!(false));
    assert_eq!(harness.eval(swr).await?["fromCache"], json!(true), "the stale copy at once");
    let updated = harness.wait_for("cachet:cache-updated", "window.__updated[0]").await?;
    assert!(updated["url"].as_str().is_some_and(|url| url.ends_with("/api/hello?swr=1")), "{updated}");

    // clearMemoryAuth: memory only; the persisted record (user, no token) stays in IndexedDB.
    assert_eq!(harness.eval("cachet.clearMemoryAuth()").await?, Value::Null);
    assert_eq!(harness.eval("cachet.isAuthValid()").await?, json!(false));
    let stored = harness.stored().await?;
    let records = stored.records("cachet-client/auth");
    assert_eq!(records.len(), 1, "{:?}", stored.counts());
    let record: Value = serde_json::from_str(records[0].as_str().unwrap_or_default())?;
    assert_eq!(record["user"]["username"], json!("alice"), "{record}");
    let from_storage = harness.eval("cachet.getAuth()").await?;
    assert_eq!(from_storage["user"]["username"], json!("alice"), "getAuth reads the record: {from_storage}");

    // clearAuth: everything.
    assert_eq!(harness.eval("cachet.clearAuth()").await?, Value::Null);
    assert!(harness.stored().await?.records("cachet-client/auth").is_empty());
    Ok(())
}
