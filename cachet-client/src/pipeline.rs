//! One request, from the client's side: where it is answered, with which auth, and what is cached.
//!
//! Every request is first built with cachet's request headers, exactly as a plain HTTP client would send
//! them to the Service Worker (docs/graphql.md's header table): `X-SW-Strategy`, `X-Cachet-Tags`,
//! `X-Cachet-Invalidate`, `X-Cachet-Queue-Offline` and `X-Cachet-Auth: 1`. The core classifies it
//! ([`cachet_core::classify::classify_request`], [`cachet_core::partition::partition_for`]) with the same
//! config the Service Worker reads. Then:
//!
//! | The page is | The request is | Answered by |
//! |---|---|---|
//! | controlled by the Service Worker | one the SW routes (same origin; a GET outside the auth routes, or a POST to a GraphQL endpoint) | the SW, headers as they are; it caches, invalidates, refreshes and retries; `from_cache` is `X-Cachet-Source: cache` |
//! | controlled | any other | the network, with the page's refresh-and-retry |
//! | not controlled (first visit, hard reload) | any | the page: cachet's headers removed; a GET or a query is a core [`Job`] answered by the core's runner over the `MemoryCache` (`crate::memory_cache`) (`crate::page_engine`), the same runner the worker runs; refresh-and-retry in the page |
//!
//! Refresh-and-retry in the page (urql's `authExchange` contract, decided by
//! [`cachet_core::machines::refresh`]): a request sent with `auth: true` whose answer is an auth failure
//! (`features.auth.failure`) waits for the one refresh in flight, is sent again once with the new
//! headers, and its second answer is final.

use std::rc::Rc;

use cachet_core::classify::{classify_request, GraphqlAction, GraphqlCall, RequestClass};
use cachet_core::engine::{Job, Mutation};
use cachet_core::handover::HandedRequest;
use cachet_core::partition::{partition_for, Partition};
use cachet_core::protocol::headers::{is_cachet_header, STRATEGY_HEADER};
use cachet_core::tags::TAGS_HEADER;

use crate::client::Inner;
use crate::dedup::Answer;
use crate::http::HttpRequest;
use crate::Error;

pub use cachet_core::protocol::headers::SOURCE_HEADER;

/// What the core decided for one request.
struct Route {
    via_service_worker: bool,
    class: RequestClass,
    partition: Partition,
    absolute_url: String,
    origin: String,
}

impl Inner {
    /// Answers `request` (built with cachet's headers); concurrent identical reads share one answer.
    pub(crate) async fn execute(self: &Rc<Self>, request: HttpRequest, auth: bool) -> Result<Answer, Error> {
        let route = self.route(&request);
        let Some(key) = dedup_key(&route, &request, self.transport.cache.borrow().generation()) else {
            return self.clone().execute_once(request, auth, route).await;
        };
        let inner = self.clone();
        self.transport
            .inflight
            .run(key, move || Box::pin(async move { inner.execute_once(request, auth, route).await }))
            .await
    }

    fn route(&self, request: &HttpRequest) -> Route {
        let location = web_sys::window().and_then(|window| window.location().href().ok()).unwrap_or_default();
        let parsed = web_sys::Url::new_with_base(&request.url, &location).ok();
        let origin = web_sys::Url::new(&location).map(|url| url.origin()).unwrap_or_default();
        let same_origin = parsed.as_ref().is_some_and(|url| url.origin() == origin);
        let path = parsed.as_ref().map(|url| url.pathname()).unwrap_or_default();
        let path_and_query =
            parsed.as_ref().map(|url| format!("{}{}", url.pathname(), url.search())).unwrap_or_default();
        let absolute_url = parsed.as_ref().map(web_sys::Url::href).unwrap_or_else(|| request.url.clone());
        let lookup = |name: &str| request.header(name).map(str::to_owned);
        let class = if same_origin {
            classify_request(
                &request.method,
                &path_and_query,
                &lookup,
                request.body.as_deref(),
                &self.config(),
            )
            .unwrap_or_else(|error| {
                web_sys::console::warn_1(&format!("cachet: {}: {error}; sent as it is", request.url).into());
                RequestClass::Other
            })
        } else {
            RequestClass::Other
        };
        let partition = partition_for(&lookup, self.session.identity().as_ref());
        let sw_routes_it = same_origin && self.config().sw_routes().routes(&request.method, &path);
        Route {
            via_service_worker: sw_routes_it && self.is_controlled(),
            class,
            partition,
            absolute_url,
            origin,
        }
    }

