//! The page client's browser plumbing written in JavaScript (`js/`), where the same steps in Rust
//! over web-sys cost every app's wasm far more than the few lines they take in the browser's own
//! promises (each await a state of its own, its drop glue, every `JsValue` conversion: BENCHMARKS.md,
//! session 36, measured step by step). They hold no decision: the Rust caller decides what to ask and
//! what the answer means, and each is covered by the tests of the one place that calls it.
//!
//! wasm-bindgen imports them from the modules of `js/` (snippets, for an app built with `--target web`:
//! trunk preloads them beside the glue): `page.js` always, `alarm.js` with the cargo feature `queue`,
//! `auth.js` with `auth`, `push.js` with `push`, so that an app links the JavaScript of the features it has (a snippet is
//! shipped whole). With the cargo feature `no-modules` (cachet-api, built `--target no-modules`, which
//! cannot import a module) they come from the object `cachetPage` that cachet-api's `bundle.sh` makes
//! of every file of `js/` inside its bundle. Every export is a top-level `export function` or `export
//! async function` (what `bundle.sh` reads), and a file carries no comments beyond its first line: a
//! snippet is shipped as it is written.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

/// The same imports from the module `$file` (`--target web`) or from `cachetPage` (`no-modules`).
macro_rules! page_js {
    ($file:literal, $($item:tt)*) => {
        #[cfg(not(feature = "no-modules"))]
        #[wasm_bindgen(module = $file)]
        extern "C" { $($item)* }
        #[cfg(feature = "no-modules")]
        #[wasm_bindgen(js_namespace = cachetPage)]
        extern "C" { $($item)* }
    };
}

page_js! {
    "/js/page.js",
    /// The page's Service Worker: the controller, else the registration's active worker, else, with
    /// `wait` (a first visit, asking for the config), the one being installed once it is active,
    /// waiting at most `wait` ms. Resolves to `null` without one.
    #[wasm_bindgen(js_name = serviceWorker)]
    pub(crate) fn service_worker(wait: Option<u32>) -> js_sys::Promise;

    /// A promise that resolves to `true` when [`settle`]d, else to `undefined` after `ms`.
    #[wasm_bindgen(js_name = answer)]
    pub(crate) fn answer(ms: u32) -> js_sys::Promise;

    /// Resolves a promise of [`answer`] to `true`.
    #[wasm_bindgen(js_name = settle)]
    pub(crate) fn settle(answer: &js_sys::Promise);

    /// `new Request(url, { method, headers, body, credentials })`, `headers` given as name, value, name,
    /// value, ...; throws what `new Headers` or `new Request` throws.
    #[wasm_bindgen(js_name = request, catch)]
    pub(crate) fn request(
        method: &str,
        url: &str,
        headers: &js_sys::Array,
        body: Option<js_sys::Uint8Array>,
        credentials: &str,
    ) -> Result<web_sys::Request, JsValue>;

    /// Reads `response` whole: resolves to `[url, status, [name, value, name, value, ...], bytes]`;
    /// rejects with what `arrayBuffer` rejects with (a body broken off).
    #[wasm_bindgen(js_name = read)]
    pub(crate) fn read(response: &web_sys::Response) -> js_sys::Promise;

    /// Listens to the `cachet` channel (`channel`), the tabs' `cachet-auth` channel (`tabs`, when
    /// given), `navigator.serviceWorker`'s `message` and `controllerchange` (then starts its messages)
    /// and `window`'s `online` and `offline`: calls `on(kind, data, port)` with the [`heard`] kind, the
    /// event's `data` and its first port. Returns the function that removes every listener.
    #[wasm_bindgen(js_name = listen)]
    pub(crate) fn listen(
        channel: &web_sys::BroadcastChannel,
        tabs: Option<web_sys::BroadcastChannel>,
        on: &js_sys::Function,
    ) -> js_sys::Function;
}

#[cfg(feature = "queue")]
page_js! {
    "/js/alarm.js",
    /// The queue alarm's schedule (`crate::queue_alarm`): once this tab holds the Web Lock `name`
    /// (at once where there are no Web Locks, or the request failed, with a warning), and again at each
    /// poke, calls `ask(done)`, one question at a time (pokes while it is out make one more after it);
    /// `done(at)` sets the next poke at Unix milliseconds `at` (none for `null`). Returns `poke`;
    /// `poke(true)` stops the alarm and releases the lock.
    #[wasm_bindgen(js_name = alarm)]
    pub(crate) fn alarm(name: &str, ask: &js_sys::Function) -> js_sys::Function;
}

#[cfg(feature = "auth")]
page_js! {
    "/js/auth.js",
    /// The auth record's store (`crate::session`'s `store.rs`): in the IndexedDB database `database`
    /// (version 1, its object store `auth` made when missing), reads `key` (`text` undefined: resolves
    /// to the string stored, or `undefined`), deletes it (`text` null) or puts `text` at it; resolves
    /// once the transaction completed. Rejects with `[operation, error]`: `open`, `read`, `write`, or
    /// `commit` (the transaction aborted: storage full).
    #[wasm_bindgen(js_name = record)]
    pub(crate) fn record(database: &str, key: &str, text: JsValue) -> js_sys::Promise;

    /// Resolves once this tab holds the exclusive Web Lock `name` of the origin, to the function that
    /// releases it, or at once to `null` where there are no Web Locks; rejects when the browser refuses.
    #[wasm_bindgen(js_name = lock)]
    pub(crate) fn lock(name: &str) -> js_sys::Promise;
}

#[cfg(feature = "push")]
page_js! {
    "/js/push.js",
    /// The page's push subscription (`crate::push`), on its Service Worker registration's
    /// `pushManager`: with `key` undefined, resolves to it as JSON text (`null` without one, or without
    /// a registration or a Push API); with `key` null, ends it and resolves to what it was; with `key`
    /// (the VAPID public key's bytes), resolves to the existing one made with that key, else ends it and
    /// subscribes (`userVisibleOnly`), waiting at most `ms`. Rejects with `[name, message]`.
    #[wasm_bindgen(js_name = push)]
    pub(crate) fn push(key: JsValue, ms: u32) -> js_sys::Promise;
}

/// What [`listen`] heard: the number it calls with.
pub(crate) mod heard {
    /// A message on the `cachet` channel.
    pub(crate) const CHANNEL: u32 = 0;
    /// A message on the tabs' `cachet-auth` channel.
    pub(crate) const TABS: u32 = 1;
    /// A message from the Service Worker.
    pub(crate) const WORKER: u32 = 2;
    /// `controllerchange`.
    pub(crate) const CONTROLLER: u32 = 3;
    /// `online`.
    pub(crate) const ONLINE: u32 = 4;
    /// `offline`.
    pub(crate) const OFFLINE: u32 = 5;
}

/// The listeners [`listen`] added, with the callback they call: removed when dropped (with the client).
pub(crate) struct Listening {
    pub(crate) _on: Closure<dyn FnMut(u32, JsValue, JsValue)>,
    pub(crate) off: js_sys::Function,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.off.call0(&JsValue::UNDEFINED);
    }
}
