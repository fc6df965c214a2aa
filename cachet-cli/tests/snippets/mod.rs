//! Every Rust snippet of the README and of the guides in `docs/` is compiled (issue 36: snippets a user
//! copies must work as written). Each ```rust block follows a marker, on the line just before it, saying
//! how it compiles:
//!
//! | marker | the block is |
//! |---|---|
//! | `<!-- readme-test: src/main.rs -->` | the app's `src/main.rs` (the quick start's; `tests/tests/e2e/readme_quick_start.rs` also builds it with trunk) |
//! | `<!-- snippet: main -->` | the same: a whole `src/main.rs` beside the generated `src/cachet/` (`mod cachet;`) |
//! | `<!-- snippet: module -->` | a module of the app of its own (a file such as `src/todo_list.rs`), whose crate root declares `mod cachet;` (so it names `crate::cachet::...`) |
//!
//! and, after `;`, what the snippet needs beyond an app set up by `cachet init`, `cachet add auth` and
//! `cachet add graphql` (`cachet-kit` with `auth`, `serde` with `derive`, `serde_json`):
//! `cachet-kit: devtools, push` (features of `cachet-kit`), `dependency: graphql_client = "0.16"` (a
//! line of `[dependencies]`, repeated for each; a `path` is relative to this repository), `copy:
//! examples/todo-app/graphql` (a folder of this repository copied into the app under its last name, for
//! the files a derive reads). A block without a marker fails with its file and line.
//!
//! The fresh-app test compiles them all in its one build: each `module` as `src/snippets/<file>_<line>.rs`
//! of the app's lib (named after the file and the line of its fence), each `main` as the binary
//! `src/bin/snippet-<file>-<line>/main.rs` beside a copy of the generated `src/cachet/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a snippet compiles.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Main,
    Module,
}

/// One ```rust block and what its marker declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Snippet {
    /// The file it is in, relative to the repository, and the line of its fence (1-based).
    pub file: String,
    pub line: usize,
    pub kind: Kind,
    pub code: String,
    pub features: Vec<String>,
    /// `name` → the rest of its `[dependencies]` line.
    pub dependencies: Vec<(String, String)>,
    pub copies: Vec<String>,
}

impl Snippet {
    /// A name for its module or binary: `readme_md_166`.
    pub fn name(&self) -> String {
        let file = self.file.trim_start_matches("docs/").to_lowercase();
        let file: String = file.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        format!("{file}_{}", self.line)
    }
}

/// The ```rust blocks of `text` (the file `file`), each with its marker read; an error names the file
/// and line of a block without a marker, or with one it cannot read.
pub fn rust_blocks(file: &str, text: &str) -> Result<Vec<Snippet>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut snippets = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let fence = lines[index].trim_start();
        if !fence.starts_with("```") {
            index += 1;
            continue;
        }
        let language = fence.trim_start_matches('`').trim();
        let body: Vec<&str> = lines[index + 1..]
            .iter()
            .copied()
            .take_while(|line| !line.trim_start().starts_with("```"))
            .collect();
        let line = index + 1;
        if language.split(',').next().is_some_and(|language| language == "rust" || language == "rs") {
            let marker = index.checked_sub(1).map(|before| lines[before].trim()).unwrap_or_default();
            let mut snippet = marker_of(marker).map_err(|error| format!("{file}:{line}: {error}"))?;
            snippet.file = file.to_owned();
            snippet.line = line;
            snippet.code = body.join("\n") + "\n";
            snippets.push(snippet);
        }
        index += body.len() + 2;
    }
    Ok(snippets)
}

