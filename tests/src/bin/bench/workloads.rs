//! The workloads, run in the page at each variant's origin, with the checks that make a wrong answer
//! fail the run instead of being timed.
//!
//! Every workload checks the bodies in the page (id and exact size) and the server's request counts here:
//! a cache hit must not reach the server, a miss and an invalidated entry must. For cachet the
//! `X-Cachet-Source` header is checked too. In each invalidation round a query of an invalidated entry
//! sent as the `cache-invalidated` broadcast arrives, and one sent right after the ack, must reach the
//! network, and once the worker has swept, it must hold exactly what it held before the round's seeding
//! (counted in its storage, in the page); once per cache size the same holds with the worker stopped
//! between the ack and the query.

use std::ops::RangeInclusive;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::browser::Browser;
use crate::server::Origin;
use crate::variants::Variant;

/// What is measured, one row of the results table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A query answered from the cache, 1 KB.
    Hit1k,
    /// A query answered from the cache, 100 KB.
    Hit100k,
    /// A new query each time (1 KB): the server answers, the worker stores.
    Miss,
    /// The same with 1 000 entries stored.
    Miss1k,
    /// The same with 10 000 entries stored.
    Miss10k,
    /// A mutation that invalidates one stored query.
    Mutation,
    /// A mutation's fetch until the `cache-invalidated` broadcast reaches the page.
    InvalidationEvent,
    /// A mutation's fetch until the invalidated query has been read again (fresh, from the server).
    InvalidationFresh,
    /// A mutation's fetch until a `use_cachet_gql` component shows the fresh data (cachet only).
    HookRerender,
    /// A stopped worker until the first answer (a stored 1 KB query).
    ColdStart,
    /// `invalidate-tags` of one tag (100 entries) with 1 000 entries stored, until the ack.
    Invalidate1k,
    /// The same with 10 000 entries stored.
    Invalidate10k,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 12] = [
        Workload::Hit1k,
        Workload::Hit100k,
        Workload::Miss,
        Workload::Miss1k,
        Workload::Miss10k,
        Workload::Mutation,
        Workload::Invalidate1k,
        Workload::Invalidate10k,
        Workload::ColdStart,
        Workload::InvalidationEvent,
        Workload::InvalidationFresh,
        Workload::HookRerender,
    ];

    /// The row title.
    pub fn title(self) -> &'static str {
        match self {
            Workload::Hit1k => "GraphQL hit, 1 KB",
            Workload::Hit100k => "GraphQL hit, 100 KB",
            Workload::Miss => "GraphQL miss, 1 KB (network + store)",
            Workload::Miss1k => "GraphQL miss, 1k cached",
            Workload::Miss10k => "GraphQL miss, 10k cached",
            Workload::Mutation => "mutation invalidating 1 entry",
            Workload::InvalidationEvent => "mutation → `cache-invalidated` received in the page",
            Workload::InvalidationFresh => "mutation → event → fresh data read again",
            Workload::HookRerender => "mutation → `use_cachet_gql` re-rendered with fresh data",
            Workload::ColdStart => "cold start: stopped SW → first answer (stored 1 KB)",
            Workload::Invalidate1k => "invalidate 1 tag (100 entries), 1k cached",
            Workload::Invalidate10k => "invalidate 1 tag (100 entries), 10k cached",
        }
    }

    /// Whether the workload means anything for `variant` (tags and workers need a worker).
    pub fn applies_to(self, variant: Variant) -> bool {
        match self {
            Workload::HookRerender => variant == Variant::Cachet,
            Workload::InvalidationEvent
            | Workload::InvalidationFresh
            | Workload::Invalidate1k
            | Workload::Invalidate10k
            | Workload::Miss1k
            | Workload::Miss10k => variant != Variant::NoSw,
            _ => true,
        }
    }
}

