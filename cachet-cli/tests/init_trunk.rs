//! `cachet init --trunk` wires a trunk app (dependency, index.html, Trunk.toml) and a second run changes
//! nothing; `cachet doctor` names what is missing in broken apps and builds.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn cachet(dir: &Path, args: &[&str]) -> (i32, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_cachet")).args(args).arg("--dir").arg(dir).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

const MANIFEST: &str = "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                        # The app's own comment.\n[dependencies]\nyew = { version = \"0.23\", features = [\"csr\"] }\n";

/// An app trunk already builds: its own rust link (no `data-bin`), a style, and a Trunk.toml of its own.
const INDEX: &str = "<!DOCTYPE html>\n<html>\n  <head>\n    <link data-trunk rel=\"rust\" data-wasm-opt=\"z\" />\n    \
                     <link data-trunk rel=\"css\" href=\"style.css\" />\n  </head>\n  <body></body>\n</html>\n";
const TRUNK: &str = "# The app's trunk settings.\n[build]\nrelease = true\n\n[serve]\nport = 8081\n\n\
                     [tools]\nwasm_opt = \"version_125\"\n";

#[test]
fn init_trunk_wires_an_existing_trunk_app_once() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(app.join("index.html"), INDEX).unwrap();
    std::fs::write(app.join("Trunk.toml"), TRUNK).unwrap();
    let (code, text) = cachet(app, &["init", "--trunk", "--git", "https://example.org/cachet.git"]);
    assert_eq!(code, 0, "{text}");
    for file in
        ["Cargo.toml", "index.html", "Trunk.toml", cachet_cli::AGENT_BIN_PATH, cachet_cli::SW_BIN_PATH]
    {
        assert!(text.contains(file), "{file} written: {text}");
    }

    let manifest = read(app, "Cargo.toml");
    assert!(manifest.contains("# The app's own comment."), "comments kept:\n{manifest}");
    assert!(manifest.contains("cachet-kit = { git = \"https://example.org/cachet.git\" }"), "{manifest}");
    // The release profile for size (issue 36), the app's own Cargo.toml being the workspace root.
    assert!(
        manifest.contains(
            "[profile.release]\nopt-level = \"z\"\nlto = true\ncodegen-units = 1\npanic = \"abort\"\n"
        ),
        "{manifest}"
    );
    let index = read(app, "index.html");
    assert!(
        index.contains("<link data-bin=\"shop\" data-trunk rel=\"rust\" data-wasm-opt=\"z\" />"),
        "{index}"
    );
    assert_eq!(index.matches("rel=\"rust\"").count(), 4, "no second main link:\n{index}");
    for line in [
        "<link data-trunk rel=\"rust\" data-bin=\"cachet-sw\" data-type=\"worker\" data-wasm-opt=\"z\" />",
        "<link data-trunk rel=\"rust\" data-bin=\"cachet-sw-start\" data-type=\"worker\" data-wasm-opt=\"z\" />",
        "<link data-trunk rel=\"rust\" data-bin=\"cachet-agent\" data-type=\"worker\" data-wasm-opt=\"z\" />",
        "<link data-trunk rel=\"copy-file\" href=\"service-worker.js\" />",
        "<link data-trunk rel=\"copy-file\" href=\"cachet-sw-config.js\" />",
    ] {
        assert!(
            index.contains(&format!("    {line}\n  </head>")) || index.contains(line),
            "{line}:\n{index}"
        );
    }
    assert!(index.contains("href=\"style.css\""));
    let trunk = read(app, "Trunk.toml");
    assert!(trunk.contains("# The app's trunk settings.") && trunk.contains("port = 8081"), "{trunk}");
    assert!(trunk.contains("filehash = false") && trunk.contains("release = true"), "{trunk}");
    assert_eq!(trunk.matches("[[hooks]]").count(), 1, "{trunk}");
    // The tools pinned (issue 36: a build downloaded wasm-opt): the missing one added, the author's kept.
    let tools = trunk.split_once("[tools]").map(|(_, tools)| tools).unwrap_or_default();
    let pin = format!("wasm_bindgen = \"{}\"", cachet_cli::WASM_BINDGEN_TOOL);
    assert!(tools.contains("wasm_opt = \"version_125\"") && tools.contains(&pin), "{trunk}");
    assert_eq!(trunk.matches("[tools]").count(), 1, "{trunk}");

    // Again, with or without --trunk: nothing changes.
    for args in [&["init", "--trunk"][..], &["init"], &["init", "--trunk", "--path", "/elsewhere"]] {
        let (code, text) = cachet(app, args);
        assert_eq!((code, text.trim()), (0, "cachet: nothing to change"), "{args:?}");
    }
    assert_eq!(read(app, "Cargo.toml"), manifest);
    assert_eq!(read(app, "index.html"), index);
    assert_eq!(read(app, "Trunk.toml"), trunk);
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!((code, text.trim()), (0, "cachet: nothing missing"));
}