/// The snippet a marker line declares (file, line and code left empty).
fn marker_of(marker: &str) -> Result<Snippet, String> {
    const HOW: &str = "a ```rust block needs a marker on the line before it: <!-- snippet: module -->, \
                       <!-- snippet: main --> or <!-- readme-test: src/main.rs --> (see \
                       cachet-cli/tests/snippets/mod.rs)";
    let inner = marker
        .strip_prefix("<!--")
        .and_then(|rest| rest.strip_suffix("-->"))
        .map(str::trim)
        .ok_or_else(|| format!("{HOW}; the line before is {marker:?}"))?;
    let mut snippet = Snippet {
        file: String::new(),
        line: 0,
        kind: Kind::Module,
        code: String::new(),
        features: Vec::new(),
        dependencies: Vec::new(),
        copies: Vec::new(),
    };
    if inner == "readme-test: src/main.rs" {
        snippet.kind = Kind::Main;
        return Ok(snippet);
    }
    let mut parts = inner.split(';').map(str::trim);
    snippet.kind = match parts.next() {
        Some("snippet: module") => Kind::Module,
        Some("snippet: main") => Kind::Main,
        _ => return Err(format!("{HOW}; the line before is {marker:?}")),
    };
    for part in parts.filter(|part| !part.is_empty()) {
        let (key, value) =
            part.split_once(':').ok_or_else(|| format!("{marker}: {part:?} is not `key: value`"))?;
        let value = value.trim();
        match key.trim() {
            "cachet-kit" => {
                snippet.features.extend(value.split(',').map(|feature| feature.trim().to_owned()))
            }
            "dependency" => {
                let (name, spec) = value
                    .split_once('=')
                    .ok_or_else(|| format!("{marker}: {value:?} is not `name = spec`"))?;
                snippet.dependencies.push((name.trim().to_owned(), spec.trim().to_owned()));
            }
            "copy" => snippet.copies.push(value.to_owned()),
            other => return Err(format!("{marker}: unknown key {other:?} (cachet-kit, dependency, copy)")),
        }
    }
    Ok(snippet)
}

/// Every snippet of `README.md` and `docs/*.md` under `root`.
pub fn all(root: &Path) -> Result<Vec<Snippet>, String> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map_err(|error| format!("docs/: {error}"))?
        .filter_map(Result::ok)
        .map(|entry| PathBuf::from("docs").join(entry.file_name()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    guides.sort();
    files.extend(guides);
    let mut snippets = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(&file))
            .map_err(|error| format!("{}: {error}", file.display()))?;
        snippets.extend(rust_blocks(&file.display().to_string().replace('\\', "/"), &text)?);
    }
    Ok(snippets)
}

/// Writes the snippets into the fresh app at `app` (set up by the CLI, with `src/lib.rs` declaring `pub
/// mod cachet;`): the modules, the binaries, the folders they copy, and what their markers ask of
/// `Cargo.toml` (dependencies; `cachet-kit`'s features through the app's default features, so the line
/// the CLI wrote stays as written). Returns a listing of where each snippet went, for a failed build's
/// message.
pub fn write_into(app: &Path, root: &Path, snippets: &[Snippet]) -> Result<String, String> {
    let mut manifest = std::fs::read_to_string(app.join("Cargo.toml")).map_err(|error| error.to_string())?;
    let mut dependencies: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut features: Vec<String> = Vec::new();
    let mut modules =
        String::from("//! The snippets of the README and the guides (cachet-cli/tests/snippets).\n");
    let mut listing = String::new();
    for snippet in snippets {
        let at = format!("{}:{}", snippet.file, snippet.line);
        for (name, spec) in &snippet.dependencies {
            let spec = with_absolute_path(spec, root);
            if let Some((other_spec, other_at)) = dependencies.get(name) {
                if *other_spec != spec {
                    return Err(format!(
                        "{at}: dependency {name} = {spec} differs from {other_at}'s {other_spec}"
                    ));
                }
            } else if manifest.contains(&format!("\n{name} = ")) {
                let present = format!("\n{name} = {spec}\n");
                if !manifest.contains(&present) {
                    return Err(format!("{at}: dependency {name} = {spec} differs from the app's own line"));
                }
            } else {
                dependencies.insert(name.clone(), (spec, at.clone()));
            }
        }
        features.extend(snippet.features.iter().map(|feature| format!("cachet-kit/{feature}")));
        for copy in &snippet.copies {
            let from = root.join(copy);
            let name = from.file_name().ok_or_else(|| format!("{at}: copy {copy:?} names no folder"))?;
            copy_dir(&from, &app.join(name)).map_err(|error| format!("{at}: copy {copy}: {error}"))?;
        }
        let name = snippet.name();
        match snippet.kind {
            Kind::Module => {
                modules.push_str(&format!("mod {name};\n"));
                write(&app.join(format!("src/snippets/{name}.rs")), &snippet.code)?;
                listing.push_str(&format!("\n  {at} -> src/snippets/{name}.rs"));
            }
            Kind::Main => {
                let folder = app.join(format!("src/bin/snippet-{name}"));
                write(&folder.join("main.rs"), &snippet.code)?;
                copy_dir(&app.join("src/cachet"), &folder.join("cachet"))
                    .map_err(|error| error.to_string())?;
                listing.push_str(&format!("\n  {at} -> src/bin/snippet-{name}/main.rs"));
            }
        }
    }
    write(&app.join("src/snippets/mod.rs"), &modules)?;
    let lib = std::fs::read_to_string(app.join("src/lib.rs")).map_err(|error| error.to_string())?;
    // Components no one mounts, undocumented: what a snippet is. Nothing else is allowed.
    write(&app.join("src/lib.rs"), &format!("{lib}\n#[allow(missing_docs, dead_code)]\nmod snippets;\n"))?;
    let added: String = dependencies.iter().map(|(name, (spec, _))| format!("{name} = {spec}\n")).collect();
    manifest = manifest.replacen("[dependencies]\n", &format!("[dependencies]\n{added}"), 1);
    features.sort();
    features.dedup();
    if !features.is_empty() {
        let list: Vec<String> = features.iter().map(|feature| format!("{feature:?}")).collect();
        manifest.push_str(&format!("\n[features]\ndefault = [{}]\n", list.join(", ")));
    }
    write(&app.join("Cargo.toml"), &manifest)?;
    Ok(listing)
}

