//! The parity table (`cachet-core/tests/suite/parity_scenarios.rs`) against the page with no Service
//! Worker: each request goes through the client's pipeline (classification, partition, the core's runner
//! over the in-page cache), the fake server answering the scenario's scripted reply. The Service Worker
//! runs the same table in `cachet-worker/tests/service_worker_parity.rs`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use cachet_client::{Client, ClientEvent, Config, FetchOptions, Strategy};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{fresh_database, options, FakeServer, Reply};

#[path = "../../../cachet-core/tests/suite/parity_scenarios.rs"]
mod table;

struct PageEdge {
    client: Client,
    next: Rc<RefCell<Option<table::Reply>>>,
    updated: Rc<Cell<usize>>,
}

impl table::Edge for PageEdge {
    async fn send(&self, scenario: &str, ask: table::Ask, strategy: &str, reply: table::Reply) -> table::Got {
        *self.next.borrow_mut() = Some(reply);
        let (method, path, body) = table::request_of(scenario, ask);
        let mut fetch = FetchOptions::new().method(method).strategy(strategy.parse::<Strategy>().unwrap());
        if let Some(tags) = table::tags_of(ask) {
            fetch = fetch.tags(tags.split(',').map(str::trim));
        }
        if let Some(body) = body {
            fetch = fetch.header("content-type", "application/json").body(body);
        }
        match self.client.fetch_with_cache(&path, fetch).await {
            Ok(result) => {
                let text = String::from_utf8_lossy(&result.response.body).into_owned();
                if result.stale {
                    table::Got::Stale(text)
                } else if result.from_cache {
                    table::Got::Cache(text)
                } else {
                    table::Got::Network(text)
                }
            }
            Err(_) => table::Got::Failed,
        }
    }

    async fn invalidate(&self, tags: &[&str]) {
        self.client.invalidate_by_tag(tags).await.unwrap();
    }

    async fn updated(&self, _expected: usize) -> usize {
        // A barrier, no timeout: every background job the engine started (its store, its
        // announcement, told to the subscribers as it is made) has ended.
        self.client.settled().await;
        self.updated.replace(0)
    }
}

#[wasm_bindgen_test]
async fn the_parity_table_in_a_page_without_a_service_worker() {
    fresh_database("parity").await;
    let next: Rc<RefCell<Option<table::Reply>>> = Rc::default();
    let scripted = next.clone();
    let server = FakeServer::new(move |_seen| {
        let reply = scripted.borrow().expect("a scripted reply");
        Reply {
            status: reply.status,
            headers: reply
                .headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            body: reply.body.to_owned(),
            delay_ms: 0,
        }
    });
    let client = Client::builder()
        .config(Config::from_json_str(table::CONFIG).unwrap())
        .options(options("parity"))
        .http(server.http())
        .plugin(table::PreviewPlugin)
        .plugin(table::OfflineAnswer(|status, body| cachet_client::HttpResponse {
            url: String::new(),
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }))
        .build()
        .unwrap();
    let updated: Rc<Cell<usize>> = Rc::default();
    let counter = updated.clone();
    let _subscription = client.subscribe(move |event| {
        if matches!(event, ClientEvent::CacheUpdated { .. }) {
            counter.set(counter.get() + 1);
        }
    });
    table::run_all(&PageEdge { client, next, updated }).await;
}
