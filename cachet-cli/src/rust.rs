//! The Rust modules `cachet generate` rewrites on every run: `src/cachet/{mod,config,graphql}.rs`,
//! `src/cachet/auth/mod.rs` and the Service Worker binary `src/bin/cachet-sw.rs`.
//!
//! They are the Rust counterparts of SPEC §1's `kit/auth/store.ts`, `kit/auth/state.ts` and
//! `kit/graphql/index.ts`: thin functions over one `cachet_client::Client` per page, built on first use
//! from the generated config, the app's adapter (`auth/adapter.rs`) and the app's failure check
//! (`auth/check.rs`).

use cachet_core::config::{AuthType, Config};

use crate::GENERATED_HEADER;

/// `src/cachet/mod.rs`: declares the submodules of the enabled features, and holds the page's client.
pub fn render_mod(config: &Config) -> String {
    let auth = config.features.auth.enabled;
    let graphql = config.features.graphql.enabled;
    let mut out = header(&[
        "cachet, set up for this app by the `cachet` CLI. Include it with `mod cachet;` (or `pub mod cachet;`",
        "in the crate root), and call the functions of its modules: [`client()`] is built on first use from",
        "[`config::config()`] and, when auth is on, the app's adapter (`auth/adapter.rs`) and failure check",
        "(`auth/check.rs`).",
    ]);
    // An app uses some of these functions, not all: unused ones are no warnings of the app's.
    out.push_str("#![allow(dead_code, unused_imports)]\n\n");
    // `rustfmt::skip`: `cargo fmt` with the app's settings would otherwise reformat generated files.
    if auth {
        out.push_str("#[rustfmt::skip]\npub mod auth;\n");
    }
    out.push_str("#[rustfmt::skip]\npub mod config;\n");
    if graphql {
        out.push_str("#[rustfmt::skip]\npub mod graphql;\n");
    }
    out.push_str(
        "\n\
         // The hooks, `<CachetProvider>`, `AgentMode`..., so that the app writes `use cachet::...` only.\n\
         pub use cachet_kit::client::{Error, FetchOptions, FetchResult, GqlOptions};\n\
         pub use cachet_kit::yew::*;\n\
         \n\
         thread_local! {\n    \
             static CLIENT: std::cell::OnceCell<cachet_kit::client::Client> = const { std::cell::OnceCell::new() };\n\
         }\n\
         \n\
         /// The builder [`client()`] starts from: the generated config",
    );
    out.push_str(if auth { ", the app's adapter and failure check.\n" } else { ".\n" });
    out.push_str("pub fn builder() -> cachet_kit::client::ClientBuilder {\n");
    if auth {
        out.push_str(
            "    cachet_kit::client::Client::builder()\n        \
                 .config(config::config())\n        \
                 .adapter(auth::adapter::adapter())\n        \
                 .failure_check(auth::check::is_auth_failure_response)\n",
        );
    } else {
        out.push_str("    cachet_kit::client::Client::builder().config(config::config())\n");
    }
    out.push_str(
        "}\n\
         \n\
         /// The page's client, built by [`builder()`] on first use (a clone of the one shared client).\n\
         /// Fails outside a page (no `window`).\n\
         pub fn client() -> Result<cachet_kit::client::Client, Error> {\n    \
             if let Some(client) = CLIENT.with(|cell| cell.get().cloned()) {\n        \
                 return Ok(client);\n    \
             }\n    \
             let client = builder().build()?;\n    \
             Ok(CLIENT.with(|cell| cell.get_or_init(|| client).clone()))\n\
         }\n\
         \n\
         /// `fetchWithCache(url, options)` through the page's client.\n\
         pub async fn fetch_with_cache(url: &str, options: FetchOptions) -> Result<FetchResult, Error> {\n    \
             client()?.fetch_with_cache(url, options).await\n\
         }\n",
    );
    out.push_str(PROVIDER);
    out
}

/// `<cachet::Provider>` in `src/cachet/mod.rs`: `<CachetProvider>` on the generated client.
const PROVIDER: &str = "
/// Properties of [`Provider`].
#[derive(yew::Properties, PartialEq)]
pub struct ProviderProps {
    /// Where the agent hub runs (default: the `cachet-agent` worker binary `cachet init` wrote).
    #[prop_or_default]
    pub agent: AgentMode,
    /// The app.
    #[prop_or_default]
    pub children: yew::Html,
}

