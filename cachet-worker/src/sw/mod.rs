//! The Service Worker engine.
//!
//! The JS shim (`service-worker.js`, which the CLI writes into each app from `cachet-cli/js/`) loads the
//! wasm and then calls the engine object that [`install`] places on the worker's global scope as `self.__cachet_engine`:
//!
//! | shim listener | engine method | what it does |
//! |---|---|---|
//! | `install` | `handsOver()` | whether the shim may hand a 2xx network answer of what the browser loads (a navigation's preload, a script's early send) to the page before the engine runs (`cachet_core::config::SwRoutes::hands_over`): `false` when a plugin of the app's may change network answers (said on the console); the shim keeps the answer with the build's wasm, and reads it as it starts |
//! | `activate` | `activate()` | deletes the caches of earlier versions (`cachet_core::engine::key::RETIRED_CACHES`) with their index records, reads the generations (a new store's clock is written then, so that a stopped worker's start module finds it), then broadcasts [`SwEvent::Activated`] to every page and agent |
//! | `fetch` | `fetch(event, early, body, name, begun)` | answers a request the shim routed here, returns a `Promise<Response>`; `body`: the request's body when the shim (or the start module) read it; `name`: the shim's naming function (the request's body to a promise of its name's URL), called only for a hit served alone, which is named for the shim (`names`); `early`: the shim's own send of a request whose job begins with the network (`cachet_core::config::SwRoutes::fetches_early`), which the network step takes, or, for a request the shim answered itself (`handsOver`), a copy of that answer, which the engine runs the request's job on (the answer it returns is the shim's to drop); `begun` (the whole engine's): for such a copy, what `invalidations()` said when the shim received it (0 before the whole engine loaded): an invalidation or a clear-all begun since covers the copy, whose store is then dropped |
//! | `message` | `message(event)` | carries out a page's request (see `messages`) |
//! | `sync` (tag `cachet-queue`) | `sync(event)` | replays the offline mutation queue (see `queue`) |
//! | `push` | `push(event)` | a server push: invalidates its tags, re-fetches its documents, shows the notification (`push`; with the `push` cargo feature, else a config that turns push on is reported on the console) |
//!
//! Devtools (the `devtools` cargo feature): `snapshot` answers `snapshot-request` with one page of what the worker holds; `dead_letters`
//! retries and discards dead letters.
//!
//! The first event a worker instance handles also replays the mutation queue (`queue`), in the
//! background: the browser starts the worker again after stopping it, and that is one of the queue's
//! triggers. A `fetch` starts it once its answer is ready (a stopped worker's first answer does not wait
//! for the queue's database); the other events start it as they begin.
//!
//! The shim decides synchronously which requests reach the engine (same origin, GET, not at or below a
//! pass-through path of `cachet_core::config::SwRoutes`); everything else never gets a `respondWith` and
//! goes to the network untouched. The engine then classifies each request with the core
//! (`cachet_core::classify`): a GET is answered with its `X-SW-Strategy`, or `strategy.default` of the
//! config (`network-first` unless configured).
//!
//! Nothing is kept only in SW memory: the browser stops an idle SW after about 30 s, so every state that
//! matters lives in Cache Storage and IndexedDB.

