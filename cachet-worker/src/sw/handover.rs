//! A page's `hand-over`: the answers it stored before this worker controlled it, kept as this worker
//! would have kept them had the requests reached it ([`cachet_core::handover`]: every decision is the
//! core's). For each entry: [`admit`] (origin, route, credentials, classification, the partition from
//! the entry's own credentials and this worker's identity, the job), then the runner's storing step
//! ([`cachet_core::engine::adopt()`]: the plugins' key, an entry held fresh is kept, the planner's storing
//! rules with this worker's auth-failure check, the plugins' `cache_will_update`) into Cache Storage and
//! the entry index, as [`super::engine::respond`] stores a network answer.

use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::engine::{adopt as adopt_answer, Runner, Storing};
use cachet_core::handover::{admit, check_count, HandedEntry, Place, Refused};
use js_sys::{Promise, Uint8Array};
use web_sys::{Headers, Response, ResponseInit};

use super::engine::{fetched, WorkerHost};
use super::http::SOURCE_HEADER;
use super::store::CacheStore;
use super::{identity, plugins, tag_index};
use crate::Error;

/// Keeps what it can of `entries`; for each, `Ok(())` when stored, or why not. The whole hand-over is
/// refused ([`Error::HandoverTooLarge`]) when it has more than [`cachet_core::handover::MAX_ENTRIES`] entries,
/// storing nothing; a store that fails stops it there (what is stored stays).
pub async fn adopt(entries: &[HandedEntry], config: &Config) -> Result<Vec<Result<(), Refused>>, Error> {
    check_count(entries).map_err(|_too_many| Error::HandoverTooLarge { count: entries.len() })?;
    // An invalidation that begins while the hand-over is stored drops what it may have missed, as for a
    // live store; the page dropped what it heard invalidated before it posted.
    let begun = super::store::invalidations_begun();
    let identity = identity::current().await?;
    let worker_origin = js_sys::Reflect::get(&js_sys::global(), &"origin".into())
        .ok()
        .and_then(|origin| origin.as_string())
        .unwrap_or_default();
    let index = tag_index::shared().await?;
    // Their generation: the hand-over's beginning (the page's own fetches began earlier still, and it
    // dropped what it heard invalidated before it posted).
    let generation = super::generations::loaded(&index).await?;
    let mut outcomes = Vec::with_capacity(entries.len());
    for entry in entries {
        let url = web_sys::Url::new(&entry.request.url).ok();
        let (origin, path) = url.as_ref().map(|url| (url.origin(), url.pathname())).unwrap_or_default();
        let place = Place { worker_origin: &worker_origin, origin: &origin, path: &path };
        let job = match admit(entry, place, identity.as_ref(), config, super::clock::increasing_ms()) {
            Ok(job) => job,
            Err(refused) => {
                outcomes.push(Err(refused));
                continue;
            }
        };
        if job.entry.is_none() {
            outcomes.push(Err(Refused::NoPartition));
            continue;
        }
        let response = match response_of(entry) {
            Ok(response) => response,
            Err(error) => {
                outcomes.push(Err(Refused::Unreadable(error.to_string())));
                continue;
            }
        };
        let body = entry.response.body.as_bytes().to_vec();
        let answer = super::http::rebuild(&response, &body, &[(SOURCE_HEADER, "network")])?;
        let fetched = fetched(&response, body, answer, config.auth_failure_rule());
        let request_body: Option<Rc<[u8]>> =
            entry.request.body.as_deref().map(|body| Rc::from(body.as_bytes()));
        let background: Rc<dyn Fn(Promise)> = Rc::new(drop);
        let store = CacheStore {
            index: index.clone(),
            background: background.clone(),
            request_url: entry.request.url.clone(),
            body: request_body,
            strategy: job.strategy,
            begun,
            generation,
        };
        let method = if job.document { "POST" } else { "GET" };
        let runner = Runner {
            store,
            network: (),
            host: WorkerHost::<false> { background },
            plugins: plugins::for_request(None),
            method,
            url: entry.request.url.clone(),
        };
        outcomes.push(match adopt_answer(job, &fetched, entry.stored_at, &runner).await? {
            None => Err(Refused::Held),
            Some(Storing::Store { .. }) => Ok(()),
            Some(Storing::Skip(reason)) => Err(Refused::NotStored(reason)),
        });
    }
    Ok(outcomes)
}

/// The handed answer as a browser `Response`; a header the browser refuses is a typed error.
fn response_of(entry: &HandedEntry) -> Result<Response, Error> {
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    for (name, value) in &entry.response.headers {
        headers.append(name, value).map_err(|e| Error::js("Headers.append", e))?;
    }
    let init = ResponseInit::new();
    init.set_status(entry.response.status);
    init.set_headers(&headers);
    let body = Uint8Array::from(entry.response.body.as_bytes());
    Response::new_with_opt_buffer_source_and_init(Some(&body), &init)
        .map_err(|e| Error::js("new Response", e))
}

/// `hand-over {requestId, entries}` from a page: [`adopt`], each refusal named on the console.
pub(crate) async fn handle(entries: &[HandedEntry], config: &Config) -> Result<(), Error> {
    let outcomes = adopt(entries, config).await?;
    for (entry, outcome) in entries.iter().zip(&outcomes) {
        if let Err(refused) = outcome {
            web_sys::console::info_1(
                &format!("cachet: hand-over of {} not kept: {refused}", entry.request.url).into(),
            );
        }
    }
    Ok(())
}
