//! `<CachetProvider>` and the registration helper, run in a real page in headless Chromium.
#![allow(clippy::unwrap_used)]

use cachet_yew::{register_service_worker, CachetContext, CachetProvider, Error};
use std::cell::RefCell;

use futures::channel::oneshot;
use wasm_bindgen_test::*;
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn registering_a_missing_script_is_a_typed_error_naming_it() {
    let error = register_service_worker("/no-such-service-worker.js").await.unwrap_err();
    match error {
        Error::Registration { script, name, message, missing } => {
            assert_eq!(script, "/no-such-service-worker.js");
            assert_eq!(name, "TypeError", "{message}");
            assert!(!message.is_empty());
            // Every file the worker loads is fetched and named: here none is served.
            assert_eq!(missing.len(), cachet_core::deploy::SERVICE_WORKER_FILES.len(), "{missing:?}");
            assert!(missing[0].ends_with("/no-such-service-worker.js: HTTP 404 (`cachet generate`, copied by index.html's `<link data-trunk rel=\"copy-file\" href=\"service-worker.js\" />`)"), "{missing:?}");
            assert!(missing[2].contains("/cachet-build.js: HTTP 404"), "{missing:?}");
        }
        other => panic!("unexpected error {other:?}"),
    }
}

thread_local! {
    /// Told the registration text once it reads `failed...`: the test awaits it instead of polling.
    static ON_FAILED: RefCell<Option<oneshot::Sender<String>>> = const { RefCell::new(None) };
}

#[function_component]
fn ShowRegistration() -> Html {
    let context = use_context::<CachetContext>().unwrap();
    let text = context.registration.to_string();
    use_effect_with(text.clone(), |text| {
        if text.starts_with("failed") {
            if let Some(sender) = ON_FAILED.with(|cell| cell.borrow_mut().take()) {
                let _ = sender.send(text.clone());
            }
        }
    });
    html! { <p id="registration">{ text }</p> }
}

#[wasm_bindgen_test]
async fn the_provider_reports_a_failed_registration_to_its_children() {
    let (sender, failed) = oneshot::channel();
    ON_FAILED.with(|cell| *cell.borrow_mut() = Some(sender));
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    #[function_component]
    fn Harness() -> Html {
        html! { <CachetProvider sw_path="/missing-sw.js"><ShowRegistration /></CachetProvider> }
    }
    yew::Renderer::<Harness>::with_root(root.clone()).render();
    let text = failed.await.unwrap();
    assert!(
        text.starts_with("failed: registering the service worker /missing-sw.js failed: TypeError"),
        "{text}"
    );
    assert!(text.contains("; not served: ") && text.contains("/missing-sw.js: HTTP 404"), "{text}");
    assert_eq!(root.text_content().unwrap_or_default(), text, "what the children rendered");
}
