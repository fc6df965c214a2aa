//! The engine's `fetch` entry point: classify with the core, then answer.

use std::rc::Rc;

use cachet_core::classify::{classify_request, RequestClass};
use cachet_core::config::Config;
use cachet_core::engine::plugin::Plugin;
use cachet_core::engine::{outlined, Job};
use cachet_core::partition::{is_marked, partition_for, Partition};
use js_sys::Promise;
use wasm_bindgen::JsCast;
use web_sys::{FetchEvent, Response};

use super::auth_retry::AuthRetry;
use super::engine::{preloaded, respond_in, Target};
use super::http::{fetch_raw, request_bytes, with_body};
use super::{generations, graphql, plugins};
use super::{identity, tag_index};
use crate::Error;

/// What the engine made of a `fetch` event: the answer, or (only in the start module, `START`) a request
/// it leaves to the whole engine, with the body it read from it (see [`super::start`]).
pub(crate) enum Answered {
    /// The answer for `respondWith`.
    Here(Response),
    /// The whole engine's request: a mutation or a subscription, or any request while the database
    /// waits for the move of the earlier builds' databases (nothing was sent for these), or an auth
    /// failure to refresh ([`Error::AuthFailureLeft`]), or a GET the start module could not answer (the
    /// whole engine may answer it from the app shell, `super::shell`). The whole engine takes `body` as
    /// the request's body (the request's own was read) and `answer`, when there is one, as its first
    /// send's answer.
    Elsewhere {
        /// The request's body, read.
        body: Option<Rc<[u8]>>,
        /// The network's answer to the request as sent, for the whole engine to go on from.
        answer: Option<Response>,
    },
    /// The answer (a stored entry), whose background re-fetch is the whole engine's (the start module
    /// links none: `engine::respond_in`): the whole engine runs the request again once this answer is
    /// given, with `body` as its body, and re-fetches as its strategy says (an entry fresh again by then
    /// is not re-fetched; one past its life is fetched and stored as a miss is).
    Revalidate {
        /// The answer for `respondWith`.
        answer: Response,
        /// The request's body, read.
        body: Option<Rc<[u8]>>,
    },
}

impl Answered {
    /// The answer of the whole engine (`START` false), which never leaves a request elsewhere: that
    /// case is only typed, as [`Error::NotInStartModule`].
    pub(crate) fn whole(self) -> Result<Response, Error> {
        match self {
            Answered::Here(response) => Ok(response),
            Answered::Elsewhere { .. } | Answered::Revalidate { .. } => {
                Err(Error::NotInStartModule { what: "a request left to another engine" })
            }
        }
    }
}

