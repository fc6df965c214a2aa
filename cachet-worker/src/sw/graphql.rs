//! GraphQL mutations and subscriptions over the Service Worker. Queries are the engine's jobs
//! ([`super::engine`]): stored as whole documents in `cachet-graphql-v2` under a synthetic GET URL
//! (`/__cachet/gql/<partition>/<endpoint>/<sha256>`, `cachet_core::engine::key`), because Cache Storage
//! keys are GET requests.
//!
//! A mutation always goes to the network, through the engine's plugins ([`cachet_core::engine::pass`]):
//! refresh-and-retry when it is marked as authenticated, the offline queue when it is marked
//! `X-Cachet-Queue-Offline: 1` (`super::queue_plugin`), the app's own. When the server answers 2xx,
//! every entry carrying one of its invalidation tags is invalidated (the whole entry: there is no per-field
//! patching; absent from then on, deleted in the background: [`super::invalidate::invalidate_tags`]) and
//! `cache-invalidated {tags}` is broadcast to every page. The invalidation runs on any 2xx
//! answer, GraphQL `errors` or not: a mutation that partly failed may still have changed data, and a
//! needless re-fetch costs less than stale data. A queued mutation invalidates when its replay succeeds.
//!
//! A mutation marked `X-Cachet-Queue-Offline: 1` carries its `Idempotency-Key` from its first send (a
//! fresh one unless the app set its own), and the queued copy keeps it: a send whose answer was lost after
//! the server applied it, then its replays, are one mutation to a server that honours the key.

use std::rc::Rc;

use cachet_core::classify::{GraphqlAction, GraphqlCall};
use cachet_core::config::Config;
use cachet_core::engine::plugin::{Call, Plugins};
use cachet_core::engine::{pass, Failed};
use cachet_core::machines::queue::{idempotency_key, IDEMPOTENCY_KEY_HEADER};
use js_sys::Promise;
use web_sys::{Request, Response};

use super::clock::random_u128;
use super::engine::WorkerNetwork;
use super::http::{fetch_raw, with_header, without_cachet_headers};
use super::invalidate::invalidate_everywhere;
use super::queue;
use super::queue_plugin::QueueOffline;
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
    let GraphqlAction::Mutation { invalidate } = call.action else {
        return fetch_raw(&without_cachet_headers(&request, Some(&body), &[])?).await;
    };
    let name = call.operation_name;
    let queue_offline = queue::asks_to_queue(&request);
    let request = match queue_offline {
        true => {
            let key = idempotency_key(random_u128());
            with_header(&request, &body, IDEMPOTENCY_KEY_HEADER, &key)?.unwrap_or(request)
        }
        false => request,
    };
    if queue_offline {
        // Queued behind earlier ones still waiting, so that mutations reach the server in order.
        if queue::has_pending(config).await {
            // Refused (full): the 507 that says so, rather than a live send that would overtake them.
            return queue::enqueue(&request, &body, name, &invalidate, false, config, &*background).await;
        }
        let queue = QueueOffline::new(
            Clone::clone(&request),
            body.clone(),
            name,
            invalidate.clone(),
            Rc::new(config.clone()),
            background.clone(),
        );
        plugins.insert(0, Rc::new(queue));
    }
    let url = request.url();
    let network = WorkerNetwork {
        request,
        body: Some(body),
        failure_rule: config.auth_failure_rule().cloned(),
        preload: std::cell::Cell::new(None),
    };
    let served = match pass(Call { method: "POST", url: &url, job: None }, &network, &plugins).await {
        Ok(served) => served,
        Err(Failed::Edge(error)) => return Err(error),
        Err(Failed::NotCached) => return Err(Error::NotCached { url }),
    };
    let ok = (200..300).contains(&served.response.status());
    if ok && served.source == cachet_core::engine::Source::Network && !invalidate.is_empty() {
        // The answer reaches the page even when invalidation fails; the failure is reported.
        if let Err(error) = invalidate_everywhere(&invalidate, &*background).await {
            web_sys::console::error_1(
                &format!("cachet: invalidating {}: {error}", invalidate.join(", ")).into(),
            );
        }
    }
    Ok(served.response)
}
