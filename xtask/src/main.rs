//! cachet's build automation. `cargo xtask demo` builds and serves the example todo app with its real
//! backend; `cargo xtask test` runs every check and test; `cargo xtask bench` measures cachet against
//! Workbox and the empty-SW floor. Each installs the tools it needs first, and skips what is already
//! installed at the right version. `cargo xtask chaos` runs the fault campaign and writes RELIABILITY.md.

mod bench;
mod chaos;
#[cfg(test)]
mod layers;
mod matrix;
mod quick_start;
mod run;
mod tools;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "cachet's build automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the example todo app and serve it with its backend on 127.0.0.1.
    Demo {
        /// Port to serve on.
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Auth mode of the backend.
        #[arg(long, default_value = "cookie", value_parser = ["cookie", "bearer"])]
        auth_mode: String,
    },
    /// Run everything: fmt, clippy (native and wasm32), native tests, wasm tests in headless Chromium,
    /// and the end-to-end tests.
    Test,
    /// Install the tools only (wasm target, wasm-bindgen CLI, trunk, wasm-opt, Chromium, Firefox ESR,
    /// WebKitGTK, geckodriver, Xvfb, the interop matrix's servers and clients).
    Setup,
    /// Rewrite the interop matrix of docs/status.md from the last run of `tests/tests/e2e/interop.rs`
    /// (`target/interop`); `cargo xtask test` does it after the end-to-end tests.
    Matrix,
    /// Build the example app into `dist/` as the end-to-end tests use it (then `cargo test -p cachet-e2e
    /// --test e2e NAME::` runs one story file).
    BuildApp,
    /// The fault campaign (fuzzing at scale, workers stopped mid-write...) against the real backend in
    /// headless Chromium; bounded in count; writes its figures into RELIABILITY.md.
    Chaos {
        /// Few cases and runs (what `cargo xtask test` runs): check that everything runs; RELIABILITY.md
        /// is left alone.
        #[arg(long)]
        quick: bool,
        /// Cases per fuzz target.
        #[arg(long, default_value_t = 1_000_000)]
        fuzz_cases: u64,
        /// Runs per end-to-end story.
        #[arg(long, default_value_t = 100)]
        runs: u32,
    },
    /// Build the example app and take the README's screenshot of it in headless Chromium.
    Screenshot {
        /// Where to write the PNG.
        #[arg(long, default_value = "docs/todo-app.png")]
        out: String,
    },
    /// Benchmark cachet's Service Worker against a Workbox 7 one, the empty-SW floor and no SW, in
    /// headless Chromium; print the figures and rewrite BENCHMARKS.md.
    Bench {
        /// Few iterations, small caches: check that everything runs; BENCHMARKS.md is left alone.
        #[arg(long)]
        quick: bool,
        /// Run one step alone: `quick-start` builds the quick start in release and compares its wasm
        /// sizes with the README's (the bench's last step otherwise).
        #[arg(long, value_parser = ["quick-start"])]
        only: Option<String>,
        /// Passed on to the bench binary after `--`, e.g. `-- --rows cold --only cachet,workbox` (see
        /// `cargo run -p cachet-e2e --bin bench -- --help`).
        #[arg(last = true)]
        rest: Vec<String>,
    },
}

/// The wasm target of the browser crates.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() -> Result<()> {
    let cli = Cli::parse();
    let root = workspace_root();
    std::env::set_current_dir(&root)?;
    match cli.command {
        Command::Setup => {
            let path = tools::ensure_build_tools(&root)?;
            tools::ensure_browser()?;
            tools::ensure_other_engines(&path)?;
            tools::ensure_interop(&root, &path)
        }
        Command::Matrix => matrix::write_status_table(&root, &root.join("target/interop")),
        Command::BuildApp => build_app(&tools::ensure_build_tools(&root)?),
        Command::Demo { port, auth_mode } => demo(&root, port, &auth_mode),
        Command::Test => test(&root),
        Command::Bench { quick, only, rest } => bench::bench(&root, quick, only.as_deref(), &rest),
        Command::Chaos { quick, fuzz_cases, runs } => chaos::chaos(&root, quick, fuzz_cases, runs),
        Command::Screenshot { out } => screenshot(&root, &out),
    }
}

fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map(PathBuf::from).unwrap_or(manifest_dir)
}

