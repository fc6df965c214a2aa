//! The app both size builds share: a counter, as small as a real Yew app gets. `bare` renders it alone;
//! `with-cachet` renders it inside `<CachetProvider>` with a component on `use_cachet_sw_event`, which is
//! what an app adopting cachet-yew adds. `cargo xtask bench` builds both (release, wasm-bindgen,
//! `wasm-opt -Oz`) and reports the difference.
#![deny(missing_docs)]

use yew::prelude::*;

/// A button counting its clicks.
#[function_component]
pub fn Counter() -> Html {
    let count = use_state(|| 0_u32);
    let onclick = {
        let count = count.clone();
        Callback::from(move |_| count.set(*count + 1))
    };
    html! {
        <section>
            <h1>{ "counter" }</h1>
            <button {onclick}>{ "+1" }</button>
            <p>{ format!("clicked {} times", *count) }</p>
        </section>
    }
}
