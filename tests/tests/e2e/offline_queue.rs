//! The offline mutation queue, end to end: mutations marked `X-Cachet-Queue-Offline: 1` that meet a
//! stopped server are queued (202 + id), kept in IndexedDB across Service Worker stops, replayed in order
//! and exactly once when the page says it is back online, and invalidate like live mutations; a replay
//! the server refuses with a 4xx is dead-lettered, and a 5xx is retried after a backoff.

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";
const GET_TODOS: &str = "query GetTodos { todos { title } }";

/// Collects every broadcast of the SW in the page; `eventsOf(type, n, id)` resolves with the first `n`
/// events of `type` (and of queue item `id`, when given) once they arrived.
const LISTEN: &str = "window.cachetEvents = []; window.cachetWaiters = [];
  window.cachetChannel = new BroadcastChannel('cachet');
  window.cachetChannel.onmessage = (e) => {
    window.cachetEvents.push(JSON.parse(e.data));
    window.cachetWaiters = window.cachetWaiters.filter((check) => !check());
  };
  window.eventsOf = (type, n, id) => new Promise((resolve) => {
    const check = () => {
      const found = window.cachetEvents.filter((m) => m.type === type && (id === undefined || m.id === id));
      if (found.length < n) return false;
      resolve(found.slice(0, n));
      return true;
    };
    if (!check()) window.cachetWaiters.push(check);
  });
  done(true);";

async fn gql(harness: &Harness, query: &str, variables: Value, headers: Value) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST',
           headers: Object.assign({{'content-type': 'application/json'}}, {headers}),
           body: JSON.stringify({{query: {query}, variables: {variables}}})}})
           .then(async (r) => done({{status: r.status, source: r.headers.get('x-cachet-source'),
                                    queued: r.headers.get('x-cachet-queued'), body: await r.json()}}),
                 (e) => done({{error: String(e)}}));",
        query = json!(query),
    );
    harness.run_async(&script).await
}

/// Sends `CreateTodo(title)` asking to be queued offline.
async fn create_queued(harness: &Harness, title: &str) -> Result<Value> {
    gql(harness, CREATE, json!({ "title": title }), json!({"X-Cachet-Queue-Offline": "1"})).await
}

/// Asserts `answer` is the SW's 202 for a queued mutation and returns its id.
fn queued_id(answer: &Value) -> Result<u64> {
    let Some(id) = answer["queued"].as_str().and_then(|id| id.parse::<u64>().ok()) else {
        bail!("not queued: {answer}");
    };
    assert_eq!(answer["status"], json!(202), "{answer}");
    assert_eq!(answer["source"], json!("queue"), "{answer}");
    assert_eq!(answer["body"], json!({"data": null, "extensions": {"cachet": {"queued": true, "id": id}}}));
    Ok(id)
}

async fn events(harness: &Harness, kind: &str, count: usize) -> Result<Value> {
    harness.run_async(&format!("window.eventsOf({}, {count}).then(done);", json!(kind))).await
}

/// Posts a protocol message to the controlling SW (it may have been stopped: this starts it).
async fn tell_sw(harness: &Harness, message: Value) -> Result<()> {
    let script =
        format!("navigator.serviceWorker.controller.postMessage(JSON.stringify({message})); done(true);");
    harness.run_async(&script).await?;
    Ok(())
}

/// The queue as the SW stored it, read from the page.
async fn stored_queue(harness: &Harness) -> Result<Value> {
    let text = harness
        .run_async(
            "(async () => {
               const db = await new Promise((resolve, reject) => {
                 const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result);
                 open.onerror = () => reject(open.error); });
               const text = await new Promise((resolve) => {
                 const request = db.transaction('queue').objectStore('queue').get('state');
                 request.onsuccess = () => resolve(request.result); });
               db.close();
               done(text);
             })();",
        )
        .await?;
    Ok(serde_json::from_str(text.as_str().unwrap_or("null"))?)
}

