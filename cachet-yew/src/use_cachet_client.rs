//! `use_cachet_client`: the page client of the surrounding `<CachetProvider>`.

use cachet_client::Client;
use yew::prelude::*;

use crate::CachetContext;

/// The provider's context; `hook` names the caller in the panic message.
#[hook]
pub(crate) fn use_cachet_context(hook: &'static str) -> CachetContext {
    use_context::<CachetContext>().unwrap_or_else(|| {
        panic!("{hook} must be used inside <CachetProvider>: wrap your app's root in <CachetProvider>")
    })
}

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