/// `<cachet::Provider>`: `<CachetProvider>` on [`client()`], so that the page runs this app's config,
/// adapter and failure check. Registers `/service-worker.js`; a failure is logged on the console with
/// the URL and the reason, and is in `CachetContext::registration`.
#[yew::function_component]
pub fn Provider(props: &ProviderProps) -> yew::Html {
    let client = yew::use_memo((), |_| {
        client().unwrap_or_else(|error| panic!(\"cachet::client() cannot be built: {error}\"))
    });
    yew::html! {
        <CachetProvider client={(*client).clone()} agent={props.agent}>
            { props.children.clone() }
        </CachetProvider>
    }
}
";

/// `src/cachet/config.rs`: the config as constants.
pub fn render_config(config: &Config) -> String {
    let auth = &config.features.auth;
    let graphql = &config.features.graphql;
    let json = config.to_json_pretty();
    let hashes = "#".repeat(raw_string_hashes(&json));
    let kind = match auth.kind {
        AuthType::Cookie => "Cookie",
        AuthType::Bearer => "Bearer",
        AuthType::Custom => "Custom",
    };
    let mut out =
        header(&["The app's `cachet.config.json`, every key written out, and the constants read from it."]);
    out.push_str(&format!(
        "use cachet_kit::core::config::{{AuthType, Config}};\n\
         \n\
         /// `cachet.config.json` as `cachet generate` read it, with every default written out.\n\
         pub const CONFIG_JSON: &str = r{hashes}\"{json}\"{hashes};\n\
         \n\
         /// `features.auth.enabled`.\n\
         pub const AUTH_ENABLED: bool = {};\n\
         /// `features.auth.type`.\n\
         pub const AUTH_TYPE: AuthType = AuthType::{kind};\n\
         /// `AUTH_WITH_CREDENTIALS`: whether auth requests send cookies (true for cookie and custom auth).\n\
         pub const AUTH_WITH_CREDENTIALS: bool = {};\n\
         /// `features.auth.routePaths`: paths that bypass the Service Worker cache.\n\
         pub const AUTH_ROUTE_PATHS: &[&str] = &{};\n\
         /// `features.graphql.enabled`.\n\
         pub const GRAPHQL_ENABLED: bool = {};\n\
         /// `features.graphql.endpoints` (`GQL_ENDPOINTS`): index 0 is the default `endpoint_index`.\n\
         pub const GQL_ENDPOINTS: &[&str] = &{};\n\
         \n\
         /// The config, parsed from [`CONFIG_JSON`].\n\
         pub fn config() -> Config {{\n    \
             // `cachet generate` validated this text and wrote it from the parsed config: read as written\n    \
             // (the whole reader's rules ran then; `from_written_json` checks the shape).\n    \
             Config::from_written_json(CONFIG_JSON).expect(\"src/cachet/config.rs holds a config as cachet writes it; run `cachet generate`\")\n\
         }}\n",
        auth.enabled,
        auth.kind.with_credentials(),
        rust_str_list(&auth.route_paths),
        graphql.enabled,
        rust_str_list(&graphql.endpoints),
    ));
    out
}

/// `src/cachet/auth/mod.rs`: the store and state API of SPEC §1 (`store.ts`, `state.ts`).
pub fn render_auth(_config: &Config) -> String {
    let mut out = header(&[
        "The auth API (SPEC §1 `auth/store.ts` and `auth/state.ts`) over the page's client",
        "([`super::client()`]). `adapter.rs` and `check.rs` are the app's: cachet created them once and",
        "never overwrites them.",
    ]);
    out.push_str(
        "pub mod adapter;\n\
         pub mod check;\n\
         \n\
         pub use super::config::AUTH_WITH_CREDENTIALS;\n\
         pub use adapter::AuthData;\n\
         pub use cachet_kit::client::{AuthSnapshot, Error, HttpRequest};\n\
         \n\
         use super::client;\n\
         \n\
         /// `setAuth(data)`: after a login, keeps the auth and signals `login` in every tab.\n\
         pub async fn set_auth(auth: AuthData) -> Result<(), Error> {\n    \
             client()?.set_auth(auth).await\n\
         }\n\
         \n\
         /// `getAuth()`: the adapter's, the current, the persisted, else the server's (`fetch_user`) auth.\n\
         pub async fn get_auth() -> Result<Option<AuthData>, Error> {\n    \
             client()?.get_auth().await\n\
         }\n\
         \n\
         /// `clearAuth()`: purges memory, IndexedDB, the caches and the mutation queue, in every tab.\n\
         pub async fn clear_auth() -> Result<(), Error> {\n    \
             client()?.clear_auth().await\n\
         }\n\
         \n\
         /// `clearMemoryAuth()`: forgets the auth held in memory only.\n\
         pub async fn clear_memory_auth() -> Result<(), Error> {\n    \
             client()?.clear_memory_auth().await;\n    \
             Ok(())\n\
         }\n\
         \n\
         /// `ensureValidAuth()`: the current auth, refreshed first when it is about to expire.\n\
         pub async fn ensure_valid_auth() -> Result<Option<AuthData>, Error> {\n    \
             client()?.ensure_valid_auth().await\n\
         }\n\
         \n\
         /// `isAuthValid()`: auth is held and its `expiresAt` (if any) is in the future.\n\
         pub fn is_auth_valid() -> Result<bool, Error> {\n    \
             Ok(client()?.is_auth_valid())\n\
         }\n\
         \n\
         /// `withAuthHeaders(request)`: `request` with the adapter's headers and cachet's auth mark.\n\
         pub fn with_auth_headers(request: &HttpRequest) -> Result<HttpRequest, Error> {\n    \
             Ok(client()?.with_auth_headers(request))\n\
         }\n\
         \n\
         /// `isAuthUrl(url)`: whether `url` is at or under one of `AUTH_ROUTE_PATHS` on this origin.\n\
         pub fn is_auth_url(url: &str) -> Result<bool, Error> {\n    \
             Ok(client()?.is_auth_url(url))\n\
         }\n\
         \n\
         /// `getAuthState()`: `{ authenticated, auth, online }`.\n\
         pub async fn get_auth_state() -> Result<AuthSnapshot, Error> {\n    \
             Ok(client()?.get_auth_state().await)\n\
         }\n",
    );
    out
}

/// `src/cachet/graphql.rs`: `queryGql`, `mutateGql`, `fetchWithGql` and the endpoint indexes.
pub fn render_graphql(config: &Config) -> String {
    let mut out = header(&[
        "The GraphQL calls (SPEC §1 `graphql/index.ts`) over the page's client ([`super::client()`]), and",
        "one index constant per configured endpoint (`GqlOptions::endpoint_index`, or [`at`]).",
    ]);
    out.push_str(
        "pub use super::config::GQL_ENDPOINTS;\n\
         pub use cachet_kit::client::{Error, GqlOptions, GqlResponse, MutationResult, QueryResult};\n\
         \n\
         use cachet_kit::serde::de::DeserializeOwned;\n\
         use cachet_kit::serde_json::Value;\n\
         \n\
         use super::client;\n\
         \n",
    );
    for (index, (name, endpoint)) in endpoint_names(&config.features.graphql.endpoints).iter().enumerate() {
        out.push_str(&format!(
            "/// `{endpoint}`, index {index} of [`GQL_ENDPOINTS`].\npub const {name}: usize = {index};\n"
        ));
    }
    out.push_str(
        "\n\
         /// Default options aimed at endpoint `endpoint_index` (one of the constants above).\n\
         pub fn at(endpoint_index: usize) -> GqlOptions {\n    \
             GqlOptions { endpoint_index, ..GqlOptions::default() }\n\
         }\n\
         \n\
         /// `queryGql(query, variables, options)`: `data` as `T`, and whether it came from a cache.\n\
         pub async fn query_gql<T: DeserializeOwned>(\n    \
             query: &str,\n    \
             variables: Option<Value>,\n    \
             options: GqlOptions,\n\
         ) -> Result<QueryResult<T>, Error> {\n    \
             client()?.query_gql(query, variables, options).await\n\
         }\n\
         \n\
         /// `mutateGql(mutation, variables, options)`: `data` as `T`; invalidates the derived tags.\n\
         pub async fn mutate_gql<T: DeserializeOwned>(\n    \
             mutation: &str,\n    \
             variables: Option<Value>,\n    \
             options: GqlOptions,\n\
         ) -> Result<MutationResult<T>, Error> {\n    \
             client()?.mutate_gql(mutation, variables, options).await\n\
         }\n\
         \n\
         /// `fetchWithGql(query, variables, options)`: the GraphQL result whole, `errors` included.\n\
         pub async fn fetch_with_gql(\n    \
             query: &str,\n    \
             variables: Option<Value>,\n    \
             options: &GqlOptions,\n\
         ) -> Result<GqlResponse, Error> {\n    \
             client()?.fetch_with_gql(query, variables, options).await\n\
         }\n",
    );
    out
}

/// The worker binaries' allocator (`cachet_worker::Allocator`: talc on wasm, smaller than the default).
const ALLOCATOR: &str = "// The worker's allocator: smaller than Rust's default on wasm (cachet_kit::worker::Allocator).\n\
                         #[global_allocator]\n\
                         static ALLOCATOR: cachet_kit::worker::Allocator = cachet_kit::worker::allocator();\n";

/// `src/bin/cachet-sw.rs`: the Service Worker binary, with the app's failure check when auth is on.
pub fn render_sw_bin(config: &Config) -> String {
    render_engine_bin(
        config,
        "cachet's Service Worker engine, hosted by the app (built as `cachet-sw.js` + `cachet-sw_bg.wasm`,\n\
         //! loaded by `service-worker.js`).",
        "install",
    )
}

/// `src/bin/cachet-sw-start.rs`: the engine's start module (its fetch path alone, which the shim loads as
/// a stopped worker starts; `cachet_worker::sw::install_start`), with the same failure check.
pub fn render_sw_start_bin(config: &Config) -> String {
    render_engine_bin(
        config,
        "The start module of cachet's Service Worker engine (built as `cachet-sw-start.js` +\n\
         //! `cachet-sw-start_bg.wasm`): its fetch path alone, which `service-worker.js` loads as a stopped\n\
         //! worker starts; the whole engine (`cachet-sw.rs`) takes over from it.",
        "install_start",
    )
}

fn render_engine_bin(config: &Config, doc: &str, install: &str) -> String {
    let mut out = format!("{GENERATED_HEADER}\n//! {doc}\n\n{ALLOCATOR}");
    if config.features.auth.enabled {
        out.push_str(&format!(
            "\n\
             // The app's failure check, compiled into the Service Worker too: the page client runs the same\n\
             // function (src/cachet/mod.rs), so both sides agree on what an auth failure is.\n\
             #[path = \"../cachet/auth/check.rs\"]\n\
             mod check;\n\
             \n\
             fn main() {{\n    \
                 cachet_kit::worker::sw::{install}_with(check::is_auth_failure_response);\n\
             }}\n",
        ));
    } else {
        out.push_str(&format!("\nfn main() {{\n    cachet_kit::worker::sw::{install}();\n}}\n"));
    }
    out
}

/// `src/bin/cachet-agent.rs`: cachet's yew-agent worker (the agent hub `<CachetProvider>` starts).
pub fn render_agent_bin() -> String {
    format!(
        "{GENERATED_HEADER}\n\
         //! cachet's agent hub in a yew-agent worker, hosted by the app (built as `cachet-agent.js` +\n\
         //! `cachet-agent_bg.wasm`, started by `<CachetProvider>`).\n\
         \n\
         {ALLOCATOR}\
         \n\
         fn main() {{\n    \
             cachet_kit::worker::agent::register();\n\
         }}\n"
    )
}

/// The header of a generated Rust module, then its `//!` docs.
fn header(docs: &[&str]) -> String {
    let mut out = format!("{GENERATED_HEADER}\n");
    for line in docs {
        out.push_str("//! ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// How many `#` a raw string holding `text` needs.
fn raw_string_hashes(text: &str) -> usize {
    let mut most = 0;
    for (index, _) in text.match_indices('"') {
        let run = text[index + 1..].bytes().take_while(|byte| *byte == b'#').count();
        most = most.max(run);
    }
    most + 1
}

/// `["a", "b"]` as Rust string literals (`Debug` escapes as Rust does).
fn rust_str_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| format!("{item:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// One constant name per endpoint: `/graphql` → `GRAPHQL`, `/api/v2/graphql` → `API_V2_GRAPHQL`;
/// `ENDPOINT_<index>` when the path gives no name or one already taken.
pub fn endpoint_names(endpoints: &[String]) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for (index, endpoint) in endpoints.iter().enumerate() {
        let words: Vec<String> = endpoint
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_ascii_uppercase)
            .collect();
        let mut name = words.join("_");
        let taken = |name: &str| names.iter().any(|(other, _)| other == name);
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) || taken(&name) {
            name = format!("ENDPOINT_{index}");
        }
        if taken(&name) {
            name = format!("ENDPOINT_{index}_");
        }
        names.push((name, endpoint.clone()));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_names_follow_the_path_and_never_collide() {
        let endpoints: Vec<String> =
            ["/graphql", "/api/v2/graphql", "/graphql/", "/", "/2"].iter().map(|e| (*e).to_owned()).collect();
        let names: Vec<String> = endpoint_names(&endpoints).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["GRAPHQL", "API_V2_GRAPHQL", "ENDPOINT_2", "ENDPOINT_3", "ENDPOINT_4"]);
    }

    #[test]
    fn the_raw_string_outlasts_any_hash_run_in_the_config() {
        assert_eq!(raw_string_hashes("{}"), 1);
        assert_eq!(raw_string_hashes(r##"{"a": "x"#"}"##), 2);
    }
}
