//! What the worker reads of a POST and what it sends on. The engine reads a POST's body from the request
//! itself (no `Request.clone()`: the copy was a fifth of a hit's time in the worker); whatever then goes to
//! the network is rebuilt with those bytes. Checked through `sw::answer` with the worker's global `fetch`
//! replaced by one that echoes what it was sent: a POST the core says is not cachet's business, a
//! malformed GraphQL document, a query (its miss, then its hit) and a mutation all reach the network whole.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::rc::Rc;

use cachet_core::config::Config;
use cachet_worker::sw::{answer, SOURCE_HEADER};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Headers, Request, RequestInit, Response, ResponseInit};

wasm_bindgen_test_configure!(run_in_service_worker);

const CONFIG: &str = r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#;

/// Replaces the worker's global `fetch` with one answering `{"data":{"echo":…}}` where `…` is what it
/// was sent: method, URL path, `content-type`, `x-app` and the body, as one string.
fn echo_the_network() {
    let echo = Closure::<dyn Fn(Request) -> Promise>::new(|request: Request| {
        wasm_bindgen_futures::future_to_promise(async move {
            let body = JsFuture::from(request.text()?).await?.as_string().unwrap_or_default();
            let headers = request.headers();
            let header = |name: &str| headers.get(name).ok().flatten().unwrap_or_default();
            let path = web_sys::Url::new(&request.url())?.pathname();
            let seen =
                format!("{} {path} {} {} {body}", request.method(), header("content-type"), header("x-app"));
            let answer = serde_json::json!({"data": {"echo": seen}}).to_string();
            let headers = Headers::new()?;
            headers.set("content-type", "application/json")?;
            let init = ResponseInit::new();
            init.set_status(200);
            init.set_headers(&headers);
            Ok(Response::new_with_opt_str_and_init(Some(&answer), &init)?.into())
        })
    });
    js_sys::Reflect::set(&js_sys::global(), &"fetch".into(), echo.as_ref()).unwrap();
    echo.forget();
}

/// Sends a POST of `body` to `path` through the worker's engine path; the answer's source and text.
async fn post(config: &Config, path: &str, body: &str) -> (String, String) {
    let origin = js_sys::Reflect::get(&js_sys::global(), &"origin".into()).unwrap().as_string().unwrap();
    let headers = Headers::new().unwrap();
    headers.set("content-type", "application/json").unwrap();
    headers.set("x-app", "kept").unwrap();
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(body));
    let request = Request::new_with_str_and_init(&format!("{origin}{path}"), &init).unwrap();
    let background = Rc::new(|promise: Promise| {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = JsFuture::from(promise).await;
        })
    });
    let response = answer(request, String::new(), config, background).await.unwrap();
    let source = response.headers().get(SOURCE_HEADER).unwrap().unwrap_or_default();
    let text = JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap();
    (source, text)
}

fn echoed(seen: &str) -> String {
    serde_json::json!({"data": {"echo": seen}}).to_string()
}

#[wasm_bindgen_test]
async fn a_post_reaches_the_network_whole_though_the_worker_read_its_body() {
    echo_the_network();
    let config = Config::from_json_str(CONFIG).unwrap();

    // Not cachet's business (a POST to another path): sent on as it came, headers and body.
    let (_, text) = post(&config, "/api/upload", "{\"file\":\"a\"}").await;
    assert_eq!(text, echoed("POST /api/upload application/json kept {\"file\":\"a\"}"));

    // A malformed GraphQL document: to the network untouched.
    let malformed = "{\"query\":\"query {\"}";
    let (_, text) = post(&config, "/graphql", malformed).await;
    assert_eq!(text, echoed(&format!("POST /graphql application/json kept {malformed}")));

    // A query: its miss carries the body to the network; its hit does not ask it again.
    let query = "{\"query\":\"query PassOn { todos { id } }\"}";
    let (source, text) = post(&config, "/graphql", query).await;
    assert_eq!(
        (source.as_str(), text),
        ("network", echoed(&format!("POST /graphql application/json kept {query}")))
    );
    let (source, _) = post(&config, "/graphql", query).await;
    assert_eq!(source, "cache", "the second is a hit");

    // A mutation: sent with its body.
    let mutation = "{\"query\":\"mutation PassOnCreate { create { id } }\"}";
    let (_, text) = post(&config, "/graphql", mutation).await;
    assert_eq!(text, echoed(&format!("POST /graphql application/json kept {mutation}")));
}