/// The engine's parts: crate-private, and public only with the cargo feature `test-support`, which the
/// crate's own wasm tests turn on (`[dev-dependencies]`) to drive them without a shim. An app sees
/// [`install`], [`install_with`] and [`Options`].
macro_rules! parts {
    ($($(#[$meta:meta])* $name:ident;)*) => {$(
        $(#[$meta])*
        #[cfg(feature = "test-support")]
        pub mod $name;
        $(#[$meta])*
        #[cfg(not(feature = "test-support"))]
        pub(crate) mod $name;
    )*};
}

parts! {
    broadcast;
    database;
    engine;
    generations;
    graphql;
    handover;
    identity;
    invalidate;
    messages;
    names;
    // Only reached through the engine with the `queue` feature (its tests drive them either way).
    #[cfg_attr(not(feature = "queue"), allow(dead_code))]
    queue;
    // In the queue's place without the `queue` feature.
    #[cfg(not(feature = "queue"))]
    queue_off;
    queue_store;
    store;
    store_later;
    sweep;
    tag_index;
}
mod auth_retry;
mod busy;
mod clock;
#[cfg(all(feature = "devtools", feature = "queue"))]
mod dead_letters;
mod http;
mod page_auth;
mod persisted;
mod plugins;
#[cfg(feature = "push")]
mod push;
#[cfg(feature = "queue")]
mod queue_plugin;
#[cfg_attr(not(feature = "queue"), allow(dead_code))]
mod queue_send;
mod router;
mod shell;
#[cfg(feature = "devtools")]
mod snapshot;
mod start;

use cachet_core::config::Config;
use cachet_core::protocol::SwEvent;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ExtendableEvent, ExtendableMessageEvent, FetchEvent, PushEvent, ServiceWorkerGlobalScope};

pub use plugins::Options;
pub use start::{install_start, START_ENGINE_GLOBAL};
#[cfg(feature = "test-support")]
pub use {
    auth_retry::is_auth_failure,
    cachet_core::engine::key::{DOCUMENT_CACHE, RUNTIME_CACHE},
    cachet_core::strategy::{Strategy, STRATEGY_HEADER},
    engine::{respond, Target},
    http::SOURCE_HEADER,
    router::answer,
    store::open_cache,
};

/// The queue's start trigger, once per worker instance ([`queue`]'s replay); in a build without the
/// queue, the look for mutations an earlier build left queued (`queue_off`).
pub(crate) fn start_queue(config: &std::rc::Rc<Config>, background: &dyn Fn(js_sys::Promise)) {
    #[cfg(feature = "queue")]
    queue::start_once(config, background);
    #[cfg(not(feature = "queue"))]
    queue_off::start_once(config, background);
}

/// The name of the global the shim calls into.
pub const ENGINE_GLOBAL: &str = "__cachet_engine";

/// Installs the engine on the Service Worker's global scope. Call it from the SW binary's `main`.
///
/// Outside a Service Worker this logs an error to the console and does nothing.
pub fn install() {
    let Some((scope, build, config)) = begin() else { return };
    database::link_migration();
    generations::link_whole();
    let engine = js_sys::Object::new();
    let activate_build = build.clone();
    let activate_config = config.clone();
    let activate = Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
        // Not part of activation: the replay must not hold fetches back.
        start_queue(&activate_config, &drop);
        let build = activate_build.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            match tag_index::shared().await {
                Ok(index) => {
                    // Entries of earlier versions' caches can no longer be named by any request: drop them.
                    if let Err(error) = store::retire_old_caches(&index).await {
                        web_sys::console::warn_1(&format!("cachet: dropping old caches: {error}").into());
                    }
                    // The generations read (and a new store's clock written, `generations::loaded`) now:
                    // a stopped worker's start module, which never writes them, then finds the clock,
                    // rather than leaving its requests to the whole engine until a request of this one
                    // had it written.
                    if let Err(error) = generations::loaded(&index).await {
                        web_sys::console::warn_1(&format!("cachet: reading the generations: {error}").into());
                    }
                }
                Err(error) => {
                    web_sys::console::warn_1(&format!("cachet: dropping old caches: {error}").into());
                }
            }
            broadcast::broadcast(&SwEvent::Activated { build }).map_err(JsValue::from)?;
            Ok(JsValue::UNDEFINED)
        })
    });
    let fetch_config = config.clone();
    let fetch = Closure::<dyn Fn(FetchEvent, JsValue, JsValue, JsValue, JsValue) -> js_sys::Promise>::new(
        move |event: FetchEvent, early: JsValue, body: JsValue, name: JsValue, begun: JsValue| {
            let config = fetch_config.clone();
            // The shim's early send of a request whose job begins with the network, if it made one.
            let early = early.dyn_into::<js_sys::Promise>().ok();
            // The body the shim or the start module read from the request.
            let body = body.dyn_into::<js_sys::Uint8Array>().ok().map(|body| body.to_vec());
            // The shim's naming of the request (`names`), if it gave one.
            let name = name.dyn_into::<js_sys::Function>().ok();
            // For the shim's copy of an answer it gave itself: `invalidations()` when it was received.
            let begun = begun.as_f64().and_then(cachet_core::generations::generation_of);
            // The queue's start replay begins after the first answer (`router::handle_fetch`).
            wasm_bindgen_futures::future_to_promise(async move {
                let answered =
                    router::handle_fetch::<false, _>(&event, early, body, name, begun, &config).await;
                answered.and_then(router::Answered::whole).map(JsValue::from).map_err(JsValue::from)
            })
        },
    );
    let message_config = config.clone();
    let message = Closure::<dyn Fn(ExtendableMessageEvent) -> js_sys::Promise>::new(
        move |event: ExtendableMessageEvent| {
            let config = message_config.clone();
            start_queue(&config, &|promise| {
                let _ = event.wait_until(&promise);
            });
            wasm_bindgen_futures::future_to_promise(async move {
                messages::handle_message(&event, &config).await;
                Ok(JsValue::UNDEFINED)
            })
        },
    );
    let push_config = config.clone();
    let push = Closure::<dyn Fn(PushEvent) -> js_sys::Promise>::new(move |event: PushEvent| {
        let config = push_config.clone();
        start_queue(&config, &|promise| {
            let _ = event.wait_until(&promise);
        });
        wasm_bindgen_futures::future_to_promise(async move {
            #[cfg(feature = "push")]
            push::handle_push(&event, &config).await;
            #[cfg(not(feature = "push"))]
            report_push_not_built(&config);
            Ok(JsValue::UNDEFINED)
        })
    });
    let upkeep_config = config.clone();
    let upkeep = Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
        let running = js_sys::Array::new();
        self::upkeep(&upkeep_config, &|promise| {
            running.push(&promise);
        });
        js_sys::Promise::all(&running)
    });
    let sync = Closure::<dyn Fn(ExtendableEvent) -> js_sys::Promise>::new(move |event: ExtendableEvent| {
        let config = config.clone();
        #[cfg(feature = "queue")]
        let last_chance = js_sys::Reflect::get(&event, &"lastChance".into()).is_ok_and(|v| v.is_truthy());
        wasm_bindgen_futures::future_to_promise(async move {
            let background = |promise: js_sys::Promise| {
                let _ = event.wait_until(&promise);
            };
            #[cfg(feature = "queue")]
            queue::sync(&config, last_chance, &background).await.map_err(JsValue::from)?;
            // Registered only by a build with the queue: an earlier one's, for what it left queued.
            #[cfg(not(feature = "queue"))]
            start_queue(&config, &background);
            Ok(JsValue::UNDEFINED)
        })
    });
    set(&engine, "activate", activate.as_ref());
    set(&engine, "fetch", fetch.as_ref());
    set(&engine, "message", message.as_ref());
    set(&engine, "sync", sync.as_ref());
    set(&engine, "push", push.as_ref());
    set(&engine, "upkeep", upkeep.as_ref());
    // The start module's stores, handed over (`store_later`): the shim calls it as the take-over ends.
    let store = Closure::<dyn Fn(JsValue) -> js_sys::Promise>::new(|job: JsValue| {
        engine::store_handed(&job).unwrap_or_else(|error| js_sys::Promise::reject(&error.into()))
    });
    set(&engine, "store", store.as_ref());
    store.forget();
    // The start module's marks of use and namings, handed over with its `idle()` (and the marks of the
    // hits the shim answered from names): the shim awaits it as the whole engine takes over.
    let touch =
        Closure::<dyn Fn(JsValue, JsValue) -> js_sys::Promise>::new(|touched: JsValue, named: JsValue| {
            wasm_bindgen_futures::future_to_promise(async move {
                let touched = engine::touch_handed(touched).await;
                // Every naming is tried even when the marks failed: neither depends on the other.
                let named = if named.is_undefined() { Ok(()) } else { names::write_handed(&named).await };
                touched.and(named).map(|()| JsValue::UNDEFINED).map_err(JsValue::from)
            })
        });
    set(&engine, "touch", touch.as_ref());
    touch.forget();
    set(&engine, "build", &JsValue::from_str(&build));
    // What the shim notes with a copy of an answer it gave itself, for the copy's job (`fetch`'s `begun`).
    let invalidations = Closure::<dyn Fn() -> f64>::new(|| store::invalidations_begun() as f64);
    set(&engine, "invalidations", invalidations.as_ref());
    invalidations.forget();
    // Asked by the shim when it keeps the build's wasm (at install, or after the copy was lost).
    let hands_over = Closure::<dyn Fn() -> bool>::new(hands_over);
    set(&engine, "handsOver", hands_over.as_ref());
    hands_over.forget();
    // The closures live as long as the worker: leaking them once per SW start is intended.
    activate.forget();
    fetch.forget();
    message.forget();
    sync.forget();
    push.forget();
    upkeep.forget();
    set(&scope, ENGINE_GLOBAL, &engine);
}

