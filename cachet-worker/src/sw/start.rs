//! The start module: the engine's fetch path alone, a second wasm built from the same binary source
//! (`src/bin/cachet-sw-start.rs`, which calls [`install_start`]) so that a stopped worker's first answers
//! wait for a smaller module's load and compile (issue "Weight"). What a fetch does not need (the page's
//! messages, push, Background Sync, activation, mutations and their queue, the start-up sweep) is not
//! linked into it: the linker drops what [`install_start`] never reaches.
//!
//! The shim (`service-worker.js`) loads it as the worker starts, where the build has one
//! (`self.CACHET_START`), and routes fetch events to it until the whole engine ([`super::install`])
//! takes over, which it then keeps for the rest of the worker instance's life:
//!
//! - at the first event the start module does not handle (a message, a push, a sync, an activation),
//!   or a request it leaves (a mutation or a subscription, or any request while the database waits for
//!   the move of the earlier builds' databases, an auth failure to refresh, a GET it could not answer,
//!   which the whole engine may answer from the app shell: [`super::router::Answered::Elsewhere`], with
//!   the body it read), or work it leaves (a network answer's store, `super::store_later`; a served
//!   entry's background re-fetch: [`super::router::Answered::Revalidate`], for which the whole engine
//!   runs the request again);
//! - once the worker has had no fetch event for a second (the shim's `upkeepWhenQuiet`), to run the
//!   start-up work no answer waits for (`upkeep()`: the queue's start replay, the sweep).
//!
//! One engine at a time: the whole engine's first event waits until the start module is idle
//! (`idle()`: every fetch it took and everything it left running in `waitUntil` has settled; a fetch
//! waiting on the network is not counted while it waits, `super::busy::parked`), and the start module
//! gets no event after that. So no state the two keep in memory (the identity, the generations, the tag
//! index, the single flight of a refresh) is ever read by one while the other writes it: the whole
//! engine reads everything from storage as at a cold start. A fetch whose answer comes after the
//! take-over began goes on with it (its store is the whole engine's anyway), and the start module's
//! lookups find nothing from then on (`super::store_later::LaterStore`).

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::FetchEvent;

use super::busy::{busy, idle};
use super::router::{self, Answered};

/// The name of the global the shim calls into for the start module.
pub const START_ENGINE_GLOBAL: &str = "__cachet_start_engine";

impl super::Options {
    /// Installs the start module's engine with these options ([`install_start`]): the same check and
    /// plugins as the whole engine's, so that a request is answered alike by either.
    pub fn install_start(self) {
        self.keep();
        install_start();
    }
}

/// Installs the start module's engine on the worker's global scope as `self.__cachet_start_engine`:
/// `fetch(event, early, body, name)` (as the whole engine's: a `Promise` of the answer, or of
/// `{ body, answer }` for a request it leaves to the whole engine, or of `{ body, given }` for an answer
/// `given` whose re-fetch it leaves to the whole engine), `idle()`, `build`. Call it from the start
/// binary's `main` (`cachet generate` writes `src/bin/cachet-sw-start.rs`);
/// [`super::Options::install_start`] also takes the app's check and plugins, which the start module
/// runs as the whole engine does.
///
/// Outside a Service Worker this logs an error to the console and does nothing.
pub fn install_start() {
    let Some((scope, build, config)) = super::begin() else { return };
    let engine = js_sys::Object::new();
    let fetch = Closure::<dyn Fn(FetchEvent, JsValue, JsValue, JsValue) -> Promise>::new(
        move |event: FetchEvent, early: JsValue, body: JsValue, name: JsValue| {
            let config = config.clone();
            let early = early.dyn_into::<Promise>().ok();
            let body = body.dyn_into::<js_sys::Uint8Array>().ok().map(|body| body.to_vec());
            let name = name.dyn_into::<js_sys::Function>().ok();
            busy(wasm_bindgen_futures::future_to_promise(async move {
                match router::handle_fetch::<true, ()>(&event, early, body, name, (), &config).await {
                    Ok(Answered::Here(response)) => Ok(response.into()),
                    Ok(Answered::Elsewhere { body, answer }) => Ok(left(body, "answer", answer)),
                    Ok(Answered::Revalidate { answer, body }) => Ok(left(body, "given", Some(answer))),
                    Err(error) => Err(error.into()),
                }
            }))
        },
    );
    // Resolves, once idle, to `[touched, named]`: the marks of use its hits kept for the whole engine
    // (`store_later`) and the namings of its hits served alone (`names`).
    let idle = Closure::<dyn Fn() -> Promise>::new(|| {
        wasm_bindgen_futures::future_to_promise(async {
            let _ = wasm_bindgen_futures::JsFuture::from(idle()).await;
            Ok(js_sys::Array::of2(&super::store_later::take_touches(), &super::names::take_handed()).into())
        })
    });
    super::set(&engine, "fetch", fetch.as_ref());
    super::set(&engine, "idle", idle.as_ref());
    super::set(&engine, "build", &JsValue::from_str(&build));
    // The closures live as long as the worker.
    fetch.forget();
    idle.forget();
    super::set(&scope, START_ENGINE_GLOBAL, &engine);
}

/// What the shim gets for a request the start module leaves to the whole engine (`{ body, answer }`) or
/// answered with work left to it (`{ body, given }`): the body it read, and the response under `name`.
fn left(body: Option<std::rc::Rc<[u8]>>, name: &str, response: Option<web_sys::Response>) -> JsValue {
    let left = js_sys::Object::new();
    if let Some(body) = body {
        super::set(&left, "body", &js_sys::Uint8Array::from(&body[..]));
    }
    if let Some(response) = response {
        super::set(&left, name, &response);
    }
    left.into()
}
