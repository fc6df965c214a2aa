//! Delivery of the offline mutation queue whatever the browser does to the Service Worker (issue 23).
//!
//! Thirty mutations are queued while the server is down; the server comes back (answering slowly: each
//! mutation is applied 50 ms before its answer leaves, the window in which a stopped worker loses the
//! answer), and the worker is stopped at random moments for several seconds (CDP
//! `ServiceWorker.stopAllWorkers`, as Chromium stops an idle worker or one being updated). Then the page
//! is left alone. Every mutation must be applied exactly once (the server's own table), in order, within
//! 5 s of the last stop, and none dead-lettered.
//!
//! The page is the harness's bare page with `window.cachet` loaded into it and nothing else: no query
//! that would refetch on `cache-invalidated` and so wake the worker on the side. Only the client's queue
//! alarm and the worker's start can bring the replay back after a stop.
//!
//! Each run prints one `RELIABILITY` line with its figures (see RELIABILITY.md).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Result};
use cachet_e2e::app::BEARER_CONFIG;
use cachet_e2e::chaos::{queue_summary, resume_client, start_client, stored_queue_once_empty, Random};
use cachet_e2e::{Harness, BARE_PAGE};
use serde_json::json;
use todo_backend::AuthMode;

const MUTATIONS: usize = 30;
const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";
/// How long the worker is stopped again and again.
const STORM: Duration = Duration::from_secs(6);
/// The longest a replay may take to finish after the last stop.
const AFTER_LAST_STOP: Duration = Duration::from_secs(5);
/// How long the server holds each GraphQL answer after applying it.
const SLOW_ANSWER_MS: u64 = 50;

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

fn titles() -> Vec<String> {
    (0..MUTATIONS).map(|index| format!("m-{index:02}")).collect()
}

/// Queues the mutations in order from the page while the server is down; fails unless each was queued.
async fn queue_all(harness: &Harness) -> Result<()> {
    let script = format!(
        "(async () => {{
           const queued = [];
           for (const title of {titles}) {{
             const response = await fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
               'x-cachet-queue-offline': '1', 'x-cachet-auth': '1'}},
               body: JSON.stringify({{query: {CREATE}, variables: {{title}}}})}});
             queued.push(response.headers.get('x-cachet-queued'));
           }}
           return queued;
         }})().then(done, (e) => done(String(e)));",
        titles = json!(titles()),
        CREATE = json!(CREATE)
    );
    let queued = harness.run_async(&script).await?;
    let ids = queued.as_array().map(|ids| ids.iter().filter(|id| id.is_string()).count());
    if ids != Some(MUTATIONS) {
        bail!("not all were queued: {queued}");
    }
    Ok(())
}

/// What one run measured.
struct Figures {
    stops: usize,
    reloads: usize,
    applied: usize,
    applied_twice: usize,
    dead_lettered: usize,
    /// From the last stop to the last mutation applied (negative: all were applied before it).
    last_stop_to_last_applied_ms: i64,
}