fn demo(root: &std::path::Path, port: u16, auth_mode: &str) -> Result<()> {
    let path = tools::ensure_build_tools(root)?;
    build_app(&path)?;
    if auth_mode == "bearer" {
        run::step("switch the built app's config to bearer auth (dist/cachet-sw-config.js)", || {
            bearer_config(root)
        })?;
    }
    run::step("serve the todo app and its backend (Ctrl-C to stop)", || {
        run::cargo(
            &path,
            &[
                "run",
                "--quiet",
                "-p",
                "todo-backend",
                "--",
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--static-dir",
                "dist",
                "--db",
                "examples/todo-backend/data/todo.sqlite",
                "--auth-mode",
                auth_mode,
            ],
        )
    })
}

/// Rewrites `dist/cachet-sw-config.js` from the app's `cachet.config.json` with `features.auth.type` set to
/// `bearer`, as `cachet generate` would write it: the page and its Service Worker both read that file, so
/// the one build speaks to a bearer backend.
fn bearer_config(root: &std::path::Path) -> Result<()> {
    let source = root.join("examples/todo-app/cachet.config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&source)?)?;
    config["features"]["auth"]["type"] = serde_json::json!("bearer");
    let config = cachet_core::config::Config::from_json_str(&config.to_string())
        .map_err(|error| anyhow::anyhow!("{}: {error}", source.display()))?;
    std::fs::write(root.join("dist/cachet-sw-config.js"), cachet_cli::render_sw_config(&config))?;
    Ok(())
}

fn screenshot(root: &std::path::Path, out: &str) -> Result<()> {
    let path = tools::ensure_build_tools(root)?;
    tools::ensure_browser()?;
    build_app(&path)?;
    run::step(&format!("screenshot of the running app in headless Chromium -> {out}"), || {
        run::cargo(&path, &["run", "--quiet", "-p", "cachet-e2e", "--bin", "screenshot", "--", out])
    })
}

/// Builds the todo app, its Service Worker and its agent into `dist/` with trunk, then writes the
/// example app's config into `dist/cachet/cachet-api.bundle.js`, as `cachet generate --bundles` does for
/// an app: the plain page needs only SPEC's two scripts.
fn build_app(path: &std::ffi::OsStr) -> Result<()> {
    run::step("build the todo app with trunk (release, wasm-opt -Oz)", || {
        for attempt in 1..=3 {
            // trunk copies wasm-bindgen's `snippets/` from one output directory that nothing empties: a
            // snippet an earlier build wrote (a file renamed since) would be shipped, and precached.
            let _ = std::fs::remove_dir_all("target/wasm-bindgen/release/snippets");
            run::command(path, "trunk", &["build", "--release"])?;
            // trunk runs the links' wasm-bindgen side by side into that one directory, each writing the
            // same snippets again: it once hashed `page.js` while another run had it empty, and the app
            // would not load (its `integrity` was the empty file's). Checked, and built again.
            let wrong = integrity_mismatches(std::path::Path::new("dist"))?;
            if wrong.is_empty() {
                return Ok(());
            }
            eprintln!(
                "[xtask] dist/index.html's integrity does not match {} (attempt {attempt})",
                wrong.join(", ")
            );
        }
        anyhow::bail!(
            "trunk wrote an integrity into dist/index.html that its files do not match, three times"
        )
    })?;
    run::step("write the app's config into dist/cachet/cachet-api.bundle.js", || {
        let config = cachet_cli::read_config(std::path::Path::new("examples/todo-app"))
            .map_err(|error| anyhow::anyhow!("{error}"))?;
        let bundle_path = std::path::Path::new("dist/cachet/cachet-api.bundle.js");
        let bundle = std::fs::read_to_string(bundle_path)?;
        let configured = cachet_cli::with_config(&bundle, &config)
            .ok_or_else(|| anyhow::anyhow!("{}: no config slot", bundle_path.display()))?;
        std::fs::write(bundle_path, configured)?;
        Ok(())
    })
}

/// The files `dist/index.html` names with an `integrity="sha384-..."` that their bytes in `dist` do not
/// match (or that are missing).
fn integrity_mismatches(dist: &std::path::Path) -> Result<Vec<String>> {
    use base64::Engine as _;
    use sha2::Digest as _;
    let html = std::fs::read_to_string(dist.join("index.html"))?;
    let mut wrong = Vec::new();
    for tag in html.split('<').filter(|tag| tag.contains("integrity=\"sha384-")) {
        let attribute = |name: &str| {
            let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
            tag[start..].find('"').map(|end| &tag[start..start + end])
        };
        let (Some(href), Some(integrity)) = (attribute("href"), attribute("integrity")) else { continue };
        let bytes = std::fs::read(dist.join(href.trim_start_matches('/'))).unwrap_or_default();
        let actual = base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(&bytes));
        if integrity.strip_prefix("sha384-") != Some(actual.as_str()) {
            wrong.push(href.to_owned());
        }
    }
    Ok(wrong)
}

