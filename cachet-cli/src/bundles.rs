//! `cachet generate --bundles[=DIR]`: copies the bundler-free API (SPEC §1 `kit-api.bundle.js`) into the
//! app's `cachet/`, for a page that loads `/cachet/client-injector.bundle.js` and then
//! `/cachet/cachet-api.bundle.js`.
//!
//! The bundles are built from the `cachet-api` crate by trunk (the root `Trunk.toml`'s post-build hook
//! writes them to `dist/cachet/`, the default `DIR`); the CLI copies them and never builds anything. Only
//! asked for with the flag: a Yew app needs none of them. The JavaScript files get the generated-file
//! header; the wasm is copied as it is. Like every generated file they are rewritten when they differ.

use std::path::{Path, PathBuf};

use cachet_core::config::Config;

use crate::{CliError, GENERATED_HEADER};

/// Where trunk writes the bundles in this repository, relative to the current directory.
pub const DEFAULT_BUNDLES_DIR: &str = "dist/cachet";

/// The files of the bundler-free API, as trunk names them.
pub const BUNDLE_FILES: [&str; 3] =
    ["client-injector.bundle.js", "cachet-api.bundle.js", "cachet-api_bg.wasm"];

/// Where `cachet-api.bundle.js` carries the app's config: the JSON between these two comments
/// (`null` in a bundle built for no app in particular). The page starts on it and then follows its
/// Service Worker's, so that the two scripts of SPEC §1 are enough.
pub const CONFIG_SLOT: (&str, &str) = ("/*cachet:config*/", "/*cachet:end*/");

/// `bundle` with `config` (compact JSON, every key written out) in its [`CONFIG_SLOT`]; `None` when the
/// bundle has no slot (built by another cachet version).
pub fn with_config(bundle: &str, config: &Config) -> Option<String> {
    let (open, close) = CONFIG_SLOT;
    let start = bundle.find(open)? + open.len();
    let end = start + bundle[start..].find(close)?;
    // Serialising the config cannot fail; `</` cannot close a script element it is inlined in.
    let json = serde_json::to_string(config).unwrap_or_default().replace("</", "<\\/");
    Some(format!("{}{json}{}", &bundle[..start], &bundle[end..]))
}

/// The bundle files as they should be in `APP/cachet/`: (path relative to the app, content).
/// `cachet-api.bundle.js` gets the app's `config` in its [`CONFIG_SLOT`].
fn wanted(from: &Path, config: &Config) -> Result<Vec<(String, Vec<u8>)>, CliError> {
    let mut files = Vec::new();
    for name in BUNDLE_FILES {
        let source = from.join(name);
        let mut bytes = std::fs::read(&source)
            .map_err(|source_error| CliError::Bundles { path: source.clone(), source: source_error })?;
        if name == "cachet-api.bundle.js" {
            let text = String::from_utf8_lossy(&bytes);
            let configured = with_config(&text, config).ok_or_else(|| CliError::Bundles {
                path: source.clone(),
                source: std::io::Error::other(format!(
                    "no config slot {} … {} in it: rebuild it with this cachet",
                    CONFIG_SLOT.0, CONFIG_SLOT.1
                )),
            })?;
            bytes = configured.into_bytes();
        }
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

/// The bundle files of `dir` that differ from those built in `from` (with `dir`'s config).
pub fn stale_bundles(dir: &Path, from: &Path) -> Result<Vec<String>, CliError> {
    Ok(wanted(from, &crate::read_config(dir)?)?
        .into_iter()
        .filter(|(path, content)| std::fs::read(dir.join(path)).ok().as_ref() != Some(content))
        .map(|(path, _)| path)
        .collect())
}

/// Copies the bundles built in `from` into `dir/cachet/`, `dir`'s config in the API bundle; returns the
/// files written.
pub fn copy_bundles(dir: &Path, from: &Path) -> Result<Vec<String>, CliError> {
    let mut written = Vec::new();
    for (path, content) in wanted(from, &crate::read_config(dir)?)? {
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
