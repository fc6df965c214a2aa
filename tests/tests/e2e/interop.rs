//! The interop matrix (issue 31): the core stories against the GraphQL servers people run, each with its
//! defaults (Apollo Server 5, graphql-yoga 5, the GraphQL-over-HTTP reference server `graphql-http`; the
//! example's async-graphql backend runs the same stories in `spec_plain_page` and `graphql_document_cache`),
//! through the clients people use (`window.cachet` on SPEC's plain page, a plain `fetch`, urql, Apollo
//! Client, graphql-request), in Chromium.
//!
//! Each server's run writes its rows to `target/interop/<server>.json`; `cargo xtask test` renders them
//! into docs/status.md's matrix. A story that fails is a failed test: the table only ever says what ran.

use anyhow::{bail, ensure, Context, Result};
use cachet_e2e::{Browser, Foreign, ForeignServer, Harness};
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// The Service Worker's config: GraphQL on, bearer auth (the plain page configures its adapter).
const CONFIG: &str = r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#;

/// `config` with `features.graphql.honorNoStore` on.
const HONOR_NO_STORE: &str = r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true, "endpoints": ["/graphql"], "honorNoStore": true}}}"#;

const CREATE_TODO: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";

/// A backend of the matrix: a foreign server, or the example's own (async-graphql).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Own,
    Foreign(Foreign),
}

impl Backend {
    const ALL: [Backend; 4] = [
        Backend::Foreign(Foreign::Apollo),
        Backend::Foreign(Foreign::Yoga),
        Backend::Foreign(Foreign::GraphqlHttp),
        Backend::Own,
    ];

    fn name(self) -> &'static str {
        match self {
            Backend::Own => "todo-backend",
            Backend::Foreign(foreign) => foreign.name(),
        }
    }
}

/// One backend in the browser: the harness and what the stories ask of the server.
struct Matrix {
    harness: Harness,
    backend: Backend,
}

impl Matrix {
    async fn start(browser: Browser, backend: Backend, config: &str) -> Result<Self> {
        let harness = match backend {
            Backend::Own => Harness::start_with_config_in(browser, AuthMode::Bearer, config).await?,
            Backend::Foreign(foreign) => Harness::start_foreign_in(browser, foreign, config).await?,
        };
        if backend == Backend::Own {
            // The foreign clients' bundle, which a foreign server serves itself, among the app's files.
            let served = harness.static_dir().context("the served app")?.join("__interop/clients.js");
            let script = cachet_e2e::workspace_root().join("tests/interop/server.mjs");
            let status = std::process::Command::new("node")
                .arg(script)
                .arg("--write-clients")
                .arg(&served)
                .status()?;
            ensure!(status.success(), "writing the clients' bundle: {status}");
        }
        Ok(Matrix { harness, backend })
    }

    fn foreign(&self) -> Result<&ForeignServer> {
        self.harness.foreign().context("a foreign server")
    }

    /// How many requests of operation `name` reached the server so far.
    async fn operations(&self, name: &str) -> Result<u64> {
        match self.backend {
            Backend::Own => Ok(self.harness.count(&format!("graphql {name}"))),
            Backend::Foreign(_) => {
                Ok(self.foreign()?.counts().await?["operations"][name].as_u64().unwrap_or(0))
            }
        }
    }

    /// How many refreshes the server answered so far.
    async fn refreshes(&self) -> Result<u64> {
        match self.backend {
            Backend::Own => Ok(self.harness.count("POST /api/refresh")),
            Backend::Foreign(_) => {
                Ok(self.foreign()?.counts().await?["routes"]["POST /api/refresh"].as_u64().unwrap_or(0))
            }
        }
    }

    /// Every token the server issued expires now.
    async fn expire_tokens(&self) -> Result<()> {
        match self.backend {
            Backend::Own => self.harness.test_hook("/__test/expire-tokens").await.map(drop),
            Backend::Foreign(_) => self.foreign()?.hook("/__interop/expire-tokens", json!({})).await,
        }
    }