/// Answers a `fetch` event the shim routed to the engine, as the core classifies it. A request the core
/// says is not cachet's business (an auth route, a POST that is not GraphQL), or that carries something
/// wrong (an unknown `X-SW-Strategy`, a malformed GraphQL document, bad tag headers), goes to the network
/// untouched, so the server answers it as it would without cachet. `body`: the request's body as the
/// shim or the start module read it; `name`: the shim's name of the request (`super::names`); `begun`:
/// for the shim's copy of an answer it gave itself, the invalidation count when it was received
/// ([`super::engine::Target::begun`]).
///
/// The start-up work of a worker instance that no answer needs (the mutation queue's start replay, the
/// sweep of what earlier instances left) begins after its first answer is given ([`super::http::after_answer`]),
/// in the event's `waitUntil`: a stopped worker's first answer waits for nothing but what it reads
/// ([`answer`]). The start module (`START`) does none of it: the whole engine does, when it takes over
/// ([`super::upkeep`]).
pub(crate) async fn handle_fetch<const START: bool, B: Begun>(
    event: &FetchEvent,
    early: Option<Promise>,
    body: Option<Vec<u8>>,
    name: Option<js_sys::Function>,
    begun: B,
    config: &Rc<Config>,
) -> Result<Answered, Error> {
    // Noted before anything is read: a name is written only if no change of answers began since.
    let name = name.map(|name| (name, super::names::epoch()));
    let event_for_background = event.clone();
    let background: Rc<dyn Fn(Promise)> = Rc::new(move |promise: Promise| {
        // The start module counts what it leaves running, so that the whole engine waits for it.
        let promise = if START { super::busy::busy(promise) } else { promise };
        // waitUntil only throws once the event has finished, which cannot happen while we respond.
        let _ = event_for_background.wait_until(&promise);
    });
    // What the start module hands the whole engine (a store: `super::store_later`) is kept alive, not
    // counted: the whole engine's take-over waits for the start module to be idle.
    let event_for_later = event.clone();
    let keep_alive: Rc<dyn Fn(Promise)> = Rc::new(move |promise: Promise| {
        let _ = event_for_later.wait_until(&promise);
    });
    let request = event.request();
    // A navigation's preload by the browser, or the shim's early send of a request whose job begins with
    // the network: either is the network step's answer (`engine::WorkerNetwork`), never a second send. A
    // navigation the shim handed over comes with its copy of the preloaded answer (`early`).
    let preload = match (request.mode() == web_sys::RequestMode::Navigate, early) {
        (true, None) => navigation_preload(event),
        (_, early) => early,
    };
    let client_id = event.client_id().unwrap_or_default();
    let (url, navigation, get) =
        (request.url(), request.mode() == web_sys::RequestMode::Navigate, request.method() == "GET");
    let answered = match answer_with_preload::<START, B>(
        request,
        preload,
        Given { body, name, begun },
        client_id,
        config,
        background.clone(),
        keep_alive,
    )
    .await
    {
        // What the engine could not answer, the build's own files may (`shell`): offline, a file the
        // cache declined (over `cache.maxBodyBytes`) or never stored. The start module links no shell:
        // it leaves the request to the whole engine, which runs it again (taking the same early answer
        // or preload, so a request sent early is not sent twice) and answers from the shell if it cannot
        // either.
        Err(_) if START && get => Ok(Answered::Elsewhere { body: None, answer: None }),
        Err(error) if get => {
            outlined(super::shell::answer(&url, navigation)).await.map(Answered::Here).ok_or(error)
        }
        answered => answered,
    };
    if !START {
        let (config, later) = (config.clone(), background.clone());
        super::http::after_answer(
            &*background,
            Box::pin(async move {
                super::upkeep(&config, &*later);
                Ok(wasm_bindgen::JsValue::UNDEFINED)
            }),
        );
    }
    answered
}

/// A navigation's `FetchEvent.preloadResponse` (web-sys has no binding for it), kept alive until it
/// settles: a preload that no step takes (an answer from the cache) is then not cancelled half-way.
/// `None` where the browser has no navigation preload.
fn navigation_preload(event: &FetchEvent) -> Option<Promise> {
    let preload = js_sys::Reflect::get(event, &"preloadResponse".into()).ok()?;
    let preload = preload.dyn_into::<Promise>().ok()?;
    // waitUntil handles its rejection too (a failed preload is the network step's error, not this one's).
    let _ = event.wait_until(&preload);
    Some(preload)
}

/// Answers `request` from the page `client_id` as a `fetch` event would be (`handle_fetch`), with
/// background work handed to `background`: the whole engine path, for a push's re-fetches and the tests.
#[cfg(any(feature = "push", feature = "test-support"))]
pub async fn answer(
    request: web_sys::Request,
    client_id: String,
    config: &Config,
    background: Rc<dyn Fn(Promise)>,
) -> Result<Response, Error> {
    let given = Given { body: None, name: None, begun: () };
    answer_with_preload::<false, ()>(request, None, given, client_id, config, background.clone(), background)
        .await?
        .whole()
}

/// What came with a request from the shim (or the start module): its body, read, and its name, with
/// the names' epoch when its handling began (`super::names`); for a copy of an answer the shim gave
/// itself, the invalidation count when it was received (`super::engine::Target::begun`).
struct Given<B> {
    body: Option<Vec<u8>>,
    name: Option<(js_sys::Function, u64)>,
    begun: B,
}

/// A copy's invalidation count as [`handle_fetch`] is given it: `Option<u64>` in the whole engine, `()`
/// (none, and no room in the start module's state machines) where no copy can come.
pub(crate) trait Begun: Copy {
    fn count(self) -> Option<u64>;
}

