//! Request and response plumbing shared by the engine edge, the store and the GraphQL handler.

use cachet_core::machines::queue::{
    not_queued_body, queued_body, NotQueued, NOT_QUEUED_HEADER, NOT_QUEUED_STATUS, QUEUED_HEADER,
};
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, RequestInit, Response, ResponseInit};

use crate::Error;

use cachet_core::protocol::headers::is_cachet_header;
pub use cachet_core::protocol::headers::SOURCE_HEADER;

/// Every header of `headers` as `(lowercase name, value)`.
pub(crate) fn header_pairs(headers: &Headers) -> Vec<(String, String)> {
    js_sys::try_iter(headers)
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .map(|pair| js_sys::Array::from(&pair))
        .map(|pair| {
            (pair.get(0).as_string().unwrap_or_default(), pair.get(1).as_string().unwrap_or_default())
        })
        .collect()
}

/// `request` without `X-SW-Strategy` and `X-Cachet-*` headers, with the headers `set` (the plugins'
/// `request_will_fetch`), with `body` when given (so that it can be sent again). The request itself when there is nothing to change: navigation requests, which cannot
/// be re-constructed, never carry cachet's headers.
pub fn without_cachet_headers(
    request: &Request,
    body: Option<&[u8]>,
    set: &[(String, String)],
) -> Result<Request, Error> {
    let pairs = header_pairs(&request.headers());
    if body.is_none() && set.is_empty() && !pairs.iter().any(|(name, _)| is_cachet_header(name)) {
        return Ok(Clone::clone(request));
    }
    let headers = headers_without_cachet(&pairs, set)?;
    let init = RequestInit::new();
    init.set_headers(&headers);
    if let Some(body) = body {
        init.set_body(&Uint8Array::from(body));
    }
    Request::new_with_request_and_init(request, &init).map_err(|e| Error::js("new Request", e))
}

/// The headers a send of `request` carries: its own but cachet's (`X-SW-Strategy`, `X-Cachet-*`), then
/// the plugins' `set` (a persisted query's GET is built with them too).
#[cfg(feature = "persisted-queries")]
pub(crate) fn sent_headers(request: &Request, set: &[(String, String)]) -> Result<Headers, Error> {
    headers_without_cachet(&header_pairs(&request.headers()), set)
}

fn headers_without_cachet(pairs: &[(String, String)], set: &[(String, String)]) -> Result<Headers, Error> {
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in pairs.iter().filter(|(name, _)| !is_cachet_header(name)) {
        headers.append(name, value).map_err(|e| Error::js("Headers.append", e))?;
    }
    for (name, value) in set {
        headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    }
    Ok(headers)
}

/// `request` (whose body, already read, is `body`) with the header `name: value` added, or `None` when
/// it has that header already. A request's headers cannot be changed in place, so this is a new request.
pub(crate) fn with_header(
    request: &Request,
    body: &[u8],
    name: &str,
    value: &str,
) -> Result<Option<Request>, Error> {
    if request.headers().has(name).unwrap_or(false) {
        return Ok(None);
    }
    let headers = Headers::new_with_headers(&request.headers()).map_err(|e| Error::js("new Headers", e))?;
    headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    let init = RequestInit::new();
    init.set_headers(&headers);
    init.set_body(&Uint8Array::from(body));
    Request::new_with_request_and_init(request, &init).map(Some).map_err(|e| Error::js("new Request", e))
}

/// `request` with `body` (its own, already read) as its body: a request whose body was read can be sent
/// only as such a copy.
pub(crate) fn with_body(request: &Request, body: &[u8]) -> Result<Request, Error> {
    let init = RequestInit::new();
    init.set_body(&Uint8Array::from(body));
    Request::new_with_request_and_init(request, &init).map_err(|e| Error::js("new Request", e))
}

/// Sends `request` to the network as it is; a rejected fetch is [`Error::Network`].
pub async fn fetch_raw(request: &Request) -> Result<Response, Error> {
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    JsFuture::from(global.fetch_with_request(request))
        .await
        .map(JsCast::unchecked_into)
        .map_err(|e| Error::Network { url: request.url(), message: crate::error::js_name_and_message(&e).1 })
}

/// Sends `request` and returns the answer read into bytes, and the answer marked
/// `X-Cachet-Source: network`.
pub async fn fetch_network(request: &Request) -> Result<(Response, Vec<u8>, Response), Error> {
    let response = fetch_raw(request).await?;
    let (bytes, answer) = read_network_answer(&response).await?;
    Ok((response, bytes, answer))
}

/// The network's `response` read into bytes, and the answer marked `X-Cachet-Source: network`.
pub async fn read_network_answer(response: &Response) -> Result<(Vec<u8>, Response), Error> {
    let bytes = body_bytes(response).await?;
    let answer = rebuild(response, &bytes, &[(SOURCE_HEADER, "network")])?;
    Ok((bytes, answer))
}

