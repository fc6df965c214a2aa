//! The profile phase: where each worker's time goes, from a traced copy of it (bench/sw/trace.js) at an
//! origin of its own, after the timed runs. Per request: how long the page waited, how long the worker
//! took from its fetch event to a settled `respondWith`, and how long each browser operation it awaited
//! took to settle (Cache Storage, IndexedDB, body reads, the network, crypto.subtle). What the worker's
//! own code costs is the handler time minus what it waited for.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::browser::Browser;
use crate::variants::Variant;

/// One traced workload of one variant.
#[derive(Debug, Clone)]
pub struct Breakdown {
    /// The workload's title.
    pub workload: &'static str,
    /// Who.
    pub variant: Variant,
    /// Mean page-observed time of a timed operation, ms.
    pub page_mean: f64,
    /// How many operations the spans cover.
    pub operations: u64,
    /// Span name → (count, wall ms: the time the calls covered together).
    pub spans: BTreeMap<String, (u64, f64)>,
}

/// A CPU profile of a worker's thread during a run of hits.
#[derive(Debug, Clone)]
pub struct CpuProfile {
    /// Who.
    pub variant: Variant,
    /// What: the size of the answer.
    pub size: u64,
    /// How many hits the profile covers.
    pub hits: u64,
    /// Self time per function.
    pub profile: crate::cdp::Profile,
}

/// Hits profiled per variant and size.
const PROFILED_HITS: u64 = 200;

