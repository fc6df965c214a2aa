//! A GET through the Service Worker with stale-while-revalidate, showing where the answer came from.

use gloo::net::http::Request;
use serde::Deserialize;
use yew::prelude::*;

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct HelloBody {
    message: String,
    count: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum HelloState {
    Idle,
    Loading,
    Loaded { body: HelloBody, source: String },
    Failed(String),
}

async fn fetch_hello() -> Result<(HelloBody, String), String> {
    let response = Request::get("/api/hello")
        .header("X-SW-Strategy", "stale-while-revalidate")
        .send()
        .await
        .map_err(|error| format!("network: {error}"))?;
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let source = response
        .headers()
        .get(cachet_kit::core::protocol::headers::SOURCE_HEADER)
        .unwrap_or_else(|| "no service worker".into());
    let body = response.json::<HelloBody>().await.map_err(|error| format!("decode: {error}"))?;
    Ok((body, source))
}

#[function_component]
pub(crate) fn Hello() -> Html {
    let state = use_state(|| HelloState::Idle);
    // How many fetches have completed: lets a test wait for "the answer to my Nth click".
    let completed = use_state(|| 0_u32);
    let onclick = {
        let state = state.clone();
        let completed = completed.clone();
        Callback::from(move |_| {
            let state = state.clone();
            let completed = completed.clone();
            state.set(HelloState::Loading);
            wasm_bindgen_futures::spawn_local(async move {
                state.set(match fetch_hello().await {
                    Ok((body, source)) => HelloState::Loaded { body, source },
                    Err(error) => HelloState::Failed(error),
                });
                completed.set(*completed + 1);
            });
        })
    };
    let text = match &*state {
        HelloState::Idle => String::new(),
        HelloState::Loading => "loading".to_owned(),
        HelloState::Loaded { body, source } => {
            format!("{} (count {}, from {source})", body.message, body.count)
        }
        HelloState::Failed(error) => format!("failed: {error}"),
    };
    html! {
        <section>
            <button id="fetch-hello" {onclick}>{ "Fetch /api/hello" }</button>
            <p id="hello" data-completed={ completed.to_string() }>{ text }</p>
        </section>
    }
}
