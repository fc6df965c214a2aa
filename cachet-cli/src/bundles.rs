//! `cachet generate --bundles[=DIR]`: copies the bundler-free API (SPEC §1 `kit-api.bundle.js`) into the
//! app's `cachet/`, for a page that loads `/cachet/client-injector.bundle.js` and then
//! `/cachet/cachet-api.bundle.js`.
//!
//! The bundles are built from the `cachet-api` crate by trunk (the root `Trunk.toml`'s post-build hook
//! writes them to `dist/cachet/`, the default `DIR`); the CLI copies them and never builds anything. Only
//! asked for with the flag: a Yew app needs none of them. The JavaScript files get the generated-file
//! header; the wasm is copied as it is. Like every generated file they are rewritten when they differ.

use std::path::{Path, PathBuf};

use crate::{CliError, GENERATED_HEADER};

/// Where trunk writes the bundles in this repository, relative to the current directory.
pub const DEFAULT_BUNDLES_DIR: &str = "dist/cachet";

/// The files of the bundler-free API, as trunk names them.
pub const BUNDLE_FILES: [&str; 3] =
    ["client-injector.bundle.js", "cachet-api.bundle.js", "cachet-api_bg.wasm"];

/// The bundle files as they should be in `APP/cachet/`: (path relative to the app, content).
fn wanted(from: &Path) -> Result<Vec<(String, Vec<u8>)>, CliError> {
    let mut files = Vec::new();
    for name in BUNDLE_FILES {
        let source = from.join(name);
        let bytes = std::fs::read(&source)
            .map_err(|source_error| CliError::Bundles { path: source.clone(), source: source_error })?;
        let content = if name.ends_with(".js") && !bytes.starts_with(GENERATED_HEADER.as_bytes()) {
            let mut with_header = format!("{GENERATED_HEADER}\n").into_bytes();
            with_header.extend_from_slice(&bytes);
            with_header
        } else {
            bytes
        };
        files.push((format!("cachet/{name}"), content));
    }
    Ok(files)
}

/// The bundle files of `dir` that differ from those built in `from`.
pub fn stale_bundles(dir: &Path, from: &Path) -> Result<Vec<String>, CliError> {
    Ok(wanted(from)?
        .into_iter()
        .filter(|(path, content)| std::fs::read(dir.join(path)).ok().as_ref() != Some(content))
        .map(|(path, _)| path)
        .collect())
}

/// Copies the bundles built in `from` into `dir/cachet/`; returns the files written.
pub fn copy_bundles(dir: &Path, from: &Path) -> Result<Vec<String>, CliError> {
    let mut written = Vec::new();
    for (path, content) in wanted(from)? {
        let target: PathBuf = dir.join(&path);
        if std::fs::read(&target).ok().as_ref() == Some(&content) {
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|source| CliError::Write { path: target.clone(), source })?;
        }
        std::fs::write(&target, content).map_err(|source| CliError::Write { path: target, source })?;
        written.push(path);
    }
    Ok(written)
}
