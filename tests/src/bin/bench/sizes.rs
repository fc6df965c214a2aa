//! Sizes of what a browser downloads: every wasm and JS artifact, raw and `gzip -9`.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// One file's sizes.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// Path relative to the workspace root.
    pub path: String,
    /// Bytes on disk.
    pub raw: u64,
    /// Bytes after `gzip -9`.
    pub gzipped: u64,
}

/// Every artifact, with the sums the goals are about.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// Every wasm and JS file measured.
    pub artifacts: Vec<Artifact>,
    /// cachet's Service Worker as a stopped worker loads it (shim, config, build stamp, both glues, the
    /// start module's wasm), gzipped.
    pub service_worker: u64,
    /// The wasm a cold start loads (the start module's: `cachet-sw-start_bg.wasm`), gzipped.
    pub service_worker_wasm: u64,
    /// The whole engine's wasm (`cachet-sw_bg.wasm`, which takes over), gzipped.
    pub whole_service_worker_wasm: u64,
    /// The example app's start module wasm (`dist/`: with the `devtools` and `push` features), gzipped.
    pub example_service_worker_wasm: u64,
    /// The bundler-free API's wasm (`dist/cachet/cachet-api_bg.wasm`), gzipped, when built.
    pub api_wasm: Option<u64>,
    /// The bench's bare Yew app and the same app with cachet-yew (wasm + glue), gzipped, when built.
    pub yew_apps: Option<(u64, u64)>,
    /// The app with cachet-yew and its queue alarm (`queue`, cachet-kit's default), gzipped, when built.
    pub yew_app_with_queue: Option<u64>,
}

/// The files of cachet's Service Worker a stopped worker loads (the shim imports both glues; the whole
/// engine's wasm loads when it takes over).
const SERVICE_WORKER_FILES: [&str; 6] = [
    "service-worker.js",
    "cachet-sw-config.js",
    "cachet-build.js",
    "cachet-sw.js",
    "cachet-sw-start.js",
    "cachet-sw-start_bg.wasm",
];
/// The worker an app with the bench's config gets (`bench-sw`: no devtools, no push), as `cargo xtask
/// bench` builds it: what the cachet variant runs.
pub const BENCH_SW_DIR: &str = "bench/dist/bench-sw";
/// The same worker with the `persisted-queries` feature: what the persisted-query row runs, and what
/// the feature costs beside [`BENCH_SW_DIR`].
pub const BENCH_SW_APQ_DIR: &str = "bench/dist/bench-sw-apq";
/// The same worker with the `queue` feature (the offline mutation queue, which cachet-kit turns on by
/// default and the bench's app does not use): what the queue costs beside [`BENCH_SW_DIR`] (size only).
pub const BENCH_SW_QUEUE_DIR: &str = "bench/dist/bench-sw-queue";
/// Where `cargo xtask bench` puts the two Yew apps.
pub const YEW_APPS_DIR: &str = "bench/yew-size/dist";

/// Measures every `.wasm` and `.js` in `dist/`, the bench's workers and the two Yew apps (with the
/// JavaScript snippets under their `snippets/`).
pub fn measure(root: &Path) -> Result<Sizes> {
    let mut artifacts = Vec::new();
    for dir in [
        "dist",
        "dist/cachet",
        "bench/dist",
        BENCH_SW_DIR,
        BENCH_SW_APQ_DIR,
        BENCH_SW_QUEUE_DIR,
        "bench/sw",
        &format!("{YEW_APPS_DIR}/bare"),
        &format!("{YEW_APPS_DIR}/with-cachet"),
        &format!("{YEW_APPS_DIR}/with-cachet-queue"),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut names: Vec<String> = entries
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".wasm") || name.ends_with(".js"))
            // Of the bench's own workers, the floor is served as it is; the Workbox one is its bundle.
            .filter(|name| dir != "bench/sw" || name == "floor-sw.js")
            .collect();
        // The JavaScript snippets wasm-bindgen wrote beside an app's glue (cachet-client's `js/`):
        // loaded with it (trunk preloads them), so counted with it.
        names.extend(snippets(&root.join(dir), "snippets")?);
        names.sort();
        for name in names {
            artifacts.push(artifact(root, &format!("{dir}/{name}"))?);
        }
    }
    let gzipped_sum = |paths: &[String]| -> Result<u64> {
        paths
            .iter()
            .map(|path| {
                artifacts
                    .iter()
                    .find(|artifact| &artifact.path == path)
                    .map(|artifact| artifact.gzipped)
                    .with_context(|| format!("{path} was not built"))
            })
            .sum()
    };
    // What the timed cachet worker loads: the bench's own build of the worker (no devtools, no push),
    // with the shim, config and stamp of `dist/`.
    let bench_sw = BENCH_SW_DIR;
    let loaded: Vec<String> = SERVICE_WORKER_FILES
        .iter()
        .map(|file| match *file {
            "cachet-sw.js" | "cachet-sw-start.js" | "cachet-sw-start_bg.wasm" => format!("{bench_sw}/{file}"),
            _ => format!("dist/{file}"),
        })
        .collect();
    let service_worker = gzipped_sum(&loaded)?;
    let service_worker_wasm = gzipped_sum(&[format!("{bench_sw}/cachet-sw-start_bg.wasm")])?;
    let whole_service_worker_wasm = gzipped_sum(&[format!("{bench_sw}/cachet-sw_bg.wasm")])?;
    let example_service_worker_wasm = gzipped_sum(&["dist/cachet-sw-start_bg.wasm".to_owned()])?;
    let app = |name: &str| -> u64 {
        let prefix = format!("{YEW_APPS_DIR}/{name}/");
        artifacts.iter().filter(|artifact| artifact.path.starts_with(&prefix)).map(|a| a.gzipped).sum()
    };
    let yew_apps = match (app("bare"), app("with-cachet")) {
        (0, _) | (_, 0) => None,
        (bare, with_cachet) => Some((bare, with_cachet)),
    };
    let yew_app_with_queue = Some(app("with-cachet-queue")).filter(|size| *size > 0);
    let api_wasm = gzipped_sum(&["dist/cachet/cachet-api_bg.wasm".to_owned()]).ok();
    Ok(Sizes {
        artifacts,
        service_worker,
        service_worker_wasm,
        whole_service_worker_wasm,
        example_service_worker_wasm,
        api_wasm,
        yew_apps,
        yew_app_with_queue,
    })
}