fn titles(answer: &Value) -> Vec<String> {
    let todos = answer["body"]["data"]["todos"].as_array().cloned().unwrap_or_default();
    todos.iter().map(|todo| todo["title"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_mutations_are_queued_and_replayed_in_order_exactly_once() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    harness.login("alice").await?;
    harness.run_async(LISTEN).await?;
    // A cached list, which the replays must invalidate.
    assert_eq!(gql(&harness, GET_TODOS, json!({}), json!({})).await?["source"], json!("network"));
    assert_eq!(gql(&harness, GET_TODOS, json!({}), json!({})).await?["source"], json!("cache"));

    harness.stop_server().await;
    // Without the header, a mutation fails as it always did.
    let unmarked = gql(&harness, CREATE, json!({"title": "lost"}), json!({})).await?;
    assert!(unmarked["error"].is_string(), "{unmarked}");
    let first = queued_id(&create_queued(&harness, "first").await?)?;
    let second = queued_id(&create_queued(&harness, "second").await?)?;
    assert_eq!(second, first + 1);
    let queued = events(&harness, "mutation-queued", 2).await?;
    assert_eq!(
        queued,
        json!([
            {"v": 1, "type": "mutation-queued", "id": first, "operationName": "CreateTodo"},
            {"v": 1, "type": "mutation-queued", "id": second, "operationName": "CreateTodo"},
        ])
    );
    let stored = stored_queue(&harness).await?;
    let ids: Vec<Value> =
        stored["items"].as_array().cloned().unwrap_or_default().iter().map(|i| i["id"].clone()).collect();
    assert_eq!(ids, [json!(first), json!(second)], "{stored}");
    for item in stored["items"].as_array().cloned().unwrap_or_default() {
        let names: Vec<&str> = item["request"]["headers"]
            .as_array()
            .map(|headers| headers.iter().filter_map(|pair| pair[0].as_str()).collect())
            .unwrap_or_default();
        assert!(!names.contains(&"x-cachet-queue-offline") && !names.contains(&"authorization"), "{item}");
    }

    // Nothing lives only in the SW's memory: it is stopped, and the server comes back.
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    tell_sw(&harness, json!({"v": 1, "type": "connectivity-changed", "online": true})).await?;
    let replayed = events(&harness, "mutation-replayed", 2).await?;
    assert_eq!(
        replayed,
        json!([
            {"v": 1, "type": "mutation-replayed", "id": first, "invalidated": ["todo", "todos"]},
            {"v": 1, "type": "mutation-replayed", "id": second, "invalidated": ["todo", "todos"]},
        ])
    );
    let invalidated = events(&harness, "cache-invalidated", 1).await?;
    assert_eq!(invalidated, json!([{"v": 1, "type": "cache-invalidated", "tags": ["todo", "todos"]}]));

    let stored = stored_queue(&harness).await?;
    assert_eq!((stored["items"].clone(), stored["deadLetters"].clone()), (json!([]), json!([])), "{stored}");
    // The queue is empty, so nothing more can be sent: each was sent to the live server exactly once.
    assert_eq!(harness.count("graphql CreateTodo"), 2);
    let list = gql(&harness, GET_TODOS, json!({}), json!({})).await?;
    assert_eq!(list["source"], json!("network"), "the replay invalidated the cached list: {list}");
    assert_eq!(titles(&list), ["first", "second"]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_replay_is_dead_lettered_and_a_failed_one_retried_after_a_backoff() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    harness.login("bob").await?;
    harness.run_async(LISTEN).await?;

    harness.stop_server().await;
    let mut ids = Vec::new();
    for title in ["refused", "retried", "plain"] {
        ids.push(queued_id(&create_queued(&harness, title).await?)?);
    }
    events(&harness, "mutation-queued", 3).await?;
    // Stopped, the SW holds no timer that could replay before the server's failures are set up.
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    // The first replay is refused with 422, the second meets a 503 once.
    let hook = harness
        .run_async(
            "fetch('/__test/fail-graphql?status=422&status=503', {method: 'POST'}).then((r) => done(r.status));",
        )
        .await?;
    assert_eq!(hook, json!(200));
    tell_sw(&harness, json!({"v": 1, "type": "replay-queue"})).await?;

    let dead = events(&harness, "mutation-dead-lettered", 1).await?;
    assert_eq!(
        dead,
        json!([{"v": 1, "type": "mutation-dead-lettered", "id": ids[0], "reason": {"kind": "rejected", "status": 422}}])
    );
    // The 503: reported with its next attempt time, then retried by the backoff's timer, in order.
    let failed =
        harness.run_async(&format!("window.eventsOf('mutation-failed', 1, {}).then(done);", ids[1])).await?;
    assert!(failed[0]["retryAt"].as_u64().is_some_and(|at| at > 0), "{failed}");
    let replayed = events(&harness, "mutation-replayed", 2).await?;
    let replayed_ids: Vec<Value> =
        replayed.as_array().cloned().unwrap_or_default().iter().map(|e| e["id"].clone()).collect();
    assert_eq!(replayed_ids, [json!(ids[1]), json!(ids[2])]);

    let stored = stored_queue(&harness).await?;
    assert_eq!(stored["items"], json!([]), "{stored}");
    let letters = stored["deadLetters"].as_array().cloned().unwrap_or_default();
    assert_eq!(letters.len(), 1, "{stored}");
    assert_eq!(letters[0]["item"]["id"], json!(ids[0]));
    assert_eq!(letters[0]["reason"], json!({"kind": "rejected", "status": 422}));
    // Refused once, 503 once and then created, created: four sends, two todos.
    assert_eq!(harness.count("graphql CreateTodo"), 4);
    let list = gql(&harness, GET_TODOS, json!({}), json!({})).await?;
    assert_eq!(titles(&list), ["retried", "plain"]);
    Ok(())
}

/// The page side of bearer auth, as `auth_refresh.rs` has it: the token in `window.cachetTest.auth`, a
/// responder to `refresh-request` that refreshes when the token that failed is its current one and
/// answers its current header otherwise, counting questions and refreshes.
const BEARER_RESPONDER: &str = "const fingerprint = async (header) => {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('cachet-auth:' + header));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('').slice(0, 16);
  };
  navigator.serviceWorker.addEventListener('message', async (event) => {
    const message = JSON.parse(event.data);
    if (message.type !== 'refresh-request') return;
    const test = window.cachetTest;
    test.asked.push(message.failed);
    if (message.failed !== null && message.failed === await fingerprint(test.auth)) {
      test.refreshes += 1;
      const refreshed = await fetch('/api/refresh', {method: 'POST', headers: {authorization: test.auth}});
      test.auth = refreshed.ok ? 'Bearer ' + (await refreshed.json()).token : null;
    }
    event.ports[0].postMessage(JSON.stringify(
      {v: 1, type: 'refresh-reply', id: message.id, ok: test.auth !== null, authorization: test.auth}));
  });
  navigator.serviceWorker.startMessages();";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_replay_asks_the_page_for_its_token_and_refreshes_an_expired_one() -> Result<()> {
    const BEARER_CONFIG: &str =
        r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true}}}"#;
    let mut harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_bare_controlled().await?;
    harness.run_async(LISTEN).await?;
    let login = format!(
        "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({{username: 'alice', password: 'alice-password'}})}})
           .then((r) => r.json()).then((login) => {{
             window.cachetTest = {{auth: 'Bearer ' + login.token, asked: [], refreshes: 0}};
             {BEARER_RESPONDER}
             done(true); }});"
    );
    harness.run_async(&login).await?;
    let token = harness.run_async("done(cachetTest.auth);").await?;

    harness.stop_server().await;
    let queued = harness
        .run_async(&format!(
            "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
               'x-cachet-queue-offline': '1', 'x-cachet-auth': '1', authorization: cachetTest.auth}},
               body: JSON.stringify({{query: {CREATE}, variables: {{title: 'authed'}}}})}})
               .then(async (r) => done({{status: r.status, source: r.headers.get('x-cachet-source'),
                                        queued: r.headers.get('x-cachet-queued'), body: await r.json()}}),
                     (e) => done({{error: String(e)}}));",
            CREATE = json!(CREATE)
        ))
        .await?;
    let id = queued_id(&queued)?;
    let stored = stored_queue(&harness).await?;
    let text = stored.to_string();
    assert!(!text.to_lowercase().contains("authorization"), "no token is stored: {text}");
    assert!(!text.contains(token.as_str().unwrap_or("Bearer")), "no token is stored: {text}");
    assert!(text.contains("x-cachet-auth"), "the item remembers it needs auth: {text}");

    // The token expires while the server is away. The SW is stopped first (as Chromium stops an idle
    // one), so that no attempt of it (Background Sync fires as soon as it is registered) meets the server
    // before the token expired.
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    let expired = harness
        .run_async("fetch('/__test/expire-tokens', {method: 'POST'}).then((r) => done(r.status));")
        .await?;
    assert_eq!(expired, json!(200));
    let before = harness.run_async("done(cachetTest.asked.length);").await?.as_u64().unwrap_or_default();
    tell_sw(&harness, json!({"v": 1, "type": "connectivity-changed", "online": true})).await?;
    let replayed = events(&harness, "mutation-replayed", 1).await?;
    assert_eq!(replayed[0]["id"], json!(id));

    // Asked for the current token (expired: 401), asked to refresh that one, asked again for the new one.
    let page = harness
        .run_async(&format!(
            "done({{asked: cachetTest.asked.slice({before}), refreshes: cachetTest.refreshes}});"
        ))
        .await?;
    let asked = page["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 3, "{page}");
    assert!(asked[0].is_null() && asked[1].is_string() && asked[2].is_null(), "{page}");
    assert_eq!(page["refreshes"], json!(1), "{page}");
    assert_eq!(harness.count("graphql CreateTodo"), 2, "one 401, then the retry with the fresh token");
    let list = harness
        .run_async(
            "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json', authorization: cachetTest.auth},
               body: JSON.stringify({query: 'query GetTodos { todos { title } }'})}).then((r) => r.json()).then(done);",
        )
        .await?;
    assert_eq!(list["data"]["todos"], json!([{"title": "authed"}]), "{list}");
    Ok(())
}