    /// From now on the server refuses (`fail`) or grants every refresh.
    async fn fail_refresh(&self, fail: bool) -> Result<()> {
        match self.backend {
            Backend::Own => {
                self.harness.test_hook(&format!("/__test/fail-refresh?on={fail}")).await.map(drop)
            }
            Backend::Foreign(_) => {
                self.foreign()?.hook("/__interop/fail-refresh", json!({"fail": fail})).await
            }
        }
    }

    /// The browser can (not) reach the server; the server keeps its data either way (the example
    /// backend is stopped and started again on its database, a foreign one cuts every connection).
    async fn set_reachable(&mut self, reachable: bool) -> Result<()> {
        match (self.backend, reachable) {
            (Backend::Own, false) => {
                self.harness.stop_server().await;
                Ok(())
            }
            (Backend::Own, true) => self.harness.restart_server().await,
            (Backend::Foreign(_), _) => {
                self.foreign()?.hook("/__interop/unreachable", json!({"unreachable": !reachable})).await
            }
        }
    }

    /// The titles of `user`'s todos as the server holds them, oldest first.
    async fn todos(&self, user: &str) -> Result<Vec<String>> {
        match self.backend {
            Backend::Own => Ok(self.harness.server_todos(user)?.into_iter().map(|todo| todo.title).collect()),
            Backend::Foreign(_) => self.foreign()?.todos(user).await,
        }
    }
}

/// One row of the matrix.
struct Row {
    client: &'static str,
    story: &'static str,
    /// `None`: left out for this backend, with the reason in docs/status.md's notes.
    outcome: Option<Result<()>>,
}

/// Opens SPEC's plain page (bearer), loads the foreign clients' bundle into it, and signs alice in.
async fn open(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    harness.open_plain_page("auth=bearer").await?;
    let loaded = harness
        .run_async(
            "const script = Object.assign(document.createElement('script'), {src: '/__interop/clients.js'});
             script.onload = () => done(typeof window.interop === 'object');
             script.onerror = () => done('the clients bundle did not load');
             document.head.append(script);",
        )
        .await?;
    ensure!(loaded == json!(true), "{loaded}");
    sign_in(harness, "alice").await
}

/// Logs `user` in with the server's `POST /api/login` and hands the answer to `cachet.setAuth`.
async fn sign_in(harness: &Harness, user: &str) -> Result<()> {
    let script = format!(
        "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({{username: {user}, password: {user} + '-password'}})}})
           .then((r) => r.json()).then((answer) => cachet.setAuth(answer)).then(() => cachet.getAuthState())
           .then((state) => done(state.authenticated), (e) => done(String(e)));",
        user = json!(user)
    );
    let signed_in = harness.run_async(&script).await?;
    ensure!(signed_in == json!(true), "signing {user} in: {signed_in}");
    Ok(())
}

/// The signed-in user's `Authorization`, as a plain client of the app would send it.
async fn authorization(harness: &Harness) -> Result<String> {
    let token = harness.eval("cachet.getAuthState().then((state) => state.auth && state.auth.token)").await?;
    let token = token.as_str().with_context(|| format!("no token: {token}"))?;
    Ok(format!("Bearer {token}"))
}

/// `cachet.queryGql(query, variables, {auth: true, ...options})`: `{fromCache, data}` or `{error}`.
async fn query_gql(harness: &Harness, query: &str, variables: Value, options: Value) -> Result<Value> {
    harness
        .eval(&format!(
            "cachet.queryGql({}, {variables}, Object.assign({{auth: true}}, {options}))
               .then((r) => ({{fromCache: r.fromCache, data: r.data}}))",
            json!(query)
        ))
        .await
}

