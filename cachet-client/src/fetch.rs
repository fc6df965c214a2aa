//! `fetchWithCache(url, options)`: any request, with auth, a caching strategy and tags.

use cachet_core::partition::AUTH_HEADER;
use cachet_core::strategy::{Strategy, STRATEGY_HEADER};
use cachet_core::tags::{format_tag_list, TAGS_HEADER};

use crate::checks::checked_tags;

use crate::http::{HttpRequest, HttpResponse};
use crate::{Client, Error};

/// Options of [`Client::fetch_with_cache`]. Build with the methods, or fill the fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchOptions {
    /// HTTP method (default `GET`).
    pub method: Option<String>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Option<Vec<u8>>,
    /// Send the adapter's auth headers and cache the answer in the user's partition (SPEC §5.4: headers
    /// are injected only for `auth: true`).
    pub auth: bool,
    /// The caching strategy (`X-SW-Strategy`); default `strategy.default` of the config.
    pub strategy: Option<Strategy>,
    /// Tags of the cached entry (`X-Cachet-Tags`), so that `invalidate_by_tag` can remove it: recorded for
    /// GETs and queries alike, with the server's `X-SW-Cache-Tags`, by the worker and the in-page cache.
    pub tags: Option<Vec<String>>,
}

/// The answer of [`Client::fetch_with_cache`]: any HTTP status is an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchResult {
    /// The whole response.
    pub response: HttpResponse,
    /// Whether it came from a cache (the Service Worker's, or the in-page one).
    pub from_cache: bool,
    /// A stored answer given under stale-if-error (`X-Cachet-Stale: 1`): the network failed or the
    /// server answered 5xx, and this is the last good answer (`cache.staleIfErrorSeconds`).
    pub stale: bool,
}

impl FetchOptions {
    /// Default options: a `GET` without auth.
    pub fn new() -> Self {
        FetchOptions::default()
    }

    /// Sets the method.
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_owned());
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// `auth: true`.
    pub fn auth(mut self, auth: bool) -> Self {
        self.auth = auth;
        self
    }

    /// Sets the strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// Sets the tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.tags = Some(tags.into_iter().map(Into::into).collect());
        self
    }
}

impl FetchResult {
    /// The body parsed as JSON (the bundler-free API's `data`).
    pub fn data<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
        self.response.json()
    }
}

impl Client {
    /// `fetchWithCache(url, options)`: sends the request through the Service Worker when it controls the
    /// page, else answers it in the page with the same rules (see [`crate::pipeline`]). With
    /// `auth: true`, an auth failure is refreshed and retried once; when that does not help, the failing
    /// answer is returned. Concurrent identical GETs share one request.
    #[inline(never)]
    pub fn fetch_with_cache<'a>(
        &'a self,
        url: &'a str,
        options: FetchOptions,
    ) -> futures::future::LocalBoxFuture<'a, Result<FetchResult, Error>> {
        Box::pin(async move {
            let FetchOptions { method, headers, body, auth, strategy, tags } = options;
            let mut request = HttpRequest {
                method: method.map(|method| method.to_ascii_uppercase()).unwrap_or_else(|| "GET".to_owned()),
                url: url.to_owned(),
                headers,
                body,
                ..HttpRequest::default()
            };
            if let Some(strategy) = strategy {
                request.set_header(STRATEGY_HEADER, strategy.as_str());
            }
            if let Some(tags) = tags {
                request.set_header(TAGS_HEADER, &format_tag_list(&checked_tags(tags, "tags")?));
            }
            self.inner.ready().await;
            if auth {
                crate::checks::refuse_when_off(
                    &self.inner.config(),
                    "fetchWithCache with { auth: true }",
                    true,
                    false,
                )?;
                request.set_header(AUTH_HEADER, "1");
            }
            let answer = self.inner.execute(request, auth).await?;
            let stale = answer.stale();
            Ok(FetchResult { response: answer.response, from_cache: answer.from_cache, stale })
        })
    }

    /// THE auth-failure check (`isAuthFailureResponse`): `features.auth.failure` of the config (default:
    /// status 401), the very rule the Service Worker applies. Change it in `cachet.config.json` (statuses,
    /// a response header, a JSON body field) and regenerate: the client and the Service Worker follow.
    /// An app that needs more gives the same function to [`crate::ClientBuilder::failure_check`] and to
    /// the Service Worker's `install_with`.
    pub fn is_auth_failure_response(&self, response: &HttpResponse) -> bool {
        self.inner.transport.is_auth_failure(response)
    }
}