/// The worker keeps its connection to the queue's database for its life (opening it cost more than the
/// write that records a replay, issue 31). When the user clears the site's data (DevTools, browser
/// settings: CDP `Storage.clearDataForOrigin`), the browser closes that connection under the running
/// worker: the next mutation opens the database again and is queued, never refused as unwritable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_database_closed_under_the_running_worker_is_opened_again() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    harness.login("alice").await?;
    harness.stop_server().await;
    queued_id(&create_queued(&harness, "before").await?)?;

    harness
        .devtools(
            "Storage.clearDataForOrigin",
            json!({"origin": harness.url().trim_end_matches('/'), "storageTypes": "indexeddb"}),
        )
        .await?;
    // The queue's first item is gone with the database. Opened only when listed (opening an absent
    // database would create it empty): the worker may already have made it again, answering the tab's
    // queue alarm (the first item's broadcast pokes it), which CI once saw right after the clear.
    let left = harness
        .run_async(
            "(async () => {
               const listed = (await indexedDB.databases()).find((d) => d.name === 'cachet');
               if (!listed) return 'absent';
               const db = await new Promise((resolve, reject) => {
                 const open = indexedDB.open('cachet', listed.version); open.onsuccess = () => resolve(open.result);
                 open.onerror = () => reject(open.error); });
               const text = !db.objectStoreNames.contains('queue') ? undefined : await new Promise((resolve) => {
                 const request = db.transaction('queue').objectStore('queue').get('state');
                 request.onsuccess = () => resolve(request.result); });
               db.close();
               return text === undefined ? 'no queue' : text;
             })().then(done, (e) => done(String(e)));",
        )
        .await?;
    assert!(!left.to_string().contains("before"), "the site's IndexedDB was cleared: {left}");

    let after = create_queued(&harness, "after").await?;
    let after = queued_id(&after)?;
    let stored = stored_queue(&harness).await?;
    let ids: Vec<Value> =
        stored["items"].as_array().cloned().unwrap_or_default().iter().map(|i| i["id"].clone()).collect();
    assert_eq!(ids, [json!(after)], "{stored}");
    Ok(())
}

