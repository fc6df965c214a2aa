//! Typed operations: `use_cachet_query::<GetTodos>(variables, options)` and
//! `use_cachet_typed_mutation::<CreateTodo>(options)` over `graphql_client`'s `#[derive(GraphQLQuery)]`,
//! whose query files are checked against the schema at compile time.
//!
//! They send what the string forms send for the same document, so they share its cache entries, keys and
//! tags: the document text of the query file, the variables serialised to JSON, and `operationName` only
//! when the file holds more than one operation (where the server needs it to choose; for a single
//! operation it would only make the cache key differ from the same query written by hand). The tags
//! come from the operation name, as for [`crate::use_cachet_gql`].

use cachet_client::{Error, GqlOptions, MutationResult};
use cachet_core::graphql::operation_of;
use futures::future::LocalBoxFuture;
use graphql_client::{GraphQLQuery, QueryBody};
use serde::de::DeserializeOwned;
use serde_json::Value;
use yew::prelude::*;

use crate::query::{DataRequest, RefetchOptions, UseCachetQueryHandle};
use crate::use_cachet_fetch;
use crate::use_cachet_mutation::{use_cachet_mutation, MutationStatus, UseCachetMutationHandle};

/// The request the string form sends for `Q` with `variables`.
fn typed_request<Q: GraphQLQuery>(variables: Q::Variables, options: GqlOptions) -> DataRequest {
    let body = Q::build_query(variables);
    let (variables, options) = parts(&body, options);
    DataRequest::gql(body.query, variables, options)
}

/// The document, variables and options the string forms get for `body`.
fn parts<V: serde::Serialize>(body: &QueryBody<V>, options: GqlOptions) -> (Option<Value>, GqlOptions) {
    let variables = serde_json::to_value(&body.variables).ok().filter(|variables| !variables.is_null());
    let several_operations = operation_of(body.query, None).is_err();
    let operation_name =
        several_operations.then(|| body.operation_name.to_owned()).or(options.operation_name);
    (variables, GqlOptions { operation_name, ..options })
}

/// Runs the typed query `Q` with `variables`: [`crate::use_cachet_gql`] with `Q`'s document, its
/// variables and its `ResponseData`, so the same cache, keys and tags. Re-runs by itself when a mutation
/// invalidates its tags; runs again when `variables` change.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_client::GqlOptions;
/// use cachet_yew::use_cachet_query;
/// use yew::prelude::*;
///
/// // The schema file is the server's; the query file holds `query GetTodos { todos }`.
/// #[derive(graphql_client::GraphQLQuery)]
/// #[graphql(schema_path = "tests/graphql/schema.graphql", query_path = "tests/graphql/get_todos.graphql",
///           response_derives = "Clone, PartialEq, Debug")]
/// struct GetTodos;
///
/// #[function_component]
/// fn TodoCount() -> Html {
///     let todos = use_cachet_query::<GetTodos>(get_todos::Variables, GqlOptions::with_auth(true));
///     html! { <p>{ todos.data.map(|data| data.todos.len()).unwrap_or_default() }</p> }
/// }
/// ```
#[hook]
pub fn use_cachet_query<Q>(
    variables: Q::Variables,
    options: GqlOptions,
) -> UseCachetQueryHandle<Q::ResponseData>
where
    Q: GraphQLQuery,
    Q::ResponseData: DeserializeOwned + Clone + PartialEq + 'static,
{
    use_cachet_query_with::<Q>(variables, options, RefetchOptions::default())
}