/// The `.js` files under `dir/sub`, recursively, as paths relative to `dir`.
fn snippets(dir: &Path, sub: &str) -> Result<Vec<String>> {
    let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { return Ok(Vec::new()) };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = format!("{sub}/{}", entry.file_name().to_string_lossy());
        if entry.file_type()?.is_dir() {
            found.extend(snippets(dir, &name)?);
        } else if name.ends_with(".js") {
            found.push(name);
        }
    }
    Ok(found)
}

fn artifact(root: &Path, path: &str) -> Result<Artifact> {
    let full = root.join(path);
    let raw = std::fs::metadata(&full).with_context(|| format!("reading {}", full.display()))?.len();
    let output = Command::new("gzip").args(["-9", "-c"]).arg(&full).output().context("running gzip")?;
    if !output.status.success() {
        bail!("gzip -9 {} failed", full.display());
    }
    Ok(Artifact { path: path.to_owned(), raw, gzipped: output.stdout.len() as u64 })
}

/// Where `cargo xtask bench` puts the builds that keep function names (`wasm-opt -Oz -g`).
pub const NAMED_DIR: &str = "bench/dist/named";

/// Markdown tables of where the bytes go, from the named builds: cachet's SW wasm by crate, and what the
/// cachet-yew app adds over the bare one, by crate. Empty when the named builds are missing.
pub fn attribution(root: &Path) -> Result<String> {
    let read = |name: &str| -> Result<Option<Vec<(String, u64)>>> {
        let path = root.join(NAMED_DIR).join(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(
                crate::wasm_names::bytes_by_crate(&bytes)
                    .with_context(|| format!("reading {}", path.display()))?,
            )),
            Err(_) => Ok(None),
        }
    };
    let mut text = String::new();
    for (file, what) in [
        ("cachet-sw-start_bg.wasm", "cachet's SW start module (what a cold start loads)"),
        ("cachet-sw_bg.wasm", "cachet's whole SW engine (which takes over)"),
        ("cachet-api_bg.wasm", "cachet's bundler-free API (`window.cachet`)"),
        ("cachet-agent_bg.wasm", "cachet's agent (the example's yew-agent worker)"),
    ] {
        if let Some(sw) = read(file)? {
            let total: u64 = sw.iter().map(|(_, bytes)| bytes).sum();
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "{what}, wasm by crate (function bodies and data, before gzip, from a `wasm-opt -Oz -g` build):\n\n"
            ));
            text.push_str(&crate_table(&sw, total, 14));
        }
    }
    if let (Some(bare), Some(with_cachet)) = (read("bare_bg.wasm")?, read("with-cachet_bg.wasm")?) {
        let mut added: Vec<(String, u64)> = with_cachet
            .iter()
            .map(|(name, bytes)| {
                let before = bare.iter().find(|(other, _)| other == name).map_or(0, |(_, b)| *b);
                (name.clone(), bytes.saturating_sub(before))
            })
            .filter(|(_, bytes)| *bytes > 0)
            .collect();
        added.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: u64 = added.iter().map(|(_, bytes)| bytes).sum();
        text.push_str(
            "\nWhat cachet-yew adds to the app's wasm, by crate (growth over the bare app, before gzip):\n\n",
        );
        text.push_str(&crate_table(&added, total, 14));
    }
    Ok(text)
}

fn crate_table(rows: &[(String, u64)], total: u64, shown: usize) -> String {
    let mut table = String::from("| crate | bytes | share |\n|---|---:|---:|\n");
    let share = |bytes: u64| if total == 0 { 0.0 } else { bytes as f64 * 100.0 / total as f64 };
    for (name, bytes) in rows.iter().take(shown) {
        table.push_str(&format!(
            "| `{name}` | {:.1} KB | {:.0} % |\n",
            *bytes as f64 / 1024.0,
            share(*bytes)
        ));
    }
    let rest: u64 = rows.iter().skip(shown).map(|(_, bytes)| bytes).sum();
    if rest > 0 {
        table.push_str(&format!("| the rest | {:.1} KB | {:.0} % |\n", rest as f64 / 1024.0, share(rest)));
    }
    table.push_str(&format!("| **total** | **{:.1} KB** | |\n", total as f64 / 1024.0));
    table
}