/// Iteration counts: `(timed, warm-up)` per workload.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Each hit workload.
    pub hit: (u64, u64),
    /// The miss workload.
    pub miss: (u64, u64),
    /// The mutation workload.
    pub mutation: (u64, u64),
    /// The invalidation → event workload.
    pub event: (u64, u64),
    /// The mutation → hook re-rendered workload.
    pub hook: (u64, u64),
    /// Each invalidate-tags workload (each round seeds its 100 entries again first).
    pub invalidate: (u64, u64),
    /// The misses timed at each of the two cache sizes.
    pub miss_at_size: (u64, u64),
    /// Cold starts (no warm-up: each one is a first answer).
    pub cold: u64,
    /// Entries stored for the small and the large invalidation case.
    pub cached: (u64, u64),
}

impl Settings {
    /// The figures of BENCHMARKS.md.
    pub const FULL: Settings = Settings {
        hit: (200, 20),
        miss: (200, 10),
        mutation: (100, 10),
        event: (50, 5),
        hook: (50, 5),
        invalidate: (20, 2),
        miss_at_size: (20, 2),
        cold: 20,
        cached: (1_000, 10_000),
    };

    /// A smoke run: every workload and check, few iterations, small caches.
    pub const QUICK: Settings = Settings {
        hit: (20, 3),
        miss: (20, 2),
        mutation: (10, 2),
        event: (5, 1),
        hook: (5, 1),
        invalidate: (3, 1),
        miss_at_size: (5, 1),
        cold: 3,
        cached: (300, 600),
    };
}

/// One measured row cell.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// What.
    pub workload: Workload,
    /// Who.
    pub variant: Variant,
    /// Milliseconds, one per timed iteration.
    pub samples: Vec<f64>,
}

/// A variant's two origins: `main` for most workloads, `fresh` (empty storage) for the invalidation runs.
pub struct Site {
    /// The variant.
    pub variant: Variant,
    /// Its main origin.
    pub main: Origin,
    /// Its origin for the invalidation runs, which start from an empty cache.
    pub fresh: Origin,
    /// Its origin for the spans of the profile phase (a traced copy of its worker).
    pub traced: Origin,
    /// Its origin for the CPU profiles (the worker itself; cachet's wasm with function names).
    pub profiled: Origin,
}

const TAG_TARGET: &str = "target";
/// The two real queries (stored through the worker) among the 100 entries each invalidation round hits.
const TARGET_QUERIES: [u64; 2] = [95_000, 95_001];
/// The query the stopped-worker check invalidates (with 99 seeded entries).
const STOPPED_QUERY: u64 = 96_000;

/// Runs every workload, interleaving the variants workload by workload so that they share the machine's
/// conditions; `progress` gets a line per step. Returns the measurements and notes (seeding times).
pub async fn run_all(
    browser: &Browser,
    sites: &[Site],
    settings: Settings,
    progress: &dyn Fn(&str),
) -> Result<(Vec<Measurement>, Vec<String>)> {
    let mut measured = Vec::new();
    let mut notes = Vec::new();
    let mut keep = |workload: Workload, variant: Variant, samples: Vec<f64>| {
        progress(&format!("{:<8} {}: {} samples", variant.name(), workload.title(), samples.len()));
        measured.push(Measurement { workload, variant, samples });
    };
    for (workload, id, size) in [(Workload::Hit1k, 1, 1024), (Workload::Hit100k, 2, 100 * 1024)] {
        for site in sites {
            keep(workload, site.variant, hit(browser, site, id, size, settings.hit).await?);
        }
    }
    for site in sites {
        keep(Workload::Miss, site.variant, miss(browser, site, 10_000, settings.miss).await?);
    }
    for site in sites {
        keep(Workload::Mutation, site.variant, mutation(browser, site, 3, settings.mutation).await?);
    }
    for site in sites.iter().filter(|site| Workload::InvalidationEvent.applies_to(site.variant)) {
        let (to_event, to_fresh) = invalidation_event(browser, site, 4, settings.event).await?;
        keep(Workload::InvalidationEvent, site.variant, to_event);
        keep(Workload::InvalidationFresh, site.variant, to_fresh);
    }
    for site in sites.iter().filter(|site| Workload::HookRerender.applies_to(site.variant)) {
        keep(Workload::HookRerender, site.variant, hook_rerender(browser, site, 7, settings.hook).await?);
    }
    for site in sites {
        keep(Workload::ColdStart, site.variant, cold_start(browser, site, 5, settings.cold).await?);
    }
    for site in sites.iter().filter(|site| Workload::Invalidate1k.applies_to(site.variant)) {
        let (small, large, site_notes) = invalidation(browser, site, settings, progress).await?;
        keep(Workload::Invalidate1k, site.variant, small.invalidate);
        keep(Workload::Invalidate10k, site.variant, large.invalidate);
        keep(Workload::Miss1k, site.variant, small.miss);
        keep(Workload::Miss10k, site.variant, large.miss);
        notes.extend(site_notes);
    }
    Ok((measured, notes))
}

