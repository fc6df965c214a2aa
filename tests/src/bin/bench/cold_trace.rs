//! A cold start step by step: where a stopped worker's time goes before its first answer. At an origin of
//! its own, each variant's worker runs traced (bench/sw/trace.js, with the worker's real files), the
//! runner stops it, the page sends one stored query, and the worker reports its timeline from its start:
//! its scripts' evaluation, the fetch event, the wasm's Cache Storage read, WebAssembly's compile and
//! instantiate, the engine reading its config and installing itself, every IndexedDB open and
//! transaction, Cache Storage reads, and the settled `respondWith`. Every step is placed on the page's
//! clock: milliseconds after the page's `fetch`, p50 over the rounds. The same checks as the timed cold
//! start: the answer comes from storage, and a worker was really stopped and started.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{bail, Result};
use serde_json::Value;

use crate::browser::Browser;
use crate::checks::{expect_cachet_sources, expect_count};
use crate::report::stats;
use crate::variants::Variant;
use crate::workloads::Site;

/// The title of this part of the run (what `--rows` matches).
pub const TITLE: &str = "cold start, step by step";

/// One variant's cold starts: per step, (start, duration) in ms after the page's fetch, one per round
/// in which the step happened.
#[derive(Debug, Clone)]
pub struct ColdSteps {
    /// Who.
    pub variant: Variant,
    /// How many cold starts.
    pub rounds: u64,
    /// Step → its (start, duration) in each round it happened (its first occurrence in a round).
    pub steps: BTreeMap<String, Vec<(f64, f64)>>,
}

/// Traces `rounds` cold starts of each variant that has a worker, at its `cold` origin.
pub async fn run(browser: &Browser, sites: &[Site], rounds: u64) -> Result<Vec<ColdSteps>> {
    let mut all = Vec::new();
    for site in sites {
        let Some(inner) = site.variant.sw_url() else { continue };
        let origin = &site.cold;
        browser.open_with(&origin.url, site.variant, Some(&format!("/traced-sw.js?inner={inner}"))).await?;
        crate::workloads::stored_for_cold_starts(browser, site.variant, origin, 21).await?;
        let mut steps: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for _ in 0..rounds {
            browser.stop_service_workers().await?;
            let before = origin.counts.snapshot();
            let out = browser.call("bench.traceCold(21, 1024)").await?;
            let queries = origin.counts.snapshot().0 - before.0;
            let expected = u64::from(site.variant == Variant::Floor);
            expect_count(
                site.variant,
                "cold start, step by step: server queries",
                queries,
                expected..=expected,
            )?;
            expect_cachet_sources(site.variant, "cold start, step by step", &out["sources"], "cache", 1)?;
            for (name, start, duration) in round_steps(site.variant, &out)? {
                steps.entry(name).or_default().push((start, duration));
            }
        }
        all.push(ColdSteps { variant: site.variant, rounds, steps });
    }
    Ok(all)
}

