//! What the Service Worker does with one request: [`classify_request`].
//!
//! | Class | When | The Service Worker then |
//! |---|---|---|
//! | [`RequestClass::AuthRoute`] | auth is enabled and the path is under a `features.auth.routePaths` entry (any method) | passes it to the network, never caches it |
//! | [`RequestClass::Graphql`] | GraphQL is enabled, the path is a configured endpoint, and the request is GraphQL: a POST whose body is, or a GET whose search has a `query` (GraphQL over HTTP) that is a query | queries: caches by key and tags; mutations: invalidates tags; subscriptions: passes through |
//! | [`RequestClass::Get`] | any other GET | applies the strategy |
//! | [`RequestClass::Other`] | anything else, including a POST to an endpoint whose body is not GraphQL, and a mutation or subscription sent as GET (GraphQL over HTTP refuses it: the server answers) | passes it through |
//!
//! A query's cache key, tags and partition do not depend on how it was sent: the GET
//! `/graphql?query=…&variables=…` of a query has the entry of the same query posted.
//!
//! A request that should be handled but carries something wrong (a malformed GraphQL document, an
//! unknown `X-SW-Strategy`, a bad `X-Cachet-Tags` / `X-Cachet-Invalidate`) is an [`Error`]; the Service
//! Worker then passes it to the network untouched, so the server answers the bad request as it would
//! without cachet.
//!
//! `headers` looks a request header up by its lowercase name. Mutations always go to the network: they
//! have no strategy. Query tags come from `X-Cachet-Tags` when the header is present (even empty: an
//! explicit `tags: []` means no tags), otherwise from the operation name; a mutation invalidates the
//! tags derived from its name plus those of `X-Cachet-Invalidate` (see [`crate::tags`]).

use crate::cache_key::cache_key;
use crate::config::Config;
use crate::graphql::{parse_body, parse_search, GraphqlRequest, OperationKind};
use crate::strategy::{Strategy, STRATEGY_HEADER};
use crate::tags::{
    invalidation_tags, merge_tags, parse_tag_list, query_tags, INVALIDATE_HEADER, TAGS_HEADER,
};
use crate::Error;

/// What kind of request this is for the Service Worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestClass {
    /// An auth endpoint: bypass the cache.
    AuthRoute,
    /// A cacheable GET, answered with `strategy`.
    Get {
        /// From `X-SW-Strategy`, else `strategy.default`.
        strategy: Strategy,
        /// From `X-Cachet-Tags` (none without it): recorded with the entry, with the server's
        /// `X-SW-Cache-Tags`, so that `invalidateByTag` reaches GETs too.
        tags: Vec<String>,
    },
    /// A GraphQL operation posted to a configured endpoint.
    Graphql(GraphqlCall),
    /// Not cachet's business: pass it through.
    Other,
}

/// A GraphQL operation, as the Service Worker handles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphqlCall {
    /// Index of the endpoint in `features.graphql.endpoints`.
    pub endpoint_index: usize,
    /// The operation's name; `None` when anonymous.
    pub operation_name: Option<String>,
    /// What to do with it.
    pub action: GraphqlAction,
}

/// What the Service Worker does with a GraphQL operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphqlAction {
    /// Answer with `strategy`, storing under `cache_key` (in the user's partition) with `tags`.
    Query {
        /// [`crate::cache_key::cache_key`] of the body.
        cache_key: String,
        /// Explicit tags, or the auto-tags.
        tags: Vec<String>,
        /// From `X-SW-Strategy`, else `strategy.graphql`.
        strategy: Strategy,
    },
    /// Send to the network; on success remove every entry carrying one of `invalidate`.
    Mutation {
        /// Derived tags plus explicit ones.
        invalidate: Vec<String>,
    },
    /// Send to the network; nothing cached.
    Subscription,
}

/// Classifies a request from its method, URL path (query string allowed), headers and body.
pub fn classify_request(
    method: &str,
    path: &str,
    headers: &dyn Fn(&str) -> Option<String>,
    body: Option<&[u8]>,
    config: &Config,
) -> Result<RequestClass, Error> {
    if config.is_auth_route(path) {
        return Ok(RequestClass::AuthRoute);
    }
    let endpoint = config.graphql_endpoint_index(path);
    if method.eq_ignore_ascii_case("GET") {
        let search = path.split_once('?').map(|(_, search)| search.split('#').next().unwrap_or_default());
        if let (Some(endpoint_index), Some(search)) = (endpoint, search) {
            if let Some(request) = parse_search(search)? {
                if request.operation.kind != OperationKind::Query {
                    return Ok(RequestClass::Other);
                }
                return graphql_call(endpoint_index, request, headers, config);
            }
        }
        let strategy = strategy_from(headers, config.strategy.default)?;
        let tags = match headers(TAGS_HEADER) {
            Some(value) => tags_from(TAGS_HEADER, &value)?,
            None => Vec::new(),
        };
        return Ok(RequestClass::Get { strategy, tags });
    }
    let (Some(endpoint_index), true) = (endpoint, method.eq_ignore_ascii_case("POST")) else {
        return Ok(RequestClass::Other);
    };
    let Some(request) = parse_body(body.unwrap_or_default())? else {
        return Ok(RequestClass::Other);
    };
    graphql_call(endpoint_index, request, headers, config)
}

/// The class of a GraphQL `request` sent to endpoint `endpoint_index`, posted or as a GET.
fn graphql_call(
    endpoint_index: usize,
    request: GraphqlRequest,
    headers: &dyn Fn(&str) -> Option<String>,
    config: &Config,
) -> Result<RequestClass, Error> {
    let kind = request.operation.kind;
    let operation_name = request.operation.name;
    let action = match kind {
        OperationKind::Query => GraphqlAction::Query {
            cache_key: cache_key(&request.query, Some(&request.variables), request.operation_name.as_deref()),
            tags: match headers(TAGS_HEADER) {
                Some(value) => tags_from(TAGS_HEADER, &value)?,
                None => query_tags(kind, operation_name.as_deref()),
            },
            strategy: strategy_from(headers, config.strategy.graphql)?,
        },
        OperationKind::Mutation => {
            let explicit = match headers(INVALIDATE_HEADER) {
                Some(value) => tags_from(INVALIDATE_HEADER, &value)?,
                None => Vec::new(),
            };
            GraphqlAction::Mutation {
                invalidate: merge_tags(&invalidation_tags(kind, operation_name.as_deref()), &explicit),
            }
        }
        OperationKind::Subscription => GraphqlAction::Subscription,
    };
    Ok(RequestClass::Graphql(GraphqlCall { endpoint_index, operation_name, action }))
}

fn strategy_from(headers: &dyn Fn(&str) -> Option<String>, default: Strategy) -> Result<Strategy, Error> {
    match headers(STRATEGY_HEADER) {
        Some(value) => Ok(value.parse()?),
        None => Ok(default),
    }
}

fn tags_from(header: &'static str, value: &str) -> Result<Vec<String>, Error> {
    parse_tag_list(value).map_err(|source| Error::Tags { header, source })
}