async fn hit(
    browser: &Browser,
    site: &Site,
    id: u64,
    size: u64,
    (timed, warmup): (u64, u64),
) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    // Warm-up first, in its own calls: Workbox stores a miss after answering it, so the first repeats may
    // still reach the server; warm up until a round reaches it no more. After the warm-up, no read may.
    if site.variant != Variant::NoSw {
        let mut rounds = 0;
        loop {
            let before = site.main.counts.snapshot();
            browser.call(&format!("bench.hit({id}, {size}, 0, {warmup})")).await?;
            if site.main.counts.snapshot().0 == before.0 {
                break;
            }
            rounds += 1;
            if rounds == 5 {
                bail!(
                    "{}: hit {size} B: still reaching the server after {rounds} warm-ups",
                    site.variant.name()
                );
            }
        }
    }
    let before = site.main.counts.snapshot();
    let out = browser.call(&format!("bench.hit({id}, {size}, {timed}, 0)")).await?;
    let queries = site.main.counts.snapshot().0 - before.0;
    let expected = if site.variant == Variant::NoSw { timed + 1 } else { 0 };
    expect_count(site.variant, &format!("hit {size} B: server queries"), queries, expected..=expected)?;
    expect_cachet_sources(site.variant, "hit", &out["sources"], "cache", timed)?;
    samples(&out)
}

async fn miss(
    browser: &Browser,
    site: &Site,
    first_id: u64,
    (timed, warmup): (u64, u64),
) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    let before = site.main.counts.snapshot();
    let out = browser.call(&format!("bench.miss({first_id}, 1024, {timed}, {warmup})")).await?;
    let queries = site.main.counts.snapshot().0 - before.0;
    expect_count(site.variant, "miss: server queries", queries, timed + warmup..=timed + warmup)?;
    expect_cachet_sources(site.variant, "miss", &out["sources"], "network", timed)?;
    samples(&out)
}

async fn mutation(browser: &Browser, site: &Site, id: u64, (timed, warmup): (u64, u64)) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    let before = site.main.counts.snapshot();
    let out = browser.call(&format!("bench.mutation({id}, {timed}, {warmup})")).await?;
    let after = site.main.counts.snapshot();
    let rounds = timed + warmup;
    // Each round's query must reach the server: the previous round's mutation invalidated it.
    expect_count(site.variant, "mutation: server queries", after.0 - before.0, rounds..=rounds)?;
    expect_count(site.variant, "mutation: server mutations", after.1 - before.1, rounds..=rounds)?;
    expect_cachet_sources(site.variant, "query after a mutation", &out["querySources"], "network", rounds)?;
    samples(&out)
}

async fn invalidation_event(
    browser: &Browser,
    site: &Site,
    id: u64,
    (timed, warmup): (u64, u64),
) -> Result<(Vec<f64>, Vec<f64>)> {
    browser.open(&site.main.url, site.variant).await?;
    let before = site.main.counts.snapshot();
    let out = browser.call(&format!("bench.invalidationToFresh({id}, {timed}, {warmup})")).await?;
    let rounds = timed + warmup;
    // The first store, then one fresh read per round; the query stored by a round's fresh read is the
    // next round's starting point, read from the cache (Workbox may still be storing it: then it is read
    // from the server again, untimed).
    let queries = site.main.counts.snapshot().0 - before.0;
    let allowed = match site.variant {
        Variant::Workbox => rounds + 1..=2 * rounds + 1,
        _ => rounds + 1..=rounds + 1,
    };
    expect_count(site.variant, "invalidation event: server queries", queries, allowed)?;
    expect_cachet_sources(site.variant, "fresh read", &out["refetchSources"], "network", rounds)?;
    Ok((samples(&out)?, numbers(&out["toFresh"])?))
}

