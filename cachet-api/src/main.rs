//! The bundler-free API: `window.cachet` for plain pages (SPEC §1, §2, §4, §6).
//!
//! `cachet-api.bundle.js` holds this crate's wasm-bindgen glue (`--target no-modules`, wrapped in a
//! function so that no global is left behind) and `js/cachet-api.js`, which loads the wasm and exposes
//! these exports on `window.cachet` with the SPEC's names. At start-up ([`start`]) the API initialises
//! itself with the page's config and the adapter of its `features.auth.type`; `configure` replaces both.
//! The page's config is `window.CACHET_CONFIG` when the page loaded `/cachet-sw-config.js`, else the one
//! `cachet generate --bundles` wrote into the bundle, else the default; before its first call the client
//! asks the Service Worker for its config and follows it where they differ, saying so on the console
//! (`cachet_client::config_sync`). A page needs only SPEC's two scripts.
//!
//! | `window.cachet.` | Resolves to |
//! |---|---|
//! | `configure({ auth: { type, getAuth?, getHeaders?, refresh?, fetchUser? }, config? })` | `undefined` |
//! | `setAuth(data)` (AuthData, or the user object) | `undefined` |
//! | `getAuth()` | AuthData or `null` |
//! | `clearAuth()` | `undefined` |
//! | `clearMemoryAuth()` | `undefined` |
//! | `getAuthState()` | `{ authenticated, auth, online }` |
//! | `isAuthValid()`, `ensureValidAuth()`, `isAuthUrl(url)` | as in the Rust API |
//! | `fetchWithCache(url, { auth, method, headers, body, strategy, tags })` | `{ data, status, ok, fromCache, stale, headers }`; `data` is the parsed JSON body (its text when not JSON) |
//! | `queryGql(query, variables?, options?, endpointIndex?)` | `{ data, fromCache, stale }` (`stale`: the last good answer, given under stale-if-error) |
//! | `mutateGql(mutation, variables?, options?, endpointIndex?)` | `{ data, queued }` |
//! | `fetchWithGql(query, variables?, options?, endpointIndex?)` | `{ result, fromCache, stale, status, queued }` |
//! | `invalidateByTag(tags)` | `undefined` |
//! | `subscribePush(vapidPublicKey)` | the push subscription `{ endpoint, expirationTime, keys }` for the app's server (cookie auth only: see [`push`]) |
//! | `unsubscribePush()` | the ended subscription, or `null` |
//! | `getPushSubscription()` | the subscription, or `null` |
//! | `getConfig()` | `{ source, config }`: the config in force (`source`: `default`, `given`, `global`, `bundled`, `service-worker`) |
//!
//! Devtools (`getSnapshot`, `deadLetters`, `retryDeadLetters`, `discardDeadLetters`, `dropEntries`,
//! `replayQueue`, `clearCaches`): see [`devtools`].
//!
//! A failure rejects with an `Error` named `CachetError` whose `kind` is `network`, `http`, `not-queued`
//! (with `reason`: `queue-full`, `storage-full` or `unwritable`), `unauthorized`, `graphql`, `decode`, `service-worker`, `invalid`, `refresh` (a token refresh that timed out or whose token another tab never passed on), `feature-off` (a config key is off), `not-built` (the build left a cargo feature out), `push-needs-cookie-auth`,
//! `push-unavailable`, `storage` or `browser`, with `status`, `url`, `errors`, `data` and `browserError` where
//! they apply.

mod convert;
mod devtools;
mod js_adapter;
mod push;

use std::cell::RefCell;

use cachet_client::{Client, Config, Error, FetchOptions, GqlOptions};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use convert::{
    auth_to_js, flag, object, option_to_js, strategy, stringify, strings, text_of, to_js, to_js_error,
    to_json,
};
use js_adapter::JsAdapter;

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
    /// The config `cachet generate --bundles` wrote into the bundle (JSON text), if any.
    static BUNDLED: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn main() {}