/// Whether `cachet.queryGql` answered from the cache, failing on an error.
async fn from_cache(harness: &Harness, query: &str, variables: Value, options: Value) -> Result<bool> {
    let answer = query_gql(harness, query, variables, options).await?;
    answer["fromCache"].as_bool().with_context(|| format!("queryGql({query}) answered {answer}"))
}

/// `cachet.mutateGql(mutation, variables, {auth: true, ...options})`.
async fn mutate_gql(harness: &Harness, mutation: &str, variables: Value, options: Value) -> Result<Value> {
    let answer = harness
        .eval(&format!(
            "cachet.mutateGql({}, {variables}, Object.assign({{auth: true}}, {options}))",
            json!(mutation)
        ))
        .await?;
    if answer.get("error").is_some() || answer.get("data").is_none() {
        bail!("mutateGql({mutation}) answered {answer}");
    }
    Ok(answer)
}

/// A plain `fetch` POST of `query` with the user's `Authorization`, as a client that knows nothing of
/// cachet but `X-SW-Strategy` sends it: `{source, notStored, status, body}`.
async fn plain_fetch(harness: &Harness, query: &str) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', body: JSON.stringify({{query: {query}}}),
           headers: {{'content-type': 'application/json', 'x-sw-strategy': 'cache-first', authorization: {auth}}}}})
           .then(async (r) => done({{source: r.headers.get('x-cachet-source'), status: r.status,
             notStored: r.headers.get('x-cachet-not-stored'), body: await r.json()}}),
             (e) => done({{error: String(e)}}));",
        query = json!(query),
        auth = json!(authorization(harness).await?),
    );
    harness.run_async(&script).await
}

/// A query through foreign client `client` (`urql`, `apollo`, `graphqlRequest`) with the user's
/// `Authorization` and `headers`: what the Service Worker said of the answer (`{method, source,
/// notStored}`), from the client's own `fetch` log.
async fn foreign_query(harness: &Harness, client: &str, query: &str, headers: Value) -> Result<Value> {
    let mut headers = headers;
    headers["authorization"] = json!(authorization(harness).await?);
    let script = format!(
        "const before = interop.log.length;
         interop.{client}.query({query}, {{}}, {headers}).then((result) => {{
           const sent = interop.log.slice(before);
           done({{errors: result.errors, data: result.data, sent}});
         }});",
        query = json!(query)
    );
    let answer = harness.run_async(&script).await?;
    if !answer["errors"].is_null() {
        bail!("{client} query {query}: {answer}");
    }
    match answer["sent"].as_array().map(Vec::as_slice) {
        Some([one]) => Ok(one.clone()),
        _ => bail!("{client} query {query}: expected one request, got {answer}"),
    }
}

/// A query answered from the cache once the same query was asked once: the server saw one request.
async fn cached_by_body_hash(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "query GetTodos { todos { title } }";
    let before = matrix.operations("GetTodos").await?;
    ensure!(!from_cache(harness, query, json!({}), json!({})).await?, "the first answer came from the cache");
    ensure!(
        from_cache(harness, query, json!({}), json!({})).await?,
        "the second answer did not come from the cache"
    );
    let asked = matrix.operations("GetTodos").await? - before;
    ensure!(asked == 1, "the server was asked {asked} times");
    Ok(())
}

/// `CreateTodo` invalidates `todos`, a tag of `GetTodos`: the next query goes to the server and sees it.
async fn mutation_invalidates_by_operation_name(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "query GetTodos { todos { title } }";
    from_cache(harness, query, json!({}), json!({})).await?;
    ensure!(from_cache(harness, query, json!({}), json!({})).await?, "not cached before the mutation");
    mutate_gql(harness, CREATE_TODO, json!({"title": "from the matrix"}), json!({})).await?;
    let answer = query_gql(harness, query, json!({}), json!({})).await?;
    ensure!(answer["fromCache"] == json!(false), "still served from the cache: {answer}");
    ensure!(answer.to_string().contains("from the matrix"), "the new todo is missing: {answer}");
    Ok(())
}

