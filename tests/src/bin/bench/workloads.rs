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

use anyhow::{bail, Result};

use crate::browser::Browser;
use crate::checks::{expect_cachet_sources, expect_count, numbers, samples};
use crate::invalidation::invalidation;
use crate::variants::{Variant, APQ_ENDPOINT};
pub use crate::workload_model::{Measurement, Rows, Settings, Site, Workload};

/// Runs every workload, interleaving the variants workload by workload so that they share the machine's
/// conditions; `progress` gets a line per step. Returns the measurements and notes (seeding times).
pub async fn run_all(
    browser: &Browser,
    sites: &[Site],
    settings: Settings,
    rows: &Rows,
    progress: &dyn Fn(&str),
) -> Result<(Vec<Measurement>, Vec<String>)> {
    let mut measured = Vec::new();
    let mut notes = Vec::new();
    let mut keep = |workload: Workload, variant: Variant, samples: Vec<f64>| {
        progress(&format!("{:<8} {}: {} samples", variant.name(), workload.title(), samples.len()));
        measured.push(Measurement { workload, variant, samples });
    };
    let wants = |workload: Workload| rows.wants(workload.title());
    for (workload, id, size) in [(Workload::Hit1k, 1, 1024), (Workload::Hit100k, 2, 100 * 1024)] {
        for site in sites.iter().filter(|_| wants(workload)) {
            keep(workload, site.variant, hit(browser, site, id, size, settings.hit).await?);
        }
    }
    for site in sites.iter().filter(|_| wants(Workload::Miss)) {
        keep(Workload::Miss, site.variant, miss(browser, site, 10_000, settings.miss).await?);
    }
    let texts = [(Workload::MissText, "/graphql", 40_000), (Workload::MissHashed, APQ_ENDPOINT, 50_000)];
    for (workload, endpoint, first_id) in texts {
        for site in sites.iter().filter(|site| wants(workload) && workload.applies_to(site.variant)) {
            // The hashed row runs on cachet's persisted-query origin (its worker built with the feature).
            let origin = match workload {
                Workload::MissHashed => site.apq.as_ref().unwrap_or(&site.main),
                _ => &site.main,
            };
            let (samples, bytes) =
                miss_text(browser, site.variant, origin, first_id, endpoint, settings.miss).await?;
            keep(workload, site.variant, samples);
            if site.variant == Variant::Cachet {
                notes.push(format!(
                    "{}: {bytes:.0} bytes on the wire per query (the server's count)",
                    workload.title()
                ));
            }
        }
    }
    for site in sites.iter().filter(|_| wants(Workload::Mutation)) {
        keep(Workload::Mutation, site.variant, mutation(browser, site, 3, settings.mutation).await?);
    }
    let event = wants(Workload::InvalidationEvent) || wants(Workload::InvalidationFresh);
    for site in sites.iter().filter(|site| event && Workload::InvalidationEvent.applies_to(site.variant)) {
        let (to_event, to_fresh) = invalidation_event(browser, site, 4, settings.event).await?;
        keep(Workload::InvalidationEvent, site.variant, to_event);
        keep(Workload::InvalidationFresh, site.variant, to_fresh);
    }
    for site in sites
        .iter()
        .filter(|site| wants(Workload::HookRerender) && Workload::HookRerender.applies_to(site.variant))
    {
        keep(Workload::HookRerender, site.variant, hook_rerender(browser, site, 7, settings.hook).await?);
    }
    for site in sites.iter().filter(|_| wants(Workload::ColdStart)) {
        keep(Workload::ColdStart, site.variant, cold_start(browser, site, 5, settings.cold).await?);
    }
    for (ms, workload, first_id) in [(0, Workload::ColdMiss, 20_000), (50, Workload::ColdMissRtt, 30_000)] {
        for site in sites.iter().filter(|_| wants(workload)) {
            keep(workload, site.variant, cold_miss(browser, site, first_id, ms, settings.cold).await?);
        }
    }
    for site in sites.iter().filter(|_| wants(Workload::ColdAssetRtt)) {
        keep(Workload::ColdAssetRtt, site.variant, cold_asset(browser, site, 50, settings.cold).await?);
    }
    for (ms, first_byte, load) in [
        (0, Workload::NavFirstByte, Workload::NavLoad),
        (50, Workload::NavFirstByteRtt, Workload::NavLoadRtt),
    ] {
        for site in sites.iter().filter(|_| wants(first_byte) || wants(load)) {
            let (to_first_byte, to_load) = navigations(browser, site, ms, settings.nav).await?;
            keep(first_byte, site.variant, to_first_byte);
            keep(load, site.variant, to_load);
        }
    }
    let sizes = [Workload::Invalidate1k, Workload::Invalidate10k, Workload::Miss1k, Workload::Miss10k];
    let at_sizes = sizes.into_iter().any(wants);
    for site in sites.iter().filter(|site| at_sizes && Workload::Invalidate1k.applies_to(site.variant)) {
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

/// [`miss`] of the ~1 KB query text at `endpoint`: the samples, and the bytes each timed query put on
/// the wire (the server's count). Each timed query must be one request (a hashed one, once the warm-up
/// registered the text, a GET of the hash).
async fn miss_text(
    browser: &Browser,
    variant: Variant,
    origin: &crate::server::Origin,
    first_id: u64,
    endpoint: &str,
    (timed, warmup): (u64, u64),
) -> Result<(Vec<f64>, f64)> {
    browser.open(&origin.url, variant).await?;
    browser.call(&format!("bench.missText({first_id}, 1024, 0, {warmup}, '{endpoint}')")).await?;
    let (requests, bytes) = origin.counts.wire();
    let before = origin.counts.snapshot();
    let next = first_id + warmup;
    let out = browser.call(&format!("bench.missText({next}, 1024, {timed}, 0, '{endpoint}')")).await?;
    let queries = origin.counts.snapshot().0 - before.0;
    expect_count(variant, "miss (text): server queries", queries, timed..=timed)?;
    let (requests_after, bytes_after) = origin.counts.wire();
    expect_count(variant, "miss (text): requests", requests_after - requests, timed..=timed)?;
    expect_cachet_sources(variant, "miss (text)", &out["sources"], "network", timed)?;
    Ok((samples(&out)?, (bytes_after - bytes) as f64 / timed.max(1) as f64))
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
    stored_for_cold_starts(browser, site.variant, &site.main, id).await?;
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

/// `rounds` queries nobody stored (ids from `first_id`), each with every worker stopped first, the server
/// answering `ms` late: each must reach the server once, and cachet's answer come from the network.
async fn cold_miss(browser: &Browser, site: &Site, first_id: u64, ms: u64, rounds: u64) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    let mut times = Vec::new();
    for id in first_id..first_id + rounds {
        browser.stop_service_workers().await?;
        let before = site.main.counts.snapshot();
        let out = browser.call(&format!("bench.coldMiss({id}, 1024, {ms})")).await?;
        let queries = site.main.counts.snapshot().0 - before.0;
        expect_count(site.variant, &format!("cold miss ({ms} ms): server queries"), queries, 1..=1)?;
        expect_cachet_sources(site.variant, "cold miss", &out["sources"], "network", 1)?;
        times.extend(samples(&out)?);
    }
    Ok(times)
}

/// `rounds` fetches of `/nav/<ms>/nav.js` from the page, each with every worker stopped first, after one
/// untimed: each must reach the server once (network-first for cachet and Workbox's route; the HTTP cache
/// revalidates a `no-cache` answer), and cachet's answer come from the network.
async fn cold_asset(browser: &Browser, site: &Site, ms: u64, rounds: u64) -> Result<Vec<f64>> {
    browser.open(&site.main.url, site.variant).await?;
    let url = format!("/nav/{ms}/nav.js");
    let expected = serde_json::json!(crate::server::NAV_SCRIPT);
    let mut times = Vec::new();
    for round in 0..=rounds {
        browser.stop_service_workers().await?;
        let before = site.main.counts.assets();
        let out = browser.call(&format!("bench.coldAsset({}, {expected})", serde_json::json!(url))).await?;
        let asked = site.main.counts.assets() - before;
        expect_count(site.variant, &format!("first asset ({ms} ms): assets served"), asked, 1..=1)?;
        expect_cachet_sources(site.variant, "first asset", &out["sources"], "network", 1)?;
        if round > 0 {
            times.extend(samples(&out)?);
        }
    }
    Ok(times)
}

/// The page's own timing of its navigation, once its load event is over: `{firstByte, load}` in ms from
/// the navigation's start, whether a worker controls it, and whether its script ran.
const NAVIGATION_TIMING: &str = "new Promise((resolve) => {
  const read = () => {
    const entry = performance.getEntriesByType('navigation')[0];
    if (!entry || entry.loadEventEnd === 0) return setTimeout(read, 5);
    resolve({firstByte: entry.responseStart - entry.startTime, load: entry.loadEventEnd - entry.startTime,
             controlled: navigator.serviceWorker.controller !== null, script: window.navScript === true});
  };
  read();
})";

