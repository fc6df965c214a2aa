//! The profile phase: where each worker's time goes, from a traced copy of it (bench/sw/trace.js) at an
//! origin of its own, after the timed runs. Per request: how long the page waited, how long the worker
//! took from its fetch event to a settled `respondWith`, and how long each browser operation it awaited
//! took to settle (Cache Storage, IndexedDB, body reads, the network, crypto.subtle). What the worker's
//! own code costs is the handler time minus what it waited for.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{bail, Result};
use serde_json::Value;

use crate::browser::Browser;
use crate::server::Origin;
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

/// Traces the hits, the misses and the 10k invalidation of every variant with a worker, at its `traced`
/// origin. `large` is the large cache size of the timed runs.
pub async fn run(browser: &Browser, traced: &[(Variant, &Origin)], large: u64) -> Result<Vec<Breakdown>> {
    let mut breakdowns = Vec::new();
    for (variant, origin) in traced {
        let Some(inner) = variant.sw_url() else { continue };
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
    Ok(breakdowns)
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
