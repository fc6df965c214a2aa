//! The engine's `fetch` entry point: classify with the core, then answer.

use cachet_core::classify::{classify_request, RequestClass};
use cachet_core::config::Config;
use cachet_core::partition::{is_marked, partition_for, Partition};
use cachet_core::strategy::Strategy;
use js_sys::Promise;
use web_sys::{FetchEvent, Request, Response};

use super::auth_retry::AuthRetry;
use super::graphql;
use super::http::{fetch_raw, request_bytes};
use super::strategies::{open_cache, respond, Target};
use super::{identity, tag_index, RUNTIME_CACHE};
use crate::Error;

/// Answers a `fetch` event the shim routed to the engine, as the core classifies it. A request the core
/// says is not cachet's business (an auth route, a POST that is not GraphQL), or that carries something
/// wrong (an unknown `X-SW-Strategy`, a malformed GraphQL document, bad tag headers), goes to the network
/// untouched, so the server answers it as it would without cachet.
pub(crate) async fn handle_fetch(event: &FetchEvent, config: &Config) -> Result<Response, Error> {
    let event_for_background = event.clone();
    let background = move |promise: Promise| {
        // waitUntil only throws once the event has finished, which cannot happen while we respond.
        let _ = event_for_background.wait_until(&promise);
    };
    handle_request(&event.request(), &event.client_id().unwrap_or_default(), config, &background).await
}

/// [`handle_fetch`] for a request of the worker's own (a push's re-fetch, [`super::push`]), or of a page
/// (`client_id` names it, empty for none): the same classification, partition and strategy.
pub(crate) async fn handle_request(
    request: &Request,
    client_id: &str,
    config: &Config,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    let url = request.url();
    let path = web_sys::Url::new(&url).map(|parsed| parsed.pathname()).unwrap_or_default();
    let method = request.method();
    let body = if method == "POST" {
        // Read a copy: the original keeps its body for a pass-through.
        let copy = request.clone().map_err(|e| crate::Error::js("Request.clone", e))?;
        Some(request_bytes(&copy).await?)
    } else {
        None
    };
    let headers = request.headers();
    let lookup = |name: &str| headers.get(name).ok().flatten();
    // Decided here, from what the worker sees (the request's own `Authorization`, the identity it
    // keeps), never from a page-side marker alone: see `cachet_core::partition`.
    let partition = match identity::current().await {
        Ok(identity) => partition_for(&lookup, identity.as_ref()),
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: {error}; {url} is not cached").into());
            Partition::Uncached
        }
    };
    let auth = AuthRetry::for_request(config, is_marked(&lookup), client_id.to_owned());
    match classify_request(&method, &path, &lookup, body.as_deref(), config) {
        Ok(RequestClass::Get { strategy }) => {
            let mut target = Target::get(request, config.cache, tag_index::shared().await?)?;
            target.auth = auth;
            let strategy = match &partition {
                Partition::Shared => strategy,
                Partition::User(segment) => {
                    target.cache_url = partitioned_url(&url, segment);
                    strategy
                }
                Partition::Uncached => Strategy::NetworkOnly,
            };
            respond(&open_cache(RUNTIME_CACHE).await?, &target, strategy, background).await
        }
        Ok(RequestClass::Graphql(call)) => {
            let index = tag_index::shared().await?;
            let body = body.as_deref().unwrap_or_default();
            graphql::handle(request, body, call, &partition, config, index, auth, background).await
        }
        Ok(RequestClass::AuthRoute | RequestClass::Other) => fetch_raw(request).await,
        Err(error) => {
            web_sys::console::warn_1(
                &format!("cachet: {url}: {error}; sent to the network untouched").into(),
            );
            fetch_raw(request).await
        }
    }
}

/// The cache URL of a GET in a user's partition: `<origin>/__cachet/get/<partition>/<encoded URL>`.
fn partitioned_url(url: &str, segment: &str) -> String {
    let origin = web_sys::Url::new(url).map(|parsed| parsed.origin()).unwrap_or_default();
    format!("{origin}/__cachet/get/{segment}/{}", String::from(js_sys::encode_uri_component(url)))
}