/// Takes a CPU profile of each variant's worker during hits at its `profiled` origin, then traces its
/// hits, misses and 10k invalidation at its `traced` origin. `large` is the large cache size of the
/// timed runs.
pub async fn run(
    browser: &Browser,
    sites: &[crate::workloads::Site],
    large: u64,
) -> Result<(Vec<Breakdown>, Vec<CpuProfile>)> {
    let mut breakdowns = Vec::new();
    let mut profiles = Vec::new();
    let debugger = browser.debugger_address().context("chromedriver reported no debuggerAddress")?;
    for site in sites {
        let (variant, origin) = (&site.variant, &site.traced);
        let Some(inner) = variant.sw_url() else { continue };
        // The CPU profiles: the worker as it is (not traced), with cachet's function names.
        browser.open(&site.profiled.url, *variant).await?;
        for (id, size) in [(13, 1024), (14, 100 * 1024)] {
            browser.call(&format!("bench.hit({id}, {size}, 0, 20)")).await?;
            let mut session = crate::cdp::Session::attach_to_worker(&debugger, &site.profiled.url).await?;
            session.start_profiler(100).await?;
            browser.call(&format!("bench.hit({id}, {size}, {PROFILED_HITS}, 0)")).await?;
            let raw = session.stop_profiler().await?;
            // Kept for DevTools (Performance panel, "Load profile").
            let saved =
                crate::cachet_e2e_target().join(format!("{}-hit-{}k.cpuprofile", variant.key(), size / 1024));
            std::fs::write(&saved, raw.to_string())?;
            let profile = crate::cdp::self_times(&raw);
            profiles.push(CpuProfile { variant: *variant, size, hits: PROFILED_HITS + 1, profile });
        }
        // The spans: a traced copy of the worker.
        browser.open_with(&origin.url, *variant, Some(&format!("/traced-sw.js?inner={inner}"))).await?;
        let kind = variant.key();
        let runs: [(&'static str, String); 5] = [
            ("GraphQL hit, 1 KB", "bench.traceHits(11, 1024, 100, 20)".to_owned()),
            ("GraphQL hit, 100 KB", "bench.traceHits(12, 102400, 50, 10)".to_owned()),
            ("GraphQL miss, 1 KB", "bench.traceMisses(500000, 1024, 50)".to_owned()),
            (
                "invalidate 1 tag (100 entries), 10k cached",
                format!(
                    "bench.once(80000, 1024).then(() => bench.seed('{kind}', 100000, {})).then(() => \
                     bench.traceInvalidations('{kind}', 90000, 100, 'target', 5))",
                    large - 101
                ),
            ),
            ("GraphQL miss, 1 KB, 10k cached", "bench.traceMisses(600000, 1024, 20)".to_owned()),
        ];
        for (workload, expression) in runs {
            let out = browser.call(&expression).await?;
            breakdowns.push(breakdown(workload, *variant, &out)?);
        }
    }
    Ok((breakdowns, profiles))
}

fn breakdown(workload: &'static str, variant: Variant, out: &Value) -> Result<Breakdown> {
    let samples: Vec<f64> =
        out["samples"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
    let operations = out["requests"].as_u64().unwrap_or(0);
    if samples.is_empty() || operations == 0 {
        bail!("{}: {workload}: the traced run returned nothing: {out}", variant.name());
    }
    let spans = out["spans"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, span)| {
            (name.clone(), (span["count"].as_u64().unwrap_or(0), span["wall"].as_f64().unwrap_or(0.0)))
        })
        .collect();
    Ok(Breakdown {
        workload,
        variant,
        page_mean: samples.iter().sum::<f64>() / samples.len() as f64,
        operations,
        spans,
    })
}

/// One table per workload: per operation, the page's wait, then each span's time and count, per variant.
pub fn tables(breakdowns: &[Breakdown]) -> String {
    let mut text = String::new();
    let mut workloads: Vec<&'static str> = Vec::new();
    for breakdown in breakdowns {
        if !workloads.contains(&breakdown.workload) {
            workloads.push(breakdown.workload);
        }
    }
    for workload in workloads {
        let columns: Vec<&Breakdown> = breakdowns.iter().filter(|b| b.workload == workload).collect();
        let _ = writeln!(
            text,
            "**{workload}**: ms per operation (mean), × calls per operation; for a step, the wall time its \
             calls covered (concurrent calls overlap)\n"
        );
        text.push_str("| step |");
        for column in &columns {
            let _ = write!(text, " {} |", column.variant.name());
        }
        text.push_str("\n|---|");
        text.push_str(&"---:|".repeat(columns.len()));
        text.push_str("\n| page: whole operation |");
        for column in &columns {
            let _ = write!(text, " {:.2} |", column.page_mean);
        }
        text.push('\n');
        // Rows in the order of cachet's time, largest first.
        let mut names: Vec<&String> = columns.iter().flat_map(|c| c.spans.keys()).collect();
        names.sort();
        names.dedup();
        let per_op = |column: &Breakdown, name: &str| {
            column
                .spans
                .get(name)
                .map(|(count, ms)| (*count as f64 / column.operations as f64, ms / column.operations as f64))
        };
        let cachet = columns.iter().find(|c| c.variant == Variant::Cachet).copied();
        names.sort_by(|a, b| {
            let key = |name: &str| cachet.and_then(|c| per_op(c, name)).map_or(0.0, |(_, ms)| ms);
            key(b).total_cmp(&key(a))
        });
        for name in names {
            let _ = write!(text, "| {name} |");
            for column in &columns {
                match per_op(column, name) {
                    Some((count, ms)) => {
                        let _ = write!(text, " {ms:.2} (×{count:.2}) |");
                    }
                    None => text.push_str(" – |"),
                }
            }
            text.push('\n');
        }
        text.push('\n');
    }
    text
}

/// Per profiled size: how busy each worker's thread was per hit, then cachet's heaviest functions and its
/// time by crate (wasm) or script (JavaScript).
pub fn cpu_tables(profiles: &[CpuProfile]) -> String {
    let mut text = String::new();
    let mut sizes: Vec<u64> = profiles.iter().map(|p| p.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        let of_size: Vec<&CpuProfile> = profiles.iter().filter(|p| p.size == size).collect();
        let _ = writeln!(
            text,
            "**CPU profile of the worker's thread, hit {} KB** ({} hits, sampled every 100 µs; ms per hit)\n",
            size / 1024,
            of_size.first().map_or(0, |p| p.hits)
        );
        text.push_str("| | ");
        text.push_str(&of_size.iter().map(|p| p.variant.name()).collect::<Vec<_>>().join(" | "));
        text.push_str(" |\n|---|");
        text.push_str(&"---:|".repeat(of_size.len()));
        text.push_str("\n| busy (not idle) |");
        for p in &of_size {
            let _ = write!(text, " {:.2} |", (p.profile.total - p.profile.idle) / p.hits as f64);
        }
        text.push('\n');
        if let Some(cachet) = of_size.iter().find(|p| p.variant == Variant::Cachet) {
            let per_hit = |ms: f64| ms / cachet.hits as f64;
            let mut by_place: BTreeMap<String, f64> = BTreeMap::new();
            for ((name, place), ms) in &cachet.profile.functions {
                if name == "(idle)" {
                    continue;
                }
                let key = match (place.as_str(), name.as_str()) {
                    ("wasm", _) => "wasm: cachet's engine, every crate".to_owned(),
                    ("", "(anonymous)") => "native, not attributed by V8".to_owned(),
                    ("", _) => format!("browser API: {name}"),
                    (script, _) => format!("script: {script}"),
                };
                *by_place.entry(key).or_default() += ms;
            }
            let mut by_place: Vec<(String, f64)> = by_place.into_iter().collect();
            by_place.sort_by(|a, b| b.1.total_cmp(&a.1));
            let _ = writeln!(
                text,
                "\ncachet's busy time by where it runs (ms per hit):\n\n| where | ms per hit |\n|---|---:|"
            );
            for (place, ms) in by_place.iter().take(12) {
                let _ = writeln!(text, "| {place} | {:.3} |", per_hit(*ms));
            }
            let mut functions: Vec<(&(String, String), &f64)> =
                cachet.profile.functions.iter().filter(|((name, _), _)| name != "(idle)").collect();
            functions.sort_by(|a, b| b.1.total_cmp(a.1));
            let _ = writeln!(text, "\ncachet's heaviest functions (self time):\n\n| function | where | ms per hit |\n|---|---|---:|");
            for ((name, place), ms) in functions.iter().take(15) {
                let short: String = name.chars().take(90).collect();
                let _ =
                    writeln!(text, "| `{}` | {} | {:.3} |", short.replace('|', "\\|"), place, per_hit(**ms));
            }
        }
        text.push('\n');
    }
    text
}
