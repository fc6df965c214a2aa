//! Registering cachet's Service Worker from the page, and saying why it did not start.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use gloo::events::EventListener;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ServiceWorker, ServiceWorkerRegistration, ServiceWorkerState};

use crate::Error;

/// Registers the Service Worker script at `script` (scope: the script's directory) and resolves once the
/// browser accepted it and, when it installs a new worker, once that worker installed (its engine
/// loaded). The worker takes control of open pages itself when it activates (`clients.claim()`), so the
/// first visit is controlled without a reload.
///
/// A failure names the script, the browser's reason, and every file the worker loads
/// ([`cachet_core::deploy::SERVICE_WORKER_FILES`]) that did not answer 200.
pub async fn register_service_worker(script: &str) -> Result<(), Error> {
    let container = web_sys::window()
        .map(|window| window.navigator())
        .filter(|navigator| {
            js_sys::Reflect::has(navigator, &JsValue::from_str("serviceWorker")).unwrap_or(false)
        })
        .map(|navigator| navigator.service_worker())
        .ok_or(Error::ServiceWorkerUnsupported)?;
    let registration = match JsFuture::from(container.register(script)).await {
        Ok(registration) => registration.unchecked_into::<ServiceWorkerRegistration>(),
        Err(error) => {
            let (name, message) = match error.dyn_ref::<js_sys::Error>() {
                Some(error) => (String::from(error.name()), String::from(error.message())),
                None => ("Error".to_owned(), format!("{error:?}")),
            };
            let missing = not_served(script).await;
            return Err(Error::Registration { script: script.to_owned(), name, message, missing });
        }
    };
    if let Some(worker) = registration.installing() {
        if !installs(&worker).await {
            return Err(Error::Install { script: script.to_owned(), missing: not_served(script).await });
        }
    }
    Ok(())
}

/// Whether `worker` gets past installing (false: it became redundant).
async fn installs(worker: &ServiceWorker) -> bool {
    loop {
        match worker.state() {
            ServiceWorkerState::Installing | ServiceWorkerState::Parsed => {}
            ServiceWorkerState::Redundant => return false,
            _ => return true,
        }
        let (sender, receiver) = oneshot::channel::<()>();
        let sender = Rc::new(RefCell::new(Some(sender)));
        let _listener = EventListener::new(worker, "statechange", move |_| {
            if let Some(sender) = sender.borrow_mut().take() {
                let _ = sender.send(());
            }
        });
        if receiver.await.is_err() {
            return false;
        }
    }
}

/// Each file the worker loads (relative to its script, as the shim loads them) that does not answer 200:
/// `URL: HTTP 404`, or `URL: <the fetch error>`.
async fn not_served(script: &str) -> Vec<String> {
    let Some(window) = web_sys::window() else { return Vec::new() };
    let base = window.location().href().unwrap_or_default();
    let Ok(script_url) = web_sys::Url::new_with_base(script, &base) else { return Vec::new() };
    let mut missing = Vec::new();
    for (index, file) in cachet_core::deploy::SERVICE_WORKER_FILES.iter().enumerate() {
        // The first is the shim itself: the script given (`sw_path`), whatever its name.
        let url = if index == 0 {
            script_url.href()
        } else {
            let Ok(url) = web_sys::Url::new_with_base(file.path, &script_url.href()) else { continue };
            url.href()
        };
        match JsFuture::from(window.fetch_with_str(&url)).await {
            Ok(response) => {
                let response = response.unchecked_into::<web_sys::Response>();
                if !response.ok() {
                    missing.push(format!("{url}: HTTP {} ({})", response.status(), file.made_by));
                }
            }
            Err(error) => missing.push(format!(
                "{url}: {}",
                js_sys::JSON::stringify(&error).map(String::from).unwrap_or_default()
            )),
        }
    }
    missing
}
