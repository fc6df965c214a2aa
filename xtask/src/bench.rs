//! `cargo xtask bench`: builds everything the benchmark compares, then runs the `bench` binary of the
//! end-to-end crate (`tests/src/bin/bench/`), which drives headless Chromium and writes BENCHMARKS.md.
//!
//! | step | what |
//! |---|---|
//! | tools | as `cargo xtask test` (wasm target, wasm-bindgen, trunk, wasm-opt, Chromium) |
//! | npm | `npm ci --prefix bench`: Workbox 7, idb and esbuild, pinned in `bench/package-lock.json` |
//! | cachet | `trunk build --release`: the example app's SW, agent and app in `dist/` (the shim, the build stamp and the agent are served from there) |
//! | cachet's bench worker | `bench/yew-size`'s `bench-sw`: the worker an app with the bench's config gets (no `devtools`, no `push`, no `queue` feature), cargo (release), wasm-bindgen (`no-modules`, as trunk builds workers), wasm-opt -Oz into `bench/dist/bench-sw/` as `cachet-sw.js` + `cachet-sw_bg.wasm`, with its start module (`bench-sw-start`: the engine's fetch path alone) as `cachet-sw-start.js` + `cachet-sw-start_bg.wasm`: what the cachet variant runs |
//! | Workbox | esbuild bundles `bench/sw/workbox-sw.js` (minified, production) into `bench/dist/` |
//! | Yew apps | `bench/yew-size`: `bare` and `with-cachet` (sizes), `with-cachet` again with `--features queue` into `with-cachet-queue/` (the page's queue alarm, which cachet-kit's defaults turn on: sizes only), `hook-rerender` (the `use_cachet_gql` workload): cargo (release), wasm-bindgen, wasm-opt -Oz |
//! | the worker with the queue | `bench-sw` again with `--features queue` into `bench/dist/bench-sw-queue/`: sizes only (the offline mutation queue, which cachet-kit turns on by default and the bench's app does not use) |
//! | the persisted-query worker | `bench-sw` again with `--features persisted-queries` into `bench/dist/bench-sw-apq/`: what the persisted-query row runs, on an origin of its own with the bench's config plus an endpoint `/graphql-apq` whose queries go as hashes (the headline worker and its sizes are the one without) |
//! | named builds | the bench worker and both Yew apps again through `wasm-opt -Oz -g` into `bench/dist/named/`, and the bundler-free API and the agent as trunk's cargo build left them: same code, function names kept, for "where the bytes go" and CPU profiles |
//! | run | `cargo run -p cachet-e2e --bin bench` |
//! | quick start | `examples/quick-start` by `trunk build --release` (offline, the pinned tools): its three wasm's gzip -9 sizes printed beside the README's quoted figures, with the ratio; more than 2 % off fails the bench, naming the file (also with `--quick`; alone with `--only quick-start`; see [`crate::quick_start`]) |

use std::ffi::OsStr;
use std::path::Path;

use anyhow::Result;

use crate::{run, tools, WASM_TARGET};

/// The Yew apps whose size difference is what cachet-yew adds.
const YEW_APPS: [&str; 2] = ["bare", "with-cachet"];
/// The `use_cachet_gql` app the bench invalidates (mutation → hook re-rendered).
const HOOK_APP: &str = "hook-rerender";

/// Builds and runs the benchmark; `quick` runs few iterations and leaves BENCHMARKS.md alone; `only`
/// (`quick-start`) runs that step alone; `rest` goes to the bench binary as it is (`--rows`, `--only`,
/// `--cold`, ...).
pub fn bench(root: &Path, quick: bool, only: Option<&str>, rest: &[String]) -> Result<()> {
    let path = tools::ensure_build_tools(root)?;
    let quick_start = || {
        run::step("the quick start's release sizes against the README's", || {
            crate::quick_start::check(root, &path)
        })
    };
    if only == Some("quick-start") {
        return quick_start();
    }
    tools::ensure_browser()?;
    run::step("install Workbox and esbuild (npm ci --prefix bench)", || {
        run::command(&path, "npm", &["ci", "--prefix", "bench", "--no-audit", "--no-fund"])
    })?;
    crate::build_app(&path)?;
    run::step("bundle the Workbox Service Worker with esbuild", || {
        run::command(
            &path,
            "bench/node_modules/.bin/esbuild",
            &[
                "bench/sw/workbox-sw.js",
                "--bundle",
                "--minify",
                "--format=iife",
                "--define:process.env.NODE_ENV=\"production\"",
                "--outfile=bench/dist/workbox-sw.js",
                "--log-level=warning",
            ],
        )
    })?;
    run::step(
        "build the bench's Yew apps: bare, with cachet-yew, use_cachet_gql (release, wasm-opt -Oz)",
        || build_yew_apps(root, &path),
    )?;
    run::step(
        "build the bench's cachet worker (bench-sw: no devtools, no push, no queue; release, wasm-opt -Oz)",
        || build_bench_sw(root, &path),
    )?;
    run::step("build cachet's SW with function names (wasm-opt -Oz -g)", || build_named_sw(root, &path))?;
    run::step("the bundler-free API and the agent with function names (wasm-opt -Oz -g)", || {
        build_named_page_wasm(root, &path)
    })?;
    run::step(
        "build the bench's cachet worker with persisted queries (bench-sw --features persisted-queries)",
        || build_apq_sw(root, &path),
    )?;
    run::step("build the bench's cachet worker with the offline queue (bench-sw --features queue)", || {
        build_feature_sw(root, &path, BENCH_SW_QUEUE_DIR, &["--features", "queue"])
    })?;
    run::step("run the benchmark in headless Chromium", || {
        let mut args = vec!["run", "--quiet", "-p", "cachet-e2e", "--bin", "bench", "--"];
        if quick {
            args.push("--quick");
        }
        args.extend(rest.iter().map(String::as_str));
        run::cargo(&path, &args)
    })?;
    quick_start()
}

