//! `use_cachet_mutation`: a GraphQL mutation; the queries it invalidates re-run by themselves.

use cachet_client::{Error, GqlOptions, MutationResult};
use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use yew::prelude::*;

use crate::use_cachet_client::use_cachet_context;

/// Where a mutation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutationStatus {
    /// Not run yet.
    Idle,
    /// Running.
    Running,
    /// The last run succeeded (or was queued offline: see `queued`).
    Success,
    /// The last run failed.
    Error,
}

/// The handle of [`use_cachet_mutation`].
#[derive(Debug, Clone, PartialEq)]
pub struct UseCachetMutationHandle<T> {
    /// Where the last run stands.
    pub status: MutationStatus,
    /// Its data (`None` while queued offline).
    pub data: Option<T>,
    /// Its error.
    pub error: Option<Error>,
    /// The queue id when the Service Worker queued it offline (`queue_offline`).
    pub queued: Option<u64>,
    state: UseStateHandle<(MutationStatus, Option<MutationResult<T>>, Option<Error>)>,
    context: crate::CachetContext,
    mutation: AttrValue,
    pub(crate) options: GqlOptions,
}

impl<T: DeserializeOwned + Clone + PartialEq + 'static> UseCachetMutationHandle<T> {
    /// Runs the mutation with `variables`; the handle follows it.
    pub fn mutate(&self, variables: Option<Value>) {
        let future = self.mutate_async(variables);
        wasm_bindgen_futures::spawn_local(async move {
            let _ = future.await;
        });
    }

    /// Runs the mutation with `variables` and resolves to its result; the handle follows it too.
    pub fn mutate_async(
        &self,
        variables: Option<Value>,
    ) -> LocalBoxFuture<'static, Result<MutationResult<T>, Error>> {
        self.run(self.mutation.clone(), variables, self.options.clone())
    }

    /// Runs `mutation` (the typed hooks give their document at each call) with `variables` and `options`.
    pub(crate) fn run(
        &self,
        mutation: AttrValue,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> LocalBoxFuture<'static, Result<MutationResult<T>, Error>> {
        let (state, client) = (self.state.clone(), self.context.client.clone());
        Box::pin(async move {
            state.set((MutationStatus::Running, None, None));
            let outcome = client.mutate_gql::<T>(&mutation, variables, options).await;
            state.set(match &outcome {
                Ok(result) => (MutationStatus::Success, Some(result.clone()), None),
                Err(error) => (MutationStatus::Error, None, Some(error.clone())),
            });
            outcome
        })
    }
}

/// A mutation through the page client. On success the tags derived from its operation name and those of
/// `options.invalidate` are invalidated everywhere, so every query holding them re-runs by itself, in
/// every tab. With `options.queue_offline` the Service Worker queues it while offline and replays it
/// later; the replay invalidates the same tags.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_client::GqlOptions;
/// use cachet_yew::use_cachet_mutation;
/// use serde_json::json;
/// use yew::prelude::*;
///
/// #[function_component]
/// fn AddTodo() -> Html {
///     let options = GqlOptions { invalidate: vec!["dashboard".into()], queue_offline: true, ..GqlOptions::with_auth(true) };
///     let add = use_cachet_mutation::<serde_json::Value>("mutation CreateTodo($title: String!) { createTodo(title: $title) { id } }", options);
///     let onclick = { let add = add.clone(); Callback::from(move |_| add.mutate(Some(json!({ "title": "milk" })))) };
///     html! { <button {onclick} disabled={ add.status == cachet_yew::MutationStatus::Running }>{ "add" }</button> }
/// }
/// ```
#[hook]
pub fn use_cachet_mutation<T>(mutation: &str, options: GqlOptions) -> UseCachetMutationHandle<T>
where
    T: DeserializeOwned + Clone + PartialEq + 'static,
{
    let context = use_cachet_context("use_cachet_mutation");
    let state = use_state_eq(|| (MutationStatus::Idle, None::<MutationResult<T>>, None::<Error>));
    let mutation = AttrValue::from(mutation.to_owned());
    UseCachetMutationHandle {
        status: state.0,
        data: state.1.as_ref().and_then(|result| result.data.clone()),
        error: state.2.clone(),
        queued: state.1.as_ref().and_then(|result| result.queued),
        state: state.clone(),
        context,
        mutation,
        options,
    }
}
