//! `cachet generate`: the example app's files are up to date, runs are idempotent, bad configs are named.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn cachet(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cachet")).args(args).output().unwrap()
}

#[test]
fn the_example_apps_generated_files_are_up_to_date_with_its_config() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/todo-app");
    let stale = cachet_cli::stale_files(&app).unwrap();
    assert!(stale.is_empty(), "run `cargo run -p cachet-cli -- generate --dir examples/todo-app`: {stale:?}");
    let lib = std::fs::read_to_string(app.join("src/lib.rs")).unwrap();
    assert!(lib.contains("pub mod cachet;"), "the example compiles its generated modules");
}

#[test]
fn each_feature_brings_its_files_and_every_rewritten_file_has_the_header() {
    use cachet_cli::{Ownership, ADAPTER_PATH, AUTH_MODULE_PATH, CHECK_PATH, GRAPHQL_MODULE_PATH};
    let always = [
        "cachet-sw-config.js",
        "service-worker.js",
        "src/bin/cachet-sw.rs",
        "src/bin/cachet-sw-start.rs",
        "src/bin/cachet-agent.rs",
        "src/cachet/mod.rs",
        "src/cachet/config.rs",
    ];
    let table: &[(&str, &[&str])] = &[
        (r#"{}"#, &[]),
        (r#"{"features":{"graphql":{"enabled":true}}}"#, &[GRAPHQL_MODULE_PATH]),
        (r#"{"features":{"auth":{"enabled":true}}}"#, &[AUTH_MODULE_PATH, ADAPTER_PATH, CHECK_PATH]),
        (
            r#"{"features":{"auth":{"enabled":true},"graphql":{"enabled":true}}}"#,
            &[AUTH_MODULE_PATH, ADAPTER_PATH, CHECK_PATH, GRAPHQL_MODULE_PATH],
        ),
    ];
    for (text, extra) in table {
        let config = cachet_core::config::Config::from_json_str(text).unwrap();
        let files = cachet_cli::generated_files(&config);
        let mut paths: Vec<&str> = files.iter().map(|file| file.path).collect();
        let mut expected: Vec<&str> = always.iter().chain(extra.iter()).copied().collect();
        paths.sort_unstable();
        expected.sort_unstable();
        assert_eq!(paths, expected, "{text}");
        for file in &files {
            let (header, owner) = match file.ownership {
                Ownership::Generated => (cachet_cli::GENERATED_HEADER, "generated"),
                Ownership::CreatedOnce => (cachet_cli::STARTER_HEADER, "created once"),
            };
            assert!(file.content.starts_with(header), "{} ({owner}) of {text}", file.path);
            assert_eq!(
                file.ownership == Ownership::CreatedOnce,
                [ADAPTER_PATH, CHECK_PATH].contains(&file.path),
                "only the adapter and the check are the app's"
            );
        }
        let module = files.iter().find(|file| file.path == "src/cachet/mod.rs").unwrap();
        for (path, name) in [(AUTH_MODULE_PATH, "pub mod auth;"), (GRAPHQL_MODULE_PATH, "pub mod graphql;")] {
            assert_eq!(module.content.contains(name), extra.contains(&path), "{name} for {text}");
        }
    }
}

#[test]
fn the_generated_constants_and_adapter_follow_the_config() {
    let config = cachet_core::config::Config::from_json_str(
        r#"{"features":{"auth":{"enabled":true,"type":"bearer","routePaths":["/auth/login"]},
            "graphql":{"enabled":true,"endpoints":["/graphql","/admin/graphql"]}}}"#,
    )
    .unwrap();
    let constants = cachet_cli::render_config(&config);
    for line in [
        "pub const AUTH_WITH_CREDENTIALS: bool = false;",
        "pub const AUTH_TYPE: AuthType = AuthType::Bearer;",
        r#"pub const AUTH_ROUTE_PATHS: &[&str] = &["/auth/login"];"#,
        r#"pub const GQL_ENDPOINTS: &[&str] = &["/graphql", "/admin/graphql"];"#,
    ] {
        assert!(constants.contains(line), "{line} in\n{constants}");
    }
    let graphql = cachet_cli::render_graphql(&config);
    assert!(
        graphql.contains("pub const GRAPHQL: usize = 0;")
            && graphql.contains("pub const ADMIN_GRAPHQL: usize = 1;")
    );
    assert!(cachet_cli::render_adapter(&config).contains("BearerAdapter::default()"));
    let custom = cachet_core::config::Config::from_json_str(
        r#"{"features":{"auth":{"enabled":true,"type":"custom"}}}"#,
    )
    .unwrap();
    let adapter = cachet_cli::render_adapter(&custom);
    assert!(
        adapter.contains("impl AuthAdapter for AppAdapter") && adapter.contains("AuthType::Custom"),
        "{adapter}"
    );
    assert!(cachet_cli::render_check().contains("rule.check(response)"));
}

#[test]
fn the_config_constant_reads_back_as_the_config() {
    let config = cachet_core::config::Config::from_json_str(
        r##"{"features":{"auth":{"enabled":true,"failure":{"header":{"name":"X-A","value":"\"#"}}}}}"##,
    )
    .unwrap();
    let module = cachet_cli::render_config(&config);
    let start = module.find("r##\"").expect("a raw string long enough for the `\"#` in the config") + 4;
    let end = module.find("\"##;").unwrap();
    assert_eq!(cachet_core::config::Config::from_json_str(&module[start..end]).unwrap(), config);
}

#[test]
fn generate_writes_once_then_changes_nothing_and_check_notices_edits() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path().to_str().unwrap();
    std::fs::write(app.path().join("cachet.config.json"), r#"{"features":{"auth":{"enabled":true}}}"#)
        .unwrap();

    let first = cachet(&["generate", "--dir", dir]);
    assert!(first.status.success(), "{first:?}");
    assert!(String::from_utf8_lossy(&first.stdout).contains("wrote cachet-sw-config.js"));
    let written = std::fs::read_to_string(app.path().join(cachet_cli::SW_CONFIG_PATH)).unwrap();
    assert!(
        written.contains(
            r#"self.CACHET_ROUTES = {"passThrough":["/api/login","/api/logout","/api/refresh","/api/me"],"graphqlEndpoints":[],"fetchEarly":true};"#
        ),
        "{written}"
    );
    // The shim opens the engine's database as it starts (cachet_core::protocol::storage).
    let database = r#"self.CACHET_DATABASE = {"name":"cachet","reads":[["meta","migrated"],["identity","current"],["generations",null]],"version":1};"#;
    assert!(written.contains(database), "{written}");

    let second = cachet(&["generate", "--dir", dir]);
    assert!(String::from_utf8_lossy(&second.stdout).contains("up to date"), "{second:?}");
    assert_eq!(cachet(&["generate", "--dir", dir, "--check"]).status.code(), Some(0));

    std::fs::write(app.path().join(cachet_cli::SW_CONFIG_PATH), "// edited by hand\n").unwrap();
    let check = cachet(&["generate", "--dir", dir, "--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stderr).contains("cachet-sw-config.js"));
}

#[test]
fn a_broken_or_missing_config_is_exit_2_with_the_key_named_and_nothing_written() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path().to_str().unwrap();
    let missing = cachet(&["generate", "--dir", dir]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cachet.config.json"));

    std::fs::write(app.path().join("cachet.config.json"), r#"{"features":{"auth":{"type":"jwt"}}}"#).unwrap();
    let broken = cachet(&["generate", "--dir", dir]);
    assert_eq!(broken.status.code(), Some(2));
    let message = String::from_utf8_lossy(&broken.stderr);
    assert!(
        message.contains(r#"features.auth.type: expected one of cookie, bearer, custom, got "jwt""#),
        "{message}"
    );
    assert!(!app.path().join(cachet_cli::SW_CONFIG_PATH).exists(), "nothing written for a broken config");
}

#[test]
fn bundles_are_copied_only_when_asked_for_and_a_missing_build_is_named() {
    let app = tempfile::tempdir().unwrap();
    let built = tempfile::tempdir().unwrap();
    let dir = app.path().to_str().unwrap();
    std::fs::write(app.path().join("cachet.config.json"), "{}").unwrap();
    assert!(cachet(&["generate", "--dir", dir]).status.success());
    assert!(!app.path().join("cachet/cachet-api.bundle.js").exists(), "no bundles without the flag");

    let flag = format!("--bundles={}", built.path().display());
    let missing = cachet(&["generate", "--dir", dir, &flag]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("client-injector.bundle.js"), "{missing:?}");

    std::fs::write(built.path().join("client-injector.bundle.js"), "navigator.serviceWorker;\n").unwrap();
    // A bundle of another cachet version, without the config slot: named, nothing copied.
    std::fs::write(built.path().join("cachet-api.bundle.js"), "(function () {})();\n").unwrap();
    std::fs::write(built.path().join("cachet-api_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let old_bundle = cachet(&["generate", "--dir", dir, &flag]);
    assert_eq!(old_bundle.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&old_bundle.stderr).contains("no config slot"), "{old_bundle:?}");
    assert!(!app.path().join("cachet/cachet-api.bundle.js").exists());

    // The app's config goes into the slot: the page starts on it with two scripts.
    let built_api = "(function () { var bundledConfig = /*cachet:config*/null/*cachet:end*/; })();\n";
    std::fs::write(built.path().join("cachet-api.bundle.js"), built_api).unwrap();
    std::fs::write(app.path().join("cachet.config.json"), r#"{"features":{"graphql":{"enabled":true}}}"#)
        .unwrap();
    let copied = cachet(&["generate", "--dir", dir, &flag]);
    assert!(copied.status.success(), "{copied:?}");
    let api = std::fs::read_to_string(app.path().join("cachet/cachet-api.bundle.js")).unwrap();
    let config =
        cachet_core::config::Config::from_json_str(r#"{"features":{"graphql":{"enabled":true}}}"#).unwrap();
    let expected = built_api.replace("null", &serde_json::to_string(&config).unwrap());
    assert_eq!(api, format!("{}\n{expected}", cachet_cli::GENERATED_HEADER));
    assert!(
        api.contains(r#""graphql":{"enabled":true,"endpoints":["/graphql"],"honorNoStore":false,"#),
        "{api}"
    );
    assert_eq!(std::fs::read(app.path().join("cachet/cachet-api_bg.wasm")).unwrap(), b"\0asm\x01\0\0\0");
    assert_eq!(cachet(&["generate", "--dir", dir, &flag, "--check"]).status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&cachet(&["generate", "--dir", dir, &flag]).stdout).contains("up to date")
    );

    std::fs::write(built.path().join("cachet-api.bundle.js"), built_api.replace("var", "let")).unwrap();
    let check = cachet(&["generate", "--dir", dir, &flag, "--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stderr).contains("cachet/cachet-api.bundle.js"));

    // A config change is a stale bundle too.
    std::fs::write(built.path().join("cachet-api.bundle.js"), built_api).unwrap();
    assert_eq!(cachet(&["generate", "--dir", dir, &flag, "--check"]).status.code(), Some(0));
    std::fs::write(app.path().join("cachet.config.json"), "{}").unwrap();
    let changed = cachet(&["generate", "--dir", dir, &flag, "--check"]);
    assert_eq!(changed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&changed.stderr).contains("cachet/cachet-api.bundle.js"));
}

#[test]
fn the_shims_early_send_rule_names_cachets_headers_as_the_core_does() {
    // `fetchesEarly` in the shim tests a header name as `is_cachet_header` does.
    use cachet_core::protocol::headers::{is_cachet_header, SOURCE_HEADER, STRATEGY_HEADER};
    let config = cachet_core::config::Config::from_json_str("{}").unwrap();
    let files = cachet_cli::generated_files(&config);
    let shim = files.iter().find(|file| file.path == cachet_cli::SW_SHIM_PATH).unwrap();
    let rule = format!("if (name === '{STRATEGY_HEADER}' || name.startsWith('x-cachet-')) return false;");
    assert!(shim.content.contains(&rule), "the shim should test headers with: {rule}");
    // …and leaves navigations to the browser (navigation preload), as `fetches_early` does.
    let routes = config.sw_routes();
    assert!(!routes.fetches_early("GET", true, "/", &[]) && routes.fetches_early("GET", false, "/", &[]));
    let begins = "if (!ROUTES.fetchEarly || request.method !== 'GET') return false;";
    assert!(shim.content.contains(begins), "the shim should test the method with: {begins}");
    // What the browser loads (`hands_over`) by the same rule, with a destination, navigations too.
    assert!(routes.hands_over("GET", "document", "/", &[]) && !routes.hands_over("GET", "", "/", &[]));
    for rule in [
        "return request.mode !== 'navigate' && beginsWithTheNetwork(request);",
        "return request.destination !== '' && beginsWithTheNetwork(request);",
    ] {
        assert!(shim.content.contains(rule), "the shim should have the rule: {rule}");
    }
    // A handed answer is marked as the engine marks a network answer (cachet_core::protocol::headers).
    let mark = format!("headers.set('{SOURCE_HEADER}', 'network');");
    assert!(shim.content.contains(&mark), "the shim should mark a handed answer with: {mark}");
    // The hand-over record is read only where a request can be handed over.
    let gate = "const handsOverKept = ROUTES.fetchEarly";
    assert!(shim.content.contains(gate), "the shim should read the record only with: {gate}");
    assert!(is_cachet_header(STRATEGY_HEADER) && is_cachet_header("x-cachet-anything"));
    assert!(!is_cachet_header("x-cachetx") && !is_cachet_header("x-sw-other"));
    let sw_config = files.iter().find(|file| file.path == "cachet-sw-config.js").unwrap();
    assert!(
        sw_config.content.contains("\"fetchEarly\":true"),
        "network-first by default: {}",
        sw_config.content
    );
}