/// An explicit `tags` on a query and `invalidate` on a mutation.
async fn explicit_tags_and_invalidate(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    // Not `todos`: every server tags an answer that selects it (`X-SW-Cache-Tags: todos`).
    let query = "query Dashboard { me { username } }";
    let tags = json!({"tags": ["dashboard"]});
    from_cache(harness, query, json!({}), tags.clone()).await?;
    ensure!(from_cache(harness, query, json!({}), tags.clone()).await?, "not cached");
    // `UpdateUser` alone would not reach `dashboard` (SPEC §4 rule 5): the explicit tag does.
    let created = mutate_gql(harness, CREATE_TODO, json!({"title": "for the dashboard"}), json!({})).await?;
    ensure!(
        from_cache(harness, query, json!({}), tags.clone()).await?,
        "CreateTodo reached a query tagged dashboard"
    );
    let id = created["data"]["createTodo"]["id"].clone();
    let update = "mutation UpdateUser($id: ID!) { updateTodo(id: $id, done: true) { id } }";
    mutate_gql(harness, update, json!({"id": id}), json!({"invalidate": ["dashboard"]})).await?;
    ensure!(!from_cache(harness, query, json!({}), tags).await?, "invalidate: [dashboard] left it cached");
    Ok(())
}

/// An anonymous operation is cached and no operation name reaches it.
async fn anonymous_query(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "{ me { username } }";
    ensure!(!from_cache(harness, query, json!({}), json!({})).await?, "first answer from the cache");
    ensure!(from_cache(harness, query, json!({}), json!({})).await?, "not cached");
    mutate_gql(harness, CREATE_TODO, json!({"title": "anonymous stays"}), json!({})).await?;
    ensure!(
        from_cache(harness, query, json!({}), json!({})).await?,
        "a mutation invalidated an anonymous query"
    );
    Ok(())
}

/// The same variables in another order are the same entry.
async fn canonical_variables(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query =
        "query TwoTodos($a: ID!, $b: ID!) { first: todo(id: $a) { title } second: todo(id: $b) { title } }";
    ensure!(
        !from_cache(harness, query, json!({"a": "1", "b": "2"}), json!({})).await?,
        "first from the cache"
    );
    let reordered = json!({"b": "2", "a": "1"});
    ensure!(from_cache(harness, query, reordered, json!({})).await?, "reordered variables missed the cache");
    Ok(())
}

/// A plain `fetch` with `X-SW-Strategy: cache-first` is cached, and the server's `X-SW-Cache-Tags`
/// (`todos`) lets `CreateTodo` reach an operation whose name derives no such tag.
async fn plain_fetch_with_server_tags(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "query Listing { todos { title } }";
    let first = plain_fetch(harness, query).await?;
    ensure!(first["source"] == json!("network") && first["status"] == json!(200), "first: {first}");
    let second = plain_fetch(harness, query).await?;
    ensure!(second["source"] == json!("cache"), "second: {second}");
    mutate_gql(harness, CREATE_TODO, json!({"title": "server tags"}), json!({})).await?;
    let third = plain_fetch(harness, query).await?;
    ensure!(third["source"] == json!("network"), "after CreateTodo (server tag todos): {third}");
    Ok(())
}

/// A foreign client's query, twice: the second answer comes from cachet's cache.
async fn foreign_client_cached(matrix: &Matrix, client: &str, operation: &str, headers: Value) -> Result<()> {
    let harness = &matrix.harness;
    let query = format!("query {operation} {{ todos {{ title }} }}");
    let before = matrix.operations(operation).await?;
    let first = foreign_query(harness, client, &query, headers.clone()).await?;
    ensure!(first["source"] == json!("network"), "first: {first}");
    let second = foreign_query(harness, client, &query, headers).await?;
    ensure!(second["source"] == json!("cache"), "second: {second}");
    ensure!(second["method"] == first["method"], "{first} then {second}");
    // The stored answer keeps the server's media type (`application/graphql-response+json` where the
    // client asked for it, as the three do).
    ensure!(second["contentType"] == first["contentType"], "{first} then {second}");
    let asked = matrix.operations(operation).await? - before;
    ensure!(asked == 1, "the server was asked {asked} times");
    Ok(())
}