fn build_yew_apps(root: &Path, path: &OsStr) -> Result<()> {
    let mut args = vec!["build", "--release", "--target", WASM_TARGET, "-p", "bench-yew-size"];
    for app in YEW_APPS.iter().chain(&[HOOK_APP]) {
        args.extend(["--bin", app]);
    }
    run::cargo(path, &args)?;
    let hook_dir = root.join("bench/dist/hook");
    let _ = std::fs::remove_dir_all(&hook_dir);
    bindgen_and_optimize(root, path, HOOK_APP, &hook_dir)?;
    for app in YEW_APPS {
        let out_dir = root.join("bench/yew-size/dist").join(app);
        let _ = std::fs::remove_dir_all(&out_dir);
        let bindgen_wasm = bindgen(root, path, app, &out_dir)?;
        let named = named_dir(root)?.join(format!("{app}_bg.wasm")).to_string_lossy().into_owned();
        run::command(path, "wasm-opt", &["-Oz", "-g", &bindgen_wasm, "-o", &named])?;
        run::command(path, "wasm-opt", &["-Oz", &bindgen_wasm, "-o", &bindgen_wasm])?;
    }
    // The app again with the page's queue alarm (`queue`, which cachet-kit's defaults turn on): sizes only.
    let app = "with-cachet";
    run::cargo(
        path,
        &[
            "build",
            "--release",
            "--target",
            WASM_TARGET,
            "-p",
            "bench-yew-size",
            "--bin",
            app,
            "--features",
            "queue",
        ],
    )?;
    let out_dir = root.join("bench/yew-size/dist/with-cachet-queue");
    let _ = std::fs::remove_dir_all(&out_dir);
    bindgen_and_optimize(root, path, app, &out_dir)
}

/// wasm-bindgen (`--target web`) and `wasm-opt -Oz` of the cargo-built `app` into `out_dir`.
fn bindgen_and_optimize(root: &Path, path: &OsStr, app: &str, out_dir: &Path) -> Result<()> {
    let bindgen_wasm = bindgen(root, path, app, out_dir)?;
    run::command(path, "wasm-opt", &["-Oz", &bindgen_wasm, "-o", &bindgen_wasm])
}

/// Where the bench's cachet worker is built (`cachet-sw.js`, `cachet-sw_bg.wasm`: the names the shim loads).
pub const BENCH_SW_DIR: &str = "bench/dist/bench-sw";

/// The same worker with persisted queries (`--features persisted-queries`): what the persisted-query
/// row runs, on an origin of its own.
pub const BENCH_SW_APQ_DIR: &str = "bench/dist/bench-sw-apq";

/// The worker of an app with the bench's config (`bench-sw` of `bench/yew-size`) and its start module
/// (`bench-sw-start`), as trunk builds a worker: `no-modules` glue, `wasm-opt -Oz`, named as the shim
/// loads them.
fn build_bench_sw(root: &Path, path: &OsStr) -> Result<()> {
    build_feature_sw(root, path, BENCH_SW_DIR, &[])
}

/// The same worker with the `queue` feature: sizes only.
pub const BENCH_SW_QUEUE_DIR: &str = "bench/dist/bench-sw-queue";

/// [`build_bench_sw`] with the `persisted-queries` feature, into [`BENCH_SW_APQ_DIR`].
fn build_apq_sw(root: &Path, path: &OsStr) -> Result<()> {
    build_feature_sw(root, path, BENCH_SW_APQ_DIR, &["--features", "persisted-queries"])
}

/// [`build_bench_sw`] with `features` of `bench-yew-size`, into `dir`.
fn build_feature_sw(root: &Path, path: &OsStr, dir: &str, features: &[&str]) -> Result<()> {
    for wasm in bindgen_bench_sw(root, path, &root.join(dir), features)? {
        run::command(path, "wasm-opt", &["-Oz", &wasm, "-o", &wasm])?;
    }
    Ok(())
}

