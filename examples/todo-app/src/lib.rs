//! The example todo app of cachet. At this stage it shows the walking skeleton: a GET cached by the
//! Service Worker, and the Service Worker's broadcast events reaching a component through the agent.
#![deny(missing_docs)]

pub mod cachet;
mod hello;

use cachet_core::protocol::SwEvent;
use cachet_yew::{use_cachet_sw_event, CachetContext, CachetProvider};
use yew::prelude::*;

/// The app's root component.
#[function_component]
pub fn App() -> Html {
    html! {
        <CachetProvider>
            <main>
                <h1>{ "cachet todo" }</h1>
                <SwStatus />
                <hello::Hello />
                <LastSwEvent />
            </main>
        </CachetProvider>
    }
}

#[function_component]
fn SwStatus() -> Html {
    let context = use_context::<CachetContext>().expect("inside <CachetProvider>");
    let text = format!("service worker: {}", context.registration);
    html! { <p id="sw-status">{ text }</p> }
}

#[function_component]
fn LastSwEvent() -> Html {
    let text = match use_cachet_sw_event() {
        None => "no service worker event yet".to_owned(),
        Some(SwEvent::Activated { build }) => format!("service worker activated: {build}"),
        Some(SwEvent::CacheUpdated { url }) => format!("cache updated: {url}"),
        Some(other) => format!("{other:?}"),
    };
    html! { <p id="sw-event">{ text }</p> }
}