/// [`use_cachet_query`] with [`RefetchOptions`]: `enabled` (dependent queries), `refetch_interval`
/// (polling, paused offline and in a hidden tab), `keep_previous_data` (new variables show the previous
/// data as a placeholder), refetch on focus or reconnect.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use std::time::Duration;
/// use cachet_client::GqlOptions;
/// use cachet_yew::{use_cachet_query_with, RefetchOptions};
/// use yew::prelude::*;
///
/// #[derive(graphql_client::GraphQLQuery)]
/// #[graphql(schema_path = "tests/graphql/schema.graphql", query_path = "tests/graphql/get_todos.graphql",
///           response_derives = "Clone, PartialEq, Debug")]
/// struct GetTodos;
///
/// #[derive(Properties, PartialEq)]
/// struct Props { signed_in: bool }
///
/// #[function_component]
/// fn LiveCount(props: &Props) -> Html {
///     // Waits until signed in, then polls every 10 s (not while offline or hidden); a count of it.
///     let refetch = RefetchOptions { enabled: props.signed_in, refetch_interval: Some(Duration::from_secs(10)),
///                                    ..RefetchOptions::default() };
///     let todos = use_cachet_query_with::<GetTodos>(get_todos::Variables, GqlOptions::with_auth(true), refetch);
///     let count = todos.select(|data| data.todos.len());
///     html! { <p>{ count.data.unwrap_or_default() }</p> }
/// }
/// ```
#[hook]
pub fn use_cachet_query_with<Q>(
    variables: Q::Variables,
    options: GqlOptions,
    refetch: RefetchOptions,
) -> UseCachetQueryHandle<Q::ResponseData>
where
    Q: GraphQLQuery,
    Q::ResponseData: DeserializeOwned + Clone + PartialEq + 'static,
{
    use_cachet_fetch(typed_request::<Q>(variables, options), refetch)
}

/// [`use_cachet_query`] that suspends (Yew's `<Suspense>`) until the first data or error, as bounce's
/// `use_query` does; see [`crate::use_cachet_fetch_suspense`].
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_client::GqlOptions;
/// use cachet_yew::use_cachet_query_suspense;
/// use yew::prelude::*;
///
/// #[derive(graphql_client::GraphQLQuery)]
/// #[graphql(schema_path = "tests/graphql/schema.graphql", query_path = "tests/graphql/get_todos.graphql",
///           response_derives = "Clone, PartialEq, Debug")]
/// struct GetTodos;
///
/// #[function_component]
/// fn TodoCount() -> HtmlResult {
///     let todos = use_cachet_query_suspense::<GetTodos>(get_todos::Variables, GqlOptions::default())?;
///     Ok(html! { <p>{ todos.data.map(|data| data.todos.len()).unwrap_or_default() }</p> })
/// }
///
/// #[function_component]
/// fn Page() -> Html {
///     html! { <Suspense fallback={ html! { <p>{ "loading" }</p> } }><TodoCount /></Suspense> }
/// }
/// ```
#[hook]
pub fn use_cachet_query_suspense<Q>(
    variables: Q::Variables,
    options: GqlOptions,
) -> yew::suspense::SuspensionResult<UseCachetQueryHandle<Q::ResponseData>>
where
    Q: GraphQLQuery,
    Q::ResponseData: DeserializeOwned + Clone + PartialEq + 'static,
{
    crate::use_cachet_fetch_suspense(typed_request::<Q>(variables, options), RefetchOptions::default())
}

/// The handle of [`use_cachet_typed_mutation`]: [`UseCachetMutationHandle`] whose `mutate` takes `Q`'s
/// typed variables. `Clone + PartialEq` whatever `Q` is (the derive's unit struct implements neither).
pub struct UseCachetTypedMutationHandle<Q: GraphQLQuery>
where
    Q::ResponseData: Clone + PartialEq,
{
    /// Where the last run stands.
    pub status: MutationStatus,
    /// Its data (`None` while queued offline).
    pub data: Option<Q::ResponseData>,
    /// Its error.
    pub error: Option<Error>,
    /// The queue id when the Service Worker queued it offline.
    pub queued: Option<u64>,
    inner: UseCachetMutationHandle<Q::ResponseData>,
}

impl<Q: GraphQLQuery> Clone for UseCachetTypedMutationHandle<Q>
where
    Q::ResponseData: Clone + PartialEq,
{
    fn clone(&self) -> Self {
        UseCachetTypedMutationHandle {
            status: self.status,
            data: self.data.clone(),
            error: self.error.clone(),
            queued: self.queued,
            inner: self.inner.clone(),
        }
    }
}

impl<Q: GraphQLQuery> PartialEq for UseCachetTypedMutationHandle<Q>
where
    Q::ResponseData: Clone + PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl<Q: GraphQLQuery> std::fmt::Debug for UseCachetTypedMutationHandle<Q>