/// talc's allocator for single-threaded wasm, as cachet's worker binaries have (`cachet_worker::allocator`,
/// whose docs give the figures): this bundle is cachet's own binary, not an app's, so the allocator is
/// cachet's choice, and the standard library's default on wasm (dlmalloc) is 7 KB of code before gzip
/// where talc's is about 1.3 KB.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Called once by the bundle's loader when the wasm has loaded, with the config written into the bundle
/// (`null` in a bundle built for no app in particular): auto-initialisation with the page's config and
/// the default adapter of its auth type. The client then follows its Service Worker's config.
#[wasm_bindgen]
pub fn start(bundled: Option<String>) {
    BUNDLED.with(|cell| *cell.borrow_mut() = bundled);
    match page_builder().and_then(cachet_client::ClientBuilder::build) {
        Ok(client) => CLIENT.with(|cell| *cell.borrow_mut() = Some(client)),
        Err(error) => web_sys::console::warn_1(&format!("cachet: waiting for configure(): {error}").into()),
    }
}

/// A builder on the page's config: `window.CACHET_CONFIG` (a page that also loads
/// `/cachet-sw-config.js`), else the bundled one, else the default.
fn page_builder() -> Result<cachet_client::ClientBuilder, Error> {
    let builder = Client::builder().config_from_global()?;
    if builder.config_ref().is_some() {
        return Ok(builder);
    }
    match BUNDLED.with(|cell| cell.borrow().clone()) {
        Some(text) => Ok(builder.config_json(&text)?.config_source(cachet_client::ConfigSource::Bundled)),
        None => Ok(builder),
    }
}

/// What `cachet.ready` waits for once the wasm has loaded: the first stage of the client's start, a purge
/// an earlier page could not finish finished ([`Client::purge_settled`]), so that nothing read after
/// `ready` is what a purge was asked to remove. Not the whole start: a page that calls `configure()`
/// after `ready` replaces the client before it restores a session (and refreshes a token) for nothing.
/// Resolves at once when no client is configured yet.
#[wasm_bindgen(js_name = whenPurgeSettled)]
pub fn when_purge_settled() -> js_sys::Promise {
    promise(async move {
        let started = CLIENT.with(|cell| cell.borrow().clone());
        if let Some(client) = started {
            client.purge_settled().await;
        }
        Ok(JsValue::UNDEFINED)
    })
}

/// What an async export returns: `work` boxed and run by the one `future_to_promise` of the bundle.
/// wasm-bindgen's `async fn` export instantiates `future_to_promise` once per export, with the export's
/// body inlined into it; boxed at this boundary, the 21 exports share one instantiation and each keeps
/// only its own state machine (BENCHMARKS.md, session 35).
pub(crate) fn promise(
    work: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
) -> js_sys::Promise {
    run_boxed(Box::pin(work))
}

/// [`promise`]'s one `future_to_promise`, not inlined into the exports.
#[inline(never)]
fn run_boxed(work: futures::future::LocalBoxFuture<'static, Result<JsValue, JsValue>>) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(work)
}

fn client() -> Result<Client, JsValue> {
    CLIENT.with(|cell| cell.borrow().clone()).ok_or_else(|| to_js_error(&Error::NotConfigured))
}

fn fail(error: Error) -> JsValue {
    to_js_error(&error)
}

/// `configure({ auth, config })`: a new client with the JavaScript adapter `auth` and the config `config`
/// (`cachet.config.json`'s shape; default `window.CACHET_CONFIG`). `auth.type` also becomes
/// `features.auth.type` (and enables auth) in the client's config.
#[wasm_bindgen]
pub fn configure(options: JsValue) -> Result<(), JsValue> {
    let config_value = js_sys::Reflect::get(&options, &"config".into()).unwrap_or(JsValue::UNDEFINED);
    let mut builder = if config_value.is_undefined() || config_value.is_null() {
        page_builder().map_err(fail)?
    } else {
        Client::builder().config_json(&stringify(&config_value)).map_err(fail)?
    };
    let auth = js_sys::Reflect::get(&options, &"auth".into()).unwrap_or(JsValue::UNDEFINED);
    if !auth.is_undefined() && !auth.is_null() {
        let adapter = JsAdapter::from_js(&auth).map_err(fail)?;
        let source = builder.config_source_ref();
        let mut config: Config = builder_config(&builder);
        config.features.auth.enabled = true;
        config.features.auth.kind = cachet_client::AuthAdapter::auth_type(&adapter);
        builder = builder.config(config).config_source(source).adapter(adapter);
    }
    let client = builder.build().map_err(fail)?;
    CLIENT.with(|cell| *cell.borrow_mut() = Some(client));
    Ok(())
}

fn builder_config(builder: &cachet_client::ClientBuilder) -> Config {
    builder.config_ref().cloned().unwrap_or_default()
}

