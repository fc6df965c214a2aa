//! `cachet init --trunk`: wires a trunk-built Yew app, idempotently (a second run changes nothing).
//!
//! | file | what it gets, when missing |
//! |---|---|
//! | `Cargo.toml` | `cachet-kit` in `[dependencies]` (the line [`Dependency`] says); an existing one is kept; the features the config needs ([`crate::kit_features`]) added to it |
//! | `index.html` | in `<head>`: the app's own `rel="rust"` link named by its bin (`data-bin`: the app now has three bins), the three worker links (`cachet-sw`, its start module `cachet-sw-start`, `cachet-agent`) and two `copy-file` links (`service-worker.js`, `cachet-sw-config.js`); written whole when there is no `index.html` |
//! | `Cargo.toml` (or nothing, in a workspace member) | the release profile for size ([`crate::profile`]): each key only when missing |
//! | `index.html`, again | `data-wasm-opt="z"` on each `rel="rust"` link that has no `data-wasm-opt` (trunk's release build then runs `wasm-opt -Oz`) |
//! | `Trunk.toml` | `[build] filehash = false` (the shim and yew-agent load their scripts by fixed names), the post-build hook writing `cachet-build.js` (the Service Worker's build stamp), and `[tools]` pinning the wasm-bindgen CLI and wasm-opt cachet is built and tested with ([`WASM_BINDGEN_TOOL`], [`WASM_OPT_TOOL`]: trunk then uses the installed ones and downloads nothing when they match); each written when missing |
//!
//! The worker binaries themselves are generated files (`src/bin/cachet-sw.rs`, `src/bin/cachet-sw-start.rs`,
//! `src/bin/cachet-agent.rs`).

use std::path::Path;

use toml_edit::{value, Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table};

use crate::{CliError, CARGO_TOML};

/// How the app depends on cachet: the value of `cachet-kit` in its `[dependencies]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    /// `{ path = "..." }`: a checkout of cachet.
    Path(String),
    /// `{ git = "..." }`: cachet's repository.
    Git(String),
    /// `"0.1"`: crates.io.
    Registry(String),
}

impl Dependency {
    /// The checkout this CLI was built from, when it is still there (`cargo install --path cachet-cli`);
    /// else crates.io.
    pub fn default_for_this_cli() -> Self {
        let kit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cachet-kit");
        match kit.canonicalize() {
            Ok(kit) if kit.join("Cargo.toml").exists() => Dependency::Path(kit.display().to_string()),
            _ => Dependency::Registry(env!("CARGO_PKG_VERSION").to_owned()),
        }
    }

    fn item(&self) -> Item {
        let mut table = InlineTable::new();
        match self {
            Dependency::Path(path) => table.insert("path", path.as_str().into()),
            Dependency::Git(url) => table.insert("git", url.as_str().into()),
            Dependency::Registry(version) => return value(version.as_str()),
        };
        value(table)
    }
}

/// The page trunk builds.
pub const INDEX_HTML: &str = "index.html";
/// trunk's settings.
pub const TRUNK_TOML: &str = "Trunk.toml";
/// What the build-stamp hook writes, and the shim reads.
pub const BUILD_STAMP: &str = "cachet-build.js";
/// The wasm-bindgen CLI `init --trunk` pins in `Trunk.toml` (`[tools] wasm_bindgen`): the version of the
/// `wasm-bindgen` crate cachet depends on, which the CLI must equal (xtask installs this one too).
pub const WASM_BINDGEN_TOOL: &str = "0.2.130";
/// The wasm-opt `init --trunk` pins in `Trunk.toml` (`[tools] wasm_opt`, trunk's form of binaryen's
/// release): the one cachet's sizes are measured with (older ones cannot read wasm-bindgen 0.2.130's
/// output).
pub const WASM_OPT_TOOL: &str = "version_132";

