//! Asking a page for auth: the Service Worker holds no token (SPEC §5.3), so when it needs one it asks a
//! page with [`SwToPage::RefreshRequest`] over a `MessageChannel` and waits for the
//! [`PageReply::RefreshReply`] on it, at most [`PAGE_REPLY_TIMEOUT_MS`] (a refresh), or
//! [`CURRENT_AUTH_TIMEOUT_MS`] for the current header of a page (before a queued mutation's replay).
//!
//! | Caller | `failed` | The page (see `SwToPage::RefreshRequest`) |
//! |---|---|---|
//! | refresh-and-retry (`auth_retry`, a queued replay), through [`after_auth_failure`] | fingerprint of the header that failed | refreshes if that is its current token, else answers its current header |
//! | the mutation queue, before a replay | `None` | answers its current header |
//!
//! The page asked is the one that made the request (`FetchEvent.clientId`), or else any window this
//! worker controls. The header received is used for the requests it was asked for and dropped: it is
//! never stored.
//!
//! **Single flight: the core's.** Auth failures go through the core's refresh machine
//! ([`cachet_core::machines::refresh::Flight`], the one the page client runs): the first starts one
//! question to the page, later ones wait behind it and are retried together with its header, a request
//! sent before a refresh finished is retried at once (with the header the page has now), each is retried
//! once, and a token the page refused is refused at once afterwards. Across tabs the page is the single
//! flight (Web Locks). Only this flight lives in memory, and only while requests wait on it (their fetch
//! events keep the worker alive): nothing is lost when the worker stops (a restarted worker asks once
//! more about a refused token). This worker never resets it: a new session shows as a new token.

use std::cell::{Cell, RefCell};

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::machines::refresh::{Flight, Outcome, RefreshEvent, RejectReason};
use cachet_core::protocol::{decode_message, encode_message, AuthChangeKind, PageReply, SwEvent, SwToPage};
use futures::channel::oneshot;
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
pub const PAGE_REPLY_TIMEOUT_MS: u64 = 10_000;

/// How long the Service Worker waits for a page's current `Authorization` (a question with no failed
/// token: no refresh runs, the page answers from memory once it started). Short, because a page being
/// unloaded or reloaded never answers, and a queued mutation waits on the answer.
pub const CURRENT_AUTH_TIMEOUT_MS: u64 = 2_000;

/// A page's reply: whether it has (fresh) auth, and the `Authorization` value to send, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageAnswer {
    /// `false`: the page has no auth (the refresh was refused or failed).
    pub ok: bool,
    /// The header for the request; `None` with `ok` for auth the browser sends itself (cookies).
    pub authorization: Option<String>,
}

thread_local! {
    static NEXT_REQUEST_ID: Cell<u64> = const { Cell::new(1) };
    static FLIGHT: RefCell<Flight<Waiter>> = RefCell::new(Flight::new(true));
}

/// A request waiting on the flight: told its outcome and, after this worker's refresh, the header the
/// page gave.
type Waiter = oneshot::Sender<(Outcome, Option<String>)>;

/// The auth generation a request sent now is sent with (bumped by every refresh this worker ran).
pub(crate) fn generation() -> u64 {
    FLIGHT.with(|flight| flight.borrow().state().generation)
}

