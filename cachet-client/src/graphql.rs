//! `queryGql`, `mutateGql` and `fetchWithGql` (SPEC §2, §4).
//!
//! The request is standard GraphQL over HTTP: `POST` of `{"query", "variables", "operationName"}` to
//! the endpoint `endpoint_index` of `features.graphql.endpoints`, with the options as cachet's headers
//! (`tags` → `X-Cachet-Tags`, `invalidate` → `X-Cachet-Invalidate`, `queue_offline` →
//! `X-Cachet-Queue-Offline`, `strategy` → `X-SW-Strategy`, `auth` → `X-Cachet-Auth` plus the adapter's
//! headers). Queries are cached whole under the SHA-256 of the body and tagged with their operation name;
//! mutations invalidate the tags derived from theirs (see `cachet_core::tags`).
//!
//! | Outcome | [`Client::fetch_with_gql`] | [`Client::query_gql`] / [`Client::mutate_gql`] |
//! |---|---|---|
//! | no answer | [`Error::Network`] | same |
//! | auth failure after the refresh-and-retry | [`Error::Unauthorized`] | same |
//! | non-2xx status | [`Error::Http`] | same |
//! | body not JSON | [`Error::Decode`] | same |
//! | non-empty `errors` | `Ok`, the result as sent | [`Error::Graphql`] with the errors and any partial data |
//! | `data` not of type `T` | | [`Error::Decode`] |
//! | mutation queued offline (202, `X-Cachet-Queued`) | `Ok`, `queued: Some(id)` | `Ok`, `data: None`, `queued: Some(id)` |

use cachet_core::machines::queue::{
    NotQueued, NOT_QUEUED_HEADER, NOT_QUEUED_STATUS, QUEUED_HEADER, QUEUE_OFFLINE_HEADER,
};
use cachet_core::partition::AUTH_HEADER;
use cachet_core::strategy::{Strategy, STRATEGY_HEADER};
use cachet_core::tags::{format_tag_list, INVALIDATE_HEADER, TAGS_HEADER};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::checks::{checked_tags, refuse_when_off};
use crate::error::truncate;
use crate::http::HttpRequest;
use crate::{Client, Error};

/// Options of a GraphQL call (SPEC §2's table, plus the strategy, the endpoint and the operation name).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GqlOptions {
    /// Send auth headers; the answer is cached in the user's partition.
    pub auth: bool,
    /// Query: replaces the operation-name auto-tags (`Some(vec![])`: no tags at all).
    pub tags: Option<Vec<String>>,
    /// Mutation: tags to invalidate besides the derived ones.
    pub invalidate: Vec<String>,
    /// Mutation: queue it when offline (needs the Service Worker's mutation queue).
    pub queue_offline: bool,
    /// Query: the caching strategy; default `strategy.graphql` of the config (cache-first).
    pub strategy: Option<Strategy>,
    /// Index into `features.graphql.endpoints` (`GQL_ENDPOINTS`); default 0.
    pub endpoint_index: usize,
    /// `operationName`, for a document holding several operations.
    pub operation_name: Option<String>,
}

/// The answer of [`Client::fetch_with_gql`]: the GraphQL result as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct GqlResponse {
    /// The whole result (`data`, `errors`, `extensions`).
    pub result: Value,
    /// Whether it came from a cache.
    pub from_cache: bool,
    /// A stored result given under stale-if-error (`X-Cachet-Stale: 1`): the last good answer, in place
    /// of a network failure or a server's 5xx.
    pub stale: bool,
    /// The HTTP status.
    pub status: u16,
    /// The queue id when the Service Worker queued the mutation instead of sending it.
    pub queued: Option<u64>,
}

/// A query's data and where it came from (`{ data, fromCache }`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult<T> {
    /// `data` of the result.
    pub data: T,
    /// Whether it came from a cache.
    pub from_cache: bool,
    /// The last good result, given under stale-if-error (see [`GqlResponse::stale`]).
    pub stale: bool,
}

/// A mutation's data (`{ data }`); `None` with `queued` when it was queued offline.
#[derive(Debug, Clone, PartialEq)]
pub struct MutationResult<T> {
    /// `data` of the result.
    pub data: Option<T>,
    /// The queue id when queued offline.
    pub queued: Option<u64>,
}

impl GqlOptions {
    /// Options with `auth` set.
    pub fn with_auth(auth: bool) -> Self {
        GqlOptions { auth, ..GqlOptions::default() }
    }
}