/// Resolves, in the page, with the origin's holders and waiters of the queue alarm's Web Lock
/// (`cachet-queue-alarm`) once they are `held` and `pending` (read every 50 ms, at most 10 s; the last
/// reading either way).
async fn alarm_lock_once(harness: &Harness, held: usize, pending: usize) -> Result<Value> {
    let script = format!(
        "const count = (list) => list.filter((lock) => lock.name === 'cachet-queue-alarm').length;
         const read = async () => {{ const now = await navigator.locks.query();
           return {{held: count(now.held), pending: count(now.pending)}}; }};
         const until = Date.now() + 10000;
         (async () => {{
           let last = await read();
           while ((last.held !== {held} || last.pending !== {pending}) && Date.now() < until) {{
             await new Promise((resolve) => setTimeout(resolve, 50));
             last = await read();
           }}
           done(last);
         }})();"
    );
    harness.run_async(&script).await
}

/// One tab at a time runs the queue alarm: with two tabs of the app, its Web Lock is held by one and
/// the other waits for it; when the holder closes, the other tab takes it over (cachet-client's
/// `queue_alarm`; the lock is held until the client's promise is resolved, not merely taken).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tab_at_a_time_runs_the_queue_alarm_and_a_closed_tab_hands_it_on() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let one = json!({"held": 1, "pending": 0});
    assert_eq!(alarm_lock_once(&harness, 1, 0).await?, one, "the first tab runs the alarm");
    let first = harness.open_second_tab().await?;
    let second = harness.client.window().await?;
    assert_eq!(
        alarm_lock_once(&harness, 1, 1).await?,
        json!({"held": 1, "pending": 1}),
        "the second tab waits for the lock"
    );
    harness.client.switch_to_window(first).await?;
    harness.client.close_window().await?;
    harness.client.switch_to_window(second).await?;
    assert_eq!(alarm_lock_once(&harness, 1, 0).await?, one, "the second tab took the alarm over");
    Ok(())
}