/// `spec` with a `path = "x"` made absolute under `root`.
fn with_absolute_path(spec: &str, root: &Path) -> String {
    match spec.split_once("path = \"") {
        Some((before, rest)) => {
            let (relative, after) = rest.split_once('"').unwrap_or((rest, ""));
            let absolute = root.join(relative).display().to_string().replace('\\', "/");
            format!("{before}path = \"{absolute}\"{after}")
        }
        None => spec.to_owned(),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| format!("{}: {error}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|error| format!("{}: {error}", path.display()))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

#[test]
fn every_rust_snippet_has_a_marker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let snippets = all(&root).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        snippets.iter().any(|snippet| snippet.kind == Kind::Module),
        "a test that reads none proves nothing"
    );
}

#[test]
fn a_block_without_a_marker_is_named_by_file_and_line() {
    let text = "intro\n\n```rust\nfn main() {}\n```\n";
    let error = rust_blocks("docs/guide.md", text).unwrap_err();
    assert!(error.starts_with("docs/guide.md:3: a ```rust block needs a marker"), "{error}");
    let error = rust_blocks("README.md", "<!-- snippet: modul -->\n```rust\n```\n").unwrap_err();
    assert!(error.starts_with("README.md:2:"), "{error}");
    assert!(rust_blocks("README.md", "```sh\nls\n```\n```json\n{}\n```\n").unwrap().is_empty());
}

#[test]
fn a_marker_declares_features_dependencies_and_copies() {
    let text = "<!-- snippet: module; cachet-kit: auth, push; dependency: graphql_client = \"0.16\"; \
                dependency: serde = { version = \"1\", features = [\"derive\"] }; copy: examples/todo-app/graphql -->\n\
                ```rust\nstruct A;\n```\n<!-- readme-test: src/main.rs -->\n```rust\nfn main() {}\n```\n";
    let snippets = rust_blocks("README.md", text).unwrap();
    assert_eq!(snippets.len(), 2);
    let module = &snippets[0];
    assert_eq!((module.kind.clone(), module.line, module.code.as_str()), (Kind::Module, 2, "struct A;\n"));
    assert_eq!(module.features, ["auth", "push"]);
    assert_eq!(
        module.dependencies,
        [
            ("graphql_client".to_owned(), "\"0.16\"".to_owned()),
            ("serde".to_owned(), "{ version = \"1\", features = [\"derive\"] }".to_owned())
        ]
    );
    assert_eq!(module.copies, ["examples/todo-app/graphql"]);
    assert_eq!(module.name(), "readme_md_2");
    assert_eq!(snippets[1].kind, Kind::Main);
    assert_eq!(
        with_absolute_path("{ path = \"cachet-core\" }", Path::new("/r")),
        "{ path = \"/r/cachet-core\" }"
    );
}