/// The post-build hook, run in trunk's staging directory once every file of the build is there:
/// `self.CACHET_BUILD = "<checksum of every file of the build>"` and `self.CACHET_PRECACHE = [...]`, the
/// build's files but the worker's own (the shim, its settings, its glue and wasm, which the browser and
/// the shim keep already). A new build changes `cachet-build.js`, which the shim imports, so the browser
/// installs the new worker; that worker keeps the listed files as one set named after the stamp (the app
/// shell, served when the network fails) and the wasm in a cache named after it. POSIX `sh`, `find` and
/// `cksum` (rather than `sha256sum`, which macOS lacks); a file name with a space or a quote is not
/// listed correctly (trunk writes none). Where the build has the worker's start module
/// (`cachet-sw-start.js`, the `cachet-sw-start` bin), its glue's global is renamed `cachet_sw_start` (the
/// shim imports both glues, and wasm-bindgen names both `wasm_bindgen`; trunk has no setting for it: the
/// hook fails, naming the file, when the glue does not begin as expected) and `self.CACHET_START = true`
/// tells the shim to load it.
pub const STAMP_SCRIPT: &str = r#"cd "$TRUNK_STAGING_DIR" && start=false && if [ -f cachet-sw-start.js ]; then sed -i.orig '1s/^let wasm_bindgen = /let cachet_sw_start = /' cachet-sw-start.js && rm cachet-sw-start.js.orig && head -n 1 cachet-sw-start.js | grep -q '^let cachet_sw_start = ' || { echo 'cachet: cachet-sw-start.js does not begin as wasm-bindgen no-modules glue does' >&2; exit 1; }; start=true; fi && files=$(find . -type f ! -name cachet-build.js | sed 's|^\./||' | LC_ALL=C sort) && list= && for f in $files; do case "$f" in service-worker.js|cachet-sw-config.js|cachet-sw.js|cachet-sw_bg.wasm|cachet-sw-start.js|cachet-sw-start_bg.wasm) ;; *) list="$list\"$f\"," ;; esac; done && printf 'self.CACHET_BUILD = "%s";\nself.CACHET_PRECACHE = [%s];\nself.CACHET_START = %s;\n' "$(cat $files | cksum | cut -d' ' -f1)" "${list%,}" "$start" > cachet-build.js"#;

/// What an up-to-date build-stamp hook writes beside the stamp: whether the build has the start module
/// (after the app shell's list, which came first). A hook without it (written by an older `cachet init`)
/// is replaced.
const START_GLOBAL: &str = "CACHET_START";

/// Wires the trunk app in `dir`; returns the files it changed.
pub fn wire_trunk_app(dir: &Path, dependency: &Dependency) -> Result<Vec<&'static str>, CliError> {
    let mut changed = Vec::new();
    let bin = add_dependency(dir, dependency, &mut changed)?;
    add_profile(dir, &mut changed)?;
    if let Ok(config) = crate::read_config(dir) {
        if crate::features::add_kit_features(dir, &crate::kit_features(&config))?
            && !changed.contains(&CARGO_TOML)
        {
            changed.push(CARGO_TOML);
        }
    }
    patch_index(dir, &bin, &mut changed)?;
    patch_trunk_toml(dir, &mut changed)?;
    Ok(changed)
}

fn read(dir: &Path, file: &str) -> Result<Option<String>, CliError> {
    let path = dir.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CliError::ReadApp { path, source }),
    }
}

fn write(
    dir: &Path,
    file: &'static str,
    text: &str,
    changed: &mut Vec<&'static str>,
) -> Result<(), CliError> {
    let path = dir.join(file);
    std::fs::write(&path, text).map_err(|source| CliError::Write { path, source })?;
    changed.push(file);
    Ok(())
}

fn broken(dir: &Path, file: &str, message: impl Into<String>) -> CliError {
    CliError::App { path: dir.join(file), message: message.into() }
}

/// Adds `cachet-kit` to `[dependencies]`; returns the app's main bin name (the package name, or the
/// `[[bin]]` at `src/main.rs`).
fn add_dependency(
    dir: &Path,
    dependency: &Dependency,
    changed: &mut Vec<&'static str>,
) -> Result<String, CliError> {
    let text = read(dir, CARGO_TOML)?
        .ok_or_else(|| broken(dir, CARGO_TOML, "not found: run `cachet init --trunk` in the app's crate"))?;
    let mut manifest: DocumentMut =
        text.parse().map_err(|error| broken(dir, CARGO_TOML, format!("not valid TOML: {error}")))?;
    let name = manifest
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(Item::as_str)
        .ok_or_else(|| broken(dir, CARGO_TOML, "package.name: missing (a workspace root is no app)"))?
        .to_owned();
    let main_bin = manifest
        .get("bin")
        .and_then(Item::as_array_of_tables)
        .and_then(|bins| {
            bins.iter().find(|bin| bin.get("path").and_then(Item::as_str) == Some("src/main.rs"))
        })
        .and_then(|bin| bin.get("name").and_then(Item::as_str))
        .map_or(name, str::to_owned);
    let dependencies = manifest
        .entry("dependencies")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| broken(dir, CARGO_TOML, "dependencies: expected a table"))?;
    if !dependencies.contains_key("cachet-kit") {
        dependencies.insert("cachet-kit", dependency.item());
        write(dir, CARGO_TOML, &manifest.to_string(), changed)?;
    }
    Ok(main_bin)
}

