//! The caching strategies, chosen per request by the `X-SW-Strategy` header.
//!
//! Every response the engine returns carries `X-Cachet-Source: cache` or `X-Cachet-Source: network`, so
//! any client (not only cachet's) can tell whether it was served from the cache.
//!
//! The `X-SW-Strategy` header is a message to the Service Worker, not to the server: the engine strips it
//! (and every other `X-Cachet-*` request header) before a request goes to the network. Without a
//! controlling Service Worker the header does reach the server, which must ignore it.

use cachet_core::classify::{classify_request, RequestClass};
use cachet_core::config::Config;
use cachet_core::protocol::SwEvent;
use cachet_core::strategy::{Strategy, STRATEGY_HEADER};
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, FetchEvent, Headers, Request, RequestInit, Response, ResponseInit};

use super::{broadcast, RUNTIME_CACHE};
use crate::Error;

/// The response header that tells where a response came from: `cache` or `network`.
pub const SOURCE_HEADER: &str = "x-cachet-source";
/// The header recording when a stored response was fetched (Unix milliseconds).
const STORED_AT_HEADER: &str = "x-cachet-stored-at";

/// Answers a `fetch` event the shim routed to the engine, as the core classifies it. A request the core
/// says is not cachet's business (an auth route), or that carries something wrong (an unknown
/// `X-SW-Strategy`), goes to the network untouched, so the server answers it as it would without cachet.
pub(crate) async fn handle_fetch(event: &FetchEvent, config: &Config) -> Result<Response, Error> {
    let request = event.request();
    let url = request.url();
    let path = web_sys::Url::new(&url).map(|parsed| parsed.pathname()).unwrap_or_default();
    let headers = request.headers();
    let lookup = |name: &str| headers.get(name).ok().flatten();
    let strategy = match classify_request(&request.method(), &path, &lookup, None, config) {
        Ok(RequestClass::Get { strategy }) => strategy,
        Ok(_) => return pass_through(&request).await,
        Err(error) => {
            web_sys::console::warn_1(
                &format!("cachet: {url}: {error}; sent to the network untouched").into(),
            );
            return pass_through(&request).await;
        }
    };
    let cache = open_cache(RUNTIME_CACHE).await?;
    let event_for_background = event.clone();
    respond(&cache, &request, strategy, &move |promise: Promise| {
        // waitUntil only throws once the event has finished, which cannot happen while we respond.
        let _ = event_for_background.wait_until(&promise);
    })
    .await
}

async fn pass_through(request: &Request) -> Result<Response, Error> {
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    JsFuture::from(global.fetch_with_request(request))
        .await
        .map(JsCast::unchecked_into)
        .map_err(|e| Error::Network { url: request.url(), message: crate::error::js_name_and_message(&e).1 })
}

/// Answers `request` from `cache` and the network with `strategy`. Background work (the
/// stale-while-revalidate re-fetch) is handed to `background`, which should keep the worker alive until
/// it settles (`FetchEvent.waitUntil`).
pub async fn respond(
    cache: &Cache,
    request: &Request,
    strategy: Strategy,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    let url = request.url();
    match strategy {
        Strategy::NetworkOnly => {
            let (_, response) = fetch_and_maybe_store(None, request).await?;
            Ok(response)
        }
        Strategy::CacheOnly => match cached(cache, &url).await? {
            Some(hit) => Ok(hit),
            None => Err(Error::NotCached { url }),
        },
        Strategy::CacheFirst => match cached(cache, &url).await? {
            Some(hit) => Ok(hit),
            None => Ok(fetch_and_maybe_store(Some(cache), request).await?.1),
        },
        Strategy::NetworkFirst => match fetch_and_maybe_store(Some(cache), request).await {
            Ok((_, response)) => Ok(response),
            Err(network_error @ Error::Network { .. }) => cached(cache, &url).await?.ok_or(network_error),
            Err(other) => Err(other),
        },
        Strategy::StaleWhileRevalidate => {
            let Some(hit) = cached(cache, &url).await? else {
                return Ok(fetch_and_maybe_store(Some(cache), request).await?.1);
            };
            let cache = cache.clone();
            // `Request::clone` is the JS method (which copies the body); we want another handle.
            let request = Clone::clone(request);
            background(wasm_bindgen_futures::future_to_promise(async move {
                revalidate(&cache, &request).await.map_err(JsValue::from)?;
                Ok(JsValue::UNDEFINED)
            }));
            Ok(hit)
        }
    }
}

/// Re-fetches `request`, stores the fresh copy and broadcasts `cache-updated` when its body changed.
async fn revalidate(cache: &Cache, request: &Request) -> Result<(), Error> {
    let url = request.url();
    let before = match cache_match(cache, &url).await? {
        Some(stored) => Some(body_bytes(&stored).await?),
        None => None,
    };
    // An offline background re-fetch is not an error worth reporting: the stale copy stays.
    let Ok((Some(after), _)) = fetch_and_maybe_store(Some(cache), request).await else {
        return Ok(());
    };
    if before.as_deref() != Some(after.as_slice()) {
        broadcast::broadcast(&SwEvent::CacheUpdated { url })?;
    }
    Ok(())
}