/// The whole story from the point where the mutations are queued and the worker stopped: the server
/// comes back, the page hears the network is back, the storm of stops (with a reload and a new login
/// every third stop when `reload_as` is `Some(auth)`), then the page idle until every mutation was
/// applied or 5 s passed since the last stop (or since the end of the reload that followed it).
async fn storm_then_idle(harness: &mut Harness, reload_as: Option<&str>) -> Result<Figures> {
    harness.restart_server().await?;
    harness.slow_graphql(SLOW_ANSWER_MS);
    harness.emulate_offline(false).await?;
    let mut random = Random::seeded();
    println!("stop moments seeded with {}", random.0);
    let storm_started = Instant::now();
    let (mut stops, mut reloads) = (0, 0);
    // The last disruption: a stop, or the end of a reload and its login (the test's own steps).
    let mut last_stop_ms = now_ms();
    while storm_started.elapsed() < STORM {
        tokio::time::sleep(Duration::from_millis(150 + random.below(750))).await;
        harness.stop_service_workers().await?;
        stops += 1;
        if let Some(auth) = reload_as.filter(|_| stops % 3 == 0) {
            harness.client.refresh().await?;
            harness.open_controlled_here().await?;
            resume_client(harness, auth, "alice").await?;
            reloads += 1;
        }
        last_stop_ms = now_ms();
    }
    let last_stop = Instant::now();
    // The page is idle from here on: only the server's table is read, from this process.
    let expected = titles();
    let applied = loop {
        let applied = harness.server_todos("alice")?;
        let done = applied.len() >= expected.len();
        if done || last_stop.elapsed() > AFTER_LAST_STOP + Duration::from_secs(1) {
            break applied;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let stored = stored_queue_once_empty(harness, 5_000).await?;
    let seen: Vec<&str> = applied.iter().map(|todo| todo.title.as_str()).collect();
    let distinct: std::collections::BTreeSet<&str> = seen.iter().copied().collect();
    let figures = Figures {
        stops,
        reloads,
        applied: distinct.len(),
        applied_twice: seen.len() - distinct.len(),
        dead_lettered: stored["deadLetters"].as_array().map_or(0, Vec::len),
        last_stop_to_last_applied_ms: applied.iter().map(|todo| todo.created_at).max().unwrap_or(0)
            - last_stop_ms,
    };
    println!(
        "RELIABILITY stops={} reloads={} applied={}/{} applied_twice={} dead_lettered={} last_stop_to_last_applied_ms={}",
        figures.stops,
        figures.reloads,
        figures.applied,
        MUTATIONS,
        figures.applied_twice,
        figures.dead_lettered,
        figures.last_stop_to_last_applied_ms
    );
    let summary = queue_summary(&stored);
    if seen != expected {
        let kept = harness.idempotent_answers("alice")?;
        let failed: Vec<&(String, u16, String)> =
            kept.iter().filter(|(_, _, body)| body.contains("errors")).collect();
        println!(
            "server: {} CreateTodo requests, {} answered again for a repeated key; {} answers kept, with errors: {failed:?}",
            harness.count("graphql CreateTodo"),
            harness.count("graphql idempotent replay"),
            kept.len()
        );
    }
    assert_eq!(seen, expected, "every mutation applied exactly once, in order; the queue: {summary}");
    assert_eq!(summary, "0 items, 0 dead letters", "the queue: {stored}");
    assert!(
        figures.last_stop_to_last_applied_ms <= AFTER_LAST_STOP.as_millis() as i64,
        "the last mutation was applied {} ms after the last stop",
        figures.last_stop_to_last_applied_ms
    );
    Ok(figures)
}

/// Starts the backend in `mode`, lets the app register the Service Worker, opens the bare page with
/// `window.cachet` (signed in as alice), and queues the mutations while the server is down; then the
/// page's network goes offline (its alarm stays quiet) and the worker is stopped.
async fn queued_offline(mode: AuthMode) -> Result<Harness> {
    let (mut harness, auth) = match mode {
        AuthMode::Cookie => (Harness::start(mode).await?, "cookie"),
        AuthMode::Bearer => (Harness::start_with_config(mode, BEARER_CONFIG).await?, "bearer"),
    };
    harness.open_bare_controlled().await?;
    start_client(&harness, auth, "alice").await?;
    harness.stop_server().await;
    queue_all(&harness).await?;
    harness.emulate_offline(true).await?;
    harness.stop_service_workers().await?;
    Ok(harness)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_mutations_are_applied_once_in_order_though_the_worker_is_stopped_again_and_again(
) -> Result<()> {
    let mut harness = queued_offline(AuthMode::Bearer).await?;
    let figures = storm_then_idle(&mut harness, None).await?;
    assert!(figures.stops >= 5, "the worker was stopped {} times", figures.stops);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_reloaded_during_the_stops_lends_its_new_auth_to_the_replay() -> Result<()> {
    let mut harness = queued_offline(AuthMode::Bearer).await?;
    let figures = storm_then_idle(&mut harness, Some("bearer")).await?;
    assert!(figures.reloads >= 2, "the page was reloaded {} times", figures.reloads);
    // Since the server came back it handed out one token per reloaded page, and tokens live in page
    // memory only: what was applied after a reload went with the new page's token. The reloaded page
    // restored its session from the refresh cookie; when that was refused (a refresh of the page before
    // it, cut off by the reload after the server had rotated the cookie's token), it logged in again: a
    // refused restore signs the page out but purges nothing, so the queue is still delivered in full.
    assert_eq!(harness.issued_tokens().len(), figures.reloads);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_tab_closed_the_queue_is_replayed_when_a_page_opens() -> Result<()> {
    let mut harness = queued_offline(AuthMode::Cookie).await?;
    // No page of the origin is left (the window shows another document); the worker is stopped.
    harness.client.goto("about:blank").await?;
    harness.emulate_offline(false).await?;
    harness.stop_service_workers().await?;
    harness.restart_server().await?;
    harness.slow_graphql(SLOW_ANSWER_MS);
    assert!(harness.server_todos("alice")?.is_empty(), "nothing was sent while no page was open");
    // A page with no cachet client of its own opens: only the worker's start can replay the queue.
    let opened_ms = now_ms();
    harness.client.goto(&format!("{}{BARE_PAGE}", harness.url())).await?;
    let opened = Instant::now();
    let expected = titles();
    let applied = loop {
        let applied = harness.server_todos("alice")?;
        if applied.len() >= expected.len() || opened.elapsed() > Duration::from_secs(15) {
            break applied;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let seen: Vec<&str> = applied.iter().map(|todo| todo.title.as_str()).collect();
    assert_eq!(seen, expected, "replayed at the worker's start, each once, in order");
    let last_applied = applied.iter().map(|todo| todo.created_at).max().unwrap_or(0);
    println!("RELIABILITY closed-tabs opened_to_last_applied_ms={}", last_applied - opened_ms);
    let stored = stored_queue_once_empty(&harness, 5_000).await?;
    assert_eq!(queue_summary(&stored), "0 items, 0 dead letters", "the queue: {stored}");
    Ok(())
}