/// Adds the release profile for size to the app's `Cargo.toml` when cargo reads it there (not in a
/// workspace member: its root's profile is the one in force, which `doctor` checks).
fn add_profile(dir: &Path, changed: &mut Vec<&'static str>) -> Result<(), CliError> {
    if crate::profile::profile_manifest(dir) != dir.join(CARGO_TOML) {
        return Ok(());
    }
    let text = read(dir, CARGO_TOML)?.unwrap_or_default();
    let mut manifest: DocumentMut =
        text.parse().map_err(|error| broken(dir, CARGO_TOML, format!("not valid TOML: {error}")))?;
    if crate::profile::add_release_profile(&mut manifest) {
        let path = dir.join(CARGO_TOML);
        std::fs::write(&path, manifest.to_string()).map_err(|source| CliError::Write { path, source })?;
        if !changed.contains(&CARGO_TOML) {
            changed.push(CARGO_TOML);
        }
    }
    Ok(())
}

/// `data-wasm-opt="z"` on every `rel="rust"` link of `html` that names no `data-wasm-opt`, before the
/// tag's end (the author's attributes stay in their order).
fn add_wasm_opt(html: &mut String) {
    let mut from = 0;
    while let Some(found) = html[from..].find("<link") {
        let start = from + found;
        let Some(length) = html[start..].find('>') else { return };
        let end = start + length;
        let tag = &html[start..end];
        from = end;
        if tag.contains("rel=\"rust\"") && !tag.contains("data-wasm-opt") {
            let at = if tag.ends_with(" /") {
                end - 2
            } else if tag.ends_with('/') {
                end - 1
            } else {
                end
            };
            html.insert_str(at, " data-wasm-opt=\"z\"");
            from = end + " data-wasm-opt=\"z\"".len();
        }
    }
}

/// The `<head>` lines cachet needs, each with the text that says it is already there.
fn head_lines() -> [(String, String); 5] {
    let rust = |bin: &str| {
        (
            format!("data-bin=\"{bin}\""),
            format!("<link data-trunk rel=\"rust\" data-bin=\"{bin}\" data-type=\"worker\" data-wasm-opt=\"z\" />"),
        )
    };
    let copy = |file: &str| {
        (format!("href=\"{file}\""), format!("<link data-trunk rel=\"copy-file\" href=\"{file}\" />"))
    };
    [
        rust("cachet-sw"),
        rust("cachet-sw-start"),
        rust("cachet-agent"),
        copy(crate::SW_SHIM_PATH),
        copy(crate::SW_CONFIG_PATH),
    ]
}

/// A whole `index.html` for an app that has none.
fn fresh_index(bin: &str) -> String {
    let lines: Vec<String> = head_lines().into_iter().map(|(_, line)| format!("    {line}\n")).collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"utf-8\" />\n    \
         <title>{bin}</title>\n    \
         <link data-trunk rel=\"rust\" data-bin=\"{bin}\" data-type=\"main\" data-wasm-opt=\"z\" />\n{}  </head>\n  \
         <body></body>\n</html>\n",
        lines.concat()
    )
}

fn patch_index(dir: &Path, bin: &str, changed: &mut Vec<&'static str>) -> Result<(), CliError> {
    let Some(mut html) = read(dir, INDEX_HTML)? else {
        return write(dir, INDEX_HTML, &fresh_index(bin), changed);
    };
    let before = html.clone();
    // The app's own rust link: with three bins in the crate, trunk needs to be told which one it is.
    let main_links: Vec<(usize, usize)> = html
        .match_indices("<link")
        .filter_map(|(start, _)| html[start..].find('>').map(|end| (start, start + end)))
        .filter(|(start, end)| {
            let tag = &html[*start..*end];
            tag.contains("rel=\"rust\"") && !tag.contains("data-type=\"worker\"")
        })
        .collect();
    match main_links.first() {
        Some((start, end)) if !html[*start..*end].contains("data-bin=") => {
            html.insert_str(start + "<link".len(), &format!(" data-bin=\"{bin}\""));
        }
        Some(_) => {}
        None => {
            let line = format!(
                "<link data-trunk rel=\"rust\" data-bin=\"{bin}\" data-type=\"main\" data-wasm-opt=\"z\" />"
            );
            insert_in_head(dir, &mut html, &line)?;
        }
    }
    for (present, line) in head_lines() {
        if !html.contains(&present) {
            insert_in_head(dir, &mut html, &line)?;
        }
    }
    add_wasm_opt(&mut html);
    if html != before {
        write(dir, INDEX_HTML, &html, changed)?;
    }
    Ok(())
}

