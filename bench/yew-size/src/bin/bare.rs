//! The bare Yew app.
use bench_yew_size::Counter;
use yew::prelude::*;

#[function_component]
fn App() -> Html {
    html! { <main><Counter /></main> }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
