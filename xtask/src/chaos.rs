//! `cargo xtask chaos`: the fault campaign of issue 20, bounded in count (and so in time), then its
//! figures written into RELIABILITY.md between the `chaos:begin` and `chaos:end` markers.
//!
//! | step | what |
//! |---|---|
//! | fuzz | cachet-core's fuzz targets (`cachet-core/tests/suite/fuzz.rs`), 1 000 000 cases each, release build; each prints a `FUZZ` line |
//! | app | `trunk build --release`, as `cargo xtask test` |
//! | stories | the `chaos_*` end-to-end tests in headless Chromium against the real backend, `CACHET_CHAOS_RUNS` runs each; each prints `CHAOS-SUMMARY` lines |
//!
//! `cargo xtask test` runs the same targets and stories with few cases and runs (their defaults): the
//! smoke run. `--quick` here does that too, and leaves RELIABILITY.md alone.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{run, tools};

/// The end-to-end stories of the campaign, in the order RELIABILITY.md lists them.
pub const STORIES: [&str; 5] =
    ["chaos_killed_mid_write", "chaos_load", "chaos_tabs_auth", "chaos_storage_full", "chaos_corrupt_state"];

/// What each story checks, for RELIABILITY.md: `(name in CHAOS-SUMMARY lines, title, description)`.
const DESCRIPTIONS: [(&str, &str, &str); 5] = [
    (
        "killed-mid-write",
        "Killed mid-write",
        "`tests/tests/e2e/chaos_killed_mid_write.rs`. One tab, cookie auth. Each run interrupts one write, in \
         turn a store (24 distinct GraphQL documents at once), an invalidation (a mutation whose tags \
         cover the stored entries), a clear-all and a queue replay (4 mutations queued while the server \
         was down, the replay kicked once the head's backoff is due, the server applying each 40 ms \
         before answering): the worker is stopped (CDP \
         `ServiceWorker.stopAllWorkers`) 0 to 119 ms after the write began, then the tab is reloaded and \
         the caches and the entry index are read in the page. Checked after each run: no cache entry \
         without its index record (it would escape invalidation); counted: index records left without \
         their entry (a miss, harmless; the next invalidation of their tags, eviction or store of their \
         URL drops or rewrites them), summed over the runs of each write (a record left by one run counts \
         again in the next runs until something drops it), which one completed clear-all at the end must \
         leave at 0. Before each clear-all (which purges the queue by design) the queue must have \
         drained by itself within 15 s (the reloads' worker start and page alarm). At the \
         end the queue is replayed to its end: every queued mutation applied, none twice (the server's \
         table).",
    ),
    (
        "load",
        "Load",
        "`tests/tests/e2e/chaos_load.rs`. Four tabs, each sending 250 GraphQL queries at once, drawn at random \
         among 1000 distinct documents (all tagged `todos`), while the first tab sends 10 `CreateTodo` \
         mutations one after the other (each invalidates every stored document). Checked against the \
         server's truth: an answer to a query that began after the k-th acknowledged mutation lists at \
         least k more todos than before the round (\"stale\" counts those that do not); afterwards, once \
         the worker's background stores settled, no entry without its record and none the other way; \
         then 300 new documents leave exactly `cache.maxEntries` (200) entries in the document cache. \
         One round per 25 runs.",
    ),
    (
        "tabs-auth",
        "Tabs whose tokens expire together",
        "`tests/tests/e2e/chaos_tabs_auth.rs`. Bearer backend and worker; four windows of the plain page share \
         one session through `window.cachet` (a JavaScript adapter refreshing with `POST /api/refresh`). \
         The server expires every token at once, then each window sends 50 authenticated queries at once \
         (network-only, each its own document): all must succeed after exactly one refresh. Then the \
         refresh endpoint fails and the tokens expire again: 200 more requests must all settle (none \
         left waiting 10 s after its window sent it) and every window must end logged out. Runs once \
         whatever the run count.",
    ),
    (
        "storage-full",
        "Storage full",
        "`tests/tests/e2e/chaos_storage_full.rs`. The origin's quota set to 6 MB (CDP \
         `Storage.overrideQuotaForOrigin`, before the origin's first IndexedDB write: Chromium then \
         refuses IndexedDB commits with `QuotaExceededError` as it refuses Cache Storage writes, and keeps \
         the origin). The worker stores 4 large answers, 5 mutations are queued with the server down, then \
         before each of 8 more the page fills the rest of the quota with data of its own (random bytes in \
         its own IndexedDB database, until the browser refuses them). Each of the 8 must be answered 202 \
         (kept: cachet's caches gave up their least recently used half for it) or 507 \
         `X-Cachet-Not-Queued: storage-full` (nothing left to free: neither kept nor sent). With the \
         origin still full and the server back, a GET and a GraphQL query must answer (not stored). Then \
         the page frees its data and the queue replays: every mutation answered 202 applied once, none \
         answered 507 applied, no cache entry without its index record. Runs once whatever the run count.",
    ),
    (
        "corrupt-state",
        "Torn and corrupt records",
        "`tests/tests/e2e/chaos_corrupt_state.rs`. With 6 documents stored and 2 mutations queued, the page \
         corrupts in IndexedDB three records of the worker's entry index (a field of the wrong type, a \
         record cut down to its key, tags that are not a list), the first queued item (its URL not a \
         string), the worker's identity and the page client's auth record (both cut short); the worker is \
         stopped so that its next instance reads them. Checked: the worker's devtools snapshot names every \
         unreadable record; every query still answers; a mutation still invalidates; a mutation queued \
         afterwards is kept behind the readable queued one, the torn record kept whole aside; the reloaded \
         page starts its client; after the replay the torn mutation was not sent and the rest were \
         applied once. Runs once whatever the run count.",
    ),
];

