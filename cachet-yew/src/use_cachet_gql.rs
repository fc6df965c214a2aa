//! `use_cachet_gql`: a GraphQL query that re-runs when a mutation invalidates its tags.

use cachet_client::GqlOptions;
use serde::de::DeserializeOwned;
use serde_json::Value;
use yew::prelude::*;

use crate::query::{DataRequest, RefetchOptions, UseCachetQueryHandle};
use crate::use_cachet_fetch;

/// The handle of [`use_cachet_gql`].
pub type UseCachetGqlHandle<T> = UseCachetQueryHandle<T>;

/// Runs `query` with `variables` through the page client and decodes its `data` as `T`. It is tagged with
/// its operation name (or `options.tags`), and runs again, keeping the last data meanwhile, when a
/// `cache-invalidated` hits those tags — a mutation in this tab or another, or a replayed queued one: the
/// component needs no code for it. It also refetches when the browser comes back online. For refetch on
/// focus, use [`use_cachet_fetch`] with [`DataRequest::gql`].
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_client::GqlOptions;
/// use cachet_core::machines::query::QueryStatus;
/// use cachet_yew::use_cachet_gql;
/// use yew::prelude::*;
///
/// #[derive(Clone, PartialEq, serde::Deserialize)]
/// struct Todos { todos: Vec<Todo> }
/// #[derive(Clone, PartialEq, serde::Deserialize)]
/// struct Todo { id: u64, title: String }
///
/// #[function_component]
/// fn TodoList() -> Html {
///     let todos = use_cachet_gql::<Todos>("query GetTodos { todos { id title } }", None, GqlOptions::with_auth(true));
///     match (&todos.data, todos.status) {
///         (Some(data), _) => html! { <ul>{ for data.todos.iter().map(|todo| html! { <li>{ &todo.title }</li> }) }</ul> },
///         (None, QueryStatus::Error) => html! { <p>{ format!("{:?}", todos.error) }</p> },
///         (None, _) => html! { <p>{ "loading" }</p> },
///     }
/// }
/// ```
#[hook]
pub fn use_cachet_gql<T>(query: &str, variables: Option<Value>, options: GqlOptions) -> UseCachetGqlHandle<T>
where
    T: DeserializeOwned + Clone + PartialEq + 'static,
{
    use_cachet_fetch(DataRequest::gql(query, variables, options), RefetchOptions::default())
}
