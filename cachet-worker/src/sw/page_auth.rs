//! Asking a page for auth: the Service Worker holds no token (SPEC §5.3), so when it needs one it asks a
//! page with [`SwToPage::RefreshRequest`] over a `MessageChannel` and waits for the
//! [`PageReply::RefreshReply`] on it, at most [`PAGE_REPLY_TIMEOUT_MS`] (a refresh), or
//! [`CURRENT_AUTH_TIMEOUT_MS`] for the current header of a page (before a queued mutation's replay).
//!
//! | Caller | `failed` | The page (see `SwToPage::RefreshRequest`) |
//! |---|---|---|
//! | refresh-and-retry (`auth_retry`) | fingerprint of the header that failed | refreshes if that is its current token, else answers its current header |
//! | the mutation queue, before a replay | `None` | answers its current header |
//!
//! The page asked is the one that made the request (`FetchEvent.clientId`), or else any window this
//! worker controls. The header received is used for the one request it was asked for and dropped: it is
//! never stored.
//!
//! **Single flight.** Concurrent auth failures of requests that carried the same token share one
//! question to the page ([`refresh_shared`]); the page is the single flight across tabs (Web Locks), so a
//! failure that arrives after a refresh finished gets the new header at once, without a second refresh.
//! Only this in-flight question lives in memory, and only while requests wait on it (their fetch events
//! keep the worker alive): nothing is lost when the worker stops.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use cachet_core::protocol::{decode_message, encode_message, AuthChangeKind, PageReply, SwEvent, SwToPage};
use futures::future::{FutureExt, LocalBoxFuture, Shared};
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Client, ClientQueryOptions, ClientType, MessageChannel, MessageEvent, ServiceWorkerGlobalScope,
};

use super::broadcast::broadcast;
use super::http::await_js;
use crate::Error;

/// How long the Service Worker waits for a page's reply before it treats the refresh as failed, so that
/// no request hangs when the page is gone or busy.
pub const PAGE_REPLY_TIMEOUT_MS: i32 = 10_000;

/// How long the Service Worker waits for a page's current `Authorization` (a question with no failed
/// token: no refresh runs, the page answers from memory once it started). Short, because a page being
/// unloaded or reloaded never answers, and a queued mutation waits on the answer.
pub const CURRENT_AUTH_TIMEOUT_MS: i32 = 2_000;

/// A page's reply: whether it has (fresh) auth, and the `Authorization` value to send, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageAnswer {
    /// `false`: the page has no auth (the refresh was refused or failed).
    pub ok: bool,
    /// The header for the request; `None` with `ok` for auth the browser sends itself (cookies).
    pub authorization: Option<String>,
}

type SharedAnswer = Shared<LocalBoxFuture<'static, Result<PageAnswer, Error>>>;

/// How many refused token fingerprints [`refresh_shared`] remembers.
const REFUSED_REMEMBERED: usize = 16;

