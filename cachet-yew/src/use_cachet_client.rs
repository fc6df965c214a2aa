//! `use_cachet_client`: the page client of the surrounding `<CachetProvider>`.

use cachet_client::Client;
use yew::prelude::*;

use crate::provider::use_cachet_context;

/// The page client of the surrounding [`CachetProvider`](crate::CachetProvider), for what the other hooks
/// do not cover (awaiting a login, `fetch_with_gql`, `invalidate_by_tag`).
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_yew::use_cachet_client;
/// use yew::prelude::*;
///
/// #[function_component]
/// fn Refresh() -> Html {
///     let client = use_cachet_client();
///     let onclick = Callback::from(move |_| {
///         let client = client.clone();
///         wasm_bindgen_futures::spawn_local(async move {
///             let _ = client.invalidate_by_tag(&["todos"]).await;
///         });
///     });
///     html! { <button {onclick}>{ "reload todos" }</button> }
/// }
/// ```
#[hook]
pub fn use_cachet_client() -> Client {
    use_cachet_context("use_cachet_client").client
}