/// A new response with `response`'s status and headers, `bytes` as body, and `extra` headers set.
pub fn rebuild(response: &Response, bytes: &[u8], extra: &[(&str, &str)]) -> Result<Response, Error> {
    let body = Uint8Array::from(bytes);
    Response::new_with_opt_buffer_source_and_init(Some(&body), &init_like(response, extra)?)
        .map_err(|e| Error::js("new Response", e))
}

/// `response` with `extra` headers set, its body passed on as the same stream (never read): a response's
/// headers cannot be changed in place, so it is wrapped in a new one.
pub fn remark(response: &Response, extra: &[(&str, &str)]) -> Result<Response, Error> {
    Response::new_with_opt_readable_stream_and_init(response.body().as_ref(), &init_like(response, extra)?)
        .map_err(|e| Error::js("new Response", e))
}

/// The status and headers of `response`, with `extra` headers set.
fn init_like(response: &Response, extra: &[(&str, &str)]) -> Result<ResponseInit, Error> {
    let headers = Headers::new_with_headers(&response.headers()).map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in extra {
        headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    }
    let init = ResponseInit::new();
    init.set_status(response.status());
    init.set_status_text(&response.status_text());
    init.set_headers(&headers);
    Ok(init)
}

/// The whole body of `response`.
pub async fn body_bytes(response: &Response) -> Result<Vec<u8>, Error> {
    let promise = response.array_buffer().map_err(|e| Error::js("Response.arrayBuffer", e))?;
    let buffer = await_js("Response.arrayBuffer", promise).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// The whole body of `request` (consumes it: what is sent afterwards is rebuilt with these bytes,
/// [`with_body`], [`without_cachet_headers`]).
pub async fn request_bytes(request: &Request) -> Result<Vec<u8>, Error> {
    let promise = request.array_buffer().map_err(|e| Error::js("Request.arrayBuffer", e))?;
    let buffer = await_js("Request.arrayBuffer", promise).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// A promise that resolves after `delay_ms` (`setTimeout`, which a worker always has; at most a day,
/// beyond any worker's life), in a task of its own: awaited ([`timer`]) or raced against a reply.
pub(crate) fn timeout(delay_ms: u64) -> Promise {
    let delay = delay_ms.min(86_400_000) as i32;
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    Promise::new(&mut |resolve, _reject| {
        // A timer that cannot be set (never in a worker) leaves the promise pending.
        let _ = global.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, delay);
    })
}

/// Resolves after `delay_ms` ([`timeout`]).
pub(crate) async fn timer(delay_ms: u64) -> Result<(), Error> {
    await_js("setTimeout", timeout(delay_ms)).await.map(|_| ())
}

/// Runs `work` in `background` (`waitUntil`) once the answer an event's handler returned is in
/// `respondWith`'s hands, a task after this one: the background work of an answer (marking its entry
/// used, the queue's start replay, the sweep, the store of a network answer, a revalidation) begins
/// after it. Spawned work otherwise runs its first steps, and the first compile of its code, in the
/// microtasks before the answer's (BENCHMARKS.md, session 19: 2.4 ms of a cold hit).
/// One instance of its state machine for every caller (`work` boxed).
pub(crate) fn after_answer(
    background: &dyn Fn(Promise),
    work: std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>>,
) {
    background(wasm_bindgen_futures::future_to_promise(async move {
        // A timer that cannot be set (never in a worker) only makes the work begin at once.
        let _ = timer(0).await;
        work.await
    }));
}

/// Awaits a browser promise, turning a rejection into a typed error.
pub async fn await_js(operation: &'static str, promise: Promise) -> Result<JsValue, Error> {
    JsFuture::from(promise).await.map_err(|e| Error::js(operation, e))
}

/// The answer to a queued mutation: 202, `X-Cachet-Queued: <id>`, `X-Cachet-Source: queue`.
pub(crate) fn queued_answer(id: u64) -> Result<Response, Error> {
    queue_answer(202, (QUEUED_HEADER, &id.to_string()), &queued_body(id))
}

/// The answer to a `queueOffline` mutation that was neither sent nor queued: 507,
/// `X-Cachet-Not-Queued: <reason>`, `X-Cachet-Source: queue`, a GraphQL error naming the reason.
pub(crate) fn not_queued_answer(reason: NotQueued, detail: &str) -> Result<Response, Error> {
    let body = not_queued_body(reason, detail);
    queue_answer(NOT_QUEUED_STATUS, (NOT_QUEUED_HEADER, reason.as_str()), &body)
}

fn queue_answer(status: u16, (name, value): (&str, &str), body: &str) -> Result<Response, Error> {
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in [("content-type", "application/json"), (name, value), (SOURCE_HEADER, "queue")] {
        headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    }
    let init = ResponseInit::new();
    init.set_status(status);
    init.set_headers(&headers);
    Response::new_with_opt_str_and_init(Some(body), &init).map_err(|e| Error::js("new Response", e))
}