impl Client {
    /// `fetchWithGql`: one GraphQL call, the result returned whole (GraphQL `errors` included).
    #[inline(never)]
    pub fn fetch_with_gql<'a>(
        &'a self,
        query: &'a str,
        variables: Option<Value>,
        options: &'a GqlOptions,
    ) -> futures::future::LocalBoxFuture<'a, Result<GqlResponse, Error>> {
        Box::pin(async move {
            // The config may follow the Service Worker's once the client is ready: decide on that one.
            self.inner.ready().await;
            let config = self.inner.config();
            // Never degrade to a request without what was asked for: an auth query sent unmarked, a mutation
            // to queue sent where no worker queues it.
            if options.auth {
                refuse_when_off(
                    &config,
                    "queryGql / mutateGql / fetchWithGql with { auth: true }",
                    true,
                    true,
                )?;
            }
            if options.queue_offline {
                refuse_when_off(&config, "mutateGql with { queueOffline: true }", false, true)?;
            }
            let endpoints = &config.features.graphql.endpoints;
            let endpoint = endpoints.get(options.endpoint_index).ok_or_else(|| Error::NoSuchEndpoint {
                index: options.endpoint_index,
                endpoints: endpoints.clone(),
            })?;
            let mut body = Map::new();
            body.insert("query".to_owned(), Value::String(query.to_owned()));
            if let Some(variables) = variables.filter(|variables| !variables.is_null()) {
                body.insert("variables".to_owned(), variables);
            }
            if let Some(name) = &options.operation_name {
                body.insert("operationName".to_owned(), Value::String(name.clone()));
            }
            let mut request = HttpRequest {
                method: "POST".to_owned(),
                url: endpoint.clone(),
                body: Some(crate::json::text(&Value::Object(body)).into_bytes()),
                ..HttpRequest::default()
            };
            request.set_header("Content-Type", "application/json");
            request.set_header("Accept", "application/json");
            if let Some(strategy) = options.strategy {
                request.set_header(STRATEGY_HEADER, strategy.as_str());
            }
            if let Some(tags) = &options.tags {
                request.set_header(TAGS_HEADER, &format_tag_list(&checked_tags(tags.clone(), "tags")?));
            }
            if !options.invalidate.is_empty() {
                let invalidate = checked_tags(options.invalidate.clone(), "invalidate")?;
                request.set_header(INVALIDATE_HEADER, &format_tag_list(&invalidate));
            }
            if options.queue_offline {
                request.set_header(QUEUE_OFFLINE_HEADER, "1");
            }
            if options.auth {
                request.set_header(AUTH_HEADER, "1");
            }
            let answer = self.inner.execute(request, options.auth).await?;
            let stale = answer.stale();
            let response = answer.response;
            let url = if response.url.is_empty() { endpoint.clone() } else { response.url.clone() };
            if self.inner.transport.is_auth_failure(&response) {
                return Err(Error::Unauthorized { url, status: response.status });
            }
            if let Some(reason) = not_queued(&response) {
                return Err(Error::NotQueued { url, reason });
            }
            if !response.ok() {
                return Err(Error::Http {
                    url,
                    status: response.status,
                    body: truncate(&response.text(), 2048),
                });
            }
            let result: Value = crate::json::read(&response.body).map_err(|error| Error::Decode {
                what: format!("the GraphQL result of {url}"),
                message: error.to_string(),
            })?;
            let queued = response.header(QUEUED_HEADER).and_then(|id| id.trim().parse().ok());
            Ok(GqlResponse { result, from_cache: answer.from_cache, stale, status: response.status, queued })
        })
    }

    /// `queryGql(query, variables, options)`: `data` decoded as `T`, and whether it came from a cache.
    /// Concurrent identical queries share one request.
    pub async fn query_gql<T: DeserializeOwned>(
        &self,
        query: &str,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> Result<QueryResult<T>, Error> {
        let result = self.query_gql_json(query, variables, options).await?;
        Ok(QueryResult { data: decode(result.data)?, from_cache: result.from_cache, stale: result.stale })
    }

    /// [`Client::query_gql`] with `data` as the JSON tree (`null` when absent): what the bundler-free
    /// API hands to JavaScript, with no serde decoder run or linked for it.
    pub async fn query_gql_json(
        &self,
        query: &str,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> Result<QueryResult<Value>, Error> {
        let response = self.fetch_with_gql(query, variables, &options).await?;
        let data = data_of(response.result)?;
        Ok(QueryResult { data, from_cache: response.from_cache, stale: response.stale })
    }

    /// `mutateGql(mutation, variables, options)`: `data` decoded as `T`; on success the derived and
    /// `invalidate` tags are invalidated everywhere and `cache-invalidated` fires in every tab.
    pub async fn mutate_gql<T: DeserializeOwned>(
        &self,
        mutation: &str,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> Result<MutationResult<T>, Error> {
        let result = self.mutate_gql_json(mutation, variables, options).await?;
        let data = result.data.map(decode).transpose()?;
        Ok(MutationResult { data, queued: result.queued })
    }

    /// [`Client::mutate_gql`] with `data` as the JSON tree (`None` when queued, or `null` or absent).
    pub async fn mutate_gql_json(
        &self,
        mutation: &str,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> Result<MutationResult<Value>, Error> {
        let response = self.fetch_with_gql(mutation, variables, &options).await?;
        if response.queued.is_some() {
            return Ok(MutationResult { data: None, queued: response.queued });
        }
        let data = Some(data_of(response.result)?).filter(|data| !data.is_null());
        Ok(MutationResult { data, queued: None })
    }
}

/// `data` of a GraphQL result (`null` when absent), or its `errors` as [`Error::Graphql`].
fn data_of(mut result: Value) -> Result<Value, Error> {
    let data = result.get_mut("data").map(Value::take).unwrap_or(Value::Null);
    match result.get_mut("errors").map(Value::take) {
        Some(Value::Array(errors)) if !errors.is_empty() => {
            Err(Error::Graphql { errors, data: Some(data).filter(|data| !data.is_null()) })
        }
        Some(Value::Null | Value::Array(_)) | None => Ok(data),
        Some(other) => {
            Err(Error::Graphql { errors: vec![other], data: Some(data).filter(|data| !data.is_null()) })
        }
    }
}

/// `data` decoded as `T` by serde (an app's own type).
fn decode<T: DeserializeOwned>(data: Value) -> Result<T, Error> {
    serde_json::from_value(data)
        .map_err(|error| Error::Decode { what: "the GraphQL `data`".to_owned(), message: error.to_string() })
}

/// The reason of the worker's 507 for a `queueOffline` mutation it could neither send nor queue
/// (`X-Cachet-Not-Queued`); `None` for any other answer, a server's own 507 included.
fn not_queued(response: &crate::http::HttpResponse) -> Option<NotQueued> {
    if response.status != NOT_QUEUED_STATUS {
        return None;
    }
    NotQueued::parse(response.header(NOT_QUEUED_HEADER)?)
}
