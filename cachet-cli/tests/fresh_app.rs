//! Issue 7's acceptance test: a fresh Yew app, set up with `cachet init`, `cachet add auth` and
//! `cachet add graphql`, builds for wasm32 with the generated modules (and an edited failure check) in
//! both its page binary and its Service Worker binary. The same build compiles every Rust snippet of the
//! README and the guides in `docs/` (issue 36; see `snippets/mod.rs` for the markers that say how).
//!
//! The app is built offline into `target/fresh-app` of this workspace, with this workspace's
//! `Cargo.lock` and dev profile, so its dependencies compile once and are reused by later runs.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod snippets;

const WASM: &str = "wasm32-unknown-unknown";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

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

/// Fails (never skips) when the wasm32 target is missing.
fn require_wasm32_target() {
    let output = Command::new("rustc").args(["--print", "target-libdir", "--target", WASM]).output();
    let installed = output.ok().filter(|output| output.status.success()).is_some_and(|output| {
        let libdir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        std::fs::read_dir(libdir).is_ok_and(|mut entries| {
            entries.any(|entry| {
                entry.is_ok_and(|entry| entry.file_name().to_string_lossy().starts_with("libcore"))
            })
        })
    });
    assert!(installed, "the {WASM} target is not installed: run `cargo xtask setup`");
}

/// The fresh app: a Cargo.toml of its own (not a member of this workspace), a lib holding `mod cachet`,
/// and a page binary calling the generated functions, so that all of them are type-checked.
fn write_app(dir: &Path) {
    let ws = workspace();
    let path = |krate: &str| ws.join(krate).display().to_string().replace('\\', "/");
    let manifest = format!(
        r#"[package]
name = "fresh-app"
version = "0.1.0"
edition = "2021"
publish = false

# Not a member of any workspace above the temp dir.
[workspace]

[dependencies]
cachet-kit = {{ path = "{kit}" }}
yew = {{ version = "0.23", features = ["csr"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
wasm-bindgen-futures = "0.4"

# The profile of the cachet workspace, so that target/fresh-app reuses what it compiled before.
[profile.dev.package."*"]
opt-level = 1
debug = false

[profile.dev]
debug = "line-tables-only"
"#,
        kit = path("cachet-kit"),
    );
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "//! A fresh Yew app set up by the cachet CLI.\n#![deny(warnings, missing_docs)]\n\npub mod cachet;\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
}

const MAIN: &str = r#"//! Calls every generated function, so that the build type-checks them.
#![deny(warnings)]

use fresh_app::cachet::{self, auth, config, graphql};
use yew::prelude::*;

#[derive(serde::Deserialize)]
struct Todos {
    todos: Vec<serde_json::Value>,
}

async fn exercise() -> Result<String, cachet::Error> {
    let _ = cachet::client()?;
    let _ = cachet::fetch_with_cache("/api/todos", cachet::FetchOptions::new().auth(true)).await?;
    let user: auth::AuthData = auth::AuthData::default();
    auth::set_auth(user).await?;
    let _ = auth::get_auth().await?;
    let _ = auth::ensure_valid_auth().await?;
    let valid = auth::is_auth_valid()?;
    let url = auth::is_auth_url("/api/me")?;
    let _ = auth::with_auth_headers(&cachet_kit::client::HttpRequest::get("/api/todos"))?;
    let state = auth::get_auth_state().await?;
    auth::clear_memory_auth().await?;
    auth::clear_auth().await?;
    let options = graphql::at(graphql::GRAPHQL);
    let todos = graphql::query_gql::<Todos>("query GetTodos { todos { id } }", None, options.clone()).await?;
    let _ = graphql::mutate_gql::<serde_json::Value>("mutation AddTodo { add { id } }", None, options.clone())
        .await?;
    let _ = graphql::fetch_with_gql("query GetTodos { todos { id } }", None, &options).await?;
    let _ = auth::adapter::adapter();
    Ok(format!(
        "{} todos, valid {valid}, auth url {url}, online {}, credentials {}, endpoints {:?}, {:?}, {:?}",
        todos.data.todos.len(),
        state.online,
        auth::AUTH_WITH_CREDENTIALS,
        graphql::GQL_ENDPOINTS,
        config::AUTH_ROUTE_PATHS,
        config::config().features.auth.kind,
    ))
}

#[function_component]
fn App() -> Html {
    let text = use_state(String::new);
    {
        let text = text.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                text.set(exercise().await.unwrap_or_else(|error| error.to_string()));
            });
        });
    }
    html! { <p>{ (*text).clone() }</p> }
}

#[function_component]
fn Root() -> Html {
    html! { <cachet::Provider><App /></cachet::Provider> }
}

fn main() {
    yew::Renderer::<Root>::new().render();
}
"#;

/// An app edit of the created-once check: a 403 whose body says the session expired also counts.
const EDITED_CHECK: &str = r#"//! The app's failure check (edited).

use cachet_kit::core::config::{AuthFailureRule, FailureResponse};