/// The links go in as the author indents (issue 36: edits reindented `index.html`): tabs stay tabs.
#[test]
fn init_trunk_indents_its_links_as_the_authors_head_is_indented() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    let tabs = "<!DOCTYPE html>\n<html>\n\t<head>\n\t\t<link data-trunk rel=\"rust\" />\n\t</head>\n\t<body></body>\n</html>\n";
    std::fs::write(app.join("index.html"), tabs).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk", "--git", "https://example.org/cachet.git"]).0, 0);
    let html = read(app, "index.html");
    let head: Vec<&str> = html.lines().skip_while(|line| !line.contains("<head>")).skip(1).take(7).collect();
    assert_eq!(head.len(), 7, "{html}");
    for line in &head[..6] {
        assert!(line.starts_with("\t\t<link ") && !line.contains("  "), "as the author indents: {html}");
    }
    assert_eq!(head[6], "\t</head>", "{html}");
}

#[test]
fn init_trunk_writes_index_and_trunk_toml_when_the_app_has_none() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    let (code, text) = cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]);
    assert_eq!(code, 0, "{text}");
    assert!(read(app, "Cargo.toml").contains("cachet-kit = { path = \"../cachet/cachet-kit\" }"));
    let index = read(app, "index.html");
    assert!(
        index.contains(
            "<link data-trunk rel=\"rust\" data-bin=\"shop\" data-type=\"main\" data-wasm-opt=\"z\" />"
        ),
        "{index}"
    );
    assert!(read(app, "Trunk.toml").contains(cachet_cli::BUILD_STAMP));
    assert_eq!(cachet(app, &["doctor"]).0, 0);
}

/// The release profile (issue 36): an app's own values are kept and named by `doctor` when they cost
/// size; in a workspace member `init` leaves the member's manifest alone and `doctor` reads the root's.
#[test]
fn the_release_profile_is_written_once_kept_where_set_and_checked_where_cargo_reads_it() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    let own = format!("{MANIFEST}\n[profile.release]\nopt-level = 3\n");
    std::fs::write(app.join("Cargo.toml"), own).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]).0, 0);
    let manifest = read(app, "Cargo.toml");
    assert!(
        manifest.contains("opt-level = 3\nlto = true\ncodegen-units = 1\npanic = \"abort\""),
        "{manifest}"
    );
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("Cargo.toml: [profile.release] opt-level is 3") && text.contains("opt-level = \"z\""),
        "{text}"
    );
    assert_eq!(text.matches("[profile.release]").count(), 1, "only opt-level: {text}");

    // A member of a workspace: the root's profile is the one cargo uses.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("Cargo.toml"), "[workspace]\nmembers = [\"shop\"]\n").unwrap();
    let member = root.path().join("shop");
    std::fs::create_dir_all(&member).unwrap();
    std::fs::write(member.join("Cargo.toml"), MANIFEST).unwrap();
    assert_eq!(cachet(&member, &["init", "--trunk", "--path", "../cachet/cachet-kit"]).0, 0);
    assert!(!read(&member, "Cargo.toml").contains("[profile"), "cargo would ignore it there");
    let (code, text) = cachet(&member, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("(the workspace root: cargo reads profiles there)") && text.contains("lto is missing"),
        "{text}"
    );
    std::fs::write(
        root.path().join("Cargo.toml"),
        "[workspace]\nmembers = [\"shop\"]\n\n[profile.release]\nopt-level = \"s\"\nlto = \"fat\"\ncodegen-units = 1\npanic = \"abort\"\n",
    )
    .unwrap();
    assert_eq!(cachet(&member, &["doctor"]), (0, "cachet: nothing missing\n".to_owned()));
}