/// After a request from `client_id`, sent with `sent` (its `Authorization`) at `generation`, met an auth
/// failure: `Ok(header)` to send it once more with that `Authorization` (`None`: with none), or why not.
/// The core's machine decides ([`Flight`], module docs); this edge carries out its one effect, the
/// question to a page. A refresh that ends without fresh auth (refused, failed, no page, silent past
/// the timeout) broadcasts `sw-auth-state-change {type: 'logout'}` once for all its waiters; a cookie
/// session's failure (no refresh) too, each time.
pub(crate) async fn after_auth_failure(
    refreshes: bool,
    client_id: Option<&str>,
    sent: Option<&str>,
    retried: bool,
    generation: u64,
) -> Result<Option<String>, RejectReason> {
    let token = sent.map(auth_fingerprint);
    let (sender, told) = oneshot::channel();
    let settled = FLIGHT.with(|flight| {
        let mut flight = flight.borrow_mut();
        flight.set_can_refresh(refreshes);
        flight.auth_failed(sender, retried, generation, token.clone())
    });
    if settled.start_refresh {
        wasm_bindgen_futures::spawn_local(run_refresh(client_id.map(str::to_owned), token.clone()));
    }
    tell(settled.told, None);
    match told.await {
        Ok((Outcome::Retry { .. }, Some(header))) => Ok(Some(header)),
        // Retried at once (sent before a refresh finished): the page's current header.
        Ok((Outcome::Retry { .. }, None)) => match ask_page_for_auth(client_id, token).await {
            Ok(Some(header)) => Ok(Some(header)),
            Ok(None) => Err(RejectReason::RefreshFailed),
            Err(error) => {
                web_sys::console::warn_1(&format!("cachet: no current auth for a retry: {error}").into());
                Err(RejectReason::RefreshFailed)
            }
        },
        Ok((Outcome::Reject(reason), _)) => {
            if reason == RejectReason::NotRefreshable {
                announce(AuthChangeKind::Logout);
            }
            Err(reason)
        }
        Err(_) => Err(RejectReason::Cleared),
    }
}

/// The current `Authorization` header of a page (the one that made the request when `client_id` names
/// it, else any controlled window), for a request that has none yet (a queued mutation's replay), or
/// for a retry after a refresh that finished while the request was on the wire (`failed`: the token it
/// carried, not the page's current one, so the page answers without refreshing).
/// `Ok(None)`: the page has no header to give (cookie auth, or logged out).
pub(crate) async fn ask_page_for_auth(
    client_id: Option<&str>,
    failed: Option<String>,
) -> Result<Option<String>, Error> {
    let timeout_ms = if failed.is_none() { CURRENT_AUTH_TIMEOUT_MS } else { PAGE_REPLY_TIMEOUT_MS };
    let answer = ask_page(client_id, failed, timeout_ms).await?;
    Ok(if answer.ok { answer.authorization } else { None })
}

/// The flight's one effect: asks a page for fresh auth for the token `failed`, and feeds the outcome
/// back (`Succeeded` with the page's header, `Refused` when the page has none, `Failed` when no page
/// answered).
async fn run_refresh(client_id: Option<String>, failed: Option<String>) {
    let answer =
        ask_page(client_id.as_deref(), Some(failed.unwrap_or_default()), PAGE_REPLY_TIMEOUT_MS).await;
    let (event, header) = match answer {
        Ok(PageAnswer { ok: true, authorization }) => (RefreshEvent::Succeeded, authorization),
        Ok(PageAnswer { ok: false, .. }) => (RefreshEvent::Refused, None),
        Err(error) => {
            web_sys::console::warn_1(&format!("cachet: no fresh auth: {error}").into());
            (RefreshEvent::Failed, None)
        }
    };
    if event != RefreshEvent::Succeeded {
        announce(AuthChangeKind::Logout);
    }
    let settled = FLIGHT.with(|flight| flight.borrow_mut().apply(event));
    tell(settled.told, header);
}

fn tell(told: Vec<(Waiter, Outcome)>, header: Option<String>) {
    for (waiter, outcome) in told {
        let header = matches!(outcome, Outcome::Retry { .. }).then(|| header.clone()).flatten();
        let _ = waiter.send((outcome, header));
    }
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
    timeout_ms: u64,
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
    // A timer that cannot be set leaves only the reply to wait for; setTimeout does not fail here.
    let timeout = super::http::timeout(timeout_ms);
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
        Ok(_) => Err(Error::WrongReply { asked: id }),
        Err(error) => Err(Error::Protocol(error)),
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