/// `getConfig()` (not in SPEC): `{ source, config }`, the config the page runs on and where it came from
/// (`default`, `given`, `global`, `bundled`, or `service-worker` once the page followed its worker's).
#[wasm_bindgen(js_name = getConfig)]
pub fn get_config() -> js_sys::Promise {
    promise(async move {
        let client = client()?;
        client.ready().await;
        // Through the core's writer (serde's derive's exact text, which the page links anyway to send its
        // config to its worker) and the browser's JSON: no serde serializer of the config in the API.
        let config = js_sys::JSON::parse(&client.config().to_json()).unwrap_or(JsValue::NULL);
        Ok(object(&[("source", JsValue::from_str(client.config_source().name())), ("config", config)]))
    })
}

/// `setAuth(data)`.
#[wasm_bindgen(js_name = setAuth)]
pub fn set_auth(data: JsValue) -> js_sys::Promise {
    promise(async move {
        let auth = cachet_client::AuthData::from_json(to_json(&data)).unwrap_or_default();
        client()?.set_auth(auth).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}

/// `getAuth()`.
#[wasm_bindgen(js_name = getAuth)]
pub fn get_auth() -> js_sys::Promise {
    promise(async move {
        let auth = client()?.get_auth().await.map_err(fail)?;
        Ok(auth_to_js(auth.as_ref()))
    })
}

/// `clearAuth()`.
#[wasm_bindgen(js_name = clearAuth)]
pub fn clear_auth() -> js_sys::Promise {
    promise(async move { client()?.clear_auth().await.map_err(fail).map(|()| JsValue::UNDEFINED) })
}

/// `clearMemoryAuth()`.
#[wasm_bindgen(js_name = clearMemoryAuth)]
pub fn clear_memory_auth() -> js_sys::Promise {
    promise(async move {
        client()?.clear_memory_auth().await;
        Ok(JsValue::UNDEFINED)
    })
}

/// `getAuthState()`.
#[wasm_bindgen(js_name = getAuthState)]
pub fn get_auth_state() -> js_sys::Promise {
    promise(async move {
        let state = client()?.get_auth_state().await;
        Ok(to_js(&state.to_value()))
    })
}

/// `isAuthValid()`.
#[wasm_bindgen(js_name = isAuthValid)]
pub fn is_auth_valid() -> Result<bool, JsValue> {
    Ok(client()?.is_auth_valid())
}

/// `ensureValidAuth()`.
#[wasm_bindgen(js_name = ensureValidAuth)]
pub fn ensure_valid_auth() -> js_sys::Promise {
    promise(async move {
        let auth = client()?.ensure_valid_auth().await.map_err(fail)?;
        Ok(auth_to_js(auth.as_ref()))
    })
}

/// `isAuthUrl(url)`.
#[wasm_bindgen(js_name = isAuthUrl)]
pub fn is_auth_url(url: &str) -> Result<bool, JsValue> {
    Ok(client()?.is_auth_url(url))
}

/// `AUTH_WITH_CREDENTIALS`.
#[wasm_bindgen(js_name = authWithCredentials)]
pub fn auth_with_credentials() -> Result<bool, JsValue> {
    Ok(client()?.auth_with_credentials())
}

/// `fetchWithCache(url, options)`.
#[wasm_bindgen(js_name = fetchWithCache)]
pub fn fetch_with_cache(url: String, options: JsValue) -> js_sys::Promise {
    promise(async move {
        let options = to_json(&options);
        let mut fetch = FetchOptions::new().auth(flag(&options, "auth"));
        fetch.method = options.get("method").and_then(Value::as_str).map(str::to_owned);
        fetch.strategy = strategy(&options).map_err(fail)?;
        fetch.tags = strings(&options, "tags").map_err(fail)?;
        if let Some(headers) = options.get("headers").and_then(Value::as_object) {
            fetch.headers = headers
                .iter()
                .map(|(name, value)| (name.clone(), value.as_str().unwrap_or_default().to_owned()))
                .collect();
        }
        fetch.body = match options.get("body") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone().into_bytes()),
            Some(other) => Some(text_of(other).into_bytes()),
        };
        let result = client()?.fetch_with_cache(&url, fetch).await.map_err(fail)?;
        let response = &result.response;
        // The body parsed by the browser's JSON (its text when it is not JSON).
        let text = response.text();
        let data = js_sys::JSON::parse(&text).unwrap_or_else(|_| JsValue::from_str(&text));
        // Set one by one: a later header of the same name wins.
        let headers = js_sys::Object::new();
        for (name, value) in &response.headers {
            let _ = js_sys::Reflect::set(&headers, &JsValue::from_str(name), &JsValue::from_str(value));
        }
        Ok(object(&[
            ("data", data),
            ("status", JsValue::from(response.status)),
            ("ok", JsValue::from_bool(response.ok())),
            ("fromCache", JsValue::from_bool(result.from_cache)),
            ("stale", JsValue::from_bool(result.stale)),
            ("headers", headers.into()),
        ]))
    })
}

