//! The quick start's release sizes against the README's (issue 36 item 3): `examples/quick-start` built
//! with `trunk build --release`, offline, with the pinned tools (its `Trunk.toml`'s `[tools]`); the gzip -9
//! size of each of its `.wasm` in `dist/` compared with the figure the README's quick start quotes
//! ("This quick start so built ...: the app's wasm 223.8 KB gzipped, the Service Worker's 190.6 KB (the
//! whole engine) and the start module's 120.5 KB, the agent's 67.0 KB", KB of 1024 bytes). A step of `cargo xtask bench` (and alone: `cargo xtask bench
//! --only quick-start`), not of `cargo xtask test`: it is a release build, minutes long.
//!
//! The app builds into `target/fresh-app`, where `cachet-cli`'s fresh-app test and the e2e quick start
//! build, with this workspace's `Cargo.lock`, so the dependencies compile once for all three.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::run;

/// Where the README quotes the sizes, and the sentence that opens the quote.
pub const README: &str = "README.md";
const QUOTE: &str = "This quick start so built";
/// A measured size may differ from the quoted one by this much (2 %) before the bench fails.
pub const TOLERANCE: f64 = 0.02;

/// The wasm files of the build: how the README names each, and its file in `dist/`.
pub const ARTIFACTS: [(&str, &str); 4] = [
    ("the app's wasm", "quick-start_bg.wasm"),
    ("the Service Worker's", "cachet-sw_bg.wasm"),
    ("the start module's", "cachet-sw-start_bg.wasm"),
    ("the agent's", "cachet-agent_bg.wasm"),
];

/// One artifact: quoted by the README and measured now, in KB of 1024 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub file: &'static str,
    pub quoted_kb: f64,
    pub measured_kb: f64,
}

impl Row {
    pub fn ratio(&self) -> f64 {
        self.measured_kb / self.quoted_kb
    }

    pub fn within_tolerance(&self) -> bool {
        (self.ratio() - 1.0).abs() <= TOLERANCE
    }
}

/// Builds the quick start in release, measures its wasm, prints each figure beside the README's with
/// the ratio, and fails naming each file whose size is more than [`TOLERANCE`] off the quoted figure.
pub fn check(root: &Path, path: &OsStr) -> Result<()> {
    let quoted = quoted_sizes(&std::fs::read_to_string(root.join(README))?)?;
    run::step("build the quick start (examples/quick-start) with trunk build --release, offline", || {
        build(root, path)
    })?;
    let dist = root.join("examples/quick-start/dist");
    let mut rows = Vec::new();
    for ((name, file), quoted_kb) in ARTIFACTS.iter().zip(quoted) {
        let bytes = gzip9_len(&dist.join(file)).with_context(|| format!("{name}: {file}"))?;
        rows.push(Row { file, quoted_kb, measured_kb: bytes as f64 / 1024.0 });
    }
    println!("{}", table(&rows));
    let off: Vec<String> = rows
        .iter()
        .filter(|row| !row.within_tolerance())
        .map(|row| {
            format!(
                "{}: {:.1} KB gzipped, {README} says {:.1} KB (ratio {:.3})",
                row.file,
                row.measured_kb,
                row.quoted_kb,
                row.ratio()
            )
        })
        .collect();
    if !off.is_empty() {
        bail!(
            "the quick start's release sizes differ from {README}'s by more than {:.0} %: {}",
            TOLERANCE * 100.0,
            off.join("; ")
        );
    }
    Ok(())
}

/// The printed comparison, one line per artifact.
pub fn table(rows: &[Row]) -> String {
    let mut text = format!("[xtask] quick start, release, gzip -9 (KB of 1024 bytes) vs {README}:");
    for row in rows {
        text.push_str(&format!(
            "\n[xtask]   {:<22} measured {:>7.1} KB  quoted {:>7.1} KB  ratio {:.3}{}",
            row.file,
            row.measured_kb,
            row.quoted_kb,
            row.ratio(),
            if row.within_tolerance() { "" } else { "  OFF BY MORE THAN 2 %" }
        ));
    }
    text
}

