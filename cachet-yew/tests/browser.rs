//! `<CachetProvider>` and the registration helper, run in a real page in headless Chromium.
#![allow(clippy::unwrap_used)]

use cachet_yew::{register_service_worker, CachetContext, CachetProvider, Error};
use wasm_bindgen_test::*;
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn registering_a_missing_script_is_a_typed_error_naming_it() {
    let error = register_service_worker("/no-such-service-worker.js").await.unwrap_err();
    match error {
        Error::Registration { script, name, message } => {
            assert_eq!(script, "/no-such-service-worker.js");
            assert_eq!(name, "TypeError", "{message}");
            assert!(!message.is_empty());
        }
        other => panic!("unexpected error {other:?}"),
    }
}

#[function_component]
fn ShowRegistration() -> Html {
    let context = use_context::<CachetContext>().unwrap();
    let text = context.registration.to_string();
    html! { <p id="registration">{ text }</p> }
}

#[wasm_bindgen_test]
async fn the_provider_reports_a_failed_registration_to_its_children() {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    #[function_component]
    fn Harness() -> Html {
        html! { <CachetProvider sw_path="/missing-sw.js"><ShowRegistration /></CachetProvider> }
    }
    yew::Renderer::<Harness>::with_root(root.clone()).render();
    let mut text = String::new();
    // Bounded: 200 animation-frame-sized waits at most.
    for _ in 0..200 {
        text = root.text_content().unwrap_or_default();
        if text.starts_with("failed") {
            break;
        }
        gloo::timers::future::TimeoutFuture::new(10).await;
    }
    assert!(
        text.starts_with("failed: registering the service worker /missing-sw.js failed: TypeError"),
        "{text}"
    );
}
