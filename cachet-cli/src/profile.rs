//! The release profile a size-conscious wasm app needs (issue 36: with cargo's defaults the quick start's
//! wasm was 1.6–1.7× what the README quotes), written by `cachet init --trunk` and checked by
//! `cachet doctor`.
//!
//! | key | value | why |
//! |---|---|---|
//! | `opt-level` | `"z"` (or `"s"`) | optimise for size: every byte is downloaded by every user, and a worker's on each cold start |
//! | `lto` | `true` | whole-program inlining and dead-code removal across crates |
//! | `codegen-units` | `1` | the same, within a crate |
//! | `panic` | `"abort"` | no unwinding tables |
//!
//! Cargo reads profiles from the workspace root's manifest only: in a workspace member the profile
//! belongs in the root's `Cargo.toml` ([`profile_manifest`] finds it), and `init` leaves a member's own
//! manifest alone (`doctor` names the root). Each key is added only when missing: an app's own value
//! is kept (and `doctor` names one that costs size).

use std::path::{Path, PathBuf};

use toml_edit::{value, DocumentMut, Item, Table};

/// The keys and the values `init` writes.
pub const RELEASE_PROFILE: [(&str, ProfileValue); 4] = [
    ("opt-level", ProfileValue::Text("z")),
    ("lto", ProfileValue::Flag(true)),
    ("codegen-units", ProfileValue::Number(1)),
    ("panic", ProfileValue::Text("abort")),
];

/// One value of [`RELEASE_PROFILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileValue {
    /// A string.
    Text(&'static str),
    /// A boolean.
    Flag(bool),
    /// An integer.
    Number(i64),
}

impl ProfileValue {
    fn item(self) -> Item {
        match self {
            ProfileValue::Text(text) => value(text),
            ProfileValue::Flag(flag) => value(flag),
            ProfileValue::Number(number) => value(number),
        }
    }

    fn shown(self) -> String {
        match self {
            ProfileValue::Text(text) => format!("\"{text}\""),
            ProfileValue::Flag(flag) => flag.to_string(),
            ProfileValue::Number(number) => number.to_string(),
        }
    }
}

/// The manifest whose `[profile.release]` cargo uses for the app at `dir`: the nearest ancestor's
/// `Cargo.toml` with a `[workspace]` that does not exclude the app, else the app's own.
pub fn profile_manifest(dir: &Path) -> PathBuf {
    let own = dir.join("Cargo.toml");
    if std::fs::read_to_string(&own).is_ok_and(|text| has_workspace(&text)) {
        return own;
    }
    let Ok(app) = dir.canonicalize() else {
        return own;
    };
    for ancestor in app.ancestors().skip(1) {
        let manifest = ancestor.join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        let Ok(document) = text.parse::<DocumentMut>() else { continue };
        let Some(workspace) = document.get("workspace") else { continue };
        let relative = app.strip_prefix(ancestor).map(|path| path.to_string_lossy().replace('\\', "/"));
        let excluded = workspace.get("exclude").and_then(Item::as_array).is_some_and(|excluded| {
            excluded
                .iter()
                .any(|path| relative.as_deref().is_ok_and(|relative| path.as_str() == Some(relative)))
        });
        return if excluded { own } else { manifest };
    }
    own
}

fn has_workspace(text: &str) -> bool {
    text.parse::<DocumentMut>().is_ok_and(|document| document.get("workspace").is_some())
}

/// Adds the missing keys of [`RELEASE_PROFILE`] to `manifest` (a parsed `Cargo.toml`); whether it
/// changed.
pub fn add_release_profile(manifest: &mut DocumentMut) -> bool {
    let profile = manifest.entry("profile").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(profile) = profile.as_table_like_mut() else { return false };
    let release = profile.entry("release").or_insert_with(|| {
        let mut table = Table::new();
        table.decor_mut().set_prefix(
            "\n# cachet: a release build for size (every byte of the wasm is downloaded, and the worker's is\n\
             # compiled on each cold start). Your own values are kept; `cachet doctor` names costly ones.\n",
        );
        Item::Table(table)
    });
    let Some(release) = release.as_table_like_mut() else { return false };
    let mut changed = false;
    for (key, wanted) in RELEASE_PROFILE {
        if !release.contains_key(key) {
            release.insert(key, wanted.item());
            changed = true;
        }
    }
    changed
}

/// What `doctor` says of the release profile in `manifest` (the text of [`profile_manifest`]): each
/// key missing or set to a value that costs size, with the line that fixes it.
pub fn profile_problems(manifest: &str) -> Vec<String> {
    let Ok(document) = manifest.parse::<DocumentMut>() else {
        return vec!["not valid TOML: its [profile.release] cannot be read".to_owned()];
    };
    let release = document.get("profile").and_then(|profile| profile.get("release"));
    let mut problems = Vec::new();
    for (key, wanted) in RELEASE_PROFILE {
        let found = release.and_then(|release| release.get(key)).and_then(Item::as_value);
        let fine = match (key, found) {
            (_, None) => false,
            ("opt-level", Some(found)) => matches!(found.as_str(), Some("z" | "s")),
            ("lto", Some(found)) => {
                found.as_bool() == Some(true) || matches!(found.as_str(), Some("fat" | "thin"))
            }
            ("codegen-units", Some(found)) => found.as_integer() == Some(1),
            (_, Some(found)) => found.as_str() == Some("abort"),
        };
        if !fine {
            let now = found.map_or_else(|| "missing".to_owned(), |found| found.to_string().trim().to_owned());
            problems.push(format!(
                "[profile.release] {key} is {now}: release wasm is larger than it needs to be (set `{key} = {}`, \
                 or run `cachet init --trunk`)",
                wanted.shown()
            ));
        }
    }
    problems
}
