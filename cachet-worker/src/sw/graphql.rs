//! GraphQL mutations and subscriptions over the Service Worker. Queries are the engine's jobs
//! ([`super::engine`]): stored as whole documents in `cachet-graphql-v2` under a synthetic GET URL
//! (`/__cachet/gql/<partition>/<endpoint>/<sha256>`, `cachet_core::engine::key`), because Cache Storage
//! keys are GET requests.
//!
//! A mutation is the core's job ([`cachet_core::engine::mutation`]: send or queue behind earlier ones,
//! its `Idempotency-Key`, which answers invalidate its tags, what a queued copy keeps), sent by the core's
//! runner ([`cachet_core::engine::mutate`]) through the engine's plugins: refresh-and-retry when it is
//! marked as authenticated, the offline queue when it is marked `X-Cachet-Queue-Offline: 1`
//! (`super::queue_plugin`), the app's own. This module carries the decisions out: the tags the runner
//! names are invalidated (the whole entries: absent from then on, deleted in the background:
//! `super::invalidate::invalidate_everywhere`) and `cache-invalidated {tags}` is broadcast to every page.

use std::rc::Rc;

use cachet_core::classify::{GraphqlCall, RequestClass};
use cachet_core::config::Config;
use cachet_core::engine::plugin::{Call, Plugins};
use cachet_core::engine::{mutate, Failed, Mutation};
#[cfg(feature = "queue")]
use cachet_core::engine::MutationStart;
use cachet_core::protocol::headers::IDEMPOTENCY_KEY_HEADER;
use js_sys::Promise;
use web_sys::{Request, Response};

use super::clock::random_u128;
use super::engine::WorkerNetwork;
use super::http::{fetch_raw, with_header, without_cachet_headers};
use super::invalidate::invalidate_everywhere;
#[cfg(feature = "queue")]
use super::{queue, queue_plugin::QueueOffline};
use crate::Error;

/// Answers a GraphQL mutation or subscription the core classified as `call` (queries are the engine's
/// jobs: [`super::engine`]); `body` is the request's body, `plugins` those of the request (auth, the
/// defaults, the app's).
pub(crate) async fn handle(
    request: Request,
    body: Rc<[u8]>,
    call: GraphqlCall,
    config: &Config,
    mut plugins: Plugins<Response>,
    background: Rc<dyn Fn(Promise)>,
) -> Result<Response, Error> {
    let headers = request.headers();
    let lookup = |name: &str| headers.get(name).ok().flatten();
    let class = RequestClass::Graphql(call);
    let Some(mutation) = Mutation::for_request(&class, &lookup, true, random_u128()) else {
        return fetch_raw(&without_cachet_headers(&request, Some(&body), &[])?).await;
    };
    let request = match &mutation.idempotency_key {
        Some(key) => with_header(&request, &body, IDEMPOTENCY_KEY_HEADER, key)?.unwrap_or(request),
        None => request,
    };
    #[cfg(feature = "queue")]
    if mutation.queue_offline {
        // Refused (full): the 507 that says so, rather than a live send that would overtake them.
        if mutation.start(queue::has_pending(config).await) == MutationStart::QueueBehind {
            return queue::enqueue(&request, &body, &mutation, false, config, &*background).await;
        }
        let queue = QueueOffline::new(
            Clone::clone(&request),
            body.clone(),
            mutation.clone(),
            Rc::new(config.clone()),
            background.clone(),
        );
        plugins.insert(0, Rc::new(queue));
    }
    // No queue in this build: sent as any other, and a failed send says why it was not kept.
    #[cfg(not(feature = "queue"))]
    if mutation.queue_offline {
        plugins.insert(0, Rc::new(super::queue_off::NotBuilt));
    }
    let url = request.url();
    let network = WorkerNetwork {
        request,
        body: Some(body),
        failure_rule: config.auth_failure_rule().cloned(),
        preload: std::cell::Cell::new(None),
        persisted: None,
        leaves_auth_failure: false,
        parks: false,
    };
    let mutated =
        match mutate(&mutation, Call { method: "POST", url: &url, job: None }, &network, &plugins).await {
            Ok(mutated) => mutated,
            Err(Failed::Edge(error)) => return Err(error),
            Err(Failed::NotCached) => return Err(Error::NotCached { url }),
        };
    if !mutated.invalidate.is_empty() {
        // The answer reaches the page even when invalidation fails; the failure is reported.
        if let Err(error) = invalidate_everywhere(&mutated.invalidate, &*background).await {
            web_sys::console::error_1(
                &format!("cachet: invalidating {}: {error}", mutated.invalidate.join(", ")).into(),
            );
        }
    }
    Ok(mutated.served.response)
}
