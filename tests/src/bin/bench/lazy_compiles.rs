//! A cold start's compiles: which functions of cachet's worker V8 compiled on the way to its first
//! answer. Chromium compiles wasm lazily (Liftoff, on the worker's one thread, as each function is first
//! called), so the code a cold hit runs is compiled while the page waits. A browser-wide trace of the
//! `v8.wasm` category around each cold hit (`wasm.CompileLazy`, one event per function, with its index)
//! says which functions and how long each took; the named build (`wasm-opt -Oz -g` of the same module:
//! the start module, which a stopped worker runs; checked to have the same function bodies) gives their
//! names. The page stamps the trace when it has
//! read the answer (`console.timeStamp`), which splits the compiles into those the answer waited for and
//! those of the work after it (the queue's start replay, the sweep). The same checks as the timed cold
//! start: the answer comes from storage, and a worker was really stopped and started.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::browser::Browser;
use crate::checks::{expect_cachet_sources, expect_count};
use crate::variants::Variant;
use crate::wasm_names::Functions;
use crate::workloads::Site;

/// The title of this part of the run (what `--rows` matches).
pub const TITLE: &str = "cold start, the code compiled on the way";

/// The stored query the rounds ask for (its own id: the other cold rows use theirs).
const QUERY: u64 = 31;
/// The page's stamp in the trace once it has read the answer.
const ANSWERED: &str = "cachet-bench: answered";

/// What V8 compiled in the cold starts of cachet's worker.
#[derive(Debug, Clone, Default)]
pub struct LazyCompiles {
    /// Cold starts traced.
    pub rounds: u64,
    /// Per round, before the page had the answer: functions compiled lazily, and the milliseconds their
    /// compiles took.
    pub per_round: Vec<(u64, f64)>,
    /// Per round, after it (background work): the same.
    pub after_answer: Vec<(u64, f64)>,
    /// Function index → (rounds it was compiled in before the answer, milliseconds over all rounds).
    pub functions: BTreeMap<u64, (u64, f64)>,
    /// Every `v8.wasm` event by name → (count, milliseconds) over all rounds.
    pub events: BTreeMap<String, (u64, f64)>,
}

/// Traces `rounds` cold hits of cachet's worker at its timed origin (the worker as it runs, not a traced
/// copy). `debugger` is the browser's DevTools `host:port`.
pub async fn run(browser: &Browser, site: &Site, rounds: u64) -> Result<LazyCompiles> {
    if site.variant != Variant::Cachet {
        bail!("the lazy compiles are traced for cachet's worker only");
    }
    let debugger = browser.debugger_address().context("chromedriver reported no debuggerAddress")?;
    let origin = &site.main;
    browser.open(&origin.url, site.variant).await?;
    crate::workloads::stored_for_cold_starts(browser, site.variant, origin, QUERY).await?;
    let mut result = LazyCompiles { rounds, ..LazyCompiles::default() };
    for _ in 0..rounds {
        browser.stop_service_workers().await?;
        let mut session = crate::cdp::Session::browser(&debugger).await?;
        session.start_tracing(&["v8.wasm", "devtools.timeline"]).await?;
        let before = origin.counts.snapshot();
        let out = browser
            .call(&format!(
                "bench.once({QUERY}, 1024).then((out) => {{ console.timeStamp('{ANSWERED}'); return out; }})"
            ))
            .await?;
        let events = session.end_tracing().await?;
        expect_count(
            site.variant,
            "cold start, compiles: server queries",
            origin.counts.snapshot().0 - before.0,
            0..=0,
        )?;
        expect_cachet_sources(site.variant, "cold start, compiles", &out["sources"], "cache", 1)?;
        if !browser.service_worker_running().await? {
            bail!("cachet: no service worker running after a cold-start answer");
        }
        result.add_round(&events);
    }
    Ok(result)
}