/// Runs the campaign; `quick`: few cases and runs, RELIABILITY.md left alone.
pub fn chaos(root: &Path, quick: bool, fuzz_cases: u64, runs: u32) -> Result<()> {
    let started = Instant::now();
    let path = tools::ensure_build_tools(root)?;
    tools::ensure_browser()?;
    let (fuzz_cases, runs) = if quick { (20_000, 8) } else { (fuzz_cases, runs) };
    let mut fuzz = Vec::new();
    run::step(&format!("fuzz targets, {fuzz_cases} cases each (release)"), || {
        let cases = fuzz_cases.to_string();
        let args =
            ["test", "--release", "-p", "cachet-core", "--test", "suite", "fuzz::", "--", "--nocapture"];
        fuzz = run::cargo_lines(&path, &args, &[("CACHET_FUZZ_CASES", &cases)], "FUZZ ")?;
        Ok(())
    })?;
    crate::build_app(&path)?;
    let mut summaries = Vec::new();
    for story in STORIES {
        run::step(&format!("{story}, {runs} runs"), || {
            let runs = runs.to_string();
            let filter = format!("{story}::");
            let args = [
                "test",
                "-p",
                "cachet-e2e",
                "--test",
                "e2e",
                &filter,
                "--",
                "--test-threads=1",
                "--nocapture",
            ];
            summaries.extend(run::cargo_lines(
                &path,
                &args,
                &[("CACHET_CHAOS_RUNS", &runs)],
                "CHAOS-SUMMARY ",
            )?);
            Ok(())
        })?;
    }
    let seconds = started.elapsed().as_secs();
    if quick {
        println!("[xtask] chaos (quick) passed in {seconds} s; RELIABILITY.md left alone");
        return Ok(());
    }
    let section = report(&fuzz, &summaries, fuzz_cases, runs, seconds);
    run::step("write the campaign's figures into RELIABILITY.md", || write_section(root, &section))
}

