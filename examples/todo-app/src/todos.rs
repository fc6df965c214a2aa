//! The todo list: a cached GraphQL query, and the mutations that invalidate it, typed by `graphql_client`
//! (see [`crate::operations`]).

use std::collections::BTreeMap;
use std::rc::Rc;

use cachet_client::{ClientEvent, GqlOptions, SwEvent};
use cachet_yew::{use_cachet_client, use_cachet_query, use_cachet_typed_mutation, MutationStatus};
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::operations::{
    create_todo, delete_todo, get_todos, todo_summary, update_todo, CreateTodo, DeleteTodo, GetTodos,
    TodoSummary, UpdateTodo,
};

/// The explicit tag of the summary, which every mutation names in `invalidate`.
const SUMMARY_TAG: &str = "summary";

/// One todo, as `GetTodos` returns it.
type Todo = get_todos::GetTodosTodos;

/// Options of every mutation here: with auth, and invalidating the summary besides the derived tags.
fn mutation_options() -> GqlOptions {
    GqlOptions { invalidate: vec![SUMMARY_TAG.to_owned()], ..GqlOptions::with_auth(true) }
}

/// Adds queued offline, by queue id, until the Service Worker replays (or gives up) each one.
#[derive(Debug, Default, PartialEq)]
struct Pending(BTreeMap<u64, String>);

enum PendingAction {
    Queued(u64, String),
    Settled(u64),
}

impl Reducible for Pending {
    type Action = PendingAction;

    fn reduce(self: Rc<Self>, action: PendingAction) -> Rc<Self> {
        let mut pending = self.0.clone();
        match action {
            PendingAction::Queued(id, title) => pending.insert(id, title),
            PendingAction::Settled(id) => pending.remove(&id),
        };
        Rc::new(Pending(pending))
    }
}

/// The add form, the summary and the list.
#[function_component]
pub(crate) fn Todos() -> Html {
    let todos = use_cachet_query::<GetTodos>(get_todos::Variables, GqlOptions::with_auth(true));
    let pending = use_reducer(Pending::default);
    let client = use_cachet_client();
    {
        // Every Service Worker event, none skipped (two replays may arrive before one render).
        let dispatcher = pending.dispatcher();
        use_effect_with(client, move |client| {
            let subscription = client.subscribe(move |event| {
                if let ClientEvent::Sw(
                    SwEvent::MutationReplayed { id, .. } | SwEvent::MutationDeadLettered { id, .. },
                ) = event
                {
                    dispatcher.dispatch(PendingAction::Settled(*id));
                }
            });
            move || drop(subscription)
        });
    }
    let source = match (&todos.data, todos.from_cache) {
        (None, _) => "",
        (Some(_), true) => "from cache",
        (Some(_), false) => "from network",
    };
    let items = todos.data.as_ref().map(|data| data.todos.clone()).unwrap_or_default();
    html! {
        <section class="todos">
            <AddTodo on_queued={ let pending = pending.dispatcher(); Callback::from(move |(id, title)| pending.dispatch(PendingAction::Queued(id, title))) } />
            <Summary />
            <p id="todos-source" class={ classes!("source", todos.from_cache.then_some("cached")) }
               data-count={ items.len().to_string() }>{ source }</p>
            if let Some(error) = &todos.error {
                <p id="todos-error" class="error">{ error.to_string() }</p>
            }
            <ul id="todos">
                { for items.into_iter().map(|todo| { let key = todo.id.clone(); html! { <TodoItem {key} {todo} /> } }) }
                { for pending.0.iter().map(|(id, title)| html! {
                    <li class="pending" data-queued={ id.to_string() }>
                        <span class="title">{ title }</span><span class="muted">{ " queued offline" }</span>
                    </li>
                }) }
            </ul>
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct AddTodoProps {
    on_queued: Callback<(u64, String)>,
}

#[function_component]
fn AddTodo(props: &AddTodoProps) -> Html {
    let options = GqlOptions { queue_offline: true, ..mutation_options() };
    let create = use_cachet_typed_mutation::<CreateTodo>(options);
    let input = use_node_ref();
    let onsubmit = {
        let (create, input, on_queued) = (create.clone(), input.clone(), props.on_queued.clone());
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            let Some(field) = input.cast::<HtmlInputElement>() else {
                return;
            };
            let title = field.value();
            if title.trim().is_empty() {
                return;
            }
            field.set_value("");
            let variables = create_todo::Variables { title: title.clone() };
            let (future, on_queued) = (create.mutate_async(variables), on_queued.clone());
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(result) = future.await {
                    if let Some(id) = result.queued {
                        on_queued.emit((id, title));
                    }
                }
            });
        })
    };
    html! {
        <form id="add" {onsubmit}>
            <input id="new-title" ref={input} placeholder="What needs doing?" />
            <button id="add-button" type="submit" disabled={ create.status == MutationStatus::Running }>{ "Add" }</button>
            if let Some(error) = &create.error {
                <p id="add-error" class="error">{ error.to_string() }</p>
            }
        </form>
    }
}

/// "N of M done": its own query, under the explicit tag `summary`.
#[function_component]
fn Summary() -> Html {
    let options = GqlOptions { tags: Some(vec![SUMMARY_TAG.to_owned()]), ..GqlOptions::with_auth(true) };
    let summary = use_cachet_query::<TodoSummary>(todo_summary::Variables, options);
    let text = match &summary.data {
        Some(data) => {
            let done = data.todos.iter().filter(|todo| todo.done).count();
            format!("{done} of {} done", data.todos.len())
        }
        None => String::new(),
    };
    html! { <p id="summary">{ text }</p> }
}

#[derive(Properties, PartialEq)]
struct TodoItemProps {
    todo: Todo,
}

#[function_component]
fn TodoItem(props: &TodoItemProps) -> Html {
    let todo = &props.todo;
    let update = use_cachet_typed_mutation::<UpdateTodo>(mutation_options());
    let delete = use_cachet_typed_mutation::<DeleteTodo>(mutation_options());
    let toggle = {
        let (update, id, done) = (update.clone(), todo.id.clone(), todo.done);
        Callback::from(move |_| {
            // Ticked at once (an optimistic guess of the list); the server's answer replaces it, or a
            // refusal rolls it back.
            let ticked = id.clone();
            let guess = move |data: &get_todos::ResponseData| {
                let mut data = data.clone();
                for todo in data.todos.iter_mut().filter(|todo| todo.id == ticked) {
                    todo.done = !done;
                }
                data
            };
            let outcome =
                update.mutate_optimistic(update_todo::Variables { id: id.clone(), done: !done }, guess);
            wasm_bindgen_futures::spawn_local(async move { drop(outcome.await) });
        })
    };
    let remove = {
        let (delete, id) = (delete.clone(), todo.id.clone());
        Callback::from(move |_| delete.mutate(delete_todo::Variables { id: id.clone() }))
    };
    let error = update.error.as_ref().or(delete.error.as_ref()).map(ToString::to_string);
    html! {
        <li data-id={ todo.id.clone() } class={ classes!(todo.done.then_some("done")) }>
            <input type="checkbox" class="toggle" checked={ todo.done } onclick={toggle} />
            <span class="title">{ &todo.title }</span>
            <button class="delete" onclick={remove} title="delete">{ "×" }</button>
            if let Some(error) = error {
                <span class="error">{ error }</span>
            }
        </li>
    }
}