impl Begun for () {
    fn count(self) -> Option<u64> {
        None
    }
}

impl Begun for Option<u64> {
    fn count(self) -> Option<u64> {
        self
    }
}

/// [`answer`] for a request already sent (`preload`: a navigation's `FetchEvent.preloadResponse`, or the
/// shim's early send): the network step of its job uses that answer (`engine::WorkerNetwork`). `given`:
/// the body the shim or the start module read from the request, and the request's name. In the start
/// module (`START`), a mutation or a subscription is left to the whole engine ([`Answered::Elsewhere`]),
/// whose code for them is not linked in, and so is every request while the database waits for the move
/// of the earlier builds' databases.
async fn answer_with_preload<const START: bool, B: Begun>(
    request: web_sys::Request,
    preload: Option<Promise>,
    given: Given<B>,
    client_id: String,
    config: &Config,
    background: Rc<dyn Fn(Promise)>,
    keep_alive: Rc<dyn Fn(Promise)>,
) -> Result<Answered, Error> {
    let url = request.url();
    let parsed = web_sys::Url::new(&url).ok();
    // With its search: a GraphQL query may come as a GET (`/graphql?query=…`), classified as the same
    // query posted.
    let path = parsed.as_ref().map(|url| url.pathname() + &url.search()).unwrap_or_default();
    let origin = parsed.as_ref().map(web_sys::Url::origin).unwrap_or_default();
    let method = request.method();
    // A POST's body is read from the request itself, not from a `Request.clone()` (the copy was a fifth
    // of a 1 KB hit's time in the worker, BENCHMARKS.md): whatever goes to the network is rebuilt with
    // these bytes. A navigation (a form's POST) cannot be rebuilt as it was: its copy is read.
    let navigation = request.mode() == web_sys::RequestMode::Navigate;
    let read_body = async {
        if method != "POST" {
            return Ok(None);
        }
        if given.body.is_some() {
            return Ok(given.body);
        }
        if navigation {
            let copy = request.clone().map_err(|e| crate::Error::js("Request.clone", e))?;
            return request_bytes(&copy).await.map(Some);
        }
        request_bytes(&request).await.map(Some)
    };
    let headers = request.headers();
    let lookup = |name: &str| headers.get(name).ok().flatten();
    // The request classified (its GraphQL document parsed, its cache key hashed) as soon as its body is
    // read, while IndexedDB reads what the answer needs: on a stopped worker's first request the
    // database is opened, the identity read and the generations loaded, and the classification is the
    // first run of the wasm's code (compiled as it runs): a cold hit waits for the longer of the two, not
    // their sum. A failed read of the generations is not reported here:
    // the engine reads them again before it uses them, and fails the request as it always did.
    let classified = async {
        let body = read_body.await?;
        let class = classify_request(&method, &path, &lookup, body.as_deref(), config);
        Ok::<_, Error>((body, class))
    };
    let index = async {
        let index = tag_index::shared().await?;
        // Only the start module's leaving (a lost clock, the whole engine's to read) is an error here.
        if let Err(error @ Error::NotInStartModule { .. }) = generations::loaded(&index).await {
            return Err(error);
        }
        Ok::<_, Error>(index)
    };
    let (classified, identity, index) = futures::join!(classified, identity::current(), index);
    let (body, class) = classified?;
    // The database of a fresh origin (or one whose storage was cleared) has not had the earlier builds'
    // databases moved in, or the generations' clock is lost: the whole engine's work, so the request is
    // its (nothing was sent yet).
    if START && matches!(index, Err(Error::NotInStartModule { .. })) {
        return Ok(Answered::Elsewhere { body: body.map(Rc::from), answer: None });
    }
    // Decided here, from what the worker sees (the request's own `Authorization`, the identity it
    // keeps), never from a page-side marker alone: see `cachet_core::partition`.
    let partition = match identity {
        Ok(identity) => partition_for(&lookup, identity.as_ref()),
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: {error}; {url} is not cached").into());
            Partition::Uncached
        }
    };
    // The start module has no refresh-and-retry: it leaves the auth failure of a request that gets one
    // to the whole engine, with the answer it got (`engine::Target::leaves_auth_failure`).
    let marked = is_marked(&lookup);
    let auth = if START {
        None
    } else {
        AuthRetry::for_request(config, marked, &request, client_id)
            .map(|auth| Rc::new(auth) as Rc<dyn Plugin<_>>)
    };
    let leaves_auth_failure = START && AuthRetry::applies(config, marked);
    let plugins = plugins::for_request(auth);
    let class = match class {
        Ok(class) => class,
        Err(error) => {
            web_sys::console::warn_1(
                &format!("cachet: {url}: {error}; sent to the network untouched").into(),
            );
            let _parked = super::busy::park(START);
            return outlined(pass_on(&request, body.as_deref(), preload)).await.map(Answered::Here);
        }
    };
    if let Some(job) = Job::for_request(&class, &partition, &origin, &url, config) {
        let (operation, persisted) = match &class {
            RequestClass::Graphql(call) => {
                (call.operation_name.clone(), persisted(call, &url, body.is_some(), config))
            }
            _ => (None, None),
        };
        let body: Option<Rc<[u8]>> = body.map(Rc::from);
        let target = Target {
            operation,
            request,
            body: body.clone(),
            job,
            index: index?,
            plugins,
            failure_rule: config.auth_failure_rule().cloned(),
            preload,
            persisted,
            leaves_auth_failure,
            name: given.name,
            begun: given.begun.count(),
        };
        return match outlined(respond_in::<START>(target, background, keep_alive)).await {
            // Each request left gets an answer of its own (one that joined another's send shares it).
            Err(Error::AuthFailureLeft { answer, body: failed }) if START => {
                let answer = Some(super::http::rebuild(&answer, &failed, &[])?);
                Ok(Answered::Elsewhere { body, answer })
            }
            Ok((answer, true)) if START => Ok(Answered::Revalidate { answer, body }),
            answered => answered.map(|(response, _)| Answered::Here(response)),
        };
    }
    match class {
        RequestClass::Graphql(_) if START => {
            Ok(Answered::Elsewhere { body: body.map(Rc::from), answer: None })
        }
        RequestClass::Graphql(call) => {
            let body = Rc::from(body.unwrap_or_default());
            outlined(graphql::handle(request, body, call, config, plugins, background))
                .await
                .map(Answered::Here)
        }
        _ => {
            let _parked = super::busy::park(START);
            outlined(pass_on(&request, body.as_deref(), preload)).await.map(Answered::Here)
        }
    }
}

