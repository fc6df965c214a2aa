//! The four variants and the files each one's origin serves.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::sizes::{BENCH_SW_APQ_DIR, BENCH_SW_DIR};

/// What answers the page's GraphQL requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// No Service Worker: every request goes to the server.
    NoSw,
    /// The floor: an empty SW answering from an in-memory Map (`bench/sw/floor-sw.js`).
    Floor,
    /// A Workbox 7 SW (`bench/sw/workbox-sw.js`, bundled by esbuild into `bench/dist/workbox-sw.js`).
    Workbox,
    /// cachet's SW of an app with the bench's `cachet.config.json` (`bench-sw`, in `bench/dist/bench-sw/`),
    /// with the shim and the agent trunk built into `dist/`.
    Cachet,
}

impl Variant {
    /// Every variant, in the order the tables show them.
    pub const ALL: [Variant; 4] = [Variant::NoSw, Variant::Floor, Variant::Workbox, Variant::Cachet];

    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Variant::NoSw => "no SW",
            Variant::Floor => "floor",
            Variant::Workbox => "Workbox",
            Variant::Cachet => "cachet",
        }
    }

    /// Its name on the command line and in the page harness.
    pub fn key(self) -> &'static str {
        match self {
            Variant::NoSw => "none",
            Variant::Floor => "floor",
            Variant::Workbox => "workbox",
            Variant::Cachet => "cachet",
        }
    }

    /// The variant named `key` on the command line: `none`, `floor`, `workbox` or `cachet`.
    pub fn from_key(key: &str) -> Result<Variant> {
        match key {
            "none" => Ok(Variant::NoSw),
            "floor" => Ok(Variant::Floor),
            "workbox" => Ok(Variant::Workbox),
            "cachet" => Ok(Variant::Cachet),
            other => bail!("unknown variant `{other}`: expected none, floor, workbox or cachet"),
        }
    }

    /// The script the page registers, if any.
    pub fn sw_url(self) -> Option<&'static str> {
        match self {
            Variant::NoSw => None,
            Variant::Floor | Variant::Workbox => Some("/sw.js"),
            Variant::Cachet => Some("/service-worker.js"),
        }
    }
}

/// The Workbox bundle `cargo xtask bench` builds.
pub const WORKBOX_BUNDLE: &str = "bench/dist/workbox-sw.js";

/// cachet's Service Worker files from trunk's `dist/`: the shim and the build stamp (the config is the
/// bench's own).
const CACHET_FILES: [&str; 2] = ["service-worker.js", "cachet-build.js"];
/// The bench worker's files in [`BENCH_SW_DIR`]: the whole engine and its start module.
const BENCH_SW_FILES: [&str; 4] =
    ["cachet-sw.js", "cachet-sw_bg.wasm", "cachet-sw-start.js", "cachet-sw-start_bg.wasm"];
/// The agent worker `<CachetProvider>` starts, from trunk's `dist/`.
const AGENT_FILES: [&str; 2] = ["cachet-agent.js", "cachet-agent_bg.wasm"];
/// The `use_cachet_gql` app of `hook.html`, as `cargo xtask bench` builds it (bench/yew-size).
pub const HOOK_APP_DIR: &str = "bench/dist/hook";
const HOOK_APP_FILES: [&str; 2] = ["hook-rerender.js", "hook-rerender_bg.wasm"];

/// Fails, naming what to run, unless everything the variants serve has been built.
pub fn check_built(root: &Path) -> Result<()> {
    let mut missing: Vec<String> = CACHET_FILES
        .iter()
        .chain(&AGENT_FILES)
        .map(|file| format!("dist/{file}"))
        .chain(HOOK_APP_FILES.iter().map(|file| format!("{HOOK_APP_DIR}/{file}")))
        .chain(BENCH_SW_FILES.iter().map(|file| format!("{BENCH_SW_DIR}/{file}")))
        .chain(BENCH_SW_FILES.iter().map(|file| format!("{BENCH_SW_APQ_DIR}/{file}")))
        .filter(|path| !root.join(path).exists())
        .collect();
    if !root.join(WORKBOX_BUNDLE).exists() {
        missing.push(WORKBOX_BUNDLE.to_owned());
    }
    if !missing.is_empty() {
        bail!("not built: {}; run `cargo xtask bench`, which builds them first", missing.join(", "));
    }
    Ok(())
}