/// What every engine does as it is installed: the build's stamp, the config read (and what it asks for
/// that this build lacks, reported). `None` outside a Service Worker (said on the console).
fn begin() -> Option<(ServiceWorkerGlobalScope, String, std::rc::Rc<Config>)> {
    let Some(scope) = js_sys::global().dyn_into::<ServiceWorkerGlobalScope>().ok() else {
        web_sys::console::error_1(
            &"cachet: sw::install() and install_start() must run in a Service Worker".into(),
        );
        return None;
    };
    let build = build_stamp();
    let config = std::rc::Rc::new(read_config(&scope));
    #[cfg(not(feature = "push"))]
    report_push_not_built(&config);
    #[cfg(not(feature = "persisted-queries"))]
    report_persisted_not_built(&config);
    Some((scope, build, config))
}

/// Sets a property of `object` (a fresh plain object, or the worker's global scope: it cannot throw).
fn set(object: &JsValue, name: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(object, &name.into(), value);
}

/// The start-up work of a worker instance that no answer waits for, handed to `background`
/// (`waitUntil`): the mutation queue's start replay ([`start_queue`]) and the sweep of what earlier
/// instances left stale (`sweep::start_once`). After the first answer, or when the whole engine takes
/// over from the start module (the shim's `upkeep()`).
pub(crate) fn upkeep(config: &std::rc::Rc<Config>, background: &dyn Fn(js_sys::Promise)) {
    start_queue(config, background);
    sweep::start_once(background);
}