/// A query the server refuses as invalid (400 under `application/graphql-response+json`, or 200 with
/// `errors` under `application/json`, as the GraphQL-over-HTTP specification lets a server answer) reaches
/// the caller as an error and is never stored: asked twice, the server sees it twice.
async fn validation_error_never_stored(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "query Invalid { todos { noSuchField } }";
    let before = matrix.operations("Invalid").await?;
    for _ in 0..2 {
        let answer = query_gql(harness, query, json!({}), json!({})).await?;
        ensure!(answer.get("error").is_some() || answer.to_string().contains("errors"), "{answer}");
        ensure!(answer["fromCache"] != json!(true), "an invalid query was answered from the cache: {answer}");
    }
    let plain = plain_fetch(harness, query).await?;
    ensure!(plain["source"] == json!("network"), "{plain}");
    let not_stored = plain["notStored"].as_str().unwrap_or_default();
    ensure!(["status", "graphql-errors"].contains(&not_stored), "{plain}");
    let asked = matrix.operations("Invalid").await? - before;
    ensure!(asked == 3, "the server was asked {asked} times");
    Ok(())
}

/// A stopped worker (Chromium: DevTools' `stopAllWorkers`, as the browser stops an idle one) starts on
/// the next request with the engine's start module: it answers a stored query from the cache without the
/// server, answers a miss from the server (which the whole engine then stores, so the next one is a hit),
/// and a mutation sent to it invalidates by operation name as through a running worker.
async fn stopped_worker(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let hit = "query StoppedHit { todos { title } }";
    let before = matrix.operations("StoppedHit").await?;
    ensure!(!from_cache(harness, hit, json!({}), json!({})).await?, "the first answer came from the cache");
    ensure!(from_cache(harness, hit, json!({}), json!({})).await?, "not cached before the stop");
    harness.stop_service_workers_until_stopped().await?;
    ensure!(from_cache(harness, hit, json!({}), json!({})).await?, "a stopped worker's start missed");
    let asked = matrix.operations("StoppedHit").await? - before;
    ensure!(asked == 1, "the server was asked {asked} times");

    let miss = "query StoppedMiss { todos { title } }";
    harness.stop_service_workers_until_stopped().await?;
    ensure!(
        !from_cache(harness, miss, json!({}), json!({})).await?,
        "a query never asked came from the cache"
    );
    ensure!(
        from_cache(harness, miss, json!({}), json!({})).await?,
        "a miss answered by a stopped worker's start was not stored"
    );

    harness.stop_service_workers_until_stopped().await?;
    mutate_gql(harness, CREATE_TODO, json!({"title": "sent to a stopped worker"}), json!({})).await?;
    let answer = query_gql(harness, hit, json!({}), json!({})).await?;
    ensure!(answer["fromCache"] == json!(false), "still served from the cache: {answer}");
    ensure!(answer.to_string().contains("sent to a stopped worker"), "the new todo is missing: {answer}");
    Ok(())
}

