//! The offline queue against a server that does not honour `Idempotency-Key` (most servers: here
//! graphql-yoga with its defaults), the worker stopped again and again during the replay (issue 31).
//!
//! Thirty mutations are queued while the server cannot be reached; the page's network goes offline (its
//! queue alarm stays quiet) and the worker is stopped. Then the server answers again, each GraphQL answer
//! leaving 50 ms after its operation ran (the window in which a stopped worker loses the answer of an
//! applied mutation), the page's network comes back, and for 8 s the worker is stopped at random moments
//! 50 to 300 ms apart (CDP `ServiceWorker.stopAllWorkers`). Then the page is left alone for 10 s.
//!
//! Such a server applies a replay whose answer was lost twice: cachet's contract there is at least once,
//! in order. The story asserts that no mutation is lost, none dead-lettered, the order of first
//! applications is the queue's, and nothing stalls (all applied within 10 s of the last stop); it prints
//! one `RELIABILITY` line with the duplicates it saw (RELIABILITY.md).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cachet_e2e::chaos::{queue_summary, stored_queue_once_empty, Random};
use cachet_e2e::{Foreign, Harness};
use serde_json::json;

const MUTATIONS: usize = 30;
const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }";
const CONFIG: &str = r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#;
/// How long the worker is stopped again and again.
const STORM: Duration = Duration::from_secs(8);
/// How long the page is then left alone: every mutation must be applied by then.
const IDLE: Duration = Duration::from_secs(10);
/// How long the server holds each GraphQL answer after applying it.
const SLOW_ANSWER_MS: u64 = 50;

fn titles() -> Vec<String> {
    (0..MUTATIONS).map(|index| format!("m-{index:02}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_idempotency_keys_gets_every_mutation_at_least_once_in_order_and_none_stalls(
) -> Result<()> {
    let harness = Harness::start_foreign(Foreign::Yoga, CONFIG).await?;
    let server = harness.foreign().context("the foreign server")?;
    harness.open_plain_page("auth=cookie").await?;
    server.hook("/__interop/unreachable", json!({"unreachable": true})).await?;
    let script = format!(
        "(async () => {{
           const queued = [];
           for (const title of {titles}) {{
             const answer = await cachet.mutateGql({CREATE}, {{title}}, {{queueOffline: true}});
             queued.push(answer.queued);
           }}
           return queued;
         }})().then(done, (e) => done(String(e)));",
        titles = json!(titles()),
        CREATE = json!(CREATE)
    );
    let queued = harness.run_async(&script).await?;
    let count = queued.as_array().map_or(0, |ids| ids.iter().filter(|id| !id.is_null()).count());
    if count != MUTATIONS {
        bail!("not all were queued: {queued}");
    }
    harness.emulate_offline(true).await?;
    harness.stop_service_workers().await?;

    server.hook("/__interop/unreachable", json!({"unreachable": false})).await?;
    server.hook("/__interop/slow", json!({"ms": SLOW_ANSWER_MS})).await?;
    harness.emulate_offline(false).await?;
    let mut random = Random::seeded();
    println!("stop moments seeded with {}", random.0);
    let storm = Instant::now();
    let mut stops = 0;
    while storm.elapsed() < STORM {
        tokio::time::sleep(Duration::from_millis(50 + random.below(250))).await;
        harness.stop_service_workers().await?;
        stops += 1;
    }
    let last_stop = Instant::now();
    // The page is idle from here on: only the server's table is read, from this process.
    let expected = titles();
    let (applied, all_by_ms) = loop {
        let applied = server.todos("anonymous").await?;
        let distinct: std::collections::BTreeSet<&String> = applied.iter().collect();
        if distinct.len() >= MUTATIONS {
            break (applied.clone(), Some(last_stop.elapsed().as_millis()));
        }
        if last_stop.elapsed() > IDLE {
            break (applied.clone(), None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut first_seen: Vec<&String> = Vec::new();
    for title in &applied {
        if !first_seen.contains(&title) {
            first_seen.push(title);
        }
    }
    let twice = applied.len() - first_seen.len();
    let stored = stored_queue_once_empty(&harness, 5_000).await?;
    let (held_ms, turnaround_ms) = window_figures(&server.counts().await?);
    println!(
        "RELIABILITY no-idempotency stops={stops} applied={}/{MUTATIONS} applied_twice={twice} last_stop_to_all_applied_ms={} queue=\"{}\" server_apply_to_answer_ms={held_ms} answer_to_next_mutation_ms={turnaround_ms}",
        first_seen.len(),
        all_by_ms.map_or("never".to_owned(), |ms| ms.to_string()),
        queue_summary(&stored)
    );
    assert!(
        all_by_ms.is_some(),
        "stalled: {} of {MUTATIONS} applied {IDLE:?} after the last stop",
        first_seen.len()
    );
    assert_eq!(first_seen, expected.iter().collect::<Vec<_>>(), "each applied at least once, first in order");
    assert_eq!(queue_summary(&stored), "0 items, 0 dead letters", "the queue: {stored}");
    assert!(stops >= 10, "the worker was stopped {stops} times");
    Ok(())
}

/// The two parts of a replay's cycle, as medians over the server's record of each mutation (when it came,
/// when its answer was written out): from applying to answering (the server's share of the window in
/// which a stopped worker forgets an applied mutation), and from one answer to the next mutation's arrival
/// (the worker records the outcome, then sends the next; gaps of 100 ms or more had a stop in them and are
/// left out). `-` when there is none.
fn window_figures(counts: &serde_json::Value) -> (String, String) {
    let times: Vec<(f64, f64)> = counts["mutationTimes"]
        .as_array()
        .map(|times| {
            times
                .iter()
                .filter_map(|time| Some((time["arrivedMs"].as_f64()?, time["answeredMs"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let held = times.iter().map(|(arrived, answered)| answered - arrived).collect();
    let turnaround =
        times.windows(2).map(|pair| pair[1].0 - pair[0].1).filter(|gap| (0.0..100.0).contains(gap)).collect();
    (median(held), median(turnaround))
}

fn median(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).map_or("-".to_owned(), |value| format!("{value:.1}"))
}
