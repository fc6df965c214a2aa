//! `use_cachet_mutation`: a GraphQL mutation; the queries it invalidates re-run by themselves.

use std::any::Any;
use std::rc::Rc;

use cachet_client::{Error, GqlOptions, MutationResult};
use cachet_core::graphql::operation_of;
use cachet_core::machines::query::QueryEvent;
use cachet_core::tags::{invalidation_tags, merge_tags, parse_tag_list};
use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use yew::prelude::*;

use crate::provider::use_cachet_context;
use crate::query::{guess_hit_queries, Data, Guess};

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

    /// Runs the mutation with `variables`, showing `guess(data)` meanwhile in every query of data type `D`
    /// that the mutation's invalidation will hit (its derived tags and `invalidate`): until the re-run
    /// after the invalidation brings the server's data, or, if the mutation fails, back to the data
    /// before. A document-level guess: the app computes the whole new data, cachet applies and reverts
    /// it (no normalised cache). A mutation queued offline keeps the guess until its replay invalidates.
    pub fn mutate_optimistic<D: Clone + 'static>(
        &self,
        variables: Option<Value>,
        guess: impl Fn(&D) -> D + 'static,
    ) -> LocalBoxFuture<'static, Result<MutationResult<T>, Error>> {
        let guess = type_erased(guess);
        self.run_guessing(self.mutation.clone(), variables, self.options.clone(), Some(guess))
    }

    /// Runs `mutation` (the typed hooks give their document at each call) with `variables` and `options`.
    pub(crate) fn run(
        &self,
        mutation: AttrValue,
        variables: Option<Value>,
        options: GqlOptions,
    ) -> LocalBoxFuture<'static, Result<MutationResult<T>, Error>> {
        self.run_guessing(mutation, variables, options, None)
    }

    /// [`Self::run`], with an optimistic `guess` for the queries the mutation will invalidate.
    pub(crate) fn run_guessing(
        &self,
        mutation: AttrValue,
        variables: Option<Value>,
        options: GqlOptions,
        guess: Option<Guess>,
    ) -> LocalBoxFuture<'static, Result<MutationResult<T>, Error>> {
        let guessed = match guess {
            Some(guess) => guess_hit_queries(&invalidated_tags(&mutation, &options), &guess),
            None => Vec::new(),
        };
        let (state, client) = (self.state.clone(), self.context.client.clone());
        Box::pin(async move {
            state.set((MutationStatus::Running, None, None));
            let outcome = client.mutate_gql::<T>(&mutation, variables, options).await;
            state.set(match &outcome {
                Ok(result) => (MutationStatus::Success, Some(result.clone()), None),
                Err(error) => (MutationStatus::Error, None, Some(error.clone())),
            });
            if outcome.is_err() {
                for driver in guessed {
                    driver.dispatch(QueryEvent::RollBack);
                }
            }
            outcome
        })
    }
}

/// `guess` for data of type `D`, without its type.
pub(crate) fn type_erased<D: Clone + 'static>(guess: impl Fn(&D) -> D + 'static) -> Guess {
    Rc::new(move |data: &dyn Any| data.downcast_ref::<D>().map(|data| Rc::new(guess(data)) as Data))
}

/// The tags a mutation invalidates: those derived from its operation name and `options.invalidate`, as
/// the Service Worker and the page client derive them (`cachet_core::tags`).
fn invalidated_tags(mutation: &str, options: &GqlOptions) -> Vec<String> {
    let derived = operation_of(mutation, options.operation_name.as_deref())
        .map(|operation| invalidation_tags(operation.kind, operation.name.as_deref()))
        .unwrap_or_default();
    let explicit = parse_tag_list(&options.invalidate.join(",")).unwrap_or_default();
    merge_tags(&derived, &explicit)
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