/// The two binaries of the bench's worker: the whole engine and its start module, each with the name
/// the shim loads it by and the glue's global (`--no-modules-global`: the shim imports both glues, as
/// the build-stamp hook renames the start module's in a trunk build).
const BENCH_SW_BINS: [(&str, &str, &str); 2] =
    [("bench-sw", "cachet-sw", "wasm_bindgen"), ("bench-sw-start", "cachet-sw-start", "cachet_sw_start")];

/// cargo (release, with `features`) and wasm-bindgen of `bench-sw` and `bench-sw-start` into `out_dir` as
/// `cachet-sw.js` + `cachet-sw_bg.wasm` and `cachet-sw-start.js` + `cachet-sw-start_bg.wasm`; returns
/// the paths of the two wasm files.
fn bindgen_bench_sw(root: &Path, path: &OsStr, out_dir: &Path, features: &[&str]) -> Result<Vec<String>> {
    let mut args = vec!["build", "--release", "--target", WASM_TARGET, "-p", "bench-yew-size"];
    for (bin, _, _) in BENCH_SW_BINS {
        args.extend(["--bin", bin]);
    }
    args.extend_from_slice(features);
    run::cargo(path, &args)?;
    std::fs::create_dir_all(out_dir)?;
    let mut built = Vec::new();
    for (bin, name, global) in BENCH_SW_BINS {
        built.push(bindgen_no_modules(
            root,
            path,
            bin,
            out_dir,
            &["--no-modules-global", global, "--out-name", name],
        )?);
    }
    Ok(built)
}

/// wasm-bindgen (`--target no-modules`, as trunk builds workers, with `extra` arguments) of the
/// cargo-built `bin` into `out_dir`; returns the path of its `_bg.wasm` (named `--out-name`'s value when
/// given, else after `bin`).
fn bindgen_no_modules(
    root: &Path,
    path: &OsStr,
    bin: &str,
    out_dir: &Path,
    extra: &[&str],
) -> Result<String> {
    let wasm = root.join(format!("target/{WASM_TARGET}/release/{bin}.wasm"));
    let out = out_dir.to_string_lossy().into_owned();
    let wasm_path = wasm.to_string_lossy().into_owned();
    let mut args = vec!["--target", "no-modules", "--no-typescript"];
    args.extend_from_slice(extra);
    args.extend(["--out-dir", out.as_str(), wasm_path.as_str()]);
    run::command(path, "wasm-bindgen", &args)?;
    let name =
        extra.iter().position(|arg| *arg == "--out-name").and_then(|at| extra.get(at + 1)).unwrap_or(&bin);
    Ok(out_dir.join(format!("{name}_bg.wasm")).to_string_lossy().into_owned())
}

/// The bench's worker (see [`build_bench_sw`]) with its function names: `bench/dist/named/cachet-sw.js`
/// and `cachet-sw_bg.wasm`.
fn build_named_sw(root: &Path, path: &OsStr) -> Result<()> {
    let out_dir = named_dir(root)?;
    for named in bindgen_bench_sw(root, path, &out_dir, &[])? {
        run::command(path, "wasm-opt", &["-Oz", "-g", &named, "-o", &named])?;
    }
    Ok(())
}

/// The bundler-free API and the example's agent, as trunk's cargo build left them (`crate::build_app`),
/// with their function names: `bench/dist/named/cachet-api_bg.wasm` and `cachet-agent_bg.wasm`, for
/// "where the bytes go" (the same code as `dist/`'s, which wasm-opt -Oz stripped of its names).
fn build_named_page_wasm(root: &Path, path: &OsStr) -> Result<()> {
    let out_dir = named_dir(root)?;
    for bin in ["cachet-api", "cachet-agent"] {
        let named = bindgen_no_modules(root, path, bin, &out_dir, &[])?;
        run::command(path, "wasm-opt", &["-Oz", "-g", &named, "-o", &named])?;
    }
    Ok(())
}

fn named_dir(root: &Path) -> Result<std::path::PathBuf> {
    let dir = root.join("bench/dist/named");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// wasm-bindgen (`--target web`) of the cargo-built `app` into `out_dir`; returns the path of its
/// `<app>_bg.wasm`, not yet optimised.
fn bindgen(root: &Path, path: &OsStr, app: &str, out_dir: &Path) -> Result<String> {
    let wasm = root.join(format!("target/{WASM_TARGET}/release/{app}.wasm"));
    let out = out_dir.to_string_lossy().into_owned();
    run::command(
        path,
        "wasm-bindgen",
        &["--target", "web", "--no-typescript", "--out-dir", &out, &wasm.to_string_lossy()],
    )?;
    Ok(out_dir.join(format!("{app}_bg.wasm")).to_string_lossy().into_owned())
}
