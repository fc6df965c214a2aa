//! `cachet doctor`: what is missing for the Service Worker and the agent to load, in the app's
//! `index.html`, `Trunk.toml` (the build stamp's hook, the pinned tools) (the cachet-kit features its config needs) and in a built `dist/`. Each problem names the file and how to fix it.

use std::path::Path;

use cachet_core::deploy::{ServedFile, AGENT_FILES, SERVICE_WORKER_FILES};

use crate::features::missing_kit_features;
use crate::{CliError, BUILD_STAMP, CARGO_TOML, INDEX_HTML, TRUNK_TOML, WASM_BINDGEN_TOOL, WASM_OPT_TOOL};

/// One thing missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file at fault (relative to the app directory, or the `dist/` path).
    pub file: String,
    /// What is missing, and what to do.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.file, self.message)
    }
}

/// Checks the app in `dir` and, when given, its build `dist` (relative paths are taken from `dir`).
/// Empty: nothing missing.
pub fn doctor(dir: &Path, dist: Option<&Path>) -> Result<Vec<Problem>, CliError> {
    let mut problems = Vec::new();
    let problem = |file: &str, message: String| Problem { file: file.to_owned(), message };
    match read(dir, INDEX_HTML)? {
        None => problems.push(problem(INDEX_HTML, "not found (run `cachet init --trunk`)".to_owned())),
        Some(html) => {
            for (bin, what) in [
                ("cachet-sw", ""),
                ("cachet-sw-start", ": a stopped worker loads the whole engine, not its start module"),
                ("cachet-agent", ""),
            ] {
                if !html.contains(&format!("data-bin=\"{bin}\"")) {
                    problems.push(problem(
                        INDEX_HTML,
                        format!(
                            "no `<link data-trunk rel=\"rust\" data-bin=\"{bin}\" data-type=\"worker\" />`: \
                             trunk does not build {bin}.js{what} (run `cachet init --trunk`)"
                        ),
                    ));
                }
            }
            let without_wasm_opt = html
                .match_indices("<link")
                .filter_map(|(start, _)| html[start..].find('>').map(|end| &html[start..start + end]))
                .filter(|tag| tag.contains("rel=\"rust\"") && !tag.contains("data-wasm-opt"))
                .count();
            if without_wasm_opt > 0 {
                problems.push(problem(
                    INDEX_HTML,
                    format!(
                        "{without_wasm_opt} `rel=\"rust\"` link(s) without `data-wasm-opt`: a release build \
                         does not shrink that wasm (add `data-wasm-opt=\"z\"`, or run `cachet init --trunk`)"
                    ),
                ));
            }
            for file in [crate::SW_SHIM_PATH, crate::SW_CONFIG_PATH] {
                if !html.contains(&format!("href=\"{file}\"")) {
                    problems.push(problem(
                        INDEX_HTML,
                        format!(
                            "no `<link data-trunk rel=\"copy-file\" href=\"{file}\" />`: dist/ has no \
                             {file} (run `cachet init --trunk`)"
                        ),
                    ));
                }
            }
        }
    }
    let trunk = read(dir, TRUNK_TOML)?.unwrap_or_default();
    if !trunk.contains(BUILD_STAMP) {
        problems.push(problem(
            TRUNK_TOML,
            format!("no post-build hook writing {BUILD_STAMP}, which service-worker.js imports (run `cachet init --trunk`)"),
        ));
    } else if !trunk.contains("CACHET_PRECACHE") {
        problems.push(problem(
            TRUNK_TOML,
            format!(
                "the post-build hook writing {BUILD_STAMP} lists no build files (CACHET_PRECACHE): the worker \
                 keeps no app shell, and offline a page whose files the cache declined stays blank (run \
                 `cachet init --trunk`, which replaces the hook)"
            ),
        ));
    } else if !trunk.contains("CACHET_START") {
        problems.push(problem(
            TRUNK_TOML,
            format!(
                "the post-build hook writing {BUILD_STAMP} does not mark the start module (CACHET_START): a \
                 stopped worker loads the whole engine, not its start module (run `cachet init --trunk`, which \
                 replaces the hook)"
            ),
        ));
    }
    let pinned = |tool: &str| {
        let trunk = trunk.parse::<toml_edit::DocumentMut>().ok()?;
        trunk.get("tools")?.get(tool)?.as_str().map(str::to_owned)
    };
    let tools = [
        ("wasm_bindgen", WASM_BINDGEN_TOOL, "the wasm-bindgen CLI"),
        ("wasm_opt", WASM_OPT_TOOL, "wasm-opt"),
    ];
    for (tool, version, what) in tools {
        match pinned(tool) {
            None => problems.push(problem(
                TRUNK_TOML,
                format!(
                    "no `[tools] {tool}`: trunk downloads {what} at build time, and a machine without that \
                     access cannot build (run `cachet init --trunk`, which pins {version}, the one cachet is \
                     tested with, and install it)"
                ),
            )),
            Some(pin) if tool == "wasm_bindgen" && pin != version => problems.push(problem(
                TRUNK_TOML,
                format!(
                    "`[tools] wasm_bindgen = \"{pin}\"`, but cachet's wasm-bindgen crate is {version}: the CLI \
                     must equal the crate (set it to \"{version}\")"
                ),
            )),
            Some(_) => {}
        }
    }
    if let (Some(manifest), Ok(config)) = (read(dir, CARGO_TOML)?, crate::read_config(dir)) {
        let parsed = manifest.parse::<toml_edit::DocumentMut>();
        let needed = crate::kit_features(&config);
        if let Some(missing) = parsed.ok().and_then(|manifest| missing_kit_features(&manifest, &needed)) {
            for feature in missing {
                problems.push(problem(
                    CARGO_TOML,
                    format!(
                        "cachet-kit without its `{feature}` feature, which cachet.config.json needs \
                         (features.{feature}): the worker is built without it (add `features = [\"{feature}\"]` \
                         to the cachet-kit dependency, or run `cachet add {feature}`)"
                    ),
                ));
            }
        }
    }
    let profile = crate::profile::profile_manifest(dir);
    if let Ok(manifest) = std::fs::read_to_string(&profile) {
        let file = match profile.strip_prefix(dir) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => format!("{} (the workspace root: cargo reads profiles there)", profile.display()),
        };
        for message in crate::profile::profile_problems(&manifest) {
            problems.push(problem(&file, message));
        }
    }
    for stale in crate::stale_files(dir)? {
        problems
            .push(problem(stale, "out of date with cachet.config.json (run `cachet generate`)".to_owned()));
    }
    if let Some(dist) = dist {
        let dist = dir.join(dist);
        for file in SERVICE_WORKER_FILES.iter().chain(AGENT_FILES.iter()) {
            if let Some(message) = missing(&dist, file) {
                problems.push(problem(&dist.join(file.path).display().to_string(), message));
            }
        }
        let config = crate::read_config(dir)?;
        let deployed = dist.join(crate::SW_CONFIG_PATH);
        if std::fs::read_to_string(&deployed).is_ok_and(|text| text != crate::render_sw_config(&config)) {
            problems.push(problem(
                &deployed.display().to_string(),
                "differs from cachet.config.json (run `cachet generate`, then build again)".to_owned(),
            ));
        }
    }
    Ok(problems)
}

fn missing(dist: &Path, file: &ServedFile) -> Option<String> {
    match std::fs::metadata(dist.join(file.path)) {
        Ok(meta) if meta.len() > 0 => None,
        Ok(_) => Some(format!("empty; loaded by {}, made by {}", file.loaded_by, file.made_by)),
        Err(_) => Some(format!("missing; loaded by {}, made by {}", file.loaded_by, file.made_by)),
    }
}

fn read(dir: &Path, file: &str) -> Result<Option<String>, CliError> {
    let path = dir.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CliError::ReadApp { path, source }),
    }
}
