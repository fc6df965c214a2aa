//! Registering cachet's Service Worker from the page.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::Error;

/// Registers the Service Worker script at `script` (scope: the script's directory) and resolves once the
/// browser accepted it. The worker takes control of open pages itself when it activates
/// (`clients.claim()`), so the first visit is controlled without a reload.
pub async fn register_service_worker(script: &str) -> Result<(), Error> {
    let container = web_sys::window()
        .map(|window| window.navigator())
        .filter(|navigator| {
            js_sys::Reflect::has(navigator, &JsValue::from_str("serviceWorker")).unwrap_or(false)
        })
        .map(|navigator| navigator.service_worker())
        .ok_or(Error::ServiceWorkerUnsupported)?;
    JsFuture::from(container.register(script)).await.map_err(|error| {
        let (name, message) = match error.dyn_ref::<js_sys::Error>() {
            Some(error) => (String::from(error.name()), String::from(error.message())),
            None => ("Error".to_owned(), format!("{error:?}")),
        };
        Error::Registration { script: script.to_owned(), name, message }
    })?;
    Ok(())
}