/// One round's steps, on the page's clock; fails when the worker did not start in this round.
fn round_steps(variant: Variant, out: &Value) -> Result<Vec<(String, f64, f64)>> {
    let number = |value: &Value, what: &str| {
        value.as_f64().ok_or_else(|| anyhow::anyhow!("{}: cold trace: no {what}: {out}", variant.name()))
    };
    let started = number(&out["started"], "page start")?;
    let ended = number(&out["ended"], "page end")?;
    let origin = number(&out["timeline"]["origin"], "worker origin")?;
    if origin < started {
        bail!(
            "{}: cold trace: the worker started before the page's fetch: it was not stopped",
            variant.name()
        );
    }
    let mut steps = vec![
        ("worker's time origin (the browser started it)".to_owned(), origin - started, 0.0),
        ("page: body read (the whole cold start)".to_owned(), 0.0, ended - started),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for event in out["timeline"]["events"].as_array().into_iter().flatten() {
        let (Some(name), Some(from), Some(to)) = (event[0].as_str(), event[1].as_f64(), event[2].as_f64())
        else {
            bail!("{}: cold trace: a malformed event: {event}", variant.name());
        };
        // The first occurrence: the start path. Later ones (a second read of the same store) are the
        // background's.
        if seen.insert(name.to_owned()) {
            steps.push((name.to_owned(), origin + from - started, to - from));
        }
    }
    Ok(steps)
}

/// One table: per step, when it started and how long it took (p50, ms after the page's fetch), per
/// variant, in the order of cachet's (else the first variant's) start.
pub fn table(all: &[ColdSteps]) -> String {
    let mut text = String::new();
    if all.is_empty() {
        return text;
    }
    let _ = writeln!(
        text,
        "**{TITLE}**: a stopped worker's first answer (a stored 1 KB query), traced; per step, p50 over the \
         rounds of when it began and how long it took, in ms after the page's `fetch` (a step in fewer \
         rounds than all shows its count)\n"
    );
    text.push_str("| step |");
    for variant in all {
        let _ = write!(text, " {}: starts at | takes |", variant.variant.name());
    }
    text.push_str("\n|---|");
    text.push_str(&"---:|---:|".repeat(all.len()));
    text.push('\n');
    let order = all.iter().find(|v| v.variant == Variant::Cachet).unwrap_or(&all[0]);
    let start_of = |steps: &ColdSteps, name: &str| {
        steps.steps.get(name).and_then(|times| stats(&times.iter().map(|t| t.0).collect::<Vec<_>>()))
    };
    let mut names: Vec<&String> = all.iter().flat_map(|v| v.steps.keys()).collect();
    names.sort();
    names.dedup();
    names.sort_by(|a, b| {
        let key = |name: &str| {
            start_of(order, name).or_else(|| start_of(&all[0], name)).map_or(f64::MAX, |s| s.p50)
        };
        key(a).total_cmp(&key(b))
    });
    for name in names {
        let _ = write!(text, "| {} |", name.replace('|', "\\|"));
        for variant in all {
            match variant.steps.get(name.as_str()) {
                Some(times) => {
                    let start = stats(&times.iter().map(|t| t.0).collect::<Vec<_>>()).map_or(0.0, |s| s.p50);
                    let took = stats(&times.iter().map(|t| t.1).collect::<Vec<_>>()).map_or(0.0, |s| s.p50);
                    let count = match times.len() as u64 == variant.rounds {
                        true => String::new(),
                        false => format!(" (in {} of {})", times.len(), variant.rounds),
                    };
                    let _ = write!(text, " {start:.2} | {took:.2}{count} |");
                }
                None => text.push_str(" – | – |"),
            }
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(origin: f64, events: Value) -> Value {
        json!({ "started": 1000.0, "ended": 1030.0, "timeline": { "origin": origin, "events": events } })
    }

    #[test]
    fn steps_are_placed_on_the_page_clock_first_occurrence_only() -> Result<()> {
        let out = round(
            1002.5,
            json!([
                ["fetch event dispatched", 10.0, 10.0],
                ["caches.match (x)", 11.0, 12.5],
                ["caches.match (x)", 20.0, 21.0]
            ]),
        );
        let steps = round_steps(Variant::Cachet, &out)?;
        let find = |name: &str| steps.iter().find(|step| step.0 == name).map(|step| (step.1, step.2));
        assert_eq!(find("worker's time origin (the browser started it)"), Some((2.5, 0.0)));
        assert_eq!(find("page: body read (the whole cold start)"), Some((0.0, 30.0)));
        assert_eq!(find("fetch event dispatched"), Some((12.5, 0.0)));
        // The second read of the same name is the background's, not the start path's.
        assert_eq!(find("caches.match (x)"), Some((13.5, 1.5)));
        assert_eq!(steps.iter().filter(|step| step.0 == "caches.match (x)").count(), 1);
        Ok(())
    }

    #[test]
    fn a_worker_older_than_the_fetch_or_a_malformed_event_fails_the_round() {
        // Started before the page's fetch: it was not stopped, so this is no cold start.
        assert!(round_steps(Variant::Cachet, &round(990.0, json!([]))).is_err());
        assert!(round_steps(Variant::Cachet, &round(1001.0, json!([["no times"]]))).is_err());
        assert!(round_steps(Variant::Cachet, &json!({ "started": 1000.0 })).is_err());
    }

    #[test]
    fn the_table_orders_steps_by_cachet_start_and_counts_missing_rounds() {
        let steps = |pairs: &[(&str, Vec<(f64, f64)>)]| -> BTreeMap<String, Vec<(f64, f64)>> {
            pairs.iter().map(|(name, times)| ((*name).to_owned(), times.clone())).collect()
        };
        let cachet = ColdSteps {
            variant: Variant::Cachet,
            rounds: 2,
            steps: steps(&[("late", vec![(9.0, 1.0), (11.0, 1.0)]), ("early", vec![(1.0, 2.0)])]),
        };
        let table = table(&[cachet]);
        let early = table.find("| early |").expect("early row");
        let late = table.find("| late |").expect("late row");
        assert!(early < late, "{table}");
        assert!(table.contains("| early | 1.00 | 2.00 (in 1 of 2) |"), "{table}");
        assert!(table.contains("| late | 9.00 | 1.00 |"), "{table}");
    }
}