/// `doctor` names a rust link a release build would not shrink.
#[test]
fn doctor_names_a_rust_link_without_wasm_opt() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]).0, 0);
    let html = read(app, "index.html").replacen(" data-wasm-opt=\"z\"", "", 1);
    std::fs::write(app.join("index.html"), html).unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("1 `rel=\"rust\"` link(s) without `data-wasm-opt`"), "{text}");
}

/// `doctor` names a wasm-bindgen CLI pinned to another version than the crate cachet builds with (the
/// CLI must equal the crate, or the build fails), and the pin is that crate's version.
#[test]
fn doctor_names_a_wasm_bindgen_pin_that_is_not_the_crate_and_the_pin_is_the_locked_crate() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]).0, 0);
    let pin = format!("wasm_bindgen = \"{}\"", cachet_cli::WASM_BINDGEN_TOOL);
    let trunk = read(app, "Trunk.toml").replace(&pin, "wasm_bindgen = \"0.2.100\"");
    std::fs::write(app.join("Trunk.toml"), trunk).unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("`[tools] wasm_bindgen = \"0.2.100\"`, but cachet's wasm-bindgen crate is"),
        "{text}"
    );

    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock")).unwrap();
    let locked = lock
        .split("[[package]]")
        .find(|package| package.contains("name = \"wasm-bindgen\"\n"))
        .and_then(|package| package.lines().find_map(|line| line.strip_prefix("version = \"")))
        .map(|version| version.trim_end_matches('"'));
    assert_eq!(
        locked,
        Some(cachet_cli::WASM_BINDGEN_TOOL),
        "the pin is the wasm-bindgen crate in Cargo.lock"
    );
}

/// A build-stamp hook of an older `init` (the stamp alone) lists no app shell: `doctor` names it, and
/// `init --trunk` replaces its script in place (issue 36: the app shell offline), once.
#[test]
fn an_older_build_stamp_hook_is_named_by_doctor_and_replaced_by_init() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    let older = "[build]\nfilehash = false\n\n[[hooks]]\nstage = \"post_build\"\ncommand = \"sh\"\n\
                 command_arguments = [\"-c\", \"printf 'self.CACHET_BUILD = \\\"%s\\\";\\\\n' x > cachet-build.js\"]\n";
    std::fs::write(app.join("Trunk.toml"), older).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]).0, 0);
    let trunk = read(app, "Trunk.toml");
    assert_eq!(trunk.matches("[[hooks]]").count(), 1, "{trunk}");
    assert!(trunk.contains("CACHET_PRECACHE") && trunk.contains("find . -type f"), "{trunk}");
    let (code, text) = cachet(app, &["init", "--trunk", "--path", "../cachet/cachet-kit"]);
    assert_eq!((code, text.trim()), (0, "cachet: nothing to change"));

    std::fs::write(
        app.join("Trunk.toml"),
        format!(
            "{older}\n[tools]\nwasm_bindgen = \"{}\"\nwasm_opt = \"version_132\"\n",
            cachet_cli::WASM_BINDGEN_TOOL
        ),
    )
    .unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("Trunk.toml: the post-build hook writing cachet-build.js lists no build files"),
        "{text}"
    );
}

