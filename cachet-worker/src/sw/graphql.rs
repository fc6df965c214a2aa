//! GraphQL over the Service Worker: queries cached as whole documents, mutations invalidating tags.
//!
//! A query is stored in the `cachet-graphql-v1` cache under a synthetic GET URL built from its key
//! (`/__cachet/gql/<partition>/<sha256>`, see `cachet_core::cache_key`), because Cache Storage keys are
//! GET requests. The partition is the user's for requests marked `X-Cachet-Auth: 1`
//! (`cachet_core::partition`), so one user's entries never answer another's requests. Its tags (auto-tags from the operation name, or the `X-Cachet-Tags` option, plus the
//! server's `X-SW-Cache-Tags`) are recorded in the [`TagIndex`]. Responses that are not 2xx, carry GraphQL
//! `errors`, are not JSON, or exceed `cache.maxBodyBytes` are not stored.
//!
//! A mutation always goes to the network. When the server answers 2xx, every entry carrying one of its
//! invalidation tags is removed (the whole entry: there is no per-field patching) and
//! `cache-invalidated {tags}` is broadcast to every page. The invalidation runs on any 2xx answer, GraphQL
//! `errors` or not: a mutation that partly failed may still have changed data, and a needless re-fetch
//! costs less than stale data. A mutation marked `X-Cachet-Queue-Offline: 1` is queued instead when the
//! network fails ([`super::queue`]).

use std::rc::Rc;

use cachet_core::cache_key::{graphql_cache_url, ANONYMOUS_PARTITION};
use cachet_core::classify::{GraphqlAction, GraphqlCall};
use cachet_core::config::Config;
use cachet_core::partition::Partition;
use cachet_core::protocol::SwEvent;
use cachet_core::strategy::Strategy;
use js_sys::Promise;
use web_sys::{Cache, Request, Response};

use super::auth_retry::{send, AuthRetry};
use super::broadcast::broadcast;
use super::http::{fetch_raw, without_cachet_headers};
use super::queue;
use super::strategies::{forget, open_cache, respond, Target};
use super::tag_index::TagIndex;
use crate::Error;

/// The Cache Storage cache holding GraphQL documents.
pub const GRAPHQL_CACHE: &str = "cachet-graphql-v1";

/// Answers a GraphQL request the core classified as `call`; `body` is the request's body.
#[allow(clippy::too_many_arguments)] // each is one fact about the request, passed from the router as is
pub(crate) async fn handle(
    request: &Request,
    body: &[u8],
    call: GraphqlCall,
    partition: &Partition,
    config: &Config,
    index: Rc<TagIndex>,
    auth: Option<AuthRetry>,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    match call.action {
        GraphqlAction::Query { cache_key, tags, strategy } => {
            let origin = web_sys::Url::new(&request.url()).map(|url| url.origin()).unwrap_or_default();
            // A request marked as authenticated with no user known is never cached.
            let (segment, strategy) = match partition.segment() {
                Some(segment) => (segment, strategy),
                None => (ANONYMOUS_PARTITION, Strategy::NetworkOnly),
            };
            let target = Target {
                request: Clone::clone(request),
                body: Some(Rc::from(body)),
                cache_url: format!("{origin}{}", graphql_cache_url(segment, &cache_key)),
                cache_name: GRAPHQL_CACHE,
                bounds: config.cache,
                index,
                tags: Some(tags),
                auth,
            };
            let cache = open_cache(GRAPHQL_CACHE).await?;
            respond(&cache, &target, strategy, background).await
        }
        GraphqlAction::Mutation { invalidate } => {
            // `X-Cachet-Queue-Offline: 1`: queued when the network fails, or while earlier ones wait.
            let queue_offline = queue::asks_to_queue(request);
            let name = call.operation_name;
            if queue_offline && queue::has_pending(config).await {
                let queued =
                    queue::enqueue(request, body, name.clone(), &invalidate, false, config, background);
                if let Some(answer) = queued.await? {
                    return Ok(answer);
                }
            }
            let outgoing = without_cachet_headers(request, Some(body))?;
            let (response, _, answer) = match send(&outgoing, auth.as_ref()).await {
                Err(failure @ Error::Network { .. }) if queue_offline => {
                    let queued = queue::enqueue(request, body, name, &invalidate, true, config, background);
                    return queued.await?.ok_or(failure);
                }
                sent => sent?,
            };
            if response.ok() && !invalidate.is_empty() {
                let cache = open_cache(GRAPHQL_CACHE).await?;
                // The answer reaches the page even when invalidation fails; the failure is reported.
                if let Err(error) = invalidate_tags(&cache, &index, &invalidate).await {
                    web_sys::console::error_1(
                        &format!("cachet: invalidating {}: {error}", invalidate.join(", ")).into(),
                    );
                }
            }
            Ok(answer)
        }
        GraphqlAction::Subscription => fetch_raw(&without_cachet_headers(request, Some(body))?).await,
    }
}

/// [`invalidate_tags`] on the GraphQL cache and the worker's shared entry index: what a page's
/// `invalidate-tags` and a replayed queued mutation both do.
pub(crate) async fn invalidate_graphql_tags(tags: &[String]) -> Result<(), Error> {
    let cache = open_cache(GRAPHQL_CACHE).await?;
    invalidate_tags(&cache, &*super::tag_index::shared().await?, tags).await.map(|_| ())
}

/// Removes every entry carrying one of `tags` from `cache` and the index, then broadcasts
/// `cache-invalidated {tags}`. Returns how many entries were removed.
pub async fn invalidate_tags(cache: &Cache, index: &TagIndex, tags: &[String]) -> Result<usize, Error> {
    let urls = index.urls_tagged(tags).await?;
    forget(cache, index, &urls).await?;
    broadcast(&SwEvent::CacheInvalidated { tags: tags.to_vec() })?;
    Ok(urls.len())
}