/// `key=value` pairs of a line (after its first `skip` words).
fn pairs(line: &str, skip: usize) -> Vec<(String, String)> {
    line.split_whitespace()
        .skip(skip)
        .filter_map(|pair| pair.split_once('=').map(|(key, value)| (key.to_owned(), value.to_owned())))
        .collect()
}

/// A Markdown table of `rows` (each a list of `key=value` pairs), its columns in first-seen order.
fn table(rows: &[Vec<(String, String)>]) -> String {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        for (key, _) in row {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    let mut text =
        format!("| {} |\n|{}\n", columns.join(" | ").replace('_', " "), "---|".repeat(columns.len()));
    for row in rows {
        let cells: Vec<&str> = columns
            .iter()
            .map(|column| row.iter().find(|(key, _)| key == column).map_or("", |(_, value)| value.as_str()))
            .collect();
        text.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    text
}

/// The RELIABILITY.md section of one campaign.
fn report(fuzz: &[String], summaries: &[String], fuzz_cases: u64, runs: u32, seconds: u64) -> String {
    let commit = run::output_line(
        "git",
        &["rev-parse", "--short", "HEAD"],
        &std::env::var_os("PATH").unwrap_or_default(),
    )
    .unwrap_or_else(|| "unknown".to_owned());
    let date = run::output_line("date", &["-u", "+%Y-%m-%d"], &std::env::var_os("PATH").unwrap_or_default())
        .unwrap_or_default();
    let mut text = format!(
        "Written by `cargo xtask chaos` ({date}, commit `{commit}`, {seconds} s in all on this machine): \
         {fuzz_cases} cases per fuzz target, {runs} runs per story.\n\n### Fuzzing (stable Rust, proptest)\n\n\
         `cachet-core/tests/suite/fuzz.rs`: each target draws raw input and valid input broken as storage \
         and networks break it (JSON values replaced by anything, keys dropped, the text truncated, cut, \
         spliced). \"rejected\" is a typed error of the reader (a stored record's names the record); \
         \"accepted\" read back the same after writing.\n\n"
    );
    let rows: Vec<_> = fuzz.iter().map(|line| pairs(line, 1)).collect();
    text.push_str(&table(&rows));
    for (story, title, description) in DESCRIPTIONS {
        text.push_str(&format!("\n### {title}\n\n{description}\n\n"));
        let rows: Vec<Vec<(String, String)>> = summaries
            .iter()
            .filter(|line| line.split_whitespace().nth(1) == Some(story))
            .map(|line| {
                let what = line.split_whitespace().nth(2).unwrap_or_default();
                let mut row = vec![("what".to_owned(), what.to_owned())];
                row.extend(pairs(line, 3));
                row
            })
            .collect();
        // One table per shape of line (the same keys).
        let mut shapes: Vec<Vec<String>> = Vec::new();
        for row in &rows {
            let shape: Vec<String> = row.iter().map(|(key, _)| key.clone()).collect();
            if !shapes.contains(&shape) {
                shapes.push(shape);
            }
        }
        for shape in shapes {
            let same: Vec<_> =
                rows.iter().filter(|row| row.iter().map(|(key, _)| key).eq(shape.iter())).cloned().collect();
            text.push_str(&table(&same));
            text.push('\n');
        }
    }
    text
}

const BEGIN: &str = "<!-- chaos:begin (written by `cargo xtask chaos`) -->";
const END: &str = "<!-- chaos:end -->";

/// Replaces what lies between the markers of RELIABILITY.md with `section`.
fn write_section(root: &Path, section: &str) -> Result<()> {
    let file = root.join("RELIABILITY.md");
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        bail!("{}: the markers {BEGIN} and {END} are missing", file.display());
    };
    let updated = format!("{}{BEGIN}\n{section}{}", &text[..begin], &text[end..]);
    std::fs::write(&file, updated).with_context(|| format!("writing {}", file.display()))
}
