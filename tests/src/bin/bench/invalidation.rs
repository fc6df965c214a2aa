//! The invalidation workload: `invalidate-tags` of 100 entries at two cache sizes, with the misses at
//! those sizes; each round checks that an invalidated entry is a miss as the broadcast arrives and right
//! after the ack, and that the worker holds exactly what it held before once it has swept; once per size
//! the same with the worker stopped between the ack and the query.

use anyhow::{bail, Context, Result};

use crate::browser::Browser;
use crate::checks::{expect_cachet_sources, expect_count, samples};
use crate::variants::Variant;
use crate::workload_model::{Settings, Site};

const TAG_TARGET: &str = "target";
/// The two real queries (stored through the worker) among the 100 entries each invalidation round hits.
const TARGET_QUERIES: [u64; 2] = [95_000, 95_001];
/// The query the stopped-worker check invalidates (with 99 seeded entries).
const STOPPED_QUERY: u64 = 96_000;

/// The check of an invalidation across a stopped worker: query `id` stored through the worker with 99
/// seeded entries of its tag (from `first_seeded`), invalidated, the worker stopped after the ack, then
/// the query sent again: it must reach the network; and once the next worker has swept (its start-up
/// pass, or the sweep the first worker began), it holds what it held before the seeding.
async fn stopped_between_ack_and_query(
    browser: &Browser,
    site: &Site,
    id: u64,
    first_seeded: u64,
) -> Result<()> {
    let kind = site.variant.key();
    let tag = format!("stopped-{id}");
    let out =
        browser.call(&format!("bench.storeTagged('{kind}', {id}, {first_seeded}, 100, '{tag}')")).await?;
    let held = out["before"].as_u64().unwrap_or_default();
    browser.call(&format!("bench.invalidateOnly('{tag}')")).await?;
    browser.stop_service_workers().await?;
    let before = site.fresh.counts.snapshot();
    let out = browser.call(&format!("bench.query({id}, '{tag}')")).await?;
    let queries = site.fresh.counts.snapshot().0 - before.0;
    expect_count(site.variant, "invalidated, worker stopped: server queries", queries, 1..=1)?;
    if site.variant == Variant::Cachet && out["source"] != serde_json::json!("network") {
        bail!("cachet: invalidated, worker stopped: answered from {}", out["source"]);
    }
    browser.call(&format!("bench.settled('{kind}', {held}, 'invalidating {tag} across a stop')")).await?;
    Ok(())
}

/// What one invalidation run measured at one cache size.
pub(crate) struct AtSize {
    pub(crate) invalidate: Vec<f64>,
    pub(crate) miss: Vec<f64>,
}

/// At the variant's fresh origin, for each cache size: seeds filler entries up to that size, times
/// invalidating 100 target entries (seeded again before each round; the page checks that each round
/// removes exactly them), then times misses at that size.
pub(crate) async fn invalidation(
    browser: &Browser,
    site: &Site,
    settings: Settings,
    progress: &dyn Fn(&str),
) -> Result<(AtSize, AtSize, Vec<String>)> {
    browser.open(&site.fresh.url, site.variant).await?;
    let kind = site.variant.key();
    let mut notes = Vec::new();
    // One store through the worker first: it creates the worker's storage the entries are seeded into.
    browser.call("bench.once(80000, 1024)").await?;
    let mut stored = 1;
    let mut next_filler = 100_000;
    let mut next_miss = 300_000;
    let mut results = Vec::new();
    let (small, large) = settings.cached;
    for total in [small, large] {
        let fillers = total - 100 - stored;
        let out = browser.call(&format!("bench.seed('{kind}', {next_filler}, {fillers})")).await?;
        let seconds = out["ms"].as_f64().unwrap_or_default() / 1000.0;
        progress(&format!("{:<8} seeded {fillers} entries in {seconds:.1} s", site.variant.name()));
        notes.push(format!(
            "{}: {fillers} entries seeded straight into its storage in {seconds:.1} s",
            site.variant.name()
        ));
        next_filler += fillers;
        stored += fillers;

        let (timed, warmup) = settings.invalidate;
        let before = site.fresh.counts.snapshot();
        let targets = serde_json::json!(TARGET_QUERIES);
        let out = browser
            .call(&format!(
                "bench.invalidate('{kind}', 90000, 100, '{TAG_TARGET}', {targets}, {timed}, {warmup})"
            ))
            .await?;
        // The two real target queries are stored at the first size, then kept.
        let first_size = total == small;
        if first_size {
            stored += TARGET_QUERIES.len() as u64;
        }
        expect_count(
            site.variant,
            "invalidate: entries besides the seeded targets",
            out["entries"].as_u64().unwrap_or(0),
            stored..=stored,
        )?;
        // Each round: both target queries from the server (the one sent on the broadcast, the one
        // after the ack); before the rounds, each stored once at the first size.
        let rounds = timed + warmup;
        let first = if first_size { TARGET_QUERIES.len() as u64 } else { 0 };
        let queries = site.fresh.counts.snapshot().0 - before.0;
        expect_count(
            site.variant,
            "invalidate: server queries",
            queries,
            2 * rounds + first..=2 * rounds + first,
        )?;
        expect_cachet_sources(
            site.variant,
            "query of an invalidated entry",
            &out["sources"],
            "network",
            2 * rounds,
        )?;
        let invalidate = samples(&out)?;
        // The floor keeps its entries in memory only: a stopped worker forgets everything.
        if site.variant != Variant::Floor {
            stopped_between_ack_and_query(browser, site, STOPPED_QUERY + total, 91_000).await?;
            stored += 1;
        }

        let (timed, warmup) = settings.miss_at_size;
        let before = site.fresh.counts.snapshot();
        let out = browser.call(&format!("bench.miss({next_miss}, 1024, {timed}, {warmup})")).await?;
        let queries = site.fresh.counts.snapshot().0 - before.0;
        expect_count(site.variant, "miss at size: server queries", queries, timed + warmup..=timed + warmup)?;
        expect_cachet_sources(site.variant, "miss at size", &out["sources"], "network", timed)?;
        next_miss += timed + warmup;
        stored += timed + warmup;
        results.push(AtSize { invalidate, miss: samples(&out)? });
    }
    let large_results = results.pop().context("no large run")?;
    let small_results = results.pop().context("no small run")?;
    Ok((small_results, large_results, notes))
}
