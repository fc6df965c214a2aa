//! Installing the pinned tools, each skipped when already present at the right version.
//!
//! | tool | pinned | installed with |
//! |---|---|---|
//! | wasm32 target | - | `rustup target add wasm32-unknown-unknown` |
//! | wasm-bindgen CLI | 0.2.130 (= the `wasm-bindgen` crate in Cargo.lock) | `cargo install wasm-bindgen-cli` |
//! | trunk | 0.21.14 (0.22 needs a newer rustc) | `cargo install trunk --locked`, built quickly ([`TRUNK_INSTALL`]) |
//! | wasm-opt | binaryen 132 (older ones cannot parse wasm-bindgen 0.2.130 output) | `npm ci --prefix tools` |
//! | Chromium + chromedriver | Debian's | `apt-get install chromium chromium-driver` (as root) |
//! | Firefox ESR, WebKitGTK's driver and MiniBrowser, Xvfb (the tests' other engines) | Debian's | `apt-get install firefox-esr webkit2gtk-driver xvfb` (as root) |
//! | geckodriver (the tests' Firefox driver) | 0.37.1 | `cargo install geckodriver --locked` |
//! | the interop matrix's servers and clients | `tests/interop/package-lock.json` (Apollo Server, graphql-yoga, graphql-http, urql, Apollo Client, graphql-request, esbuild) | `npm ci --prefix tests/interop` |

use std::ffi::OsString;
use std::path::Path;

use anyhow::{bail, Result};

use crate::run;

/// The wasm-bindgen CLI version; must equal the `wasm-bindgen` crate in Cargo.lock (the crates ask for
/// `0.2.130` or later, so a `cargo update` could move the lock: [`ensure_build_tools`] refuses that). The
/// one `cachet init --trunk` pins in an app's `Trunk.toml`: one constant for both.
pub const WASM_BINDGEN_VERSION: &str = cachet_cli::WASM_BINDGEN_TOOL;
const TRUNK_VERSION: &str = "0.21.14";
/// How trunk is installed: the longest step of a fresh machine's `cargo xtask test` (447 s of its 39 min,
/// session 41), so built for a quick build rather than a fast trunk. trunk's release profile asks for fat
/// LTO in one codegen unit; without it and at `opt-level = 1` the install took 288 s against 352 s with
/// the LTO alone gone (sources already downloaded), and `trunk build --release` of the todo app took the
/// same time with each binary (19-20 s: cargo, wasm-bindgen and wasm-opt do the work). Without its
/// default `update_check` (a crates.io query at each run, and a crate to build), which `TRUNK_OFFLINE`
/// turns off anyway.
const TRUNK_INSTALL: [&str; 15] = [
    "install",
    "trunk",
    "--version",
    TRUNK_VERSION,
    "--locked",
    "--force",
    "--no-default-features",
    "--features",
    "rustls",
    "--config",
    "profile.release.lto=false",
    "--config",
    "profile.release.codegen-units=16",
    "--config",
    "profile.release.opt-level=1",
];
/// binaryen's release, as `cachet init --trunk` pins it (`version_132`).
const WASM_OPT_MAJOR: &str = cachet_cli::WASM_OPT_TOOL.split_at("version_".len()).1;
const GECKODRIVER_VERSION: &str = "0.37.1";

/// Installs what the build needs and returns the `PATH` to run it with (pinned wasm-opt first).
pub fn ensure_build_tools(root: &Path) -> Result<OsString> {
    let node_bin = root.join("tools/node_modules/.bin");
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .map(|home| home.join("bin"));
    let mut entries = vec![node_bin];
    entries.extend(cargo_bin);
    entries.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(entries)?;

    let locked = locked_version(&std::fs::read_to_string(root.join("Cargo.lock"))?, "wasm-bindgen");
    if locked.as_deref() != Some(WASM_BINDGEN_VERSION) {
        bail!(
            "Cargo.lock holds wasm-bindgen {}, but the CLI xtask installs is {WASM_BINDGEN_VERSION}: \
             the two must be equal (`cargo update -p wasm-bindgen --precise {WASM_BINDGEN_VERSION}`)",
            locked.as_deref().unwrap_or("(none)")
        );
    }
    let installed_targets = run::output_all("rustup", &["target", "list", "--installed"], &path);
    ensure("wasm32-unknown-unknown target", installed_targets.contains("wasm32-unknown-unknown"), || {
        run::command(&path, "rustup", &["target", "add", "wasm32-unknown-unknown"])
    })?;
    let bindgen = run::output_line("wasm-bindgen", &["--version"], &path).unwrap_or_default();
    ensure(
        &format!("wasm-bindgen CLI {WASM_BINDGEN_VERSION}"),
        bindgen.ends_with(WASM_BINDGEN_VERSION),
        || {
            run::cargo(
                &path,
                &[
                    "install",
                    "wasm-bindgen-cli",
                    "--version",
                    WASM_BINDGEN_VERSION,
                    "--no-default-features",
                    "--force",
                ],
            )
        },
    )?;
    let trunk = run::output_line("trunk", &["--version"], &path).unwrap_or_default();
    ensure(&format!("trunk {TRUNK_VERSION}"), trunk.ends_with(TRUNK_VERSION), || {
        run::cargo(&path, &TRUNK_INSTALL)
    })?;
    let wasm_opt = run::output_line("wasm-opt", &["--version"], &path).unwrap_or_default();
    ensure(
        &format!("wasm-opt (binaryen {WASM_OPT_MAJOR})"),
        wasm_opt.starts_with(&format!("wasm-opt version {WASM_OPT_MAJOR}")),
        || run::command(&path, "npm", &["ci", "--prefix", "tools", "--no-audit", "--no-fund"]),
    )?;
    Ok(path)
}