/// Mutations queued while the server cannot be reached are replayed in order when it can.
async fn offline_queue_replayed_in_order(matrix: &mut Matrix) -> Result<()> {
    matrix.set_reachable(false).await?;
    let mut titles = Vec::new();
    for index in 1..=3 {
        let title = format!("queued {index}");
        let queued = matrix
            .harness
            .eval(&format!(
                "cachet.mutateGql({}, {{title: {}}}, {{auth: true, queueOffline: true}})",
                json!(CREATE_TODO),
                json!(title)
            ))
            .await?;
        ensure!(queued["queued"].is_number() || queued["queued"].is_string(), "not queued: {queued}");
        titles.push(title);
    }
    matrix.set_reachable(true).await?;
    matrix.harness.eval("cachet.replayQueue()").await?;
    for _ in 0..200 {
        let applied = matrix.todos("alice").await?;
        let replayed: Vec<&String> = applied.iter().filter(|title| title.starts_with("queued ")).collect();
        if replayed.len() >= titles.len() {
            ensure!(replayed == titles.iter().collect::<Vec<_>>(), "replayed as {replayed:?}");
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    bail!("the queue was not replayed within 10 s")
}

/// An expired bearer token: the server answers 401, the page refreshes once, the request is retried
/// with the new token, and the caller sees only the answer.
async fn expired_token_refreshed_once(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let before = matrix.refreshes().await?;
    let token = authorization(harness).await?;
    matrix.expire_tokens().await?;
    let answer = query_gql(harness, "query MyTodos { todos { id } }", json!({}), json!({})).await?;
    ensure!(answer["fromCache"] == json!(false) && answer["data"]["todos"].is_array(), "{answer}");
    let refreshed = matrix.refreshes().await? - before;
    ensure!(refreshed == 1, "{refreshed} refreshes");
    let fresh = authorization(harness).await?;
    ensure!(fresh != token, "the token was not replaced");
    Ok(())
}

/// alice's cached answer is never served to bob, through `window.cachet` or a plain client.
async fn user_b_never_served_a(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    let query = "query PrivateTodos { todos { title } }";
    mutate_gql(harness, CREATE_TODO, json!({"title": "alice's secret"}), json!({})).await?;
    ensure!(!from_cache(harness, query, json!({}), json!({})).await?, "first from the cache");
    let alice = query_gql(harness, query, json!({}), json!({})).await?;
    ensure!(alice["fromCache"] == json!(true) && alice.to_string().contains("alice's secret"), "{alice}");
    let cleared = harness.eval("cachet.clearAuth().then(() => cachet.getAuthState())").await?;
    ensure!(cleared["authenticated"] == json!(false), "{cleared}");
    sign_in(harness, "bob").await?;
    let bob = query_gql(harness, query, json!({}), json!({})).await?;
    ensure!(bob["fromCache"] == json!(false), "bob was answered from a cache: {bob}");
    ensure!(!bob.to_string().contains("alice's secret"), "bob saw alice's todo: {bob}");
    let plain = plain_fetch(harness, query).await?;
    ensure!(!plain.to_string().contains("alice's secret"), "a plain fetch saw alice's todo: {plain}");
    harness.eval("cachet.clearAuth()").await?;
    sign_in(harness, "alice").await
}

/// A call that fails because the refresh was refused settles after `sw-auth-state-change` `logout`
/// was dispatched, and `getAuthState()` agrees with both; three times, as the race was two in three.
async fn refused_refresh_logs_out_before_the_call_settles(matrix: &Matrix) -> Result<()> {
    let harness = &matrix.harness;
    for round in 0..3 {
        sign_in(harness, "alice").await?;
        matrix.expire_tokens().await?;
        matrix.fail_refresh(true).await?;
        let script = format!(
            "const order = [];
             const listener = (event) => order.push('event:' + event.detail.type);
             window.addEventListener('sw-auth-state-change', listener);
             const settled = async (how) => {{
               const state = await cachet.getAuthState();
               order.push(how + (state.authenticated ? ' (authenticated)' : ' (signed out)'));
             }};
             cachet.queryGql('query Refused{round} {{ todos {{ id }} }}', {{}}, {{auth: true}})
               .then(() => settled('resolved'), () => settled('rejected'))
               .then(() => {{ window.removeEventListener('sw-auth-state-change', listener); done(order); }});"
        );
        let order = harness.run_async(&script).await?;
        matrix.fail_refresh(false).await?;
        ensure!(
            order.as_array().and_then(|order| order.first()) == Some(&json!("event:logout")),
            "round {round}: {order}"
        );
        ensure!(order.to_string().contains("(signed out)"), "round {round}: {order}");
    }
    Ok(())
}

/// Runs every story against `backend` in each engine, writes the rows of each, and fails naming every
/// story that failed anywhere.
async fn matrix(backend: Backend) -> Result<()> {
    let mut failed = Vec::new();
    for browser in Browser::ALL {
        if let Err(error) = matrix_in(browser, backend).await {
            failed.push(format!("{}: {error:#}", browser.name()));
        }
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("\n"));
    }
    Ok(())
}

/// Runs every story against `backend` in `browser` and writes its rows.
async fn matrix_in(browser: Browser, backend: Backend) -> Result<()> {
    let mut matrix = Matrix::start(browser, backend, CONFIG).await?;
    open(&matrix).await?;
    // urql sends queries as GET without a content type, which Apollo Server's CSRF prevention refuses
    // (400) unless the app adds `apollo-require-preflight`, as Apollo's docs tell urql users to.
    let urql_headers = if backend == Backend::Foreign(Foreign::Apollo) {
        json!({"apollo-require-preflight": "true"})
    } else {
        json!({})
    };
    let mut rows = vec![
        Row {
            client: "window.cachet",
            story: "query cached by body hash, fromCache",
            outcome: Some(cached_by_body_hash(&matrix).await),
        },
        Row {
            client: "window.cachet",
            story: "operation-name tags, a mutation's invalidation",
            outcome: Some(mutation_invalidates_by_operation_name(&matrix).await),
        },
        Row {
            client: "window.cachet",
            story: "explicit tags and invalidate",
            outcome: Some(explicit_tags_and_invalidate(&matrix).await),
        },
        Row {
            client: "window.cachet",
            story: "anonymous query",
            outcome: Some(anonymous_query(&matrix).await),
        },
        Row {
            client: "window.cachet",
            story: "canonical variables",
            outcome: Some(canonical_variables(&matrix).await),
        },
        Row {
            client: "window.cachet, fetch",
            story: "a validation error: an error, never stored",
            outcome: Some(validation_error_never_stored(&matrix).await),
        },
        Row {
            client: "fetch",
            story: "X-SW-Strategy and the server's X-SW-Cache-Tags",
            outcome: Some(plain_fetch_with_server_tags(&matrix).await),
        },
    ];
    for (client, name, operation, headers) in [
        ("urql (GET)", "urql", "ViaUrql", urql_headers),
        ("Apollo Client", "apollo", "ViaApolloClient", json!({})),
        ("graphql-request", "graphqlRequest", "ViaGraphqlRequest", json!({})),
    ] {
        let outcome = Some(foreign_client_cached(&matrix, name, operation, headers).await);
        rows.push(Row { client, story: "query cached", outcome });
    }
    // Only Chromium's DevTools stop a worker on demand (docs/status.md, notes on the engines).
    let stopped = if browser == Browser::Chromium { Some(stopped_worker(&matrix).await) } else { None };
    rows.push(Row {
        client: "window.cachet",
        story: "a stopped worker: a stored answer, a miss stored for the next, a mutation's invalidation",
        outcome: stopped,
    });
    rows.push(Row {
        client: "window.cachet",
        story: "the offline queue replayed in order",
        outcome: Some(offline_queue_replayed_in_order(&mut matrix).await),
    });
    rows.push(Row {
        client: "window.cachet",
        story: "an expired bearer token refreshed once",
        outcome: Some(expired_token_refreshed_once(&matrix).await),
    });
    rows.push(Row {
        client: "window.cachet, fetch",
        story: "user B never served A's answer",
        outcome: Some(user_b_never_served_a(&matrix).await),
    });
    rows.push(Row {
        client: "window.cachet",
        story: "a refused refresh: logout dispatched before the call settles",
        outcome: Some(refused_refresh_logs_out_before_the_call_settles(&matrix).await),
    });
    write_rows(browser, backend, &rows)?;
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|row| match &row.outcome {
            Some(Err(error)) => Some(format!("{} / {}: {error:#}", row.client, row.story)),
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        bail!(
            "{}: {} of {} stories failed:\n{}",
            backend.name(),
            failed.len(),
            rows.len(),
            failed.join("\n")
        );
    }
    Ok(())
}

/// `target/interop/<backend>-<browser>.json`: `{backend, browser, order, rows: [{client, story, outcome,
/// error}]}` (`outcome`: `passed`, `failed` or `left out`), read by `cargo xtask test` for docs/status.md's
/// matrix.
fn write_rows(browser: Browser, backend: Backend, rows: &[Row]) -> Result<()> {
    let folder = cachet_e2e::workspace_root().join("target/interop");
    std::fs::create_dir_all(&folder)?;
    let rows: Vec<Value> = rows
        .iter()
        .map(|row| {
            let (outcome, error) = match &row.outcome {
                Some(Ok(())) => ("passed", None),
                Some(Err(error)) => ("failed", Some(format!("{error:#}"))),
                None => ("left out", None),
            };
            json!({"client": row.client, "story": row.story, "outcome": outcome, "error": error})
        })
        .collect();
    let order = Backend::ALL.iter().position(|other| *other == backend).unwrap_or_default();
    let run = json!({"backend": backend.name(), "browser": browser.name(), "order": order, "rows": rows});
    let file = folder.join(format!("{}-{}.json", backend.name(), browser.name()));
    std::fs::write(file, serde_json::to_string_pretty(&run)?)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apollo_server_with_its_defaults() -> Result<()> {
    matrix(Backend::Foreign(Foreign::Apollo)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_yoga_with_its_defaults() -> Result<()> {
    matrix(Backend::Foreign(Foreign::Yoga)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_http_reference_server_with_its_defaults() -> Result<()> {
    matrix(Backend::Foreign(Foreign::GraphqlHttp)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_backend() -> Result<()> {
    matrix(Backend::Own).await
}

/// `features.graphql.honorNoStore`: Apollo Server's `no-store` binds, nothing is stored, and every
/// answer says why (`X-Cachet-Not-Stored: server-no-store`), and so do the devtools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honor_no_store_makes_apollo_servers_no_store_binding_and_says_so() -> Result<()> {
    let matrix = Matrix::start(Browser::Chromium, Backend::Foreign(Foreign::Apollo), HONOR_NO_STORE).await?;
    open(&matrix).await?;
    let harness = &matrix.harness;
    let query = "query Honoured { todos { title } }";
    for _ in 0..2 {
        let answer = plain_fetch(harness, query).await?;
        ensure!(answer["source"] == json!("network"), "{answer}");
        ensure!(answer["notStored"] == json!("server-no-store"), "{answer}");
    }
    ensure!(!from_cache(harness, query, json!({}), json!({})).await?, "stored although no-store binds");
    ensure!(matrix.operations("Honoured").await? == 3, "the server was not asked each time");
    // The devtools list them, with the reason.
    let snapshot = harness.eval("cachet.getSnapshot({})").await?;
    let listed: Vec<&Value> = snapshot["notStored"]
        .as_array()
        .map(|list| list.iter().filter(|answer| answer["request"] == json!("Honoured")).collect())
        .unwrap_or_default();
    ensure!(listed.len() == 3, "{snapshot}");
    ensure!(listed.iter().all(|answer| answer["reason"] == json!("server-no-store")), "{listed:?}");
    ensure!(
        listed.iter().all(|answer| answer["why"] == json!("the server said Cache-Control: no-store")),
        "{listed:?}"
    );
    Ok(())
}
