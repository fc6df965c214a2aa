//! The bench's `use_cachet_gql` app: one query (`BenchItem`, id 7, 1 KB, tagged `hook`) rendered as
//! `rev <n> live|waiting` in `#item`. The bench page sends a mutation invalidating `hook` and times until
//! the text shows the next revision: the hook heard `cache-invalidated` through the agent, fetched again
//! through the Service Worker, and re-rendered.
use cachet_client::GqlOptions;
use cachet_yew::{use_cachet_gql, CachetProvider};
use serde::Deserialize;
use yew::prelude::*;

const QUERY: &str = "query BenchItem($id: Int!, $size: Int!) { item(id: $id, size: $size) { id rev pad } }";

#[derive(Clone, PartialEq, Deserialize)]
struct Answer {
    item: Item,
}

#[derive(Clone, PartialEq, Deserialize)]
struct Item {
    rev: u64,
}

#[function_component]
fn BenchItem() -> Html {
    let options = GqlOptions { tags: Some(vec!["hook".to_owned()]), ..GqlOptions::default() };
    let variables = serde_json::json!({ "id": 7, "size": 1024 });
    let query = use_cachet_gql::<Answer>(QUERY, Some(variables), options);
    let text = match &query.data {
        Some(answer) => format!("rev {} {}", answer.item.rev, if query.live { "live" } else { "waiting" }),
        None => "loading".to_owned(),
    };
    html! { <p id="item">{ text }</p> }
}

#[function_component]
fn App() -> Html {
    html! { <CachetProvider><BenchItem /></CachetProvider> }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