impl LazyCompiles {
    /// Adds one round's trace events: complete events (`ph: X`, with `dur`) and begin/end pairs of the
    /// `v8.wasm` category, split at the page's stamp (none: all of them count as before the answer).
    fn add_round(&mut self, events: &[Value]) {
        let answered = events
            .iter()
            .filter(|event| event["args"]["data"]["message"] == ANSWERED)
            .filter_map(|event| event["ts"].as_f64())
            .fold(f64::INFINITY, f64::min);
        // (process, thread, event name) → the begun spans: (when, function index).
        type Begun = BTreeMap<(u64, u64, String), Vec<(f64, Option<u64>)>>;
        let mut open = Begun::new();
        let mut spans = Vec::new();
        for event in events.iter().filter(|event| event["cat"].as_str().is_none_or(|cat| cat == "v8.wasm")) {
            let name = event["name"].as_str().unwrap_or_default().to_owned();
            let index = event["args"]["func_index"].as_u64();
            let thread = (event["pid"].as_u64().unwrap_or(0), event["tid"].as_u64().unwrap_or(0));
            let at = event["ts"].as_f64().unwrap_or(0.0);
            match event["ph"].as_str() {
                Some("X") => spans.push((name, index, at, event["dur"].as_f64().unwrap_or(0.0) / 1000.0)),
                Some("B") => open.entry((thread.0, thread.1, name)).or_default().push((at, index)),
                Some("E") => {
                    if let Some((began, index)) =
                        open.get_mut(&(thread.0, thread.1, name.clone())).and_then(Vec::pop)
                    {
                        spans.push((name, index, began, (at - began) / 1000.0));
                    }
                }
                _ => {}
            }
        }
        let (mut before, mut after) = ((0, 0.0), (0, 0.0));
        for (name, index, at, took) in spans {
            let event = self.events.entry(name.clone()).or_default();
            event.0 += 1;
            event.1 += took;
            let ("wasm.CompileLazy", Some(index)) = (name.as_str(), index) else { continue };
            if at >= answered {
                after.0 += 1;
                after.1 += took;
                continue;
            }
            let function = self.functions.entry(index).or_default();
            function.0 += 1;
            function.1 += took;
            before.0 += 1;
            before.1 += took;
        }
        self.per_round.push(before);
        self.after_answer.push(after);
    }
}

/// The named build's functions when it has the same bodies as the module the worker ran (`module`, a
/// file of `served_dir`: the start module, which a stopped worker runs until the whole engine takes
/// over), else `None` (the table then names functions by index). The trace's function indexes are the
/// served module's: a name from another module would be another function's.
pub fn names_for(root: &Path, served_dir: &str, module: &str) -> Option<Functions> {
    let named = std::fs::read(root.join(crate::sizes::NAMED_DIR).join(module)).ok()?;
    let served = std::fs::read(root.join(served_dir).join(module)).ok()?;
    let (named, served) =
        (crate::wasm_names::functions(&named).ok()?, crate::wasm_names::functions(&served).ok()?);
    (named.imported == served.imported && named.body_sizes == served.body_sizes).then_some(named)
}

/// The Markdown of the traced rounds: per cold start, how many functions were compiled and how long
/// that took (p50), V8's `v8.wasm` events, and the `shown` functions whose compiles took longest.
pub fn table(lazy: &LazyCompiles, names: Option<&Functions>, shown: usize) -> String {
    if lazy.rounds == 0 {
        return String::new();
    }
    let rounds = lazy.rounds as f64;
    let median = |values: Vec<f64>| crate::report::stats(&values).map_or(0.0, |stats| stats.p50);
    let counts = median(lazy.per_round.iter().map(|(count, _)| *count as f64).collect());
    let ms = median(lazy.per_round.iter().map(|(_, ms)| *ms).collect());
    let after_counts = median(lazy.after_answer.iter().map(|(count, _)| *count as f64).collect());
    let after_ms = median(lazy.after_answer.iter().map(|(_, ms)| *ms).collect());
    let compiled_bytes: u64 = lazy.functions.keys().filter_map(|index| describe(names, *index).1).sum();
    let mut text = format!(
        "**{TITLE}**: cachet's worker, {} cold hits (a stored 1 KB query) each traced browser-wide \
         (`v8.wasm`): per cold start (p50), before the page had its answer, {counts:.0} functions compiled \
         lazily (Liftoff, as each is first called, on the worker's thread), {ms:.2} ms of compiling; {} \
         distinct functions over the rounds, {:.1} KB of function bodies{}; after the answer (the queue's \
         start replay, the sweep) {after_counts:.0} more, {after_ms:.2} ms. The V8 events below count both.\n\n",
        lazy.rounds,
        lazy.functions.len(),
        compiled_bytes as f64 / 1024.0,
        if names.is_some() { "" } else { " (function names unavailable: the named build differs)" },
    );
    text.push_str("| V8 event (`v8.wasm`) | per cold start | ms per cold start |\n|---|---:|---:|\n");
    let mut events: Vec<_> = lazy.events.iter().collect();
    events.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
    for (name, (count, ms)) in events {
        let _ = writeln!(text, "| {name} | {:.1} | {:.2} |", *count as f64 / rounds, ms / rounds);
    }
    text.push_str(&format!(
        "\nThe {shown} functions compiled before the answer whose compiles took longest (mean ms per cold \
         start):\n\n\
         | function | body bytes | ms per cold start |\n|---|---:|---:|\n"
    ));
    let mut functions: Vec<_> = lazy.functions.iter().collect();
    functions.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
    for (index, (_, ms)) in functions.into_iter().take(shown) {
        let (name, size) = describe(names, *index);
        let name: String = name.chars().take(110).collect();
        let size = size.map_or_else(|| "–".to_owned(), |size| size.to_string());
        let _ = writeln!(text, "| `{name}` | {size} | {:.3} |", ms / rounds);
    }
    text
}