/// The README's quoted sizes, in the order of [`ARTIFACTS`], read from the sentence that starts with
/// "This quick start so built" (its line breaks ignored).
pub fn quoted_sizes(readme: &str) -> Result<[f64; ARTIFACTS.len()]> {
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = flat.find(QUOTE).with_context(|| format!("{README} has no \"{QUOTE}\" sentence"))?;
    let sentence = &flat[start..];
    let sentence = &sentence[..sentence.find(". ").map_or(sentence.len(), |end| end + 1)];
    let mut sizes = [0.0; ARTIFACTS.len()];
    for (size, (name, _)) in sizes.iter_mut().zip(ARTIFACTS) {
        let after = sentence
            .split_once(name)
            .with_context(|| format!("{README}'s \"{QUOTE}\" sentence does not quote {name}: {sentence}"))?
            .1;
        let figure = after.split_whitespace().next().unwrap_or_default();
        let unit = after.split_whitespace().nth(1).unwrap_or_default();
        if !unit.starts_with("KB") {
            bail!("{README}: {name} is not quoted in KB: {sentence}");
        }
        *size = figure.parse().with_context(|| format!("{README}: {name} quoted as {figure:?}"))?;
    }
    Ok(sizes)
}

/// `trunk build --release` in `examples/quick-start`: offline (cargo too), the tools of its `Trunk.toml`
/// found on `path`, into `target/fresh-app`, with this workspace's `Cargo.lock` (the example's own is
/// not tracked).
fn build(root: &Path, path: &OsStr) -> Result<()> {
    let app = root.join("examples/quick-start");
    std::fs::copy(root.join("Cargo.lock"), app.join("Cargo.lock"))?;
    println!("[xtask] $ (examples/quick-start) TRUNK_OFFLINE=true trunk build --release");
    let status = Command::new("trunk")
        .args(["build", "--release"])
        .current_dir(&app)
        .env("PATH", path)
        .env("TRUNK_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", root.join("target/fresh-app"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .context("could not start trunk")?;
    if !status.success() {
        bail!("trunk build --release in examples/quick-start exited with {status}");
    }
    Ok(())
}

/// The length of `file` compressed by `gzip -9`.
fn gzip9_len(file: &Path) -> Result<usize> {
    let output =
        Command::new("gzip").arg("-9").arg("-c").arg(file).output().context("could not start gzip")?;
    if !output.status.success() {
        bail!("gzip -9 {}: {}", file.display(), String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(output.stdout.len())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SENTENCE: &str = "larger), and the tools it runs. This quick start so built (2026-11-26, offline, the pinned\n\
                            tools): the app's wasm 223.8 KB\ngzipped, the Service Worker's 190.6 KB (the whole engine) and\nthe start module's 120.5 KB, the agent's 67.0 KB. A \
                            failed registration is 12.0 KB.";

    #[test]
    fn the_quoted_sizes_are_read_across_line_breaks() {
        assert_eq!(quoted_sizes(SENTENCE).unwrap(), [223.8, 190.6, 120.5, 67.0]);
    }

    #[test]
    fn a_missing_sentence_or_figure_is_an_error_naming_it() {
        let error = quoted_sizes("no sizes here").unwrap_err().to_string();
        assert!(error.contains("This quick start so built"), "{error}");
        let error = quoted_sizes(&SENTENCE.replace("the agent's 67.0 KB", "the agent")).unwrap_err();
        assert!(format!("{error:#}").contains("the agent's"), "{error:#}");
        let error = quoted_sizes(&SENTENCE.replace("190.6 KB", "190.6 MB")).unwrap_err();
        assert!(format!("{error:#}").contains("Service Worker"), "{error:#}");
    }

    /// The README quotes the sizes where the bench reads them (a sentence moved or reworded fails
    /// here, natively, before a release build would).
    #[test]
    fn the_readme_quotes_the_sizes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let sizes = quoted_sizes(&std::fs::read_to_string(root.join(README)).unwrap()).unwrap();
        assert!(sizes.iter().all(|size| *size > 10.0), "{sizes:?}");
    }

    #[test]
    fn two_percent_either_way_passes_more_fails() {
        let row = |measured_kb| Row { file: "cachet-sw_bg.wasm", quoted_kb: 100.0, measured_kb };
        assert!(row(101.9).within_tolerance());
        assert!(row(98.1).within_tolerance());
        assert!(!row(102.1).within_tolerance());
        assert!(!row(97.9).within_tolerance());
        assert!(table(&[row(103.0)]).contains("OFF BY MORE THAN 2 %"));
    }
}
