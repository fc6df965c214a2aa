//! Devtools (issue 17): the example app's `<CachetDevtools />` panel and the plain page's
//! `/cachet/devtools.js`, against the real Service Worker and backend.
//!
//! - the panel lists the entry the list query stored, with its tags; "invalidate" on `todos` removes it
//!   and the list query runs again (once), storing a new entry;
//! - a replayed mutation the server refuses with 422 is a dead letter in the panel; after the server is
//!   fixed, "retry" replays it exactly once;
//! - on the plain page, `window.cachet` lists, refuses to retry an unknown id, and discards a dead letter,
//!   and the plain panel shows the worker's entries.

use anyhow::{bail, Result};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// A row of the panel's entries whose request starts with `request`: `(storedAt, tags)`, as JS.
fn entry_js(request: &str) -> String {
    format!(
        "[...document.querySelectorAll('#cachet-devtools tr.entry')]
           .filter((row) => row.querySelector('.request').textContent.startsWith({request}))
           .map((row) => ({{storedAt: row.dataset.storedAt,
                           tags: [...row.querySelectorAll('.tags button, .tags')].map((e) => e.textContent)}}))",
        request = json!(request)
    )
}

/// Waits until the server counted `count` requests of `route` (bounded: 300 checks, 50 ms apart).
async fn server_count(harness: &Harness, route: &str, count: u64) -> Result<()> {
    for _ in 0..300 {
        if harness.count(route) >= count {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    bail!("{route}: the server counted {} requests, not {count}", harness.count(route))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_lists_a_stored_query_and_invalidating_its_tag_reruns_it() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.wait_for_list(&[]).await?;
    let runs = harness.count("graphql GetTodos");

    harness.click("#cachet-devtools-toggle").await?;
    let old = harness
        .wait_for("the GetTodos entry in the panel", &format!("{}[0]?.storedAt", entry_js("GetTodos")))
        .await?;
    let tags = harness.eval(&format!("{}[0].tags[0]", entry_js("GetTodos"))).await?;
    assert!(tags.as_str().is_some_and(|tags| tags.contains("todos")), "the entry shows its tags: {tags}");
    let state = harness.text_of("#cachet-devtools-state").await?;
    assert!(state.starts_with("signed in · page online"), "{state}");
    assert!(!state.contains("nobody"), "the worker knows alice's partition: {state}");

    harness.click("#cachet-devtools button.invalidate-tag[data-tag='todos']").await?;
    let gone = format!(
        "!{entries}.some((entry) => entry.storedAt === {old}) &&
         [...document.querySelectorAll('#cachet-devtools-log li')].some((li) => li.textContent.includes('cache-invalidated: todos'))",
        entries = entry_js("GetTodos"),
    );
    harness.wait_for("the old entry gone, the invalidation logged", &gone).await?;
    server_count(&harness, "graphql GetTodos", runs + 1).await?;
    // The re-run stored a new entry: refresh the panel (at most every 300 ms) until it shows it.
    let fresh = format!(
        "(() => {{ const found = {entries}.find((entry) => entry.storedAt !== {old});
           if (found) return found.storedAt;
           if (!window.__refreshed || Date.now() - window.__refreshed > 300) {{
             window.__refreshed = Date.now(); document.querySelector('#cachet-devtools button.refresh').click(); }}
           return null; }})()",
        entries = entry_js("GetTodos"),
    );
    let new = harness.wait_for("the re-run's new entry", &fresh).await?;
    assert_ne!(new, old);
    assert_eq!(harness.wait_for_list(&[]).await?, "from network", "the list query ran again");
    assert_eq!(harness.count("graphql GetTodos"), runs + 1, "exactly once");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_422_dead_letter_is_retried_from_the_panel_and_replayed_exactly_once() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.wait_for_list(&[]).await?;

    harness.stop_server().await;
    harness.add_todo("milk").await?;
    harness
        .wait_for("milk queued", "[...document.querySelectorAll('#todos li.pending .title')].some((e) => e.textContent === 'milk')")
        .await?;
    // Stopped, the worker holds no timer that could replay before the server refuses.
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    harness.test_hook("/__test/fail-graphql?status=422").await?;
    harness.click("#cachet-devtools-toggle").await?;
    harness.click("#cachet-devtools button.replay-queue").await?;
    let letter = harness
        .wait_for(
            "the dead letter in the panel",
            "[...document.querySelectorAll('#cachet-devtools li.dead-letter')].map((li) => li.textContent).join('|')",
        )
        .await?;
    let letter = letter.as_str().unwrap_or_default().to_owned();
    assert!(
        letter.contains("CreateTodo") && letter.contains("rejected (422)") && letter.contains("milk"),
        "{letter}"
    );
    assert_eq!(harness.count("graphql CreateTodo"), 1, "refused once");
    assert!(harness.server_todos("alice")?.is_empty());

    // The server is fixed (it refused once); retry from the panel.
    harness.click("#cachet-devtools li.dead-letter button.retry").await?;
    harness.wait_for_list(&["milk"]).await?;
    harness
        .wait_for("no dead letter left", "document.querySelectorAll('#cachet-devtools li.dead-letter').length === 0 && document.querySelector('#cachet-devtools-dead-letters') !== null")
        .await?;
    let titles: Vec<String> = harness.server_todos("alice")?.into_iter().map(|todo| todo.title).collect();
    assert_eq!(titles, ["milk"], "applied exactly once");
    assert_eq!(harness.count("graphql CreateTodo"), 2, "one refusal, one replay");
    Ok(())
}