where
    Q::ResponseData: Clone + PartialEq + std::fmt::Debug,
{
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("UseCachetTypedMutationHandle").field("inner", &self.inner).finish()
    }
}

impl<Q> UseCachetTypedMutationHandle<Q>
where
    Q: GraphQLQuery,
    Q::ResponseData: DeserializeOwned + Clone + PartialEq + 'static,
{
    /// Runs the mutation with `variables`; the handle follows it.
    pub fn mutate(&self, variables: Q::Variables) {
        let future = self.mutate_async(variables);
        wasm_bindgen_futures::spawn_local(async move {
            let _ = future.await;
        });
    }

    /// Runs the mutation with `variables` and resolves to its result; the handle follows it too.
    pub fn mutate_async(
        &self,
        variables: Q::Variables,
    ) -> LocalBoxFuture<'static, Result<MutationResult<Q::ResponseData>, Error>> {
        self.run_typed(variables, None)
    }

    /// [`UseCachetMutationHandle::mutate_optimistic`] with `Q`'s typed variables: `guess` is shown in
    /// every query of data type `D` the mutation will invalidate, until the server's data replaces it, or
    /// rolled back if the mutation fails.
    pub fn mutate_optimistic<D: Clone + 'static>(
        &self,
        variables: Q::Variables,
        guess: impl Fn(&D) -> D + 'static,
    ) -> LocalBoxFuture<'static, Result<MutationResult<Q::ResponseData>, Error>> {
        self.run_typed(variables, Some(crate::use_cachet_mutation::type_erased(guess)))
    }

    /// Runs `Q` with `variables`, with an optimistic `guess` if given.
    fn run_typed(
        &self,
        variables: Q::Variables,
        guess: Option<crate::query::Guess>,
    ) -> LocalBoxFuture<'static, Result<MutationResult<Q::ResponseData>, Error>> {
        let body = Q::build_query(variables);
        let (variables, options) = parts(&body, self.inner.options.clone());
        self.inner.run_guessing(AttrValue::from(body.query), variables, options, guess)
    }
}

/// The typed mutation `Q`: [`use_cachet_mutation`] with `Q`'s document and `ResponseData`; it invalidates
/// the tags derived from `Q`'s operation name (and `options.invalidate`), so the queries holding them
/// re-run by themselves.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_client::GqlOptions;
/// use cachet_yew::use_cachet_typed_mutation;
/// use yew::prelude::*;
///
/// #[derive(graphql_client::GraphQLQuery)]
/// #[graphql(schema_path = "tests/graphql/schema.graphql", query_path = "tests/graphql/create_todo.graphql",
///           response_derives = "Clone, PartialEq, Debug")]
/// struct CreateTodo;
///
/// #[derive(graphql_client::GraphQLQuery)]
/// #[graphql(schema_path = "tests/graphql/schema.graphql", query_path = "tests/graphql/get_todos.graphql",
///           response_derives = "Clone, PartialEq, Debug")]
/// struct GetTodos;
///
/// #[function_component]
/// fn AddTodo() -> Html {
///     let create = use_cachet_typed_mutation::<CreateTodo>(GqlOptions::with_auth(true));
///     let onclick = Callback::from(move |_| {
///         // Every GetTodos list shows one more item at once; rolled back if the server refuses.
///         let guess = |data: &get_todos::ResponseData| {
///             get_todos::ResponseData { todos: data.todos.iter().copied().chain([0]).collect() }
///         };
///         let done = create.mutate_optimistic(create_todo::Variables, guess);
///         wasm_bindgen_futures::spawn_local(async move { drop(done.await) });
///     });
///     html! { <button {onclick}>{ "add" }</button> }
/// }
/// ```
#[hook]
pub fn use_cachet_typed_mutation<Q>(options: GqlOptions) -> UseCachetTypedMutationHandle<Q>
where
    Q: GraphQLQuery + 'static,
    Q::ResponseData: DeserializeOwned + Clone + PartialEq + 'static,
{
    // The document comes with the variables (`Q::build_query`), at each call.
    let inner = use_cachet_mutation::<Q::ResponseData>("", options);
    UseCachetTypedMutationHandle {
        status: inner.status,
        data: inner.data.clone(),
        error: inner.error.clone(),
        queued: inner.queued,
        inner,
    }
}