/// Fills `into` with what `variant`'s origin serves: the page harness and the variant's worker. With
/// `named`, cachet's wasm is the build that keeps function names (`bench/dist/named/`, the same code), when
/// it exists: for the CPU profiles.
pub fn assemble(variant: Variant, root: &Path, into: &Path, named: bool) -> Result<()> {
    std::fs::create_dir_all(into)?;
    for file in ["index.html", "bench.js"] {
        copy(&root.join("bench/page").join(file), &into.join(file))?;
    }
    // The traced copy of the worker, for the profile phase (bench/sw/trace.js).
    copy(&root.join("bench/sw/trace.js"), &into.join("bench-trace.js"))?;
    copy(&root.join("bench/sw/traced-sw.js"), &into.join("traced-sw.js"))?;
    match variant {
        Variant::NoSw => {}
        Variant::Floor => copy(&root.join("bench/sw/floor-sw.js"), &into.join("sw.js"))?,
        Variant::Workbox => copy(&root.join(WORKBOX_BUNDLE), &into.join("sw.js"))?,
        Variant::Cachet => {
            for file in CACHET_FILES.iter().chain(&AGENT_FILES) {
                copy(&root.join("dist").join(file), &into.join(file))?;
            }
            // The stamp and the start module's mark alone: the example's list of files (its app shell) is
            // not what the bench serves, and Workbox precaches nothing here either.
            let stamp = std::fs::read_to_string(into.join("cachet-build.js"))?;
            let stamp: String = stamp
                .lines()
                .filter(|line| line.starts_with("self.CACHET_BUILD") || line.starts_with("self.CACHET_START"))
                .map(|line| format!("{line}\n"))
                .collect();
            std::fs::write(into.join("cachet-build.js"), stamp)?;
            for file in BENCH_SW_FILES {
                copy(&root.join(BENCH_SW_DIR).join(file), &into.join(file))?;
            }
            copy(&root.join("bench/page/hook.html"), &into.join("hook.html"))?;
            for file in HOOK_APP_FILES {
                copy(&root.join(HOOK_APP_DIR).join(file), &into.join(file))?;
            }
            // The glue imports cachet-client's JavaScript snippets from there.
            cachet_e2e::copy_dir(&root.join(HOOK_APP_DIR).join("snippets"), &into.join("snippets"))?;
            let named_dir = root.join(crate::sizes::NAMED_DIR);
            if named && named_dir.join("cachet-sw_bg.wasm").exists() {
                for file in BENCH_SW_FILES {
                    copy(&named_dir.join(file), &into.join(file))?;
                }
            }
            let config_path = root.join("bench/cachet.config.json");
            let text = std::fs::read_to_string(&config_path)
                .with_context(|| format!("reading {}", config_path.display()))?;
            let config = cachet_core::config::Config::from_json_str(&text)
                .with_context(|| format!("{} is not a valid cachet config", config_path.display()))?;
            std::fs::write(into.join("cachet-sw-config.js"), cachet_cli::render_sw_config(&config))?;
        }
    }
    Ok(())
}

/// The endpoint whose queries the persisted-query origin's worker sends as hashes.
pub const APQ_ENDPOINT: &str = "/graphql-apq";

/// Fills `into` with cachet's files for the persisted-query row: [`assemble`]'s, with the worker built
/// with `persisted-queries` ([`BENCH_SW_APQ_DIR`]) and the bench's config plus [`APQ_ENDPOINT`], whose
/// queries go as hashes (a GET once the server holds one).
pub fn assemble_persisted(root: &Path, into: &Path) -> Result<()> {
    assemble(Variant::Cachet, root, into, false)?;
    for file in BENCH_SW_FILES {
        copy(&root.join(BENCH_SW_APQ_DIR).join(file), &into.join(file))?;
    }
    let config_path = root.join("bench/cachet.config.json");
    let text = std::fs::read_to_string(&config_path)?;
    let mut config = cachet_core::config::Config::from_json_str(&text)
        .with_context(|| format!("{} is not a valid cachet config", config_path.display()))?;
    config.features.graphql.endpoints.push(APQ_ENDPOINT.to_owned());
    config.features.graphql.persisted_queries.endpoints = vec![APQ_ENDPOINT.to_owned()];
    config.features.graphql.persisted_queries.get_max_url_length = 2048;
    std::fs::write(into.join("cachet-sw-config.js"), cachet_cli::render_sw_config(&config))?;
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}