thread_local! {
    static NEXT_REQUEST_ID: Cell<u64> = const { Cell::new(1) };
    static IN_FLIGHT: RefCell<HashMap<String, SharedAnswer>> = RefCell::new(HashMap::new());
    // Fingerprints of tokens whose refresh the page refused, newest last. A refused token stays refused,
    // so a failure of it that arrives after the question settled is answered at once, without asking the
    // page again or announcing a second logout. Only a shortcut: a restarted worker asks once more.
    static REFUSED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The current `Authorization` header of a page (the one that made the request when `client_id` names
/// it, else any controlled window), for a request that has none yet (a queued mutation's replay).
/// `Ok(None)`: the page has no header to give (cookie auth, or logged out).
pub(crate) async fn ask_page_for_auth(
    client_id: Option<&str>,
    failed: Option<String>,
) -> Result<Option<String>, Error> {
    let timeout_ms = if failed.is_none() { CURRENT_AUTH_TIMEOUT_MS } else { PAGE_REPLY_TIMEOUT_MS };
    let answer = ask_page(client_id, failed, timeout_ms).await?;
    Ok(if answer.ok { answer.authorization } else { None })
}

/// Asks for fresh auth after a request carrying the token with fingerprint `failed` met an auth
/// failure. Concurrent callers with the same `failed` share one question. When the page has no fresh
/// auth (refused, failed, gone, or silent past the timeout), `sw-auth-state-change {type: 'logout'}` is
/// broadcast once for all of them. A token the page refused is remembered: its later failures are
/// answered as refused at once, with no new question and no second logout.
pub(crate) async fn refresh_shared(client_id: &str, failed: String) -> Result<PageAnswer, Error> {
    if REFUSED.with(|refused| refused.borrow().contains(&failed)) {
        return Ok(PageAnswer { ok: false, authorization: None });
    }
    let shared = IN_FLIGHT.with(|in_flight| {
        in_flight
            .borrow_mut()
            .entry(failed.clone())
            .or_insert_with(|| {
                let (client_id, failed) = (client_id.to_owned(), failed.clone());
                async move {
                    let answer =
                        ask_page(Some(&client_id), Some(failed.clone()), PAGE_REPLY_TIMEOUT_MS).await;
                    IN_FLIGHT.with(|in_flight| in_flight.borrow_mut().remove(&failed));
                    if matches!(answer, Ok(PageAnswer { ok: false, .. })) {
                        remember_refused(failed);
                    }
                    if !matches!(answer, Ok(PageAnswer { ok: true, .. })) {
                        announce(AuthChangeKind::Logout);
                    }
                    answer
                }
                .boxed_local()
                .shared()
            })
            .clone()
    });
    shared.await
}

fn remember_refused(fingerprint: String) {
    REFUSED.with(|refused| {
        let mut refused = refused.borrow_mut();
        if refused.len() == REFUSED_REMEMBERED {
            refused.remove(0);
        }
        refused.push(fingerprint);
    });
}

/// Broadcasts `sw-auth-state-change {type: kind}`; a failed broadcast is reported on the console.
pub(crate) fn announce(kind: AuthChangeKind) {
    if let Err(error) = broadcast(&SwEvent::AuthStateChange { kind }) {
        web_sys::console::error_1(&format!("cachet: {error}").into());
    }
}

/// Sends one [`SwToPage::RefreshRequest`] and awaits the reply on its port, at most `timeout_ms`.
async fn ask_page(
    client_id: Option<&str>,
    failed: Option<String>,
    timeout_ms: i32,
) -> Result<PageAnswer, Error> {
    let scope: ServiceWorkerGlobalScope =
        js_sys::global().dyn_into().map_err(|_| Error::Context("not in a Service Worker"))?;
    let client = find_client(&scope, client_id).await?.ok_or(Error::NoPage)?;
    let id = NEXT_REQUEST_ID.with(|next| next.replace(next.get() + 1));
    let channel = MessageChannel::new().map_err(|e| Error::js("new MessageChannel", e))?;
    let port = channel.port1();
    let reply = Promise::new(&mut |resolve, _reject| {
        let on_message = Closure::once_into_js(move |event: MessageEvent| {
            let _ = resolve.call1(&JsValue::NULL, &event.data());
        });
        port.set_onmessage(Some(on_message.unchecked_ref()));
    });
    let timeout = Promise::new(&mut |resolve, _reject| {
        // A timer that cannot be set leaves only the reply to wait for; setTimeout does not fail here.
        let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, timeout_ms);
    });
    let text = encode_message(&SwToPage::RefreshRequest { id, failed });
    client
        .post_message_with_transfer(&JsValue::from_str(&text), &Array::of1(&channel.port2()))
        .map_err(|e| Error::js("Client.postMessage", e))?;
    let first = await_js("waiting for the page", Promise::race(&Array::of2(&reply, &timeout))).await;
    port.close();
    let reply_text = first?.as_string().ok_or(Error::PageSilent { waited_ms: timeout_ms })?;
    match decode_message::<PageReply>(&reply_text) {
        Ok(PageReply::RefreshReply { id: answered, ok, authorization }) if answered == id => {
            // The page vouches for its header as the signed-in user's: answers to it may be cached in
            // that user's partition (`cachet_core::partition`).
            if let (true, Some(header)) = (ok, authorization.as_deref()) {
                if let Err(error) = super::identity::vouch(header).await {
                    web_sys::console::warn_1(&format!("cachet: {error}").into());
                }
            }
            Ok(PageAnswer { ok, authorization })
        }
        Ok(_) => Err(Error::Protocol(format!("a reply to another request: {reply_text}"))),
        Err(error) => Err(Error::Protocol(error.to_string())),
    }
}

/// The client `client_id` names, else the first window this worker controls.
async fn find_client(
    scope: &ServiceWorkerGlobalScope,
    client_id: Option<&str>,
) -> Result<Option<Client>, Error> {
    if let Some(id) = client_id.filter(|id| !id.is_empty()) {
        let found = await_js("clients.get", scope.clients().get(id)).await?;
        if let Ok(client) = found.dyn_into::<Client>() {
            return Ok(Some(client));
        }
    }
    let options = ClientQueryOptions::new();
    options.set_type(ClientType::Window);
    let all = await_js("clients.matchAll", scope.clients().match_all_with_options(&options)).await?;
    Ok(Array::from(&all).get(0).dyn_into::<Client>().ok())
}