/// `rounds` navigations to `/nav/<ms>/page.html`, each with every worker stopped first (as about a third
/// of navigations find theirs, Chrome's field data), after one untimed: the page's first byte and its
/// load, from the page's navigation timing. Each navigation must reach the server exactly once (a worker
/// that does not use its navigation preload asks twice), be controlled by the variant's worker, and run
/// the page's script.
async fn navigations(browser: &Browser, site: &Site, ms: u64, rounds: u64) -> Result<(Vec<f64>, Vec<f64>)> {
    browser.open(&site.main.url, site.variant).await?;
    let page = format!("{}/nav/{ms}/page.html", site.main.url);
    let (mut first_bytes, mut loads) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        browser.stop_service_workers().await?;
        let before = site.main.counts.pages();
        browser.goto(&page).await?;
        let timing = browser.call(NAVIGATION_TIMING).await?;
        let asked = site.main.counts.pages() - before;
        expect_count(site.variant, &format!("navigation ({ms} ms): pages served"), asked, 1..=1)?;
        let controlled = site.variant.sw_url().is_some();
        if timing["controlled"] != serde_json::json!(controlled)
            || timing["script"] != serde_json::json!(true)
        {
            bail!("{}: navigation ({ms} ms): {timing}", site.variant.name());
        }
        if round > 0 {
            first_bytes.extend(numbers(&serde_json::json!([timing["firstByte"]]))?);
            loads.extend(numbers(&serde_json::json!([timing["load"]]))?);
        }
    }
    Ok((first_bytes, loads))
}