/// The crates meant for crates.io (the others say `publish = false`).
const PUBLISHED: [&str; 7] =
    ["cachet-core", "cachet-idb", "cachet-client", "cachet-worker", "cachet-yew", "cachet-cli", "cachet-kit"];

fn test(root: &std::path::Path) -> Result<()> {
    let started = std::time::Instant::now();
    let path = tools::ensure_build_tools(root)?;
    tools::ensure_browser()?;
    tools::ensure_other_engines(&path)?;
    tools::ensure_interop(root, &path)?;
    let wasm_crates = [
        "-p",
        "cachet-idb",
        "-p",
        "cachet-worker",
        "-p",
        "cachet-yew",
        "-p",
        "cachet-client",
        "-p",
        "cachet-api",
        "-p",
        "todo-app",
        "-p",
        "bench-yew-size",
        "-p",
        "cachet-kit",
    ];
    // The browser crates are checked and tested for wasm32 only: natively they would only add build time.
    let native_only = [
        "--workspace",
        "--exclude",
        "cachet-idb",
        "--exclude",
        "cachet-worker",
        "--exclude",
        "cachet-yew",
        "--exclude",
        "cachet-client",
        "--exclude",
        "cachet-api",
        "--exclude",
        "todo-app",
        "--exclude",
        "bench-yew-size",
        "--exclude",
        "cachet-kit",
    ];
    run::step("cargo fmt --check", || run::cargo(&path, &["fmt", "--all", "--check"]))?;
    run::step("clippy (native, all targets, warnings denied)", || {
        let mut args = vec!["clippy", "--all-targets"];
        args.extend(native_only);
        args.extend(["--", "-D", "warnings"]);
        run::cargo(&path, &args)
    })?;
    run::step("clippy (wasm32, browser crates, warnings denied)", || {
        let mut args = vec!["clippy", "--target", "wasm32-unknown-unknown", "--all-targets"];
        args.extend(wasm_crates);
        args.extend(["--", "-D", "warnings"]);
        run::cargo(&path, &args)
    })?;
    // Alone, cachet-worker is built without its optional features (`devtools`, `push`, `queue`), which
    // the app above turns on: check that build too, as an app without them gets it, and each one alone.
    // The libraries of cachet-client and cachet-yew likewise (`auth`, `in-page-agent`, which their own
    // tests turn on).
    run::step(
        "clippy (wasm32, cachet-worker, cachet-client and cachet-yew without their optional features)",
        || {
            let clippy = |args: &[&str]| {
                let wasm = ["clippy", "--target", "wasm32-unknown-unknown"];
                run::cargo(&path, &[&wasm[..], args, &["--", "-D", "warnings"]].concat())
            };
            clippy(&["--all-targets", "-p", "cachet-worker"])?;
            // The library as an app links it: without `test-support` (which its tests turn on, and which
            // makes the engine's parts public), so that a part only the tests use is named dead code.
            for features in ["", "devtools,push", "queue", "devtools,push,queue"] {
                clippy(&["--lib", "-p", "cachet-worker", "--features", features])?;
            }
            clippy(&["--lib", "-p", "cachet-client", "-p", "cachet-yew"])?;
            // cachet-kit's tests are an app's without auth (built out where `auth` is on): lint them so.
            clippy(&["--all-targets", "-p", "cachet-kit"])
        },
    )?;
    run::step("native tests", || {
        let mut args = vec!["test"];
        args.extend(native_only);
        args.extend(["--exclude", "cachet-e2e"]);
        run::cargo(&path, &args)
    })?;
    // `cargo package` checks each crate's manifest (metadata, versions of path dependencies, files
    // inside the package); `--no-verify` skips rebuilding every crate from its .crate (minutes), which
    // the steps around it do from the sources. Then the docs, as docs.rs builds them (wasm32 for the
    // browser crates, see their `package.metadata.docs.rs`).
    run::step("publishable crates package (cargo package --no-verify) and their docs build", || {
        let mut args = vec!["package", "--no-verify", "--allow-dirty"];
        for krate in PUBLISHED {
            args.extend(["-p", krate]);
        }
        run::cargo(&path, &args)?;
        // Warnings denied: a broken or private intra-doc link is a wrong page on docs.rs.
        let deny = "build.rustdocflags=[\"-D\", \"warnings\"]";
        run::cargo(&path, &["doc", "--config", deny, "--no-deps", "-p", "cachet-core", "-p", "cachet-cli"])?;
        // With the features docs.rs documents (see each crate's `package.metadata.docs.rs`).
        let features = "cachet-client/auth,cachet-yew/auth,cachet-yew/in-page-agent";
        let mut args = vec![
            "doc",
            "--config",
            deny,
            "--no-deps",
            "--target",
            "wasm32-unknown-unknown",
            "--features",
            features,
        ];
        for krate in ["cachet-idb", "cachet-client", "cachet-worker", "cachet-yew", "cachet-kit"] {
            args.extend(["-p", krate]);
        }
        run::cargo(&path, &args)
    })?;
    // Doc examples are not compiled for wasm32 (rustdoc skips a cross target's doctests): compile the
    // hooks' examples natively (`no_run`: yew builds for the host too), so that every one stays true.
    run::step("doc examples of cachet-yew compile (native, no_run)", || {
        run::cargo(&path, &["test", "--doc", "-p", "cachet-yew", "--features", "auth"])
    })?;
    let wasm_test = ["test", "--target", "wasm32-unknown-unknown"];
    run::step("wasm-bindgen tests in headless Chromium (browser, dedicated worker, service worker)", || {
        let crates = ["-p", "cachet-idb", "-p", "cachet-worker", "-p", "cachet-yew", "-p", "cachet-client"];
        // The queue as cachet-kit's default features have it: its messages through the engine.
        run::cargo(&path, &[&wasm_test[..], &crates, &["--features", "cachet-worker/queue"]].concat())
    })?;
    // A worker without the queue (an app that never queues a mutation): the stand-in's answers.
    run::step(
        "wasm-bindgen tests of cachet-worker without its optional features (headless Chromium)",
        || {
            run::cargo(
                &path,
                &[&wasm_test[..], &["-p", "cachet-worker", "--test", "service_worker_features"]].concat(),
            )
        },
    )?;
    // Alone, so that no other crate's tests turn on the features an app leaves out (cachet-client's own
    // tests need `auth`): what an app without auth gets.
    run::step("wasm-bindgen tests of cachet-kit without its optional features (headless Chromium)", || {
        run::cargo(&path, &[&wasm_test[..], &["-p", "cachet-kit"]].concat())
    })?;
    build_app(&path)?;
    // The interop matrix writes its rows here; stale ones of an earlier run must not reach docs/status.md.
    let matrix_runs = root.join("target/interop");
    let _ = std::fs::remove_dir_all(&matrix_runs);
    run::step("end-to-end tests (real app, real backend, headless Chromium)", || {
        run::cargo(&path, &["test", "-p", "cachet-e2e", "--", "--test-threads=1"])
    })?;
    run::step("the interop matrix of docs/status.md, from the run (target/interop)", || {
        matrix::write_status_table(root, &matrix_runs)
    })?;
    println!("[xtask] all tests passed in {:.0?}", started.elapsed());
    Ok(())
}

