//! `cachet init`, `cachet add auth`, `cachet add graphql`: the config they write, idempotence, errors.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

fn cachet(dir: &Path, args: &[&str]) -> (i32, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_cachet")).args(args).arg("--dir").arg(dir).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

fn config(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("cachet.config.json")).unwrap()).unwrap()
}

#[test]
fn init_then_add_auth_and_graphql_write_the_spec_defaults_once() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path();
    let (code, text) = cachet(dir, &["init"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("cachet.config.json") && text.contains("cachet-sw-config.js"), "{text}");
    assert_eq!(config(dir), json!({"features": {"graphql": {"enabled": false, "endpoints": ["/graphql"]}}}));
    assert_eq!(cachet(dir, &["init"]), (0, "cachet: nothing to change\n".to_owned()));

    assert_eq!(cachet(dir, &["add", "auth"]).0, 0);
    assert_eq!(
        config(dir)["features"]["auth"],
        json!({"enabled": true, "type": "cookie", "routePaths": ["/api/login", "/api/logout", "/api/refresh", "/api/me"]})
    );
    assert_eq!(cachet(dir, &["add", "graphql"]).0, 0);
    assert_eq!(config(dir)["features"]["graphql"], json!({"enabled": true, "endpoints": ["/graphql"]}));
    let generated = std::fs::read_to_string(dir.join("cachet-sw-config.js")).unwrap();
    assert!(generated.contains(r#""graphqlEndpoints":["/graphql"]"#), "regenerated after add: {generated}");

    let before = std::fs::read(dir.join("cachet.config.json")).unwrap();
    for args in [&["add", "auth"][..], &["add", "graphql"], &["init"]] {
        assert_eq!(cachet(dir, args), (0, "cachet: nothing to change\n".to_owned()), "{args:?} twice");
    }
    assert_eq!(std::fs::read(dir.join("cachet.config.json")).unwrap(), before);
}

/// `cachet add auth --type` (issue 36: "edit the config to bearer" did not say which key).
#[test]
fn add_auth_type_sets_the_auth_type_and_only_goes_with_auth() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path();
    assert_eq!(cachet(dir, &["init"]).0, 0);
    assert_eq!(cachet(dir, &["add", "auth", "--type", "bearer"]).0, 0);
    assert_eq!(config(dir)["features"]["auth"]["type"], json!("bearer"));
    assert_eq!(cachet(dir, &["add", "auth"]), (0, "cachet: nothing to change\n".to_owned()), "kept");
    assert_eq!(cachet(dir, &["add", "auth", "--type", "cookie"]).0, 0);
    assert_eq!(config(dir)["features"]["auth"]["type"], json!("cookie"));
    let (code, text) = cachet(dir, &["add", "graphql", "--type", "bearer"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--type") && text.contains("cachet add auth"), "{text}");
    let (code, text) = cachet(dir, &["add", "auth", "--type", "oauth"]);
    assert_ne!(code, 0);
    assert!(text.contains("oauth") && text.contains("bearer"), "names the value and the choices: {text}");
}

/// An edit keeps the file as its author wrote it: key order, indentation, the keys it does not touch
/// (issue 36: `add auth` rewrote the whole file, sorted and two-space indented).
#[test]
fn an_edit_keeps_the_authors_key_order_and_indentation() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path();
    let written = "{\n    \"cache\": {\"maxEntries\": 50},\n    \"features\": {\n        \"graphql\": {\n            \"endpoints\": [\"/api/graphql\"],\n            \"enabled\": false\n        },\n        \"auth\": {\n            \"type\": \"bearer\"\n        }\n    }\n}\n";
    std::fs::write(dir.join("cachet.config.json"), written).unwrap();
    assert_eq!(cachet(dir, &["add", "auth"]).0, 0);
    assert_eq!(cachet(dir, &["add", "graphql"]).0, 0);
    let expected = "{\n    \"cache\": {\"maxEntries\": 50},\n    \"features\": {\n        \"graphql\": {\n            \"endpoints\": [\"/api/graphql\"],\n            \"enabled\": true\n        },\n        \"auth\": {\n            \"type\": \"bearer\",\n            \"enabled\": true,\n            \"routePaths\": [\"/api/login\", \"/api/logout\", \"/api/refresh\", \"/api/me\"]\n        }\n    }\n}\n";
    assert_eq!(std::fs::read_to_string(dir.join("cachet.config.json")).unwrap(), expected);
}

#[test]
fn add_auth_keeps_a_bearer_type_and_custom_paths_set_beforehand() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path();
    let edited = json!({"features": {"auth": {"type": "bearer", "routePaths": ["/auth/login"]}}});
    std::fs::write(dir.join("cachet.config.json"), edited.to_string()).unwrap();
    assert_eq!(cachet(dir, &["add", "auth"]).0, 0);
    assert_eq!(
        config(dir)["features"]["auth"],
        json!({"enabled": true, "type": "bearer", "routePaths": ["/auth/login"]})
    );
}

#[test]
fn a_broken_config_is_named_and_left_as_it_was() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path();
    let broken = r#"{"features": {"graphql": {"endpoints": "graphql"}}}"#;
    std::fs::write(dir.join("cachet.config.json"), broken).unwrap();
    let (code, text) = cachet(dir, &["add", "graphql"]);
    assert_eq!(code, 2);
    assert!(text.contains("features.graphql.endpoints"), "{text}");
    assert_eq!(std::fs::read_to_string(dir.join("cachet.config.json")).unwrap(), broken, "untouched");
    let (code, text) = cachet(&dir.join("missing"), &["add", "auth"]);
    assert_eq!(code, 2);
    assert!(text.contains("cachet.config.json") && text.contains("cachet init"), "{text}");
}

#[test]
fn the_example_apps_config_is_what_init_add_auth_add_graphql_and_add_push_write() {
    let app = tempfile::tempdir().unwrap();
    assert_eq!(cachet(app.path(), &["init"]).0, 0);
    assert_eq!(cachet(app.path(), &["add", "auth"]).0, 0);
    assert_eq!(cachet(app.path(), &["add", "graphql"]).0, 0);
    assert_eq!(cachet(app.path(), &["add", "push"]).0, 0);
    assert_eq!(config(app.path())["features"]["push"], json!({"enabled": true}));
    assert_eq!(cachet(app.path(), &["add", "push"]).0, 0, "idempotent");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/todo-app");
    // The example's own notification text, edited into the config as an app does.
    let mut edited = config(app.path());
    edited["features"]["push"]["notification"] = config(&example)["features"]["push"]["notification"].clone();
    std::fs::write(app.path().join("cachet.config.json"), serde_json::to_string_pretty(&edited).unwrap())
        .unwrap();
    assert_eq!(cachet(app.path(), &["generate"]).0, 0);
    assert_eq!(
        config(&example),
        config(app.path()),
        "set the example up with `cachet init` + `cachet add auth` + `cachet add graphql` + `cachet add push`, \
         then its notification"
    );
    let config = cachet_cli::read_config(&example).unwrap();
    for file in cachet_cli::generated_files(&config) {
        let read = |dir: &Path| std::fs::read_to_string(dir.join(file.path)).unwrap();
        assert_eq!(read(&example), read(app.path()), "{}", file.path);
    }
}