fn gql_options(options: &JsValue, endpoint_index: Option<u32>) -> Result<GqlOptions, JsValue> {
    let options = to_json(options);
    Ok(GqlOptions {
        auth: flag(&options, "auth"),
        tags: strings(&options, "tags").map_err(fail)?,
        invalidate: strings(&options, "invalidate").map_err(fail)?.unwrap_or_default(),
        queue_offline: flag(&options, "queueOffline"),
        strategy: strategy(&options).map_err(fail)?,
        endpoint_index: endpoint_index.map_or(0, |index| index as usize),
        operation_name: options.get("operationName").and_then(Value::as_str).map(str::to_owned),
    })
}

fn variables(value: &JsValue) -> Option<Value> {
    Some(to_json(value)).filter(|variables| !variables.is_null())
}

/// `queryGql(query, variables, options, endpointIndex)`.
#[wasm_bindgen(js_name = queryGql)]
pub fn query_gql(
    query: String,
    variables_value: JsValue,
    options: JsValue,
    endpoint_index: Option<u32>,
) -> js_sys::Promise {
    promise(async move {
        let options = gql_options(&options, endpoint_index)?;
        let result =
            client()?.query_gql_json(&query, variables(&variables_value), options).await.map_err(fail)?;
        Ok(object(&[
            ("data", to_js(&result.data)),
            ("fromCache", JsValue::from_bool(result.from_cache)),
            ("stale", JsValue::from_bool(result.stale)),
        ]))
    })
}

/// `mutateGql(mutation, variables, options, endpointIndex)`.
#[wasm_bindgen(js_name = mutateGql)]
pub fn mutate_gql(
    mutation: String,
    variables_value: JsValue,
    options: JsValue,
    endpoint_index: Option<u32>,
) -> js_sys::Promise {
    promise(async move {
        let options = gql_options(&options, endpoint_index)?;
        let result =
            client()?.mutate_gql_json(&mutation, variables(&variables_value), options).await.map_err(fail)?;
        Ok(object(&[("data", option_to_js(result.data.as_ref())), ("queued", queued(result.queued))]))
    })
}

/// `fetchWithGql(query, variables, options, endpointIndex)`.
#[wasm_bindgen(js_name = fetchWithGql)]
pub fn fetch_with_gql(
    query: String,
    variables_value: JsValue,
    options: JsValue,
    endpoint_index: Option<u32>,
) -> js_sys::Promise {
    promise(async move {
        let options = gql_options(&options, endpoint_index)?;
        let response =
            client()?.fetch_with_gql(&query, variables(&variables_value), &options).await.map_err(fail)?;
        Ok(object(&[
            ("result", to_js(&response.result)),
            ("fromCache", JsValue::from_bool(response.from_cache)),
            ("stale", JsValue::from_bool(response.stale)),
            ("status", JsValue::from(response.status)),
            ("queued", queued(response.queued)),
        ]))
    })
}

/// A mutation's `queued`: the queued entry's id (a JavaScript number, as JSON would give it), or `null`.
fn queued(id: Option<u64>) -> JsValue {
    id.map_or(JsValue::NULL, |id| JsValue::from_f64(id as f64))
}

/// `invalidateByTag(tags)`: one tag or an array of tags.
#[wasm_bindgen(js_name = invalidateByTag)]
pub fn invalidate_by_tag(tags: JsValue) -> js_sys::Promise {
    promise(async move {
        let tags: Vec<String> = match to_json(&tags) {
            Value::String(tag) => vec![tag],
            value => {
                let mut options = serde_json::Map::new();
                options.insert("tags".to_owned(), value);
                let options = Value::Object(options);
                strings(&options, "tags").map_err(fail)?.unwrap_or_default()
            }
        };
        let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
        client()?.invalidate_by_tag(&tags).await.map_err(fail).map(|()| JsValue::UNDEFINED)
    })
}
