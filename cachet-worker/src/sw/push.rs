//! Server push (SPEC §5.8): the server tells the worker what changed, with no page open.
//!
//! What a push means is the core's decision ([`cachet_core::push::PushAction::decide`]):
//! whether the config accepts pushes (`features.push.enabled`, cookie auth or none), then the payload's
//! tags and documents. The engine carries it out:
//!
//! 1. the tags are invalidated by [`invalidate_everywhere`], the very function a page's
//!    `invalidate-tags` message runs: every GraphQL entry carrying one is invalidated and `cache-invalidated
//!    {tags}` is broadcast, so open tabs' hooks re-run;
//! 2. each document to re-fetch is sent through the worker's own router as a network-first GraphQL
//!    POST marked `X-Cachet-Auth: 1` (the cookie goes with it), and stored in the signed-in user's
//!    partition with its tags;
//! 3. the configured notification (`features.push.notification`) is shown, as `userVisibleOnly`
//!    subscriptions require, unless `silentWhenVisible` is set and a window of the app is visible.
//!
//! A payload the core refuses (garbage, another version, too many tags, too large) changes nothing: it
//! is reported with `console.warn` and the notification is still shown (the browser requires one per
//! push). With push off or bearer / custom auth every push is ignored with a warning, without a
//! notification. An ignored push is also named in the devtools' snapshot (`ignoredPushes`, with the
//! cargo feature `devtools`). Nothing here panics on outside input.

use cachet_core::protocol::headers::{AUTH_HEADER, STRATEGY_HEADER};
use std::rc::Rc;

use cachet_core::config::Config;
use cachet_core::push::{PushAction, Refetch};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    ClientQueryOptions, ClientType, Headers, NotificationOptions, PushEvent, Request, RequestInit,
    ServiceWorkerGlobalScope, VisibilityState, WindowClient,
};

use super::http::await_js;
use super::invalidate::invalidate_everywhere;
use super::router::answer;
use crate::Error;

/// Handles one `push` event; every step's failure is reported on the console, none is thrown.
pub(crate) async fn handle_push(event: &PushEvent, config: &Rc<Config>) {
    if let Err(refusal) = config.features.push.allowed(&config.features.auth) {
        ignored(refusal.to_string());
        return;
    }
    let payload = event
        .data()
        .and_then(|data| data.array_buffer().ok())
        .map(|buffer| js_sys::Uint8Array::new(&buffer).to_vec());
    match PushAction::decide(payload.as_deref(), config) {
        Ok(action) => carry_out(&action, config, event).await,
        Err(error) => ignored(error.to_string()),
    }
    if let Err(error) = notify(config).await {
        web_sys::console::warn_1(&format!("cachet: the push notification: {error}").into());
    }
}

/// Says on the console why a push was ignored and, with the cargo feature `devtools`, names it in the
/// next snapshots (`ignoredPushes`).
fn ignored(why: String) {
    web_sys::console::warn_1(&format!("cachet: ignored a push: {why}").into());
    #[cfg(feature = "devtools")]
    super::snapshot::push_ignored(why);
}

async fn carry_out(action: &PushAction, config: &Config, event: &PushEvent) {
    let waiting = event.clone();
    let background: Rc<dyn Fn(js_sys::Promise)> = Rc::new(move |promise: js_sys::Promise| {
        let _ = waiting.wait_until(&promise);
    });
    if !action.tags.is_empty() {
        if let Err(error) = invalidate_everywhere(&action.tags, &*background).await {
            web_sys::console::error_1(
                &format!("cachet: a push invalidating {}: {error}", action.tags.join(", ")).into(),
            );
        }
    }
    for refetch in &action.refetch {
        if let Err(error) = refetch_one(refetch, config, background.clone()).await {
            web_sys::console::warn_1(
                &format!("cachet: a push's re-fetch of {}: {error}", refetch.endpoint).into(),
            );
        }
    }
}

/// Sends one document as a network-first GraphQL POST through the router, which stores the answer.
async fn refetch_one(
    refetch: &Refetch,
    config: &Config,
    background: Rc<dyn Fn(js_sys::Promise)>,
) -> Result<(), Error> {
    let origin =
        web_sys::Url::new(&scope()?.registration().scope()).map(|url| url.origin()).unwrap_or_default();
    let url = format!("{origin}{}", refetch.endpoint);
    let headers = Headers::new().map_err(|e| Error::js("new Headers", e))?;
    let mut pairs = vec![("content-type", "application/json"), (STRATEGY_HEADER, "network-first")];
    if config.features.auth.enabled {
        pairs.push((AUTH_HEADER, "1"));
    }
    for (name, value) in pairs {
        headers.set(name, value).map_err(|e| Error::js("Headers.set", e))?;
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&refetch.body));
    let request = Request::new_with_str_and_init(&url, &init).map_err(|e| Error::js("new Request", e))?;
    let response = answer(request, String::new(), config, background).await?;
    if !response.ok() {
        return Err(Error::Http { url: response.url(), status: response.status() });
    }
    Ok(())
}

/// Shows `features.push.notification`, unless it is silent while a window is visible and one is.
async fn notify(config: &Config) -> Result<(), Error> {
    let notification = &config.features.push.notification;
    let scope = scope()?;
    if notification.silent_when_visible && a_window_is_visible(&scope).await? {
        return Ok(());
    }
    let options = NotificationOptions::new();
    options.set_body(&notification.body);
    options.set_tag(&notification.tag);
    if let Some(icon) = &notification.icon {
        options.set_icon(icon);
    }
    let shown = scope
        .registration()
        .show_notification_with_options(&notification.title, &options)
        .map_err(|e| Error::js("showNotification", e))?;
    await_js("showNotification", shown).await.map(drop)
}

async fn a_window_is_visible(scope: &ServiceWorkerGlobalScope) -> Result<bool, Error> {
    let options = ClientQueryOptions::new();
    options.set_type(ClientType::Window);
    let windows = await_js("clients.matchAll", scope.clients().match_all_with_options(&options)).await?;
    Ok(js_sys::Array::from(&windows).iter().any(|client| {
        client
            .dyn_into::<WindowClient>()
            .is_ok_and(|window| window.visibility_state() == VisibilityState::Visible)
    }))
}

fn scope() -> Result<ServiceWorkerGlobalScope, Error> {
    js_sys::global().dyn_into().map_err(|_| Error::Context("not in a Service Worker"))
}