#[cfg(test)]
mod integrity_tests {
    use super::integrity_mismatches;

    /// A file whose bytes match its `integrity` passes; one hashed while empty (what trunk wrote once)
    /// and one missing are named.
    #[test]
    fn an_integrity_the_file_does_not_match_is_named() -> anyhow::Result<()> {
        let dist = std::env::temp_dir().join(format!("cachet-xtask-integrity-{}", std::process::id()));
        std::fs::create_dir_all(dist.join("snippets"))?;
        std::fs::write(dist.join("app.js"), "export const a = 1;\n")?;
        std::fs::write(dist.join("snippets/page.js"), "export function f() {}\n")?;
        let sha = |text: &str| {
            use base64::Engine as _;
            use sha2::Digest as _;
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(text.as_bytes()))
        };
        let html = format!(
            r#"<head><link rel="modulepreload" href="/app.js" crossorigin="anonymous" integrity="sha384-{}"><link rel="modulepreload" href="/snippets/page.js" integrity="sha384-{}"><link rel="preload" href="/gone.wasm" integrity="sha384-{}" as="fetch"><link rel="stylesheet" href="/style.css"></head>"#,
            sha("export const a = 1;\n"),
            sha(""),
            sha("wasm")
        );
        std::fs::write(dist.join("index.html"), html)?;
        assert_eq!(integrity_mismatches(&dist)?, ["/snippets/page.js", "/gone.wasm"]);
        std::fs::write(dist.join("snippets/page.js"), "")?;
        std::fs::write(dist.join("gone.wasm"), "wasm")?;
        assert!(integrity_mismatches(&dist)?.is_empty());
        std::fs::remove_dir_all(&dist)?;
        Ok(())
    }
}
