//! GraphQL mutations and subscriptions over the Service Worker. Queries are the engine's jobs
//! ([`super::engine`]): stored as whole documents in `cachet-graphql-v2` under a synthetic GET URL
//! (`/__cachet/gql/<partition>/<endpoint>/<sha256>`, `cachet_core::engine::key`), because Cache Storage
//! keys are GET requests.
//!
//! A mutation always goes to the network. When the server answers 2xx, every entry carrying one of its
//! invalidation tags is removed (the whole entry: there is no per-field patching) and
//! `cache-invalidated {tags}` is broadcast to every page. The invalidation runs on any 2xx answer, GraphQL
//! `errors` or not: a mutation that partly failed may still have changed data, and a needless re-fetch
//! costs less than stale data. A mutation marked `X-Cachet-Queue-Offline: 1` is queued instead when the
//! network fails ([`super::queue`]); it carries its `Idempotency-Key` from its first send (a fresh one
//! unless the app set its own), and the queued copy keeps it: a send whose answer was lost after the
//! server applied it, then its replays, are one mutation to a server that honours the key.

use cachet_core::classify::{GraphqlAction, GraphqlCall};
use cachet_core::config::Config;
use cachet_core::machines::queue::{idempotency_key, IDEMPOTENCY_KEY_HEADER};
use js_sys::Promise;
use web_sys::{Request, Response};

use super::auth_retry::{send, AuthRetry};
use super::clock::random_u128;
use super::http::{fetch_raw, with_header, without_cachet_headers};
use super::queue;
use super::store::invalidate_everywhere;
use crate::Error;

/// Answers a GraphQL mutation or subscription the core classified as `call` (queries are the engine's
/// jobs: [`super::engine`]); `body` is the request's body.
pub(crate) async fn handle(
    request: &Request,
    body: &[u8],
    call: GraphqlCall,
    config: &Config,
    auth: Option<AuthRetry>,
    background: &dyn Fn(Promise),
) -> Result<Response, Error> {
    match call.action {
        GraphqlAction::Mutation { invalidate } => {
            // `X-Cachet-Queue-Offline: 1`: queued when the network fails, or while earlier ones wait.
            let queue_offline = queue::asks_to_queue(request);
            let keyed = match queue_offline {
                true => with_header(request, body, IDEMPOTENCY_KEY_HEADER, &idempotency_key(random_u128()))?,
                false => None,
            };
            let request = keyed.as_ref().unwrap_or(request);
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
                // The answer reaches the page even when invalidation fails; the failure is reported.
                if let Err(error) = invalidate_everywhere(&invalidate).await {
                    web_sys::console::error_1(
                        &format!("cachet: invalidating {}: {error}", invalidate.join(", ")).into(),
                    );
                }
            }
            Ok(answer)
        }
        GraphqlAction::Subscription | GraphqlAction::Query { .. } => {
            fetch_raw(&without_cachet_headers(request, Some(body))?).await
        }
    }
}