/// Opens (creating if needed) a cache of the worker's `CacheStorage`.
pub async fn open_cache(name: &str) -> Result<Cache, Error> {
    let storage = js_sys::Reflect::get(&js_sys::global(), &"caches".into())
        .ok()
        .and_then(|v| v.dyn_into::<web_sys::CacheStorage>().ok())
        .ok_or(Error::Context("CacheStorage is not available here"))?;
    let cache = await_js("caches.open", storage.open(name)).await?;
    Ok(cache.unchecked_into())
}

/// The cached response for `url`, marked `X-Cachet-Source: cache`.
async fn cached(cache: &Cache, url: &str) -> Result<Option<Response>, Error> {
    match cache_match(cache, url).await? {
        Some(stored) => {
            let bytes = body_bytes(&stored).await?;
            Ok(Some(rebuild(&stored, &bytes, &[(SOURCE_HEADER, "cache")])?))
        }
        None => Ok(None),
    }
}

async fn cache_match(cache: &Cache, url: &str) -> Result<Option<Response>, Error> {
    let found = await_js("cache.match", cache.match_with_str(url)).await?;
    Ok(found.dyn_into::<Response>().ok())
}

/// Fetches `request` without cachet's own headers. When `store_in` is given and the answer is a 2xx,
/// stores a copy and returns its bytes too. The returned response is marked `X-Cachet-Source: network`.
async fn fetch_and_maybe_store(
    store_in: Option<&Cache>,
    request: &Request,
) -> Result<(Option<Vec<u8>>, Response), Error> {
    let url = request.url();
    let outgoing = without_cachet_headers(request)?;
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let response: Response = JsFuture::from(global.fetch_with_request(&outgoing))
        .await
        .map_err(|e| {
            let (_, message) = crate::error::js_name_and_message(&e);
            Error::Network { url: url.clone(), message }
        })?
        .unchecked_into();
    let bytes = body_bytes(&response).await?;
    let answer = rebuild(&response, &bytes, &[(SOURCE_HEADER, "network")])?;
    let Some(cache) = store_in.filter(|_| response.ok()) else {
        return Ok((None, answer));
    };
    let now = js_sys::Date::now().to_string();
    let stored = rebuild(&response, &bytes, &[(STORED_AT_HEADER, &now)])?;
    await_js("cache.put", cache.put_with_str(&url, &stored)).await?;
    Ok((Some(bytes), answer))
}

/// `request` without `X-SW-Strategy` and `X-Cachet-*` headers: the request itself when it has none
/// (navigation requests, which cannot be re-constructed with new headers, never have them).
fn without_cachet_headers(request: &Request) -> Result<Request, Error> {
    let is_ours = |name: &str| name == STRATEGY_HEADER || name.starts_with("x-cachet-");
    let names: Vec<String> = js_sys::try_iter(&request.headers())
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().and_then(|pair| js_sys::Array::from(&pair).get(0).as_string()))
        .collect();
    if !names.iter().any(|name| is_ours(name)) {
        return Ok(Clone::clone(request));
    }
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    for entry in js_sys::try_iter(&request.headers()).ok().flatten().into_iter().flatten() {
        let Ok(pair) = entry.map(|value| js_sys::Array::from(&value)) else {
            continue;
        };
        let name = pair.get(0).as_string().unwrap_or_default();
        if is_ours(&name) {
            continue;
        }
        let value = pair.get(1).as_string().unwrap_or_default();
        headers.append(&name, &value).map_err(|e| Error::js("Headers.append", e))?;
    }
    let init = RequestInit::new();
    init.set_headers(&headers);
    Request::new_with_request_and_init(request, &init).map_err(|e| Error::js("new Request", e))
}

/// A new response with `response`'s status and headers, `bytes` as body, and `extra` headers set.
fn rebuild(response: &Response, bytes: &[u8], extra: &[(&str, &str)]) -> Result<Response, Error> {
    let headers = Headers::new_with_headers(&response.headers()).map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in extra {
        headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    }
    let init = ResponseInit::new();
    init.set_status(response.status());
    init.set_status_text(&response.status_text());
    init.set_headers(&headers);
    let body = Uint8Array::from(bytes);
    Response::new_with_opt_buffer_source_and_init(Some(&body), &init)
        .map_err(|e| Error::js("new Response", e))
}

async fn body_bytes(response: &Response) -> Result<Vec<u8>, Error> {
    let promise = response.array_buffer().map_err(|e| Error::js("Response.arrayBuffer", e))?;
    let buffer = await_js("Response.arrayBuffer", promise).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

async fn await_js(operation: &'static str, promise: Promise) -> Result<JsValue, Error> {
    JsFuture::from(promise).await.map_err(|e| Error::js(operation, e))
}