/// On `hook.html`: a `use_cachet_gql` component showing item `id`, invalidated by a mutation each round.
async fn hook_rerender(
    browser: &Browser,
    site: &Site,
    id: u64,
    (timed, warmup): (u64, u64),
) -> Result<Vec<f64>> {
    browser.goto(&format!("{}/hook.html", site.main.url)).await?;
    let before = site.main.counts.snapshot();
    let out = browser.call(&format!("bench.hookRerender({id}, {timed}, {warmup})")).await?;
    let after = site.main.counts.snapshot();
    let rounds = timed + warmup;
    // One fetch per round (the hook's refetch after the invalidation), and maybe the first one.
    expect_count(site.variant, "hook: server queries", after.0 - before.0, rounds..=rounds + 1)?;
    expect_count(site.variant, "hook: server mutations", after.1 - before.1, rounds..=rounds)?;
    let (first, last) = (out["first"].as_u64().unwrap_or(0), out["last"].as_u64().unwrap_or(0));
    expect_count(site.variant, "hook: revisions rendered", last.saturating_sub(first), rounds..=rounds)?;
    samples(&out)
}

async fn cold_start(browser: &Browser, site: &Site, id: u64, rounds: u64) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    // Stored, then read once more (Workbox stores after answering: the second read lets it finish).
    browser.call(&format!("bench.once({id}, 1024)")).await?;
    browser.call(&format!("bench.once({id}, 1024)")).await?;
    let mut times = Vec::new();
    for _ in 0..rounds {
        browser.stop_service_workers().await?;
        let before = site.main.counts.snapshot();
        let out = browser.call(&format!("bench.once({id}, 1024)")).await?;
        let queries = site.main.counts.snapshot().0 - before.0;
        // cachet and Workbox answer from storage; the floor's memory died with its worker.
        let expected = match site.variant {
            Variant::NoSw | Variant::Floor => 1,
            Variant::Workbox | Variant::Cachet => 0,
        };
        expect_count(site.variant, "cold start: server queries", queries, expected..=expected)?;
        expect_cachet_sources(site.variant, "cold start", &out["sources"], "cache", 1)?;
        if site.variant.sw_url().is_some() && !browser.service_worker_running().await? {
            bail!("{}: no service worker running after a cold-start answer", site.variant.name());
        }
        times.extend(samples(&out)?);
    }
    Ok(times)
}

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
struct AtSize {
    invalidate: Vec<f64>,
    miss: Vec<f64>,
}

/// At the variant's fresh origin, for each cache size: seeds filler entries up to that size, times
/// invalidating 100 target entries (seeded again before each round; the page checks that each round
/// removes exactly them), then times misses at that size.
async fn invalidation(
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

fn expect_count(variant: Variant, what: &str, got: u64, allowed: RangeInclusive<u64>) -> Result<()> {
    if !allowed.contains(&got) {
        bail!(
            "{}: {what}: {got}, expected {allowed:?}: the variant did not do what it is timed for",
            variant.name()
        );
    }
    Ok(())
}

/// For cachet, `sources` (counts by `X-Cachet-Source`) must be `want` for all `count` answers.
fn expect_cachet_sources(
    variant: Variant,
    what: &str,
    sources: &Value,
    want: &str,
    count: u64,
) -> Result<()> {
    if variant == Variant::Cachet && sources[want].as_u64() != Some(count) {
        bail!("cachet: {what}: X-Cachet-Source counts {sources}, expected {count} × {want}");
    }
    Ok(())
}

fn samples(out: &Value) -> Result<Vec<f64>> {
    numbers(&out["samples"])
}

fn numbers(value: &Value) -> Result<Vec<f64>> {
    let Some(items) = value.as_array() else {
        bail!("the page returned no samples: {value}");
    };
    items.iter().map(|item| item.as_f64().ok_or_else(|| anyhow::anyhow!("not a number: {item}"))).collect()
}