#[test]
fn init_trunk_names_what_it_cannot_patch_and_writes_nothing_there() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    let (code, text) = cachet(app, &["init", "--trunk"]);
    assert_eq!(code, 2);
    assert!(text.contains("Cargo.toml") && text.contains("not found"), "{text}");
    std::fs::write(app.join("Cargo.toml"), "[package\nname = ").unwrap();
    let (code, text) = cachet(app, &["init", "--trunk"]);
    assert_eq!(code, 2);
    assert!(text.contains("Cargo.toml: not valid TOML"), "{text}");
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(app.join("index.html"), "<html><body></body></html>").unwrap();
    let (code, text) = cachet(app, &["init", "--trunk"]);
    assert_eq!(code, 2);
    assert!(text.contains("index.html: no </head>"), "{text}");
    assert_eq!(read(app, "index.html"), "<html><body></body></html>", "left as it was");
}

#[test]
fn doctor_names_each_missing_piece_of_a_broken_app_and_build() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    std::fs::write(app.join("Cargo.toml"), MANIFEST).unwrap();
    assert_eq!(cachet(app, &["init", "--trunk"]).0, 0);
    // A build as trunk writes it.
    let dist = app.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    for file in
        cachet_core::deploy::SERVICE_WORKER_FILES.iter().chain(cachet_core::deploy::AGENT_FILES.iter())
    {
        std::fs::write(dist.join(file.path), "x").unwrap();
    }
    std::fs::copy(app.join("cachet-sw-config.js"), dist.join("cachet-sw-config.js")).unwrap();
    let (code, text) = cachet(app, &["doctor", "--dist", "dist"]);
    assert_eq!((code, text.trim()), (0, "cachet: nothing missing"));

    // Broken: what issue 19 met (no build stamp, no config copy), and a stale build.
    let index = read(app, "index.html")
        .replace("<link data-trunk rel=\"copy-file\" href=\"cachet-sw-config.js\" />", "");
    std::fs::write(app.join("index.html"), index).unwrap();
    std::fs::write(app.join("Trunk.toml"), "[build]\nfilehash = false\n").unwrap();
    std::fs::remove_file(dist.join("cachet-build.js")).unwrap();
    std::fs::write(dist.join("cachet-agent_bg.wasm"), "").unwrap();
    std::fs::write(dist.join("cachet-sw-config.js"), "self.CACHET_CONFIG = {};").unwrap();
    let (code, text) = cachet(app, &["doctor", "--dist", "dist"]);
    assert_eq!(code, 1, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    for tool in ["wasm_bindgen", "wasm_opt"] {
        let line = format!("Trunk.toml: no `[tools] {tool}`: trunk downloads");
        assert!(text.contains(&line), "{text}");
    }
    assert!(
        text.contains("index.html: no `<link data-trunk rel=\"copy-file\" href=\"cachet-sw-config.js\" />`"),
        "{text}"
    );
    assert!(text.contains("Trunk.toml: no post-build hook writing cachet-build.js"), "{text}");
    assert!(
        text.contains("dist/cachet-build.js: missing; loaded by service-worker.js (importScripts)"),
        "{text}"
    );
    assert!(text.contains("dist/cachet-agent_bg.wasm: empty"), "{text}");
    assert!(text.contains("dist/cachet-sw-config.js: differs from cachet.config.json"), "{text}");

    // A generated file out of date, and no config at all.
    std::fs::write(app.join(cachet_cli::AGENT_BIN_PATH), "fn main() {}").unwrap();
    let (_, text) = cachet(app, &["doctor"]);
    assert!(text.contains("src/bin/cachet-agent.rs: out of date with cachet.config.json"), "{text}");
    std::fs::remove_file(app.join("cachet.config.json")).unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 2);
    assert!(text.contains("cachet.config.json") && text.contains("cachet init"), "{text}");
}

/// A fresh app set up by `cachet init --trunk` on [`MANIFEST`].
fn trunk_app() -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(temp.path().join("Cargo.toml"), MANIFEST).unwrap();
    assert_eq!(cachet(temp.path(), &["init", "--trunk"]).0, 0);
    temp
}

/// The `features` of the app's `cachet-kit` dependency, as written.
fn kit_features(app: &Path) -> Option<String> {
    let manifest: toml_edit::DocumentMut = read(app, "Cargo.toml").parse().unwrap();
    manifest["dependencies"]["cachet-kit"].get("features").map(|features| features.to_string())
}

