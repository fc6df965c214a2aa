//! A GraphQL mutation, decided once for both edges (the Service Worker, and the page with no worker):
//! whether it is sent or queued behind earlier ones, the `Idempotency-Key` it carries, which of its
//! answers invalidate its tags, and what a queued copy keeps. The runner's part is [`super::mutate`]: the
//! same send and plugins as any pass ([`super::pass`]), then the tags this module says its answer
//! invalidates, which each edge carries out its own way (the worker bumps the generations and
//! broadcasts; a page asks its worker, or drops its memory cache's entries).
//!
//! | The answer is | from | invalidates |
//! |---|---|---|
//! | 2xx | the network (a live send, or a queued copy's replay) | [`Mutation::invalidate`] |
//! | any other status | the network | nothing: the server did not apply it, or said it failed |
//! | any | a plugin (the offline queue's 202, an app's offline answer) | nothing: the server has not seen it (a queued copy invalidates when its replay succeeds) |
//!
//! A 2xx with GraphQL `errors` invalidates too: a mutation that partly failed may still have changed
//! data, and a needless re-fetch costs less than stale data.

use crate::classify::{GraphqlAction, GraphqlCall, RequestClass};
use crate::machines::queue::idempotency_key;
use crate::protocol::headers::{marker_is_set, IDEMPOTENCY_KEY_HEADER, QUEUE_OFFLINE_HEADER};

use super::response::Source;

/// What the planner decided for one mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// Its operation name, if it has one.
    pub operation: Option<String>,
    /// The tags its success invalidates: those derived from its operation name, plus
    /// `X-Cachet-Invalidate`.
    pub invalidate: Vec<String>,
    /// Whether it is kept in the edge's offline queue when it cannot be sent (`X-Cachet-Queue-Offline:
    /// 1`, on an edge that keeps a queue: the worker).
    pub queue_offline: bool,
    /// The `Idempotency-Key` every send of it carries, from the first live one on: the app's own, or a
    /// fresh one, when it may be queued (a send whose answer was lost, then its replays, are then one
    /// mutation to a server that honours the key); `None` otherwise (sent as the app wrote it).
    pub idempotency_key: Option<String>,
}

/// What happens first to a [`Mutation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutationStart {
    /// Sent to the network now (through the plugins: the queue keeps it when the network is unreachable).
    Send,
    /// Queued without a send: earlier queued mutations still wait, and it must not overtake them.
    QueueBehind,
}

impl Mutation {
    /// The mutation of a request the core classified as `class` (`None` when it is not one), with the
    /// request's `headers`; `queues`: whether this edge keeps an offline queue; `random`: 128 random bits,
    /// for a fresh `Idempotency-Key`.
    pub fn for_request(
        class: &RequestClass,
        headers: &dyn Fn(&str) -> Option<String>,
        queues: bool,
        random: u128,
    ) -> Option<Mutation> {
        let RequestClass::Graphql(GraphqlCall {
            operation_name,
            action: GraphqlAction::Mutation { invalidate },
            ..
        }) = class
        else {
            return None;
        };
        let queue_offline = queues && marker_is_set(headers(QUEUE_OFFLINE_HEADER).as_deref());
        let idempotency_key =
            queue_offline.then(|| headers(IDEMPOTENCY_KEY_HEADER).unwrap_or_else(|| idempotency_key(random)));
        Some(Mutation {
            operation: operation_name.clone(),
            invalidate: invalidate.clone(),
            queue_offline,
            idempotency_key,
        })
    }

    /// Its first step, with `queued_ahead`: whether the edge's queue still holds earlier mutations.
    pub fn start(&self, queued_ahead: bool) -> MutationStart {
        match self.queue_offline && queued_ahead {
            true => MutationStart::QueueBehind,
            false => MutationStart::Send,
        }
    }

    /// The tags an answer with `status`, from `source`, invalidates (the module's table).
    pub fn invalidated_by(&self, status: u16, source: Source) -> &[String] {
        match source == Source::Network && applied(status) {
            true => &self.invalidate,
            false => &[],
        }
    }
}

