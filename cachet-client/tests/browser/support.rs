//! A fake server behind the client's fetch hook, unique names per test, and awaiting events.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use cachet_client::{ClientEvent, ClientOptions, Config, Error, EventStream, Http};
use futures::future::{select, Either};
use futures::StreamExt;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, Response, ResponseInit};

/// A request the fake server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub credentials: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The GraphQL operation name in the body (`query GetTodos` → `GetTodos`).
    pub fn operation(&self) -> String {
        let body: Value = serde_json::from_str(&self.body).unwrap_or(Value::Null);
        let query = body["query"].as_str().unwrap_or_default();
        query.split(['(', '{', ' ']).filter(|word| !word.is_empty()).nth(1).unwrap_or_default().to_owned()
    }
}

/// What the fake server answers; `status: 0` is a network failure.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay_ms: u32,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
            delay_ms: 0,
        }
    }

    pub fn text(status: u16, body: &str) -> Self {
        Reply { status, headers: Vec::new(), body: body.to_owned(), delay_ms: 0 }
    }

    pub fn network_failure() -> Self {
        Reply::text(0, "")
    }

    pub fn after(mut self, delay_ms: u32) -> Self {
        self.delay_ms = delay_ms;
        self
    }
}

type Handler = dyn Fn(&Seen) -> Reply;

/// Records every request and answers with its handler.
#[derive(Clone)]
pub struct FakeServer {
    seen: Rc<RefCell<Vec<Seen>>>,
    handler: Rc<Handler>,
}

impl FakeServer {
    pub fn new(handler: impl Fn(&Seen) -> Reply + 'static) -> Self {
        FakeServer { seen: Rc::default(), handler: Rc::new(handler) }
    }

    pub fn http(&self) -> Http {
        let server = self.clone();
        Http::with_fetch(move |request: Request| {
            let server = server.clone();
            Box::pin(async move { server.answer(request).await })
        })
    }

    async fn answer(&self, request: Request) -> Result<Response, Error> {
        let text = JsFuture::from(request.text().unwrap()).await.unwrap().as_string().unwrap_or_default();
        let url = web_sys::Url::new(&request.url()).unwrap();
        let headers = js_sys::try_iter(&request.headers())
            .unwrap()
            .unwrap()
            .map(|pair| js_sys::Array::from(&pair.unwrap()))
            .map(|pair| (pair.get(0).as_string().unwrap(), pair.get(1).as_string().unwrap()))
            .collect();
        let seen = Seen {
            method: request.method(),
            path: format!("{}{}", url.pathname(), url.search()),
            headers,
            body: text,
            credentials: format!("{:?}", request.credentials()),
        };
        self.seen.borrow_mut().push(seen.clone());
        let reply = (self.handler)(&seen);
        if reply.delay_ms > 0 {
            gloo::timers::future::TimeoutFuture::new(reply.delay_ms).await;
        }
        if reply.status == 0 {
            return Err(Error::Network { url: request.url(), message: "Failed to fetch".into() });
        }
        let headers = Headers::new().unwrap();
        for (name, value) in &reply.headers {
            headers.append(name, value).unwrap();
        }
        let init = ResponseInit::new();
        init.set_status(reply.status);
        init.set_headers(&headers);
        Ok(Response::new_with_opt_str_and_init(Some(&reply.body), &init).unwrap())
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.borrow().clone()
    }

    pub fn count(&self, matches: impl Fn(&Seen) -> bool) -> usize {
        self.seen.borrow().iter().filter(|seen| matches(seen)).count()
    }
}

/// A config with auth of `auth_type` and GraphQL enabled.
pub fn config(auth_type: &str) -> Config {
    let text = format!(
        r#"{{"features":{{"auth":{{"enabled":true,"type":"{auth_type}"}},"graphql":{{"enabled":true}}}}}}"#
    );
    Config::from_json_str(&text).unwrap()
}

/// Names of their own for one test (tabs of one test share them).
pub fn options(test: &str) -> ClientOptions {
    ClientOptions {
        database: format!("cachet-test-{test}"),
        auth_channel: format!("cachet-auth-{test}"),
        events_channel: format!("cachet-{test}"),
        refresh_lock: format!("cachet-refresh-{test}"),
        ..ClientOptions::default()
    }
}

/// The next event matching `wanted`, failing the test after 10 s.
pub async fn next_event(events: &mut EventStream, wanted: impl Fn(&ClientEvent) -> bool) -> ClientEvent {
    let find = async {
        while let Some(event) = events.next().await {
            if wanted(&event) {
                return event;
            }
        }
        panic!("the event stream ended");
    };
    let timeout = gloo::timers::future::sleep(Duration::from_secs(10));
    match select(Box::pin(find), timeout).await {
        Either::Left((event, _)) => event,
        Either::Right(_) => panic!("no matching event within 10 s"),
    }
}

/// Collects the `detail` of every `name` event fired on `window` while it lives.
pub struct WindowEvents {
    pub details: Rc<RefCell<Vec<Value>>>,
    _listener: gloo::events::EventListener,
}

impl WindowEvents {
    pub fn listen(name: &'static str) -> Self {
        let details: Rc<RefCell<Vec<Value>>> = Rc::default();
        let sink = details.clone();
        let window = web_sys::window().unwrap();
        let listener = gloo::events::EventListener::new(&window, name, move |event| {
            let detail = event.dyn_ref::<web_sys::CustomEvent>().unwrap().detail();
            let text = js_sys::JSON::stringify(&detail).unwrap().as_string().unwrap();
            sink.borrow_mut().push(serde_json::from_str(&text).unwrap());
        });
        WindowEvents { details, _listener: listener }
    }

    pub fn details(&self) -> Vec<Value> {
        self.details.borrow().clone()
    }
}

/// Deletes the test's database, so that a re-run starts clean.
pub async fn fresh_database(test: &str) {
    let _ = rexie::Rexie::delete(&format!("cachet-test-{test}")).await;
}
