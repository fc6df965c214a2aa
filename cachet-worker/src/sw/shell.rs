//! The app shell (issue 36): the build's own files, which the shim keeps at install in one cache per
//! build (`cachet-shell-<stamp>`, [`SHELL_CACHE_PREFIX`]). The engine answers a GET from it only when it
//! could not answer otherwise (the network failed and its own cache had nothing, or declined the file
//! for a bound such as `cache.maxBodyBytes`): online, every request is the engine's, with its strategy,
//! partitions and marks, exactly as without a shell. A navigation the shell does not hold falls back to
//! the folder's `index.html`, then to the scope's (a single-page app's routes are all its `index.html`).
//!
//! Not served by the browser's static routes (`source: { cacheName }`): a static route answers from the
//! cache first, online too, which is another freshness rule than the app's strategy (network-first by
//! default). The shell stays the engine's fallback.

use cachet_core::protocol::storage::SHELL_CACHE_PREFIX;
use wasm_bindgen::JsCast;
use web_sys::Response;

use super::http::await_js;
use super::store::cache_storage;

/// The shell's answer to a GET of `url` (`navigation`: a page load), if this build's shell holds one.
pub(crate) async fn answer(url: &str, navigation: bool) -> Option<Response> {
    let cache = format!("{SHELL_CACHE_PREFIX}{}", super::build_stamp());
    let mut candidates = vec![url.to_owned()];
    if navigation {
        let path = url.split(['?', '#']).next().unwrap_or(url);
        if let Some((folder, _)) = path.rsplit_once('/') {
            candidates.push(format!("{folder}/index.html"));
        }
        if let Some(scope) = scope() {
            candidates.push(format!("{scope}index.html"));
        }
    }
    let storage = cache_storage().ok()?;
    for candidate in candidates {
        let options = web_sys::CacheQueryOptions::new();
        // `caches.match` naming the cache opens nothing, and creates no cache when there is no shell.
        let _ = js_sys::Reflect::set(&options, &"cacheName".into(), &cache.as_str().into());
        let found = await_js("caches.match", storage.match_with_str_and_options(&candidate, &options)).await;
        if let Some(response) = found.ok().and_then(|found| found.dyn_into::<Response>().ok()) {
            return Some(response);
        }
    }
    None
}

/// The worker's scope (`registration.scope`), ending with `/`.
fn scope() -> Option<String> {
    let global: web_sys::ServiceWorkerGlobalScope = js_sys::global().dyn_into().ok()?;
    Some(global.registration().scope())
}
