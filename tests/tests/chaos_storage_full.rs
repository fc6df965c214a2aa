//! Storage full, for real (issue 20): Chromium's profile lives on a size-limited tmpfs the test mounts
//! (root with `CAP_SYS_ADMIN`: the test fails, saying so, where it cannot mount), so the origin's quota
//! (a share of that small disk) and the disk itself are the limits for IndexedDB and Cache Storage alike.
//! The caches are filled with large answers until a store meets the limit; then mutations are queued
//! while the server is down (IndexedDB writes under pressure: the worker evicts cached answers to make
//! room). Checked: every fetch still answers, every mutation the worker said it queued is applied once
//! after the server comes back, none queued earlier is lost, and the app still answers a query.
//!
//! Ignored, because it fails (RELIABILITY.md, "Storage full, for real"): run it with `cargo test -p
//! cachet-e2e --test chaos_storage_full -- --ignored --nocapture` (`CACHET_STORAGE_PERSIST=1`: with
//! persistent storage granted to the origin first).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use cachet_e2e::chaos::{ask_for_replay, queue_summary, start_client, stored_queue_once_empty};
use cachet_e2e::Harness;
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// The size of the filesystem under the browser's profile.
const DISK_MB: u64 = 96;
const MUTATIONS: usize = 20;

/// A tmpfs mounted for the test, unmounted (and its directory removed) when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(megabytes: u64) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("cachet-storage-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(&dir)
            .status()
            .context("running mount")?;
        if !status.success() {
            let _ = std::fs::remove_dir(&dir);
            bail!("cannot mount a {megabytes} MB tmpfs at {} ({status}): this story needs root with CAP_SYS_ADMIN", dir.display());
        }
        Ok(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "fails: on a full disk Chromium 156 wiped the origin (its worker registration, IndexedDB with \
            the queued mutations, its caches), even with persistent storage granted \
            (CACHET_STORAGE_PERSIST=1); see RELIABILITY.md"]