/// The worker links server push only with cachet-kit's `push` feature: `cachet add push` adds it to the
/// app's dependency, `cachet init --trunk` adds it for a config that has push on, and `cachet doctor`
/// names a dependency without it.
#[test]
fn a_config_with_push_gets_the_push_feature_of_cachet_kit_and_doctor_names_its_absence() {
    let temp = trunk_app();
    let app = temp.path();
    assert_eq!(kit_features(app), None, "no push, no feature");
    let without_push = read(app, "Cargo.toml");

    let (code, text) = cachet(app, &["add", "push"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("Cargo.toml"), "{text}");
    assert_eq!(kit_features(app).as_deref().map(str::trim), Some(r#"["push"]"#));
    assert!(
        read(app, "Cargo.toml").contains("# The app's own comment."),
        "the manifest is edited, not rewritten"
    );
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!((code, text.trim()), (0, "cachet: nothing missing"));
    assert_eq!(cachet(app, &["add", "push"]).1.trim(), "cachet: nothing to change");

    std::fs::write(app.join("Cargo.toml"), &without_push).unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Cargo.toml: cachet-kit without its `push` feature"), "{text}");

    // A fresh app whose config already turns push on gets the feature from `init --trunk`.
    let fresh = tempfile::tempdir().unwrap();
    std::fs::write(fresh.path().join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::copy(app.join("cachet.config.json"), fresh.path().join("cachet.config.json")).unwrap();
    assert_eq!(cachet(fresh.path(), &["init", "--trunk"]).0, 0);
    assert_eq!(kit_features(fresh.path()).as_deref().map(str::trim), Some(r#"["push"]"#));
}

/// The page links auth only with `cachet-kit`'s `auth` feature: `cachet add auth` adds it to the app's
/// dependency, and `cachet doctor` names a dependency without it.
#[test]
fn a_config_with_auth_gets_the_auth_feature_of_cachet_kit_and_doctor_names_its_absence() {
    let temp = trunk_app();
    let app = temp.path();
    assert_eq!(kit_features(app), None, "no auth, no feature");
    let without_auth = read(app, "Cargo.toml");
    let (code, text) = cachet(app, &["add", "auth"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(kit_features(app).as_deref().map(str::trim), Some(r#"["auth"]"#));
    assert_eq!(cachet(app, &["doctor"]).0, 0);
    std::fs::write(app.join("Cargo.toml"), &without_auth).unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Cargo.toml: cachet-kit without its `auth` feature"), "{text}");
}

/// An app wired before the start module (session 29): its index has no `cachet-sw-start` link and its
/// build-stamp hook does not mark it (`CACHET_START`). `doctor` names both (a stopped worker would load
/// the whole engine), and `init --trunk` adds the link and replaces the hook.
#[test]
fn an_app_wired_before_the_start_module_is_named_by_doctor_and_fixed_by_init() {
    let temp = trunk_app();
    let app = temp.path();
    let index: String = read(app, "index.html")
        .lines()
        .filter(|line| !line.contains("data-bin=\"cachet-sw-start\""))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(app.join("index.html"), index).unwrap();
    std::fs::write(app.join("Trunk.toml"), read(app, "Trunk.toml").replace("CACHET_START", "CACHET_OLDER"))
        .unwrap();
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("data-bin=\"cachet-sw-start\"") && text.contains("not its start module"), "{text}");
    assert!(
        text.contains(
            "Trunk.toml: the post-build hook writing cachet-build.js does not mark the start module"
        ),
        "{text}"
    );
    assert_eq!(cachet(app, &["init", "--trunk"]).0, 0);
    assert!(read(app, "index.html").contains("data-bin=\"cachet-sw-start\""));
    assert!(read(app, "Trunk.toml").contains("CACHET_START"));
    let (code, text) = cachet(app, &["doctor"]);
    assert_eq!((code, text.trim()), (0, "cachet: nothing missing"));
}