/// A posted query (`posted`) to an endpoint of `features.graphql.persistedQueries` goes as its hash (a
/// GET query, sent by the page as it is, is left so); never without the `persisted-queries` feature.
fn persisted(
    call: &cachet_core::classify::GraphqlCall,
    url: &str,
    posted: bool,
    config: &Config,
) -> Option<super::persisted::Persisted> {
    if !cfg!(feature = "persisted-queries") {
        return None;
    }
    let settings = config.features.graphql.persisted(call.endpoint_index).filter(|_| posted)?;
    Some(super::persisted::Persisted {
        endpoint: url.split(['?', '#']).next().unwrap_or_default().to_owned(),
        get_max_url_length: settings.get_max_url_length as usize,
    })
}

/// Sends `request` to the network untouched: as it is when its body was not read (a GET, a navigation),
/// else rebuilt with the `body` read from it (same headers, credentials, mode, everything else). A
/// navigation the browser preloaded (`preload`) gets the preloaded answer, unread. The start module
/// does not count the wait as its work (`super::busy::park`: nothing follows it but the answer).
async fn pass_on(
    request: &web_sys::Request,
    body: Option<&[u8]>,
    preload: Option<Promise>,
) -> Result<Response, Error> {
    let navigation = request.mode() == web_sys::RequestMode::Navigate;
    // A failed preload is left to the fetch below, which meets the same network or answers.
    if let Ok(Some(response)) = preloaded(preload, &request.url()).await {
        return Ok(response);
    }
    match body {
        Some(body) if !navigation => fetch_raw(&with_body(request, body)?).await,
        _ => fetch_raw(request).await,
    }
}
