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
}

#[test]
fn generate_writes_once_then_changes_nothing_and_check_notices_edits() {
    let app = tempfile::tempdir().unwrap();
    let dir = app.path().to_str().unwrap();
    std::fs::write(app.path().join("cachet.config.json"), r#"{"features":{"auth":{"enabled":true}}}"#)
        .unwrap();

    let first = cachet(&["generate", "--dir", dir]);
    assert!(first.status.success(), "{first:?}");
    assert!(String::from_utf8_lossy(&first.stdout).contains("wrote cachet/cachet-sw-config.js"));
    let written = std::fs::read_to_string(app.path().join(cachet_cli::SW_CONFIG_PATH)).unwrap();
    assert!(
        written.contains(
            r#"self.CACHET_ROUTES = {"passThrough":["/api/login","/api/logout","/api/refresh","/api/me"],"graphqlEndpoints":[]};"#
        ),
        "{written}"
    );

    let second = cachet(&["generate", "--dir", dir]);
    assert!(String::from_utf8_lossy(&second.stdout).contains("up to date"), "{second:?}");
    assert_eq!(cachet(&["generate", "--dir", dir, "--check"]).status.code(), Some(0));

    std::fs::write(app.path().join(cachet_cli::SW_CONFIG_PATH), "// edited by hand\n").unwrap();
    let check = cachet(&["generate", "--dir", dir, "--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stderr).contains("cachet/cachet-sw-config.js"));
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
