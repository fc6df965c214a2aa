//! The parity table (`cachet-core/tests/suite/parity_scenarios.rs`) against the real Service Worker path:
//! each request goes through `sw::answer` (the `fetch` handler's classification, partition and engine),
//! with the worker's global `fetch` replaced by the scenario's scripted reply. The page client runs the
//! same table in `cachet-client/tests/browser/parity.rs`.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::cell::RefCell;
use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::protocol::SwEvent;
use cachet_worker::sw::{answer, invalidate::invalidate_tags, tag_index::TagIndex, SOURCE_HEADER};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Headers, Request, RequestInit, Response, ResponseInit};

wasm_bindgen_test_configure!(run_in_service_worker);

mod common;
#[path = "../../cachet-core/tests/suite/parity_scenarios.rs"]
mod parity;

use common::{barrier, listen_for_events, Listener};
use parity::{Ask, Got, Reply};

thread_local! {
    /// What the replaced `fetch` answers next.
    static NEXT_REPLY: RefCell<Option<Reply>> = const { RefCell::new(None) };
}

/// Replaces the worker's global `fetch` with one answering [`NEXT_REPLY`] (status 0: a rejected fetch, as
/// the browser's network failure is).
fn script_the_network() {
    let fake = Closure::<dyn Fn(JsValue) -> Promise>::new(|_request: JsValue| {
        let Some(reply) = NEXT_REPLY.with(|next| *next.borrow()) else {
            return Promise::reject(&js_sys::TypeError::new("no reply scripted").into());
        };
        if reply.status == 0 {
            return Promise::reject(&js_sys::TypeError::new("Failed to fetch").into());
        }
        let headers = Headers::new().unwrap();
        for (name, value) in reply.headers {
            headers.append(name, value).unwrap();
        }
        let init = ResponseInit::new();
        init.set_status(reply.status);
        init.set_headers(&headers);
        let response: JsValue = Response::new_with_opt_str_and_init(Some(reply.body), &init).unwrap().into();
        Promise::resolve(&response)
    });
    js_sys::Reflect::set(&js_sys::global(), &"fetch".into(), fake.as_ref()).unwrap();
    fake.forget();
}

struct WorkerEdge {
    config: Config,
    index: Rc<TagIndex>,
    events: Listener,
    background: Rc<RefCell<Vec<Promise>>>,
}

impl parity::Edge for WorkerEdge {
    async fn send(&self, scenario: &str, ask: Ask, strategy: &str, reply: Reply) -> Got {
        NEXT_REPLY.with(|next| *next.borrow_mut() = Some(reply));
        let (method, path, body) = parity::request_of(scenario, ask);
        let origin = js_sys::Reflect::get(&js_sys::global(), &"origin".into()).unwrap().as_string().unwrap();
        let headers = Headers::new().unwrap();
        headers.set("x-sw-strategy", strategy).unwrap();
        if let Some(tags) = parity::tags_of(ask) {
            headers.set("x-cachet-tags", tags).unwrap();
        }
        let init = RequestInit::new();
        init.set_method(method);
        init.set_headers(&headers);
        if let Some(body) = &body {
            init.set_body(&JsValue::from_str(body));
        }
        let request = Request::new_with_str_and_init(&format!("{origin}{path}"), &init).unwrap();
        let collector = self.background.clone();
        let background = Rc::new(move |promise: Promise| collector.borrow_mut().push(promise));
        let answered = answer(request, String::new(), &self.config, background).await;
        let Ok(response) = answered else {
            return Got::Failed;
        };
        let from_cache = response.headers().get(SOURCE_HEADER).unwrap().as_deref() == Some("cache");
        let stale = response.headers().get("x-cachet-stale").unwrap().as_deref() == Some("1");
        let text = JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap();
        if stale {
            Got::Stale(text)
        } else if from_cache {
            Got::Cache(text)
        } else {
            Got::Network(text)
        }
    }

    async fn invalidate(&self, tags: &[&str]) {
        let tags: Vec<String> = tags.iter().map(|tag| (*tag).to_owned()).collect();
        let collector = self.background.clone();
        let background = move |promise: Promise| collector.borrow_mut().push(promise);
        invalidate_tags(&self.index, &tags, &background).await.unwrap();
    }

    async fn updated(&self, _expected: usize) -> usize {
        // A background re-fetch is answered with the reply of the step that started it; its store and
        // its announcement are part of the promise it handed over (and may hand over more).
        loop {
            let pending: Vec<Promise> = self.background.borrow_mut().drain(..).collect();
            if pending.is_empty() {
                break;
            }
            for promise in pending {
                let _ = JsFuture::from(promise).await;
            }
        }
        // Every announcement made so far, and nothing else: a barrier on the channel, no timeout.
        barrier(&self.events)
            .await
            .iter()
            .filter(|event| matches!(event, SwEvent::CacheUpdated { .. }))
            .count()
    }
}

#[wasm_bindgen_test]
async fn the_parity_table_in_a_service_worker() {
    script_the_network();
    // As an app's worker binary would (it also installs the engine on this global, unused here).
    let offline = parity::OfflineAnswer(|status, body| {
        let init = ResponseInit::new();
        init.set_status(status);
        Response::new_with_opt_str_and_init(Some(body), &init).unwrap()
    });
    cachet_worker::sw::Options::new().plugin(parity::PreviewPlugin).plugin(offline).install();
    let edge = WorkerEdge {
        config: Config::from_json_str(parity::CONFIG).unwrap(),
        index: cachet_worker::sw::tag_index::shared().await.unwrap(),
        events: listen_for_events(),
        background: Rc::default(),
    };
    parity::run_all(&edge).await;
}