fn insert_in_head(dir: &Path, html: &mut String, line: &str) -> Result<(), CliError> {
    let at = html
        .find("</head>")
        .ok_or_else(|| broken(dir, INDEX_HTML, "no </head>: where do trunk's links go?"))?;
    let line_start = html[..at].rfind('\n').map_or(0, |index| index + 1);
    let closing_indent = &html[line_start..at];
    if !closing_indent.chars().all(char::is_whitespace) {
        // `</head>` shares its line with something: the link goes right before it, on that line.
        html.insert_str(at, line);
        return Ok(());
    }
    // Indented like the last line inside `<head>` (the author's tabs or spaces), else one level (two
    // spaces) deeper than `</head>`; the new line goes before the line of `</head>`.
    let previous = html[..line_start.saturating_sub(1)]
        .rsplit('\n')
        .next()
        .filter(|previous| !previous.trim().is_empty() && !previous.trim_start().starts_with("<head"));
    let indent: String = match previous {
        Some(previous) => previous.chars().take_while(|c| c.is_whitespace()).collect(),
        None => format!("{closing_indent}  "),
    };
    html.insert_str(line_start, &format!("{indent}{line}\n"));
    Ok(())
}

fn patch_trunk_toml(dir: &Path, changed: &mut Vec<&'static str>) -> Result<(), CliError> {
    let text = read(dir, TRUNK_TOML)?.unwrap_or_default();
    let mut trunk: DocumentMut =
        text.parse().map_err(|error| broken(dir, TRUNK_TOML, format!("not valid TOML: {error}")))?;
    let build = trunk
        .entry("build")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| broken(dir, TRUNK_TOML, "build: expected a table"))?;
    if build.get("filehash").and_then(Item::as_bool) != Some(false) {
        build.insert("filehash", value(false));
    }
    let hooks = trunk
        .entry("hooks")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or_else(|| broken(dir, TRUNK_TOML, "hooks: expected [[hooks]] tables"))?;
    // A hook of an older `cachet init` (the stamp alone, or without the start module) gets the current
    // script.
    for hook in hooks.iter_mut() {
        let text = hook.to_string();
        if text.contains(BUILD_STAMP) && !text.contains(START_GLOBAL) && text.contains("CACHET_BUILD") {
            let mut arguments = Array::new();
            arguments.push("-c");
            arguments.push(STAMP_SCRIPT);
            hook.insert("command_arguments", value(arguments));
        }
    }
    let stamped = hooks.iter().any(|hook| hook.to_string().contains(BUILD_STAMP));
    if !stamped {
        let mut hook = Table::new();
        hook.decor_mut().set_prefix(
            "\n# cachet: stamp the Service Worker with a checksum of the build and list the build's files\n\
             # (cachet-build.js, imported by service-worker.js): a new build makes the browser install the new\n\
             # worker, which keeps those files as the app shell, served offline. trunk runs post-build hooks\n\
             # at the same time: a hook of yours that adds files goes in this one, before the stamp.\n",
        );
        hook.insert("stage", value("post_build"));
        hook.insert("command", value("sh"));
        let mut arguments = Array::new();
        arguments.push("-c");
        arguments.push(STAMP_SCRIPT);
        hook.insert("command_arguments", value(arguments));
        hooks.push(hook);
    }
    if !trunk.contains_key("tools") {
        let mut tools = Table::new();
        tools.decor_mut().set_prefix(
            "\n# cachet: the tools a build runs, pinned to those cachet is tested with: trunk runs the installed\n\
             # ones when their versions match, and downloads these otherwise.\n",
        );
        trunk.insert("tools", Item::Table(tools));
    }
    let tools = trunk["tools"]
        .as_table_like_mut()
        .ok_or_else(|| broken(dir, TRUNK_TOML, "tools: expected a table"))?;
    for (tool, version) in [("wasm_bindgen", WASM_BINDGEN_TOOL), ("wasm_opt", WASM_OPT_TOOL)] {
        if tools.get(tool).is_none() {
            tools.insert(tool, value(version));
        }
    }
    let text_after = trunk.to_string();
    if text_after != text {
        write(dir, TRUNK_TOML, &text_after, changed)?;
    }
    Ok(())
}
