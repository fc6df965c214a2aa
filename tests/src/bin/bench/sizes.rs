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
    /// cachet's Service Worker as the browser loads it (shim, config, build stamp, glue, wasm), gzipped.
    pub service_worker: u64,
    /// Its wasm alone, gzipped.
    pub service_worker_wasm: u64,
    /// The bench's bare Yew app and the same app with cachet-yew (wasm + glue), gzipped, when built.
    pub yew_apps: Option<(u64, u64)>,
}

/// The files of cachet's Service Worker in `dist/`.
const SERVICE_WORKER_FILES: [&str; 5] =
    ["service-worker.js", "cachet-sw-config.js", "cachet-build.js", "cachet-sw.js", "cachet-sw_bg.wasm"];
/// Where `cargo xtask bench` puts the two Yew apps.
pub const YEW_APPS_DIR: &str = "bench/yew-size/dist";

/// Measures every `.wasm` and `.js` in `dist/`, the bench's workers and the two Yew apps.
pub fn measure(root: &Path) -> Result<Sizes> {
    let mut artifacts = Vec::new();
    for dir in [
        "dist",
        "bench/dist",
        "bench/sw",
        &format!("{YEW_APPS_DIR}/bare"),
        &format!("{YEW_APPS_DIR}/with-cachet"),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut names: Vec<String> = entries
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".wasm") || name.ends_with(".js"))
            .collect();
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
    let service_worker =
        gzipped_sum(&SERVICE_WORKER_FILES.iter().map(|file| format!("dist/{file}")).collect::<Vec<_>>())?;
    let service_worker_wasm = gzipped_sum(&["dist/cachet-sw_bg.wasm".to_owned()])?;
    let app = |name: &str| -> u64 {
        let prefix = format!("{YEW_APPS_DIR}/{name}/");
        artifacts.iter().filter(|artifact| artifact.path.starts_with(&prefix)).map(|a| a.gzipped).sum()
    };
    let yew_apps = match (app("bare"), app("with-cachet")) {
        (0, _) | (_, 0) => None,
        (bare, with_cachet) => Some((bare, with_cachet)),
    };
    Ok(Sizes { artifacts, service_worker, service_worker_wasm, yew_apps })
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