/// Whether the shim may hand a 2xx network answer of what the browser loads to the page before the
/// engine runs (`cachet_core::config::SwRoutes::hands_over`, which the shim checks per request): not while a
/// plugin of the app's may change network answers (`Plugin::shapes_network_answers`), said on the
/// console, as navigations then wait for the engine.
fn hands_over() -> bool {
    if plugins::app_shapes_network_answers() {
        web_sys::console::info_1(
            &"cachet: navigations and the page's files wait for the engine: a plugin of the app's may change network answers \
              (Plugin::shapes_network_answers)"
                .into(),
        );
        return false;
    }
    true
}

/// [`install`], with the app's auth-failure check (SPEC §5.5): give it the function the page client got
/// with `cachet_client::ClientBuilder::failure_check`, so that both sides agree. `cachet generate` writes
/// the SW binary `src/bin/cachet-sw.rs` to do so with the app's `src/cachet/auth/check.rs`. The same as
/// `Options::new().failure_check(failure_check).install()`; [`Options`] also takes the app's plugins.
pub fn install_with(failure_check: cachet_core::config::FailureCheck) {
    Options::new().failure_check(failure_check).install();
}

/// [`install_start`] with the app's auth-failure check, as [`install_with`] gives it to the whole engine:
/// `cachet generate` writes the start binary `src/bin/cachet-sw-start.rs` to do so.
pub fn install_start_with(failure_check: cachet_core::config::FailureCheck) {
    Options::new().failure_check(failure_check).install_start();
}

/// Without the `push` feature, a config that turns server push on is reported on the console (at start
/// and on every `push` event), naming the feature: the pushes it asks for are not carried out.
#[cfg(not(feature = "push"))]
fn report_push_not_built(config: &Config) {
    if config.features.push.enabled {
        let error = crate::Error::NotBuilt { what: "features.push of cachet.config.json", feature: "push" };
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
}

/// Without the `persisted-queries` feature, a config that lists endpoints for persisted queries is
/// reported on the console at start, naming the feature: their queries go as the page sent them.
#[cfg(not(feature = "persisted-queries"))]
fn report_persisted_not_built(config: &Config) {
    if !config.features.graphql.persisted_queries.endpoints.is_empty() {
        let what = "features.graphql.persistedQueries of cachet.config.json";
        let error = crate::Error::NotBuilt { what, feature: "persisted-queries" };
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
}

thread_local! {
    /// The text of the config this worker runs on (`{}` for the defaults), as pages ask for it.
    static CONFIG_TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The build stamp `cachet-build.js` set (`self.CACHET_BUILD`), empty when unstamped.
pub fn build_stamp() -> String {
    js_sys::Reflect::get(&js_sys::global(), &"CACHET_BUILD".into())
        .ok()
        .and_then(|build| build.as_string())
        .unwrap_or_default()
}

/// The config this worker runs on, as `cachet.config.json` text: what it answers a `config-request`
/// with. Sent as read rather than serialised again, which would link `Serialize` for the whole config
/// into the worker for this one message.
pub fn config_text() -> String {
    CONFIG_TEXT.with(|text| text.borrow().clone())
}

/// The config `cachet generate` wrote into `cachet-sw-config.js` (`self.CACHET_CONFIG`). A missing or
/// invalid one is reported on the console, naming what is wrong, and the defaults are used.
fn read_config(scope: &ServiceWorkerGlobalScope) -> Config {
    let value = js_sys::Reflect::get(scope, &"CACHET_CONFIG".into()).unwrap_or(JsValue::UNDEFINED);
    let text = if value.is_undefined() {
        web_sys::console::warn_1(&"cachet: self.CACHET_CONFIG is missing; using the default config".into());
        String::from("{}")
    } else {
        js_sys::JSON::stringify(&value).ok().and_then(|text| text.as_string()).unwrap_or_default()
    };
    let (config, text) = match Config::from_json_str(&text) {
        Ok(config) => (config, text),
        Err(error) => {
            web_sys::console::error_1(
                &format!("cachet: invalid CACHET_CONFIG: {error}; using the default config").into(),
            );
            (Config::default(), String::from("{}"))
        }
    };
    CONFIG_TEXT.with(|slot| *slot.borrow_mut() = text);
    config
}
