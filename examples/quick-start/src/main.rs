mod cachet; // written by `cachet init`

use cachet::{use_cachet_gql, GqlOptions, Provider};
use cachet_kit::serde_json::Value;
use yew::prelude::*;

#[function_component]
fn Greeting() -> Html {
    // Cached by the Service Worker, cache-first. `GqlOptions::with_auth(true)` would add your auth headers
    // and cache per signed-in user, and so never cache while nobody is signed in.
    let greeting = use_cachet_gql::<Value>("query Greeting { greeting }", None, GqlOptions::default());
    let text = greeting.data.as_ref().and_then(|data| data["greeting"].as_str()).unwrap_or("...").to_owned();
    let source = if greeting.from_cache { "from cache" } else { "from network" };
    html! { <p id="greeting">{ text }{ " " }<small>{ source }</small></p> }
}

#[function_component]
fn App() -> Html {
    let count = use_state(|| 0);
    let onclick = {
        let count = count.clone();
        move |_| count.set(*count + 1)
    };
    html! { <Provider><button {onclick}>{ format!("clicked {}", *count) }</button><Greeting /></Provider> }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