/// Installs the interop matrix's foreign GraphQL servers and clients (`tests/interop`, pinned in its
/// `package-lock.json`) unless what is installed is as new as the lockfile.
pub fn ensure_interop(root: &Path, path: &OsString) -> Result<()> {
    let lock = root.join("tests/interop/package-lock.json");
    let installed = root.join("tests/interop/node_modules/.package-lock.json");
    let modified = |file: &Path| std::fs::metadata(file).and_then(|meta| meta.modified()).ok();
    let current = matches!((modified(&installed), modified(&lock)), (Some(at), Some(lock)) if at >= lock);
    ensure("the interop matrix's servers and clients (tests/interop)", current, || {
        run::command(path, "npm", &["ci", "--prefix", "tests/interop", "--no-audit", "--no-fund"])
    })
}

/// The files of the tests' other engines: Firefox ESR, WebKitGTK's driver and its MiniBrowser, and the
/// virtual display WebKit runs on.
const OTHER_ENGINES: [&str; 4] = [
    "/usr/bin/firefox-esr",
    "/usr/bin/WebKitWebDriver",
    "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/bin/Xvfb",
];

/// Installs the engines the tests run besides Chromium (Firefox ESR and WebKitGTK, with Xvfb, from apt as
/// root) and geckodriver (crates.io) when missing.
pub fn ensure_other_engines(path: &OsString) -> Result<()> {
    let present = OTHER_ENGINES.iter().all(|file| Path::new(file).exists());
    ensure("Firefox ESR, WebKitGTK's driver and MiniBrowser, Xvfb", present, || {
        apt_install(&["firefox-esr", "webkit2gtk-driver", "xvfb"], &OTHER_ENGINES)
    })?;
    let geckodriver = run::output_line("geckodriver", &["--version"], path).unwrap_or_default();
    ensure(
        &format!("geckodriver {GECKODRIVER_VERSION}"),
        geckodriver.starts_with(&format!("geckodriver {GECKODRIVER_VERSION}")),
        || {
            let args = ["install", "geckodriver", "--version", GECKODRIVER_VERSION, "--locked", "--force"];
            run::cargo(path, &args)
        },
    )
}

/// `apt-get install packages` as root; elsewhere an error naming `files` and the command to run.
fn apt_install(packages: &[&str], files: &[&str]) -> Result<()> {
    let is_root = run::output_line("id", &["-u"], &std::env::var_os("PATH").unwrap_or_default())
        .is_some_and(|uid| uid.trim() == "0");
    if !is_root || !Path::new("/usr/bin/apt-get").exists() {
        bail!(
            "{} are needed; on Debian run as root: apt-get install -y {}",
            files.join(", "),
            packages.join(" ")
        );
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    run::command(&path, "apt-get", &["update", "-qq"])?;
    run::command(&path, "apt-get", &[&["install", "-y", "-qq"][..], packages].concat())
}

/// Installs Chromium and chromedriver when missing (apt, as root); elsewhere says what to do.
pub fn ensure_browser() -> Result<()> {
    let present = Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists();
    ensure("Chromium and chromedriver", present, || {
        let is_root = run::output_line("id", &["-u"], &std::env::var_os("PATH").unwrap_or_default())
            .is_some_and(|uid| uid.trim() == "0");
        if !is_root || !Path::new("/usr/bin/apt-get").exists() {
            bail!(
                "Chromium and chromedriver are needed at /usr/bin/chromium and /usr/bin/chromedriver; \
                 on Debian run as root: apt-get install -y chromium chromium-driver"
            );
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        run::command(&path, "apt-get", &["update", "-qq"])?;
        run::command(&path, "apt-get", &["install", "-y", "-qq", "chromium", "chromium-driver"])
    })
}

/// The version of `package` in a Cargo.lock text (the first, if several).
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    lines.find(|line| *line == name)?;
    let version = lines.next()?.strip_prefix("version = \"")?.strip_suffix('"')?;
    Some(version.to_owned())
}

fn ensure(what: &str, present: bool, install: impl FnOnce() -> Result<()>) -> Result<()> {
    if present {
        println!("[xtask] {what}: present, skipped");
        return Ok(());
    }
    run::step(&format!("install {what}"), install)
}