/// The rule, or a 403 whose body says the session expired.
pub fn is_auth_failure_response(rule: &AuthFailureRule, response: &FailureResponse<'_>) -> bool {
    rule.check(response)
        || (response.status == 403 && response.json().is_some_and(|body| body["reason"] == "expired"))
}
"#;

#[test]
fn a_fresh_yew_app_set_up_by_the_cli_builds_for_wasm32() {
    require_wasm32_target();
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    write_app(app);

    for args in [&["init"][..], &["add", "auth"], &["add", "graphql"]] {
        let (code, text) = cachet(app, args);
        assert_eq!(code, 0, "{args:?}: {text}");
    }
    let rewritten = [
        cachet_cli::SW_CONFIG_PATH,
        cachet_cli::SW_SHIM_PATH,
        cachet_cli::SW_BIN_PATH,
        cachet_cli::AGENT_BIN_PATH,
        cachet_cli::MOD_PATH,
        cachet_cli::CONFIG_MODULE_PATH,
        cachet_cli::AUTH_MODULE_PATH,
        cachet_cli::GRAPHQL_MODULE_PATH,
    ];
    for path in rewritten {
        assert!(read(app, path).starts_with(cachet_cli::GENERATED_HEADER), "{path} has the generated header");
    }
    for path in [cachet_cli::ADAPTER_PATH, cachet_cli::CHECK_PATH] {
        assert!(read(app, path).starts_with(cachet_cli::STARTER_HEADER), "{path} says it is the app's");
    }
    assert!(read(app, cachet_cli::ADAPTER_PATH).contains("CookieAdapter::default()"), "add auth: cookie");
    assert!(read(app, cachet_cli::CONFIG_MODULE_PATH)
        .contains(r#"pub const GQL_ENDPOINTS: &[&str] = &["/graphql"];"#));
    assert!(read(app, cachet_cli::SW_BIN_PATH).contains("install_with(check::is_auth_failure_response)"));

    // A second run of every command changes nothing.
    for args in [&["init"][..], &["add", "auth"], &["add", "graphql"], &["generate"]] {
        let (code, text) = cachet(app, args);
        assert_eq!(code, 0, "{args:?}: {text}");
        assert!(text.contains("nothing to change") || text.contains("up to date"), "{args:?} twice: {text}");
    }

    // The app edits its check and adapter: generate keeps them, --check does not mind.
    std::fs::write(app.join(cachet_cli::CHECK_PATH), EDITED_CHECK).unwrap();
    let adapter = read(app, cachet_cli::ADAPTER_PATH)
        .replace("CookieAdapter::default()", "CookieAdapter { me_path: \"/api/whoami\".to_owned() }");
    std::fs::write(app.join(cachet_cli::ADAPTER_PATH), &adapter).unwrap();
    assert_eq!(cachet(app, &["generate"]).0, 0);
    assert_eq!(cachet(app, &["generate", "--check"]).0, 0, "edits of created-once files are not staleness");
    assert_eq!(read(app, cachet_cli::CHECK_PATH), EDITED_CHECK, "generate kept the edited check");
    assert_eq!(read(app, cachet_cli::ADAPTER_PATH), adapter, "generate kept the edited adapter");

    // The README's and the guides' Rust snippets, as their markers say, in the same build.
    let snippets = snippets::all(&workspace()).unwrap_or_else(|error| panic!("{error}"));
    let listing =
        snippets::write_into(app, &workspace(), &snippets).unwrap_or_else(|error| panic!("{error}"));

    // The app's Service Worker binary is generated; the page binary uses the lib.
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target_dir = workspace().join("target/fresh-app");
    let output = Command::new(cargo)
        .args(["build", "--offline", "--target", WASM, "--bins"])
        .current_dir(app)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the fresh app (or a snippet of the docs) does not build for {WASM}:\n{log}\nthe snippets:{listing}"
    );
    assert!(
        !log.contains("warning"),
        "the generated code and the snippets build without warnings:\n{log}\nthe snippets:{listing}"
    );
    for binary in ["fresh-app.wasm", "cachet-sw.wasm", "cachet-agent.wasm"] {
        assert!(target_dir.join(WASM).join("debug").join(binary).exists(), "{binary} was built");
    }
    eprintln!(
        "fresh app and {} snippets built for {WASM} in {:.1} s",
        snippets.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn a_missing_created_once_file_is_reported_by_check_and_created_again() {
    let temp = tempfile::tempdir().unwrap();
    let app = temp.path();
    assert_eq!(cachet(app, &["init"]).0, 0);
    assert_eq!(cachet(app, &["add", "auth"]).0, 0);
    std::fs::remove_file(app.join(cachet_cli::CHECK_PATH)).unwrap();
    let (code, text) = cachet(app, &["generate", "--check"]);
    assert_eq!(code, 1);
    assert!(text.contains(cachet_cli::CHECK_PATH), "{text}");
    let (code, text) = cachet(app, &["generate"]);
    assert_eq!(code, 0);
    assert!(text.contains(cachet_cli::CHECK_PATH) && !text.contains(cachet_cli::ADAPTER_PATH), "{text}");
    assert_eq!(read(app, cachet_cli::CHECK_PATH), cachet_cli::render_check());
}