    async fn execute_once(
        self: Rc<Self>,
        request: HttpRequest,
        auth: bool,
        route: Route,
    ) -> Result<Answer, Error> {
        if route.via_service_worker {
            // The worker refreshes and retries; the page only adds the adapter's headers.
            let response = self.transport.http.send(&self.with_adapter_headers(&request, auth)).await?;
            let from_cache = response.header(SOURCE_HEADER) == Some("cache");
            return Ok(Answer { response, from_cache });
        }
        let outgoing = without_cachet_headers(&request);
        let job = Job::for_request(
            &route.class,
            &route.partition,
            &route.origin,
            &route.absolute_url,
            &self.config(),
        );
        if let Some(job) = job {
            let handed = handed_request(&request, &route.absolute_url);
            let (response, from_cache) = self.run_job(job, outgoing, auth, handed).await?;
            return Ok(Answer { response, from_cache });
        }
        // The core's mutation job; no queue here (the worker keeps it), so no `Idempotency-Key` either.
        let lookup = |name: &str| request.header(name).map(str::to_owned);
        let Some(mutation) = Mutation::for_request(&route.class, &lookup, false, 0) else {
            return Ok(Answer { response: self.pass(outgoing, auth).await?, from_cache: false });
        };
        let mutated = self.mutate(&mutation, outgoing, auth).await?;
        if !mutated.invalidate.is_empty() {
            // The answer reaches the caller even when the Service Worker's part fails.
            if let Err(error) = self.invalidate_everywhere(&mutated.invalidate).await {
                web_sys::console::warn_1(
                    &format!("cachet: invalidating {}: {error}", mutated.invalidate.join(", ")).into(),
                );
            }
        }
        Ok(Answer { response: mutated.served.response, from_cache: false })
    }

    /// `request` with the adapter's headers and, for cookie-like auth, credentials (`auth` only).
    pub(crate) fn with_adapter_headers(&self, request: &HttpRequest, auth: bool) -> HttpRequest {
        let mut request = request.clone();
        if auth {
            for (name, value) in self.session.adapter_headers() {
                request.set_header(&name, &value);
            }
        }
        self.session.include_credentials(&mut request, auth);
        request
    }
}

/// Identical reads asked between the same two invalidations (`generation`) share a key; anything else
/// (mutations, other methods, uncached) has none.
fn dedup_key(route: &Route, request: &HttpRequest, generation: u64) -> Option<String> {
    let segment = route.partition.segment().unwrap_or("uncached");
    let strategy = request.header(STRATEGY_HEADER).unwrap_or("default");
    match &route.class {
        RequestClass::Get { .. } => Some(format!(
            "get|{generation}|{segment}|{strategy}|{}|{}",
            request.header(TAGS_HEADER).unwrap_or(""),
            route.absolute_url
        )),
        RequestClass::Graphql(GraphqlCall {
            action: GraphqlAction::Query { cache_key, tags, .. },
            endpoint_index,
            ..
        }) => Some(format!(
            "gql|{generation}|{segment}|{strategy}|{}|{endpoint_index}|{cache_key}",
            tags.join(",")
        )),
        _ => None,
    }
}

/// `request` (cachet's headers on, sent to `absolute_url`) as a hand-over records it
/// ([`cachet_core::handover`]): without any `Authorization` (the store adds the fingerprint of the one
/// sent); `None` for a body that is not UTF-8 text.
fn handed_request(request: &HttpRequest, absolute_url: &str) -> Option<HandedRequest> {
    let body = match &request.body {
        Some(body) => Some(String::from_utf8(body.clone()).ok()?),
        None => None,
    };
    let headers = request
        .headers
        .iter()
        .filter(|(name, _)| !name.eq_ignore_ascii_case("authorization"))
        .cloned()
        .collect();
    Some(HandedRequest {
        method: request.method.to_ascii_uppercase(),
        url: absolute_url.to_owned(),
        headers,
        body,
        authorization: None,
    })
}

/// `request` without `X-SW-Strategy` and `X-Cachet-*`: what the network gets when no Service Worker
/// strips them.
fn without_cachet_headers(request: &HttpRequest) -> HttpRequest {
    let mut outgoing = request.clone();
    outgoing.headers.retain(|(name, _)| !is_cachet_header(&name.to_ascii_lowercase()));
    outgoing
}