/// Stores query `id` (1 KB) at `origin` for the cold starts: read until a read no longer reaches the
/// server (Workbox stores after answering, and a worker stopped before its write finished loses it), at
/// most 5 reads; the floor and no SW keep nothing, so one read is enough for them.
pub async fn stored_for_cold_starts(
    browser: &Browser,
    variant: Variant,
    origin: &crate::server::Origin,
    id: u64,
) -> Result<()> {
    browser.call(&format!("bench.once({id}, 1024)")).await?;
    if matches!(variant, Variant::NoSw | Variant::Floor) {
        return Ok(());
    }
    for _ in 0..5 {
        let before = origin.counts.snapshot();
        browser.call(&format!("bench.once({id}, 1024)")).await?;
        if origin.counts.snapshot().0 == before.0 {
            return named_when_quiet(browser, variant).await;
        }
    }
    bail!("{}: cold start: query {id} still reaches the server after 5 reads", variant.name())
}

/// cachet names a hit once its worker is quiet (`whenQuiet`, 50 ms after the last event): the cold
/// starts a stopped worker answers from that name wait for it (every 20 ms, at most 5 s), as a worker the
/// browser stops after 30 s idle would have written it.
async fn named_when_quiet(browser: &Browser, variant: Variant) -> Result<()> {
    if variant != Variant::Cachet {
        return Ok(());
    }
    let started = std::time::Instant::now();
    while browser.call(cachet_e2e::COUNT_NAMES).await?.as_u64().unwrap_or_default() == 0 {
        if started.elapsed() > std::time::Duration::from_secs(5) {
            bail!("cachet: cold start: the stored query was never named");
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    Ok(())
}