/// The name and body size of the function at `index`, from the named build when there is one.
fn describe(names: Option<&Functions>, index: u64) -> (String, Option<u64>) {
    match names {
        Some(names) => names.describe(index),
        None => (format!("function {index}"), None),
    }
}

/// Every function compiled, as CSV (`index,name,body_bytes,rounds,ms_per_cold_start`), for a closer look
/// than the table's (kept in `target/bench/`).
pub fn csv(lazy: &LazyCompiles, names: Option<&Functions>) -> String {
    let mut text = String::from("index,name,body_bytes,rounds,ms_per_cold_start\n");
    for (index, (rounds, ms)) in &lazy.functions {
        let (name, size) = describe(names, *index);
        let name = name.replace('"', "'");
        let size = size.map_or_else(String::new, |size| size.to_string());
        let _ = writeln!(text, "{index},\"{name}\",{size},{rounds},{:.4}", ms / lazy.rounds.max(1) as f64);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compiles_are_added_up_per_function_and_per_round() {
        let mut lazy = LazyCompiles { rounds: 2, ..LazyCompiles::default() };
        lazy.add_round(&[
            json!({"name": "wasm.CompileLazy", "ph": "X", "dur": 1500.0, "args": {"func_index": 7}}),
            json!({"name": "wasm.CompileLazy", "ph": "B", "ts": 10.0, "pid": 1, "tid": 2, "args": {"func_index": 9}}),
            json!({"name": "wasm.CompileLazy", "ph": "E", "ts": 510.0, "pid": 1, "tid": 2}),
            json!({"name": "wasm.StreamingCompile", "ph": "X", "dur": 3000.0}),
        ]);
        lazy.add_round(&[
            json!({"name": "wasm.CompileLazy", "ph": "X", "ts": 5.0, "dur": 500.0, "args": {"func_index": 7}}),
            json!({"name": "TimeStamp", "cat": "devtools.timeline", "ph": "I", "ts": 8.0,
                   "args": {"data": {"message": ANSWERED}}}),
            json!({"name": "wasm.CompileLazy", "ph": "X", "ts": 9.0, "dur": 250.0, "args": {"func_index": 8}}),
        ]);
        assert_eq!(lazy.per_round, vec![(2, 2.0), (1, 0.5)]);
        assert_eq!(lazy.after_answer, vec![(0, 0.0), (1, 0.25)]);
        assert!(!lazy.functions.contains_key(&8), "compiled after the answer");
        assert_eq!(lazy.functions[&7], (2, 2.0));
        assert_eq!(lazy.functions[&9], (1, 0.5));
        assert_eq!(lazy.events["wasm.StreamingCompile"], (1, 3.0));
        let table = table(&lazy, None, 5);
        assert!(table.contains("| `function 7` | – | 1.000 |"), "{table}");
        assert!(table.contains("| wasm.CompileLazy | 2.0 | 1.38 |"), "{table}");
    }
}