async fn a_full_disk_fails_writes_typed_keeps_every_queued_mutation_and_the_app_answering() -> Result<()> {
    let disk = Tmpfs::mount(DISK_MB)?;
    let mut harness = Harness::start_with_profile(AuthMode::Cookie, &disk.0.join("profile")).await?;
    harness.open_bare_controlled().await?;
    start_client(&harness, "cookie", "alice").await?;
    let persist = std::env::var("CACHET_STORAGE_PERSIST").is_ok();
    if persist {
        let grant = json!({"permissions": ["durableStorage"], "origin": harness.url()});
        harness.devtools("Browser.grantPermissions", grant).await?;
        let persisted =
            harness.run_async("navigator.storage.persist().then(done, (e) => done(String(e)));").await?;
        println!("persisted: {persisted}");
    }
    let estimate =
        harness.run_async("navigator.storage.estimate().then((e) => done([e.usage, e.quota]));").await?;
    println!("storage estimate before: {estimate}");

    // Five mutations queued before the pressure (the server down): they must survive it.
    harness.stop_server().await;
    let early = harness
        .run_async(
            "(async () => { const statuses = [];
               for (let i = 0; i < 5; i++) {
                 const r = await fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json',
                   'x-cachet-queue-offline': '1', 'x-cachet-auth': '1'},
                   body: JSON.stringify({query: 'mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }',
                     variables: {t: 'early-' + i}})});
                 statuses.push(r.status); }
               return statuses; })().then(done, (e) => done(String(e)));",
        )
        .await?;
    assert_eq!(early, json!([202, 202, 202, 202, 202]), "queued before the pressure");
    harness.restart_server().await?;
    harness.emulate_offline(true).await?;
    harness.emulate_offline(false).await?;
    // Fill: the worker's wasm (about 270 KB) under distinct query strings, cache-first, until the
    // storage refuses (the worker then evicts half a cache and retries), 400 at most.
    let filled = harness
        .run_async(
            "(async () => {
               let fetched = 0, failed = 0;
               for (let n = 0; n < 400; n++) {
                 try { const r = await fetch('/cachet-sw_bg.wasm?fill=' + n, {headers: {'X-SW-Strategy': 'cache-first'}});
                       await r.arrayBuffer(); if (r.ok) fetched++; else failed++; } catch (e) { failed++; }
               }
               const e = await navigator.storage.estimate();
               return {fetched, failed, usage: e.usage, quota: e.quota};
             })().then(done, (e) => done(String(e)));",
        )
        .await?;
    println!("filled: {filled}");
    let after_fill = harness
        .run_async(
            "(async () => {
               const regs = await navigator.serviceWorker.getRegistrations();
               const names = (await indexedDB.databases()).map((d) => d.name);
               return {controller: !!navigator.serviceWorker.controller, registrations: regs.length, databases: names,
                       caches: await caches.keys()};
             })().then(done, (e) => done(String(e)));",
        )
        .await?;
    println!("after the fill: {after_fill}");
    let early_stored = stored_queue_once_empty(&harness, 0).await?;
    println!(
        "CHAOS-SUMMARY storage-full after-the-fill persisted={persist} fills={} fills_failed={} usage={} controller={} registrations={} databases={} queued_before={} left_after={}",
        filled["fetched"],
        filled["failed"],
        filled["usage"],
        after_fill["controller"],
        after_fill["registrations"],
        after_fill["databases"].as_array().map_or(0, Vec::len),
        5,
        early_stored["items"].as_array().map_or(0, Vec::len),
    );
    assert_eq!(
        queue_summary(&early_stored),
        "5 items, 0 dead letters",
        "the mutations queued before the pressure; the origin after the fill: {after_fill}"
    );

    // Queue mutations with the server down: IndexedDB writes under pressure.
    harness.stop_server().await;
    let queued = harness
        .run_async(&format!(
            "(async () => {{ const answers = [];
               for (let i = 0; i < {MUTATIONS}; i++) {{
                 try {{ const r = await fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
                   'x-cachet-queue-offline': '1', 'x-cachet-auth': '1'}},
                   body: JSON.stringify({{query: 'mutation CreateTodo($t: String!) {{ createTodo(title: $t) {{ id }} }}',
                     variables: {{t: 'full-' + i}}}})}});
                   answers.push({{i, status: r.status}}); }}
                 catch (e) {{ answers.push({{i, error: String(e)}}); }}
                 // Pressure between the queue's writes: more large answers (stored or refused).
                 await fetch('/cachet-sw_bg.wasm?more=' + i, {{headers: {{'X-SW-Strategy': 'network-only'}}}}).catch(() => {{}});
               }}
               return answers; }})().then(done, (e) => done(String(e)));"
        ))
        .await?;
    let queued_titles: Vec<String> = queued
        .as_array()
        .into_iter()
        .flatten()
        .filter(|answer| answer["status"] == json!(202))
        .filter_map(|answer| answer["i"].as_u64())
        .map(|i| format!("full-{i}"))
        .collect();
    let refused = MUTATIONS - queued_titles.len();
    harness.restart_server().await?;
    ask_for_replay(&harness).await?;
    let stored = stored_queue_once_empty(&harness, 20_000).await?;
    let applied: Vec<String> = harness.server_todos("alice")?.into_iter().map(|todo| todo.title).collect();
    let lost = queued_titles.iter().filter(|title| !applied.contains(title)).count();
    let twice = applied.len() - applied.iter().collect::<std::collections::BTreeSet<_>>().len();
    let answering = harness
        .run_async(
            "fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({query: 'query GetTodos { todos { id } }'})})
             .then((r) => r.json()).then((b) => done(b.data ? b.data.todos.length : String(JSON.stringify(b))), (e) => done(String(e)));",
        )
        .await?;
    println!(
        "CHAOS-SUMMARY storage-full run disk_mb={DISK_MB} fills={} fills_failed={} usage_mb={} quota_mb={} mutations={MUTATIONS} queued={} refused_typed={refused} applied={} lost={lost} applied_twice={twice} query_after={}",
        filled["fetched"],
        filled["failed"],
        filled["usage"].as_u64().unwrap_or_default() / 1_048_576,
        filled["quota"].as_u64().unwrap_or_default() / 1_048_576,
        queued_titles.len(),
        applied.len(),
        answering
    );
    if let Some(error) = queued.as_array().into_iter().flatten().find(|answer| answer.get("error").is_some())
    {
        println!("a refused mutation: {error}");
    }
    assert!(filled.get("fetched").is_some(), "filling: {filled}");
    assert_eq!(
        (lost, twice),
        (0, 0),
        "queued mutations lost, applied twice; the queue: {}",
        queue_summary(&stored)
    );
    assert!(matches!(answering, Value::Number(_)), "the app answers after the pressure: {answering}");
    drop(harness);
    drop(disk);
    Ok(())
}
