//! HTTP plumbing: requests and responses as plain data ([`HttpRequest`], [`HttpResponse`]) and the one
//! door to the network ([`Http`]), which an app or a test may replace with its own `fetch`.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, Response};

use crate::error::{js_name_and_message, Error};

/// The `fetch` cachet calls: takes a browser `Request`, resolves to its `Response`, or to
/// [`Error::Network`] when there is no answer.
pub type FetchFn = Rc<dyn Fn(Request) -> LocalBoxFuture<'static, Result<Response, Error>>>;

/// The door to the network. [`Http::browser`] is `window.fetch`; [`Http::with_fetch`] takes any function
/// of the same shape (a test's fake server, an app's instrumented fetch). Every request of the client
/// and of the default adapters goes through it.
#[derive(Clone)]
pub struct Http {
    fetch: FetchFn,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Http")
    }
}

/// Whether a request sends cookies (`RequestInit.credentials`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Credentials {
    /// `same-origin`, the browser's default.
    #[default]
    SameOrigin,
    /// `include`: cookies even cross-origin (`AUTH_WITH_CREDENTIALS` true).
    Include,
    /// `omit`.
    Omit,
}

/// A request as plain data, so that it can be sent again after a token refresh.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Absolute or relative to the page.
    pub url: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Cookie policy.
    pub credentials: Credentials,
}

/// A whole response, its body read.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    /// The final URL.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// Header names (lowercase, as the browser reports them) and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// What the engine's plugins read of a response (`cachet_core::engine::plugin`).
impl cachet_core::engine::Message for HttpResponse {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str) -> Option<String> {
        HttpResponse::header(self, name).map(str::to_owned)
    }
}

impl HttpRequest {
    /// A `GET` of `url`.
    pub fn get(url: &str) -> Self {
        HttpRequest { method: "GET".to_owned(), url: url.to_owned(), ..HttpRequest::default() }
    }

    /// The value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// Sets a header, replacing any of the same name.
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(key, _)| !key.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
    }

    /// The browser `Request` for this data.
    pub fn to_request(&self) -> Result<Request, Error> {
        let headers: js_sys::Array = self
            .headers
            .iter()
            .flat_map(|(name, value)| [JsValue::from_str(name), JsValue::from_str(value)])
            .collect();
        let credentials = match self.credentials {
            Credentials::SameOrigin => "same-origin",
            Credentials::Include => "include",
            Credentials::Omit => "omit",
        };
        let body = self.body.as_deref().map(Uint8Array::from);
        crate::js::request(&self.method, &self.url, &headers, body, credentials)
            .map_err(|e| Error::js("new Request", e))
    }
}

impl HttpResponse {
    /// The value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as UTF-8 text (invalid sequences replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body decoded from JSON: read into serde_json's tree ([`HttpResponse::json_value`]), then `T`
    /// from the tree by serde.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_value(self.json_value()?).map_err(|error| Error::Decode {
            what: format!("the body of {}", self.url),
            message: error.to_string(),
        })
    }

    /// The body as a JSON tree, read by cachet-core's reader (`crate::json`: no serde decoder).
    pub fn json_value(&self) -> Result<serde_json::Value, Error> {
        crate::json::read(&self.body).map_err(|error| Error::Decode {
            what: format!("the body of {}", self.url),
            message: error.to_string(),
        })
    }

    /// Reads a browser `Response` whole.
    pub async fn read(response: &Response) -> Result<HttpResponse, Error> {
        let read = JsFuture::from(crate::js::read(response))
            .await
            .map_err(|e| Error::js("Response.arrayBuffer", e))?;
        let read = js_sys::Array::from(&read);
        let flat = js_sys::Array::from(&read.get(2));
        let text = |at: u32| flat.get(at).as_string().unwrap_or_default();
        Ok(HttpResponse {
            url: read.get(0).as_string().unwrap_or_default(),
            status: read.get(1).as_f64().map_or(0, |status| status as u16),
            headers: (0..flat.length() / 2).map(|pair| (text(2 * pair), text(2 * pair + 1))).collect(),
            body: Uint8Array::new(&read.get(3)).to_vec(),
        })
    }
}

impl Http {
    /// The browser's `fetch` of the current window.
    pub fn browser() -> Self {
        Http::with_fetch(|request: Request| {
            Box::pin(async move {
                let url = request.url();
                let window = web_sys::window().ok_or(Error::Unsupported { api: "window" })?;
                JsFuture::from(window.fetch_with_request(&request))
                    .await
                    .map(JsCast::unchecked_into)
                    .map_err(|error| Error::Network { url, message: js_name_and_message(&error).1 })
            })
        })
    }

    /// Any function of `fetch`'s shape.
    pub fn with_fetch(
        fetch: impl Fn(Request) -> LocalBoxFuture<'static, Result<Response, Error>> + 'static,
    ) -> Self {
        Http { fetch: Rc::new(fetch) }
    }

    /// Sends `request` and reads the whole answer. Any status is `Ok`; no answer is [`Error::Network`].
    ///
    /// Boxed: one state machine in the wasm for its five callers (as an `async fn`, the compiler kept two
    /// copies of it, 1.4 KB each before gzip, in the bundler-free API).
    pub fn send<'a>(&'a self, request: &'a HttpRequest) -> LocalBoxFuture<'a, Result<HttpResponse, Error>> {
        Box::pin(async move {
            let response = (self.fetch)(request.to_request()?).await?;
            HttpResponse::read(&response).await.map_err(|error| match error {
                // A body that breaks off mid-way is a network failure too.
                Error::Js { message, .. } => Error::Network { url: request.url.clone(), message },
                other => other,
            })
        })
    }
}