const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_cachet_acts_on_dead_letters_and_the_plain_panel_shows_entries() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_plain_page("devtools").await?;
    let answer = harness
        .eval(
            "fetch('/api/login', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({username: 'bob', password: 'bob-password'})}).then((r) => r.json())",
        )
        .await?;
    let outcome = harness.eval(&format!("cachet.setAuth({answer})")).await?;
    assert!(outcome.get("error").is_none(), "{outcome}");
    let query =
        harness.eval("cachet.queryGql('query GetTodos { todos { title } }', {}, { auth: true })").await?;
    assert_eq!(query["data"], json!({"todos": []}), "{query}");

    harness.click("#cachet-devtools-toggle").await?;
    let tags = harness
        .wait_for("the plain panel's GetTodos entry", &format!("{}[0]?.tags[0]", entry_js("GetTodos")))
        .await?;
    assert!(tags.as_str().is_some_and(|tags| tags.contains("todos")), "{tags}");

    harness.stop_server().await;
    let queued = harness
        .eval(&format!(
            "cachet.mutateGql({}, {{ title: 'never' }}, {{ auth: true, queueOffline: true }})",
            json!(CREATE)
        ))
        .await?;
    assert!(queued["queued"].is_u64(), "queued, with its id: {queued}");
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    harness.test_hook("/__test/fail-graphql?status=422").await?;
    harness.eval("cachet.replayQueue()").await?;
    let letters = harness
        .wait_for(
            "a dead letter in the plain panel",
            "document.querySelector('#cachet-devtools li.dead-letter')?.dataset.id",
        )
        .await?;
    let id: u64 = letters.as_str().unwrap_or_default().parse()?;
    let listed = harness.eval("cachet.deadLetters()").await?;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], json!(id));
    assert_eq!(listed[0]["reason"], json!({"kind": "rejected", "status": 422}));
    assert_eq!(listed[0]["variables"], json!(r#"{"title":"never"}"#));

    let refused = harness
        .eval("cachet.retryDeadLetters([999]).then(() => 'retried', (e) => e.kind + ': ' + e.message)")
        .await?;
    let refused = refused.as_str().unwrap_or_default().to_owned();
    assert!(
        refused.starts_with("service-worker") && refused.contains("mutation 999 is not a dead letter"),
        "{refused}"
    );
    let bad = harness.eval("cachet.discardDeadLetters('nonsense').then(() => 'ok', (e) => e.kind)").await?;
    assert_eq!(bad, json!("invalid"), "garbage ids are a typed error");
    assert_eq!(harness.eval("cachet.deadLetters().then((l) => l.length)").await?, json!(1), "nothing lost");

    harness.eval(&format!("cachet.discardDeadLetters([{id}])")).await?;
    assert_eq!(harness.eval("cachet.deadLetters()").await?, json!([]));
    assert_eq!(harness.count("graphql CreateTodo"), 1, "discarded, never sent again");
    assert!(harness.server_todos("bob")?.is_empty());
    let _: Value = harness.eval("cachet.getSnapshot({ limit: 1 })").await?;
    Ok(())
}

/// The bare page's side of `snapshot-request`: `window.snapshot(query)` resolves to the worker's snapshot.
const SNAPSHOT_CLIENT: &str = "window.snapshot = (query) => new Promise((resolve) => {
    const requestId = Math.floor(Math.random() * 1e9);
    const listener = (event) => {
      const message = JSON.parse(event.data);
      if (message.type !== 'snapshot' || message.requestId !== requestId) return;
      navigator.serviceWorker.removeEventListener('message', listener);
      resolve(message.snapshot);
    };
    navigator.serviceWorker.addEventListener('message', listener);
    navigator.serviceWorker.controller.postMessage(JSON.stringify({v: 1, type: 'snapshot-request', requestId, query}));
  }); done(true);";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_entries_cost_one_page_and_a_corrupt_record_is_named_not_lost() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    // 10,000 records in the worker's entry index, as the worker writes them, and one that does not decode.
    let written = harness
        .run_async(
            "const open = indexedDB.open('cachet');
             open.onsuccess = () => {
               const db = open.result, transaction = db.transaction('entries', 'readwrite'), store = transaction.objectStore('entries');
               for (let i = 0; i < 10000; i++) {
                 store.put({url: 'http://bulk.test/__cachet/gql/p1/' + String(i).padStart(5, '0'), cache: 'cachet-graphql-v2',
                            tags: ['bulk'], generation: 0, storedAt: 1, usedAt: 2, request: 'Bulk', size: 3,
                            strategy: 'cache-first'});
               }
               store.put({url: 'http://bulk.test/zzz-corrupt', cache: 5, tags: ['bulk']});
               transaction.oncomplete = () => { db.close(); done(true); };
               transaction.onerror = () => done(String(transaction.error));
             };
             open.onerror = () => done(String(open.error));",
        )
        .await?;
    assert_eq!(written, json!(true));
    harness.run_async(SNAPSHOT_CLIENT).await?;
    let pages = harness
        .run_async(
            "(async () => {
               const pages = []; let after, problems = [], tags;
               do {
                 const snapshot = await window.snapshot({tag: 'bulk', limit: 500, after});
                 pages.push([snapshot.entries.items.length, snapshot.entries.scanned]);
                 problems = problems.concat(snapshot.problems);
                 tags = snapshot.tags;
                 after = snapshot.entries.next;
               } while (after && pages.length < 100);
               done({pages, problems, bulk: tags.find((t) => t.tag === 'bulk')});
             })();",
        )
        .await?;
    let rows: Vec<(u64, u64)> = serde_json::from_value(pages["pages"].clone())?;
    assert_eq!(rows.iter().map(|(items, _)| items).sum::<u64>(), 10_000, "every entry once: {rows:?}");
    assert!(rows.iter().all(|(items, scanned)| *items <= 500 && *scanned <= 2_000), "{rows:?}");
    assert!(rows.len() >= 20 && rows.len() <= 22, "pages of 500: {rows:?}");
    assert_eq!(pages["bulk"], json!({"tag": "bulk", "entries": 10_001}));
    let problems = pages["problems"].to_string();
    assert!(
        problems.contains("http://bulk.test/zzz-corrupt") && problems.contains("entry index record"),
        "{problems}"
    );
    let kept = harness
        .run_async(
            "const open = indexedDB.open('cachet');
             open.onsuccess = () => { const get = open.result.transaction('entries').objectStore('entries').get('http://bulk.test/zzz-corrupt');
               get.onsuccess = () => { open.result.close(); done(get.result); }; };",
        )
        .await?;
    assert_eq!(kept["cache"], json!(5), "the corrupt record is still there: {kept}");
    Ok(())
}

