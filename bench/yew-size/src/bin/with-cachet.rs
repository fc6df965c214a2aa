//! The same app with cachet-yew: the provider (registers the Service Worker, starts the agent) and one
//! component following the Service Worker's events.
use bench_yew_size::Counter;
use cachet_core::protocol::SwEvent;
use cachet_yew::{use_cachet_sw_event, CachetProvider};
use yew::prelude::*;

#[function_component]
fn LastEvent() -> Html {
    let text = match use_cachet_sw_event() {
        None => "no event yet",
        Some(SwEvent::CacheInvalidated { .. }) => "cache invalidated",
        Some(_) => "service worker event",
    };
    html! { <p>{ text }</p> }
}

#[function_component]
fn App() -> Html {
    html! { <CachetProvider><main><Counter /><LastEvent /></main></CachetProvider> }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