/// Whether a network answer with `status` says the server applied the mutation (a 2xx): a live send's
/// answer then invalidates its tags ([`Mutation::invalidated_by`]), and a queued copy's replay succeeded
/// (the queue removes it and invalidates them: `machines::queue`'s `SendSucceeded`).
pub fn applied(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The request headers a queued copy of a mutation keeps (names in lower case): never `Authorization`
/// (no token is ever at rest; a replay asks a page for the current one) and never
/// `X-Cachet-Queue-Offline` (what asked for the queue is not sent to the server).
pub fn kept_headers(headers: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    headers
        .into_iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .filter(|(name, _)| name != "authorization" && name != QUEUE_OFFLINE_HEADER)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::classify_request;
    use crate::config::Config;

    fn mutation(headers: &[(&str, &str)], queues: bool) -> Mutation {
        let config =
            Config::from_json_str(r#"{"features": {"graphql": {"enabled": true}}}"#).unwrap_or_default();
        let lookup = |name: &str| {
            headers
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| (*value).to_owned())
        };
        let body = br#"{"query":"mutation AddTodo { addTodo(title: \"x\") { id } }"}"#;
        let class = classify_request("POST", "/graphql", &lookup, Some(body), &config);
        let class = class.unwrap_or(RequestClass::Other);
        Mutation::for_request(&class, &lookup, queues, 7).unwrap_or_else(|| Mutation {
            operation: None,
            invalidate: Vec::new(),
            queue_offline: false,
            idempotency_key: None,
        })
    }

    #[test]
    fn only_a_2xx_from_the_network_invalidates() {
        let job = mutation(&[], true);
        assert_eq!(job.operation.as_deref(), Some("AddTodo"));
        assert!(!job.invalidate.is_empty());
        assert_eq!(job.invalidated_by(200, Source::Network), &job.invalidate[..]);
        assert_eq!(job.invalidated_by(204, Source::Network), &job.invalidate[..]);
        for (status, source) in [(500, Source::Network), (302, Source::Network), (202, Source::Plugin)] {
            assert!(job.invalidated_by(status, source).is_empty(), "{status} {source:?}");
        }
        assert!(job.invalidated_by(200, Source::Cache).is_empty());
    }

    #[test]
    fn a_queueable_mutation_carries_one_key_and_waits_behind_earlier_ones() {
        let plain = mutation(&[], true);
        assert_eq!((plain.queue_offline, plain.idempotency_key.as_deref()), (false, None));
        assert_eq!(plain.start(true), MutationStart::Send, "not queueable: never queued behind");

        let queued = mutation(&[("X-Cachet-Queue-Offline", "1")], true);
        assert!(queued.queue_offline);
        assert_eq!(queued.idempotency_key, Some(idempotency_key(7)));
        assert_eq!(queued.start(true), MutationStart::QueueBehind);
        assert_eq!(queued.start(false), MutationStart::Send);

        let own = mutation(&[("X-Cachet-Queue-Offline", "1"), ("Idempotency-Key", "k-1")], true);
        assert_eq!(own.idempotency_key.as_deref(), Some("k-1"), "the app's own key is kept");

        let page = mutation(&[("X-Cachet-Queue-Offline", "1")], false);
        assert_eq!((page.queue_offline, page.idempotency_key.as_deref()), (false, None), "no queue here");
    }

    #[test]
    fn a_queued_copy_keeps_no_token_and_no_queue_marker() {
        let kept = kept_headers([
            ("Authorization".to_owned(), "Bearer t".to_owned()),
            ("X-Cachet-Queue-Offline".to_owned(), "1".to_owned()),
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Idempotency-Key".to_owned(), "k".to_owned()),
        ]);
        assert_eq!(
            kept,
            vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("idempotency-key".to_owned(), "k".to_owned())
            ]
        );
    }
}