/// An entry whose tag was invalidated after it was stored is absent for the engine (generations) until
/// the sweep deletes it: the snapshot leaves it out too, even while its record is still in the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_invalidated_but_not_yet_swept_is_not_listed() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_bare_controlled().await?;
    harness.run_async(SNAPSHOT_CLIENT).await?;
    let put = |records: &str| {
        format!(
            "const open = indexedDB.open('cachet');
             open.onsuccess = () => {{
               const db = open.result, transaction = db.transaction('entries', 'readwrite');
               for (const record of {records}) transaction.objectStore('entries').put(record);
               transaction.oncomplete = () => {{ db.close(); done(true); }};
               transaction.onerror = () => done(String(transaction.error));
             }};
             open.onerror = () => done(String(open.error));"
        )
    };
    let record = |url: &str, tag: &str| {
        format!(
            "{{url: 'http://stale.test/__cachet/gql/p1/{url}', cache: 'cachet-graphql-v2', tags: ['{tag}'],
               generation: 0, storedAt: 1, usedAt: 2, request: '{url}', size: 3, strategy: 'cache-first'}}"
        )
    };
    // `swept` is stored before `gone` is invalidated: the invalidation's sweep deletes it, and once it is
    // gone the sweep is over.
    assert_eq!(harness.run_async(&put(&format!("[{}]", record("swept", "gone")))).await?, json!(true));
    let acked = harness
        .run_async(
            "const requestId = 77;
             navigator.serviceWorker.addEventListener('message', (event) => {
               const message = JSON.parse(event.data);
               if (message.requestId === requestId) done(message.type);
             });
             navigator.serviceWorker.controller.postMessage(
               JSON.stringify({v: 1, type: 'invalidate-tags', requestId, tags: ['gone']}));",
        )
        .await?;
    assert_eq!(acked, json!("ack"));
    let listed = "(async () => {
                    const snapshot = await window.snapshot({limit: 50});
                    done(snapshot.entries.items.filter((entry) => entry.url.startsWith('http://stale.test/'))
                           .map((entry) => entry.request).sort());
                  })();";
    let stored = |url: &str| {
        format!(
            "const open = indexedDB.open('cachet');
             open.onsuccess = () => {{
               const get = open.result.transaction('entries').objectStore('entries')
                 .get('http://stale.test/__cachet/gql/p1/{url}');
               get.onsuccess = () => {{ open.result.close(); done(get.result !== undefined); }};
             }};"
        )
    };
    let mut swept = false;
    for _ in 0..200 {
        if harness.run_async(&stored("swept")).await? == json!(false) {
            swept = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(swept, "the sweep deleted the record stored before the invalidation");
    // Now a record of `gone` from before the invalidation (generation 0), which no sweep has seen, and a
    // current one of a tag never invalidated.
    let records = format!("[{}, {}]", record("stale", "gone"), record("current", "kept"));
    assert_eq!(harness.run_async(&put(&records)).await?, json!(true));
    assert_eq!(harness.run_async(listed).await?, json!(["current"]));
    assert_eq!(
        harness.run_async(&stored("stale")).await?,
        json!(true),
        "the stale record is in the index: left out, not deleted"
    );
    Ok(())
}
