//! The hooks in headless Chromium, against the agent hub run in the page (`AgentMode::InPage`: a
//! wasm-bindgen-test binary cannot start the yew-agent worker; the hub in a worker is covered by
//! cachet-worker's `dedicated_worker` test and by the end-to-end tests of the example app). The network
//! is a fake behind the client's injectable `Http`, counting requests; there is no Service Worker, so the
//! page client invalidates its in-page cache itself and announces it on the `cachet` channel, where the
//! hub hears it as it would hear the Service Worker. Every wait is on the DOM (a MutationObserver).
#![allow(clippy::unwrap_used)]

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use cachet_client::{AuthData, Client, ClientOptions, GqlOptions, Http, Strategy};
use cachet_yew::{
    use_cachet_auth, use_cachet_fetch, use_cachet_gql, use_cachet_mutation, AgentMode, CachetProvider,
    DataRequest, RefetchOptions,
};
use futures::channel::oneshot;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A fake backend: todos to count, and how many requests each operation or path got.
#[derive(Default)]
struct FakeServer {
    todos: Cell<u32>,
    /// GraphQL answers 503 while set (stale-if-error).
    down: Cell<bool>,
    items: Cell<u32>,
    hits: RefCell<BTreeMap<String, u32>>,
}

impl FakeServer {
    fn hits(&self, name: &str) -> u32 {
        self.hits.borrow().get(name).copied().unwrap_or(0)
    }

    fn answer(&self, path: &str, body: &str) -> (Value, Vec<(&'static str, &'static str)>) {
        let name = if path.ends_with("/graphql") {
            let body: Value = serde_json::from_str(body).unwrap();
            let query = body["query"].as_str().unwrap().to_owned();
            query.split_whitespace().nth(1).unwrap().split('(').next().unwrap().to_owned()
        } else {
            path.to_owned()
        };
        *self.hits.borrow_mut().entry(name.clone()).or_default() += 1;
        match name.as_str() {
            "GuessedAdd" => {
                self.todos.set(self.todos.get() + 1);
                (json!({ "data": { "add": true } }), vec![])
            }
            // Answered 422 by `client_on`: a failed mutation, which invalidates nothing.
            "RefusedAdd" => (json!({ "errors": [{ "message": "refused" }] }), vec![]),
            "GetPage" => {
                let body: Value = serde_json::from_str(body).unwrap();
                (json!({ "data": { "page": body["variables"]["page"] } }), vec![])
            }
            // The server allows its answer to stand in for an error for a minute (RFC 5861).
            "StaleTodos" => (
                json!({ "data": { "todos": (0..self.todos.get()).collect::<Vec<_>>() } }),
                vec![("Cache-Control", "stale-if-error=60")],
            ),
            "GetTodos" | "ListTodos" | "FocusTodos" | "FreshTodos" | "BothTodos" | "DependentTodos"
            | "PolledTodos" | "SuspendedTodos" => {
                (json!({ "data": { "todos": (0..self.todos.get()).collect::<Vec<_>>() } }), vec![])
            }
            "CreateTodo" => {
                self.todos.set(self.todos.get() + 1);
                (json!({ "data": { "createTodo": { "id": self.todos.get() } } }), vec![])
            }
            "GetUser" => (json!({ "data": { "user": self.hits("GetUser") } }), vec![]),
            // Sent by a test after what it watches, as slow as the slowest: once it is answered, every
            // request sent before it has been counted.
            "SlowSentinel" => (json!({ "data": { "sentinel": true } }), vec![]),
            "UpdateUser" => (json!({ "data": { "updateUser": { "id": 1 } } }), vec![]),
            "/api/items" => (json!({ "count": self.items.get() }), vec![("X-SW-Cache-Tags", "items")]),
            other => panic!("the fake server does not know {other}"),
        }
    }
}

/// A client on the fake server, with its own IndexedDB database.
fn client_on(server: &Rc<FakeServer>, database: &str) -> Client {
    let server = server.clone();
    let http = Http::with_fetch(move |request: web_sys::Request| {
        let server = server.clone();
        Box::pin(async move {
            let body = match request.text() {
                Ok(promise) => {
                    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap().as_string().unwrap()
                }
                Err(_) => String::new(),
            };
            let path = web_sys::Url::new(&request.url()).unwrap().pathname();
            if ["GetPage", "SuspendedTodos", "GuessedAdd", "RefusedAdd", "SlowSentinel"]
                .iter()
                .any(|slow| body.contains(slow))
            {
                // Slow enough for the placeholder to be seen.
                gloo::timers::future::TimeoutFuture::new(150).await;
            }
            let (answer, headers) = server.answer(&path, &body);
            let init = web_sys::ResponseInit::new();
            let response_headers = web_sys::Headers::new().unwrap();
            response_headers.set("Content-Type", "application/json").unwrap();
            for (name, value) in headers {
                response_headers.set(name, value).unwrap();
            }
            init.set_headers(&response_headers);
            if body.contains("RefusedAdd") {
                init.set_status(422);
            }
            if server.down.get() {
                init.set_status(503);
            }
            Ok(web_sys::Response::new_with_opt_str_and_init(Some(&answer.to_string()), &init).unwrap())
        })
    });
    let options = ClientOptions { database: database.to_owned(), ..ClientOptions::default() };
    Client::builder()
        .config_json(r#"{"features": {"graphql": {"enabled": true}}}"#)
        .unwrap()
        .http(http)
        .options(options)
        .build()
        .unwrap()
}

/// How long `until` waits before failing with what the DOM shows: well under the runner's own timeout,
/// so that a red test names what it was waiting for. Not a sleep: `until` resolves on the first DOM change
/// that satisfies it.
const DEADLINE_MS: i32 = 10_000;

/// Resolves once `check` holds for the HTML under `root`, re-checked on every DOM change (a
/// MutationObserver, no polling); panics with `what` and the last HTML after [`DEADLINE_MS`].
async fn until(root: &web_sys::Element, what: &str, check: impl Fn(&str) -> bool + 'static) -> String {
    let html = root.inner_html();
    if check(&html) {
        return html;
    }
    let (sender, receiver) = oneshot::channel::<Result<String, String>>();
    let sender = Rc::new(RefCell::new(Some(sender)));
    let watched = root.clone();
    let on_change = {
        let sender = sender.clone();
        Closure::<dyn FnMut()>::new(move || {
            let html = watched.inner_html();
            if check(&html) {
                if let Some(sender) = sender.borrow_mut().take() {
                    let _ = sender.send(Ok(html));
                }
            }
        })
    };
    let observer = web_sys::MutationObserver::new(on_change.as_ref().unchecked_ref()).unwrap();
    let init = web_sys::MutationObserverInit::new();
    init.set_subtree(true);
    init.set_child_list(true);
    init.set_character_data(true);
    init.set_attributes(true);
    observer.observe_with_options(root, &init).unwrap();
    let watched = root.clone();
    let on_deadline = Closure::once(move || {
        if let Some(sender) = sender.borrow_mut().take() {
            let _ = sender.send(Err(watched.inner_html()));
        }
    });
    let window = gloo::utils::window();
    let timer = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(
            on_deadline.as_ref().unchecked_ref(),
            DEADLINE_MS,
        )
        .unwrap();
    let outcome = receiver.await.unwrap();
    observer.disconnect();
    window.clear_timeout_with_handle(timer);
    outcome.unwrap_or_else(|html| panic!("waited {DEADLINE_MS} ms for {what}; the page shows: {html}"))
}

fn click(root: &web_sys::Element, selector: &str) {
    root.query_selector(selector).unwrap().unwrap().unchecked_into::<web_sys::HtmlElement>().click();
}

#[derive(Properties, PartialEq)]
struct HarnessProps {
    client: Client,
    children: Html,
}

#[function_component]
fn Harness(props: &HarnessProps) -> Html {
    html! {
        <CachetProvider client={props.client.clone()} sw_path="/no-sw-in-this-test.js" agent={AgentMode::InPage}>
            { props.children.clone() }
        </CachetProvider>
    }
}

fn mount(client: Client, children: Html) -> (web_sys::Element, yew::AppHandle<Harness>) {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let app = yew::Renderer::<Harness>::with_root_and_props(root.clone(), HarnessProps { client, children })
        .render();
    (root, app)
}

#[derive(Clone, PartialEq, serde::Deserialize)]
struct Todos {
    todos: Vec<u32>,
}

/// The todo count, cache-first (the default): a refetch after a matching invalidation must reach the
/// server, since the invalidation purged the cached answer.
#[function_component]
fn TodoCount() -> Html {
    let todos = use_cachet_gql::<Todos>("query GetTodos { todos }", None, GqlOptions::default());
    let count = todos.data.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_else(|| "no".into());
    html! { <p id="todos" data-live={ todos.live.to_string() }>{ format!("{count} todos") }</p> }
}

/// The same list, network-only: every fetch reaches the server, so the request count shows every refetch,
/// a wrong one included (a cache-first query's wrong refetch would be answered by the cache, unseen).
#[function_component]
fn TodoCountNetworkOnly() -> Html {
    let options = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    let todos = use_cachet_gql::<Todos>("query ListTodos { todos }", None, options);
    let count = todos.data.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_else(|| "no".into());
    html! { <p id="list" data-live={ todos.live.to_string() }>{ format!("{count} listed") }</p> }
}

#[derive(Clone, PartialEq, serde::Deserialize)]
struct User {
    user: u32,
}

/// A query on the unrelated mutation's tags: its refetch shows that the hub has handled that invalidation.
#[function_component]
fn UserVersion() -> Html {
    let user = use_cachet_gql::<User>("query GetUser { user }", None, GqlOptions::default());
    let version = user.data.as_ref().map(|data| data.user.to_string()).unwrap_or_else(|| "none".into());
    html! { <p id="user" data-live={ user.live.to_string() }>{ format!("user v{version}") }</p> }
}

/// The same, network-only: a sentinel whose refetch always reaches the server, whatever order the page
/// client (which purges its in-page cache) and the hub hear a broadcast in.
#[function_component]
fn UserVersionNetworkOnly() -> Html {
    let options = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    let user = use_cachet_gql::<User>("query GetUser { user }", None, options);
    let version = user.data.as_ref().map(|data| data.user.to_string()).unwrap_or_else(|| "none".into());
    html! { <p id="user" data-live={ user.live.to_string() }>{ format!("user v{version}") }</p> }
}

#[function_component]
fn Mutations() -> Html {
    let create =
        use_cachet_mutation::<Value>("mutation CreateTodo { createTodo { id } }", GqlOptions::default());
    let unrelated =
        use_cachet_mutation::<Value>("mutation UpdateUser { updateUser { id } }", GqlOptions::default());
    let on_create = {
        let create = create.clone();
        Callback::from(move |_| create.mutate(None))
    };
    let on_unrelated = {
        let unrelated = unrelated.clone();
        Callback::from(move |_| unrelated.mutate(None))
    };
    html! {
        <>
            <button id="create" onclick={on_create}>{ format!("create: {:?}", create.status) }</button>
            <button id="unrelated" onclick={on_unrelated}>{ format!("unrelated: {:?}", unrelated.status) }</button>
        </>
    }
}

#[wasm_bindgen_test]
async fn a_query_renders_data_and_re_renders_when_a_mutation_hits_its_tags_but_not_otherwise() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(
        client_on(&server, "cachet-yew-test-query"),
        html! { <><TodoCount /><TodoCountNetworkOnly /><UserVersion /><Mutations /></> },
    );
    until(&root, "three live queries with their first data", |html| {
        html.contains(r#"id="todos" data-live="true">1 todos"#)
            && html.contains(r#"id="list" data-live="true">1 listed"#)
            && html.contains(r#"id="user" data-live="true">user v1"#)
    })
    .await;
    assert_eq!((server.hits("GetTodos"), server.hits("ListTodos"), server.hits("GetUser")), (1, 1, 1));

    // An unrelated mutation (it invalidates `user`, `users`): GetUser re-runs, the todo queries do not.
    // Every subscription gets the hub's verdict in the same turn, so once GetUser's refetch has come back,
    // a wrong (network-only) ListTodos refetch would have reached the server as well.
    click(&root, "#unrelated");
    until(&root, "UpdateUser done and GetUser refetched", |html| {
        html.contains("unrelated: Success") && html.contains("user v2")
    })
    .await;
    assert_eq!(server.hits("ListTodos"), 1, "an unrelated invalidation must not refetch the todos");
    assert_eq!(server.hits("GetTodos"), 1);

    // A mutation hitting `todos`: both lists re-render with fresh data; the components have no code for it.
    click(&root, "#create");
    until(&root, "both todo queries refetched after CreateTodo", |html| {
        html.contains("2 todos") && html.contains("2 listed")
    })
    .await;
    assert_eq!(server.hits("GetTodos"), 2, "one refetch, past the purged cache entry");
    assert_eq!(server.hits("ListTodos"), 2, "one refetch, for the matching mutation only");
    assert_eq!(server.hits("GetUser"), 2, "CreateTodo does not hit `user`");
    assert_eq!((server.hits("CreateTodo"), server.hits("UpdateUser")), (1, 1));
    app.destroy();
}

/// Posts `wire` on a `cachet` channel object of its own, as another tab's Service Worker broadcast arrives
/// (a channel object never hears its own posts; the hub's and the page client's objects hear this one).
///
/// The hub is one per page (a thread-local, started by the first test), so its channel object is older
/// than a later test's client's and hears a broadcast first: the hook's refetch runs before the client's
/// own listener has purged its in-page cache. The hook therefore drops the hit entries itself
/// (`Client::forget_cached`) before it refetches;
/// `a_cache_first_query_re_run_by_another_tabs_invalidation_shows_the_fresh_data` holds it to that. The
/// other tests watch network-only queries, so that a wrong refetch reaches the server and is counted.
fn broadcast_from_elsewhere(channel: &web_sys::BroadcastChannel, wire: &str) {
    channel.post_message(&JsValue::from_str(wire)).unwrap();
}

#[wasm_bindgen_test]
async fn another_tabs_invalidation_re_runs_the_queries_it_hits_and_no_other() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(
        client_on(&server, "cachet-yew-test-other-tab"),
        html! { <><TodoCountNetworkOnly /><UserVersionNetworkOnly /></> },
    );
    until(&root, "two live queries with their first data", |html| {
        html.contains(r#"id="list" data-live="true">1 listed"#)
            && html.contains(r#"id="user" data-live="true">user v1"#)
    })
    .await;
    assert_eq!((server.hits("ListTodos"), server.hits("GetUser")), (1, 1));
    let elsewhere = web_sys::BroadcastChannel::new("cachet").unwrap();

    // An unrelated tag: GetUser (on `user`) re-runs, which shows the hub has handled the message; by then
    // a wrong network-only ListTodos refetch would have reached the server as well.
    server.todos.set(2);
    broadcast_from_elsewhere(&elsewhere, r#"{"v":1,"type":"cache-invalidated","tags":["user"]}"#);
    until(&root, "GetUser refetched after `user`", |html| html.contains("user v2")).await;
    assert_eq!(server.hits("ListTodos"), 1, "an unrelated invalidation must not refetch the todos");
    assert!(root.inner_html().contains("1 listed"));

    // `todos`: both todo queries re-render with the fresh data, one request each.
    broadcast_from_elsewhere(&elsewhere, r#"{"v":1,"type":"cache-invalidated","tags":["todos"]}"#);
    until(&root, "the list refetched after `todos`", |html| html.contains("2 listed")).await;
    assert_eq!(server.hits("ListTodos"), 2, "one refetch");
    assert_eq!(server.hits("GetUser"), 2, "`todos` does not hit GetUser");
    elsewhere.close();
    app.destroy();
}

#[wasm_bindgen_test]
async fn a_cache_first_query_re_run_by_another_tabs_invalidation_shows_the_fresh_data() {
    // The hub can hear the broadcast before the client's own listener drops the in-page entry; the hook
    // drops it first (`Client::forget_cached`), or this re-run would render the stale copy.
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) =
        mount(client_on(&server, "cachet-yew-test-cache-first-other-tab"), html! { <TodoCount /> });
    until(&root, "the cache-first list with its first data", |html| {
        html.contains(r#"id="todos" data-live="true">1 todos"#)
    })
    .await;
    assert_eq!(server.hits("GetTodos"), 1);
    server.todos.set(2);
    let elsewhere = web_sys::BroadcastChannel::new("cachet").unwrap();
    broadcast_from_elsewhere(&elsewhere, r#"{"v":1,"type":"cache-invalidated","tags":["todos"]}"#);
    until(&root, "the cache-first list re-rendered with fresh data", |html| html.contains("2 todos")).await;
    assert_eq!(server.hits("GetTodos"), 2, "one refetch, from the network");
    elsewhere.close();
    app.destroy();
}

#[wasm_bindgen_test]
async fn a_replayed_queued_mutation_re_runs_the_query_once() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(
        client_on(&server, "cachet-yew-test-replay"),
        html! { <><TodoCountNetworkOnly /><UserVersionNetworkOnly /></> },
    );
    until(&root, "two live queries with their first data", |html| {
        html.contains(r#"id="list" data-live="true">1 listed"#)
            && html.contains(r#"id="user" data-live="true">user v1"#)
    })
    .await;
    let elsewhere = web_sys::BroadcastChannel::new("cachet").unwrap();

    // What the Service Worker broadcasts when a queued CreateTodo replays with success, in its order
    // (`cachet_core::machines::queue`, `SendSucceeded`: `Invalidate` — which broadcasts
    // `cache-invalidated` — then `Announce(MutationReplayed)`), back to back.
    server.todos.set(2);
    broadcast_from_elsewhere(&elsewhere, r#"{"v":1,"type":"cache-invalidated","tags":["todo","todos"]}"#);
    broadcast_from_elsewhere(
        &elsewhere,
        r#"{"v":1,"type":"mutation-replayed","id":1,"invalidated":["todo","todos"]}"#,
    );
    until(&root, "the list refetched after the replay", |html| html.contains("2 listed")).await;
    // A sentinel after both: once GetUser has refetched, a second (wrong) refetch of the todos for
    // `mutation-replayed` would have reached the server too.
    broadcast_from_elsewhere(&elsewhere, r#"{"v":1,"type":"cache-invalidated","tags":["user"]}"#);
    until(&root, "the sentinel GetUser refetched", |html| html.contains("user v2")).await;
    assert_eq!(server.hits("ListTodos"), 2, "one refetch per replay");
    elsewhere.close();
    app.destroy();
}

fn dispatch_on_window(name: &str) {
    let event = web_sys::Event::new(name).unwrap();
    gloo::utils::window().dispatch_event(&event).unwrap();
}

#[wasm_bindgen_test]
async fn active_queries_refetch_when_the_browser_comes_back_online() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    // Network-only, so that the refetch shows at the server (a cache-first one is answered by the cache,
    // which no reconnect purges).
    let (root, app) =
        mount(client_on(&server, "cachet-yew-test-reconnect"), html! { <TodoCountNetworkOnly /> });
    until(&root, "the live list", |html| html.contains(r#"id="list" data-live="true">1 listed"#)).await;
    assert_eq!(server.hits("ListTodos"), 1);

    // The hub follows the `online` / `offline` events of its scope (it reads `navigator.onLine` only at
    // start, true here), and tells the hooks of a change only: so offline first, then online. The
    // browser's own `navigator.onLine` stays true throughout; only the events say otherwise.
    server.todos.set(2);
    dispatch_on_window("offline");
    dispatch_on_window("online");
    until(&root, "the list refetched on reconnect", |html| html.contains("2 listed")).await;
    assert_eq!(server.hits("ListTodos"), 2, "one refetch on reconnect");
    app.destroy();
}

/// Two network-only lists, one refetching on focus and one with the default options.
#[function_component]
fn FocusPair() -> Html {
    let options = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    let on_focus = RefetchOptions { on_focus: true, ..RefetchOptions::default() };
    let focused = use_cachet_fetch::<Todos>(
        DataRequest::gql("query FocusTodos { todos }", None, options.clone()),
        on_focus,
    );
    let default = use_cachet_fetch::<Todos>(
        DataRequest::gql("query ListTodos { todos }", None, options),
        RefetchOptions::default(),
    );
    let count =
        |todos: &Option<Todos>| todos.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_default();
    html! {
        <>
            <p id="focused">{ format!("{} on focus", count(&focused.data)) }</p>
            <p id="default">{ format!("{} by default", count(&default.data)) }</p>
        </>
    }
}

#[wasm_bindgen_test]
async fn on_focus_refetches_on_a_window_focus_and_the_default_does_not() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-focus"), html! { <FocusPair /> });
    until(&root, "both lists", |html| html.contains("1 on focus") && html.contains("1 by default")).await;
    server.todos.set(2);
    dispatch_on_window("focus");
    until(&root, "the on-focus list refetched", |html| html.contains("2 on focus")).await;
    assert_eq!(server.hits("FocusTodos"), 2);
    // The default has no focus listener at all: nothing could start a request for it later.
    assert_eq!(server.hits("ListTodos"), 1, "the default does not refetch on focus");
    assert!(root.inner_html().contains("1 by default"));
    app.destroy();
}

/// A list with the default strategy (cache-first for GraphQL), refetching on focus and on reconnect.
#[function_component]
fn CacheFirstRefreshed() -> Html {
    let on_focus = RefetchOptions { on_focus: true, ..RefetchOptions::default() };
    let list = use_cachet_fetch::<Todos>(
        DataRequest::gql("query FreshTodos { todos }", None, GqlOptions::default()),
        on_focus,
    );
    let count = list.data.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_default();
    html! { <p id="fresh">{ format!("{count} fresh") }</p> }
}

#[wasm_bindgen_test]
async fn a_refetch_on_focus_or_reconnect_brings_the_servers_data_even_for_a_cache_first_query() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-fresh"), html! { <CacheFirstRefreshed /> });
    until(&root, "the list", |html| html.contains("1 fresh")).await;
    assert_eq!(server.hits("FreshTodos"), 1);
    // Stored by the first fetch: a cache-first refetch would be answered by the in-page cache.
    server.todos.set(2);
    dispatch_on_window("focus");
    until(&root, "the list refetched on focus", |html| html.contains("2 fresh")).await;
    assert_eq!(server.hits("FreshTodos"), 2, "the focus asked the server");
    server.todos.set(3);
    dispatch_on_window("offline");
    dispatch_on_window("online");
    until(&root, "the list refetched on reconnect", |html| html.contains("3 fresh")).await;
    assert_eq!(server.hits("FreshTodos"), 3, "the reconnect asked the server");
    app.destroy();
}

/// A network-first list that shows whether its data is the last good answer (stale-if-error).
#[function_component]
fn StaleTodos() -> Html {
    let options = GqlOptions { strategy: Some(Strategy::NetworkFirst), ..GqlOptions::default() };
    let todos = use_cachet_gql::<Todos>("query StaleTodos { todos }", None, options);
    let count = todos.data.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_default();
    let refetch = {
        let todos = todos.clone();
        Callback::from(move |_| todos.refetch())
    };
    html! {
        <>
            <p id="stale">{ format!("{count} todos, stale {}", todos.stale) }</p>
            <button id="refetch-stale" onclick={refetch}>{ "refetch" }</button>
        </>
    }
}

/// Issue 35 item 4: the hook's handle says when its data is a stored answer given in place of a 5xx.
#[wasm_bindgen_test]
async fn a_query_answered_under_stale_if_error_says_so_in_its_handle() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-stale"), html! { <StaleTodos /> });
    until(&root, "the list from the server", |html| html.contains("1 todos, stale false")).await;
    server.down.set(true);
    click(&root, "#refetch-stale");
    until(&root, "the last good list, marked stale", |html| html.contains("1 todos, stale true")).await;
    assert_eq!(server.hits("StaleTodos"), 2, "the server was asked, and failed");
    server.down.set(false);
    server.todos.set(2);
    click(&root, "#refetch-stale");
    until(&root, "the server's list again", |html| html.contains("2 todos, stale false")).await;
    app.destroy();
}

thread_local! {
    /// What `CacheAndNetworkList` rendered, in order.
    static RENDERED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// A cache-and-network list that logs every data it renders.
#[function_component]
fn CacheAndNetworkList() -> Html {
    let options = GqlOptions { strategy: Some(Strategy::CacheAndNetwork), ..GqlOptions::default() };
    let list = use_cachet_fetch::<Todos>(
        DataRequest::gql("query BothTodos { todos }", None, options),
        RefetchOptions::default(),
    );
    let shown =
        list.data.as_ref().map(|data| format!("{} both from_cache={}", data.todos.len(), list.from_cache));
    if let Some(shown) = &shown {
        RENDERED.with(|rendered| {
            let mut rendered = rendered.borrow_mut();
            if rendered.last() != Some(shown) {
                rendered.push(shown.clone());
            }
        });
    }
    html! { <p id="both">{ shown.unwrap_or_default() }</p> }
}

#[wasm_bindgen_test]
async fn a_cache_and_network_query_renders_the_stored_answer_then_the_servers() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let client = client_on(&server, "cachet-yew-test-both");
    let (root, app) = mount(client.clone(), html! { <CacheAndNetworkList /> });
    until(&root, "the first list", |html| html.contains("1 both")).await;
    assert_eq!(server.hits("BothTodos"), 1, "nothing stored yet: one request, no second");
    app.destroy();
    // Mounted again on the same client: the stored answer at once, then the server's.
    server.todos.set(2);
    RENDERED.with(|rendered| rendered.borrow_mut().clear());
    let (root, app) = mount(client, html! { <CacheAndNetworkList /> });
    until(&root, "the server's list", |html| html.contains("2 both")).await;
    assert_eq!(server.hits("BothTodos"), 2);
    let rendered = RENDERED.with(|rendered| rendered.borrow().clone());
    assert_eq!(rendered, ["1 both from_cache=true", "2 both from_cache=false"], "two renders, stored first");
    app.destroy();
}

#[derive(Clone, PartialEq, serde::Deserialize)]
struct Items {
    count: u32,
}

#[function_component]
fn ItemCount() -> Html {
    let items = use_cachet_fetch::<Items>(DataRequest::get("/api/items"), RefetchOptions::default());
    let text = items.data.as_ref().map(|items| format!("{} items", items.count)).unwrap_or_default();
    html! { <p data-from-cache={ items.from_cache.to_string() }>{ text }</p> }
}

#[wasm_bindgen_test]
async fn a_rest_query_follows_the_tags_its_server_sent() {
    let server = Rc::new(FakeServer::default());
    let client = client_on(&server, "cachet-yew-test-rest");
    let (root, app) = mount(client.clone(), html! { <ItemCount /> });
    until(&root, "the first items", |html| html.contains("0 items")).await;
    // `items` came from the answer's X-SW-Cache-Tags; the hook subscribes to it after the first answer.
    server.items.set(5);
    client.invalidate_by_tag(&["items"]).await.unwrap();
    until(&root, "items refetched after the invalidation", |html| html.contains("5 items")).await;
    assert_eq!(server.hits("/api/items"), 2);
    app.destroy();
}

#[function_component]
fn Account() -> Html {
    let auth = use_cachet_auth();
    let user = auth.auth.as_ref().and_then(|auth| auth.user.clone()).map(|user| user["name"].to_string());
    let login =
        auth.set_auth.reform(|_| AuthData { user: Some(json!({ "name": "ada" })), ..AuthData::default() });
    let logout = auth.clear_auth.reform(|_| ());
    html! {
        <>
            <p id="account">{ format!("authenticated: {}, user: {}", auth.authenticated, user.unwrap_or_default()) }</p>
            <button id="login" onclick={login}>{ "log in" }</button>
            <button id="logout" onclick={logout}>{ "log out" }</button>
        </>
    }
}

#[wasm_bindgen_test]
async fn the_auth_hook_follows_login_and_logout() {
    let server = Rc::new(FakeServer::default());
    let (root, app) = mount(client_on(&server, "cachet-yew-test-auth"), html! { <Account /> });
    until(&root, "signed out at first", |html| html.contains("authenticated: false")).await;
    click(&root, "#login");
    until(&root, "signed in as ada", |html| html.contains(r#"authenticated: true, user: "ada""#)).await;
    click(&root, "#logout");
    until(&root, "signed out again", |html| html.contains("authenticated: false, user: ")).await;
    app.destroy();
}

/// `query GetTodos { todos }`, typed from `tests/graphql/` and checked against its schema at compile time.
#[derive(graphql_client::GraphQLQuery)]
#[graphql(
    schema_path = "tests/graphql/schema.graphql",
    query_path = "tests/graphql/get_todos.graphql",
    response_derives = "Clone, PartialEq, Debug"
)]
struct GetTodos;

/// `mutation CreateTodo { createTodo { id } }`, typed.
#[derive(graphql_client::GraphQLQuery)]
#[graphql(
    schema_path = "tests/graphql/schema.graphql",
    query_path = "tests/graphql/create_todo.graphql",
    response_derives = "Clone, PartialEq, Debug"
)]
struct CreateTodo;

/// The typed query and mutation, beside the string form of the very same document.
#[function_component]
fn TypedTodos() -> Html {
    let typed = cachet_yew::use_cachet_query::<GetTodos>(get_todos::Variables, GqlOptions::default());
    let by_hand = use_cachet_gql::<get_todos::ResponseData>(
        include_str!("graphql/get_todos.graphql"),
        None,
        GqlOptions::default(),
    );
    let create = cachet_yew::use_cachet_typed_mutation::<CreateTodo>(GqlOptions::default());
    let on_create = Callback::from(move |_| create.mutate(create_todo::Variables));
    let count = |data: Option<&get_todos::ResponseData>| {
        data.map(|data| data.todos.len().to_string()).unwrap_or_else(|| "no".into())
    };
    html! {
        <>
            <p id="typed">{ format!("{} typed, {} by hand", count(typed.data.as_ref()), count(by_hand.data.as_ref())) }</p>
            <button id="typed-create" onclick={on_create}>{ "create" }</button>
        </>
    }
}

#[wasm_bindgen_test]
async fn typed_operations_share_the_string_forms_cache_and_tags() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-typed"), html! { <TypedTodos /> });
    until(&root, "both forms with data", |html| html.contains("1 typed, 1 by hand")).await;
    assert_eq!(server.hits("GetTodos"), 1, "one document, one cache key: the two forms share one request");

    // The typed mutation invalidates the tags derived from its operation name: both forms re-run.
    click(&root, "#typed-create");
    until(&root, "both forms re-run after the typed CreateTodo", |html| html.contains("2 typed, 2 by hand"))
        .await;
    assert_eq!(server.hits("CreateTodo"), 1);
    assert_eq!(server.hits("GetTodos"), 2, "one re-run for the two forms");
    app.destroy();
}

#[derive(Clone, PartialEq, serde::Deserialize)]
struct Page {
    page: u32,
}

/// A query waiting for a value (`enabled`), a polled one, paged variables keeping the previous page, and a
/// `select`.
#[function_component]
fn QueryOptions() -> Html {
    let network_only = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    let user = use_state(|| None::<u32>);
    let dependent = use_cachet_fetch::<Todos>(
        DataRequest::gql(
            "query DependentTodos { todos }",
            user.map(|user| json!({ "user": user })),
            network_only.clone(),
        ),
        RefetchOptions { enabled: user.is_some(), ..RefetchOptions::default() },
    );
    let polled = use_cachet_fetch::<Todos>(
        DataRequest::gql("query PolledTodos { todos }", None, network_only),
        RefetchOptions {
            refetch_interval: Some(std::time::Duration::from_millis(30)),
            ..RefetchOptions::default()
        },
    );
    let page = use_state(|| 1u32);
    let paged = use_cachet_fetch::<Page>(
        DataRequest::gql(
            "query GetPage($page: Int!) { page(n: $page) }",
            Some(json!({ "page": *page })),
            GqlOptions::default(),
        ),
        RefetchOptions { keep_previous_data: true, ..RefetchOptions::default() },
    );
    let count = polled.select(|data| data.todos.len());
    let on_user = {
        let user = user.clone();
        Callback::from(move |_| user.set(Some(7)))
    };
    let on_next = {
        let page = page.clone();
        Callback::from(move |_| page.set(*page + 1))
    };
    // A barrier for absence checks: a render the test asks for after the events it checks.
    let sentinel = use_state(|| 0u32);
    // What the hub told this page of connectivity (the polled hook hears it from the same broadcast).
    let online = cachet_yew::use_cachet_auth().online;
    let on_sentinel = {
        let sentinel = sentinel.clone();
        Callback::from(move |_| sentinel.set(*sentinel + 1))
    };
    let paged_text = match (&paged.data, paged.placeholder) {
        (Some(data), true) => format!("page {} (placeholder)", data.page),
        (Some(data), false) => format!("page {} (own)", data.page),
        (None, _) => "no page".to_owned(),
    };
    html! {
        <>
            <p id="dependent">{ format!("dependent: {:?} {:?}", dependent.status, dependent.data.map(|data| data.todos.len())) }</p>
            <p id="polled">{ format!("polled: {:?} selected {:?}", polled.fetch_status, count.data) }</p>
            <p id="paged">{ paged_text }</p>
            <button id="set-user" onclick={on_user}>{ "user" }</button>
            <button id="next-page" onclick={on_next}>{ "next" }</button>
            <button id="sentinel" onclick={on_sentinel}>{ format!("sentinel {}", *sentinel) }</button>
            <p id="online">{ if online { "hub: online" } else { "hub: offline" } }</p>
        </>
    }
}

/// Sets `document.hidden` and fires `visibilitychange`, as the browser does when the tab is hidden.
fn set_hidden(hidden: bool) {
    let document = gloo::utils::document();
    let descriptor = js_sys::Object::new();
    js_sys::Reflect::set(&descriptor, &"value".into(), &hidden.into()).unwrap();
    js_sys::Reflect::set(&descriptor, &"configurable".into(), &true.into()).unwrap();
    js_sys::Reflect::define_property(&document, &"hidden".into(), &descriptor).unwrap();
    document.dispatch_event(&web_sys::Event::new("visibilitychange").unwrap()).unwrap();
}

/// One tick of the test's polling clock, and its poll answered (the count up by one, the hook idle).
async fn poll_once(root: &web_sys::Element, server: &Rc<FakeServer>) {
    let before = server.hits("PolledTodos");
    cachet_yew::testing::tick();
    let polled = server.clone();
    until(root, "a poll", move |html| polled.hits("PolledTodos") > before && html.contains("polled: Idle"))
        .await;
    assert_eq!(server.hits("PolledTodos"), before + 1, "one tick, one poll");
}

/// Clicks the sentinel and waits for the render that shows its `count`: everything dispatched before the
/// click is in that render.
async fn rendered_after(root: &web_sys::Element, count: u32) {
    click(root, "#sentinel");
    let shown = format!("sentinel {count}");
    until(root, "the sentinel's render", move |html| html.contains(&shown)).await;
}

#[wasm_bindgen_test]
async fn dependent_polled_and_paged_queries_follow_their_options() {
    // The polling timers of this test tick on its own clock.
    let _clock = cachet_yew::testing::manual_polling();
    let server = Rc::new(FakeServer::default());
    server.todos.set(2);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-options"), html! { <QueryOptions /> });
    until(&root, "the first page and a polled answer", |html| {
        html.contains("page 1 (own)") && html.contains("selected Some(2)")
    })
    .await;
    // Enabled: the dependent query has not run while its value was unknown.
    assert_eq!(server.hits("DependentTodos"), 0, "a disabled query fetches nothing");
    assert!(root.inner_html().contains("dependent: Pending None"));
    click(&root, "#set-user");
    until(&root, "the dependent query, once enabled", |html| html.contains("dependent: Success Some(2)"))
        .await;
    assert_eq!(server.hits("DependentTodos"), 1);

    // Polling, on the test's own clock (`cachet_yew::testing`): a tick polls while visible...
    for _ in 0..3 {
        poll_once(&root, &server).await;
    }
    // ...none while hidden: ticks, then a render the test asks for (the barrier). A tick that had started
    // a fetch would show it there (`Fetching`) or have sent it (the server's count).
    set_hidden(true);
    let hidden_at = server.hits("PolledTodos");
    for _ in 0..3 {
        cachet_yew::testing::tick();
    }
    rendered_after(&root, 1).await;
    assert!(root.inner_html().contains("polled: Idle"), "{}", root.inner_html());
    assert_eq!(server.hits("PolledTodos"), hidden_at, "a hidden tab does not poll");
    // ...and again once visible.
    set_hidden(false);
    poll_once(&root, &server).await;
    // ...none while the hub says the browser is offline, and again once back online.
    dispatch_on_window("offline");
    until(&root, "the hub's offline, rendered", |html| html.contains("hub: offline")).await;
    let offline_at = server.hits("PolledTodos");
    for _ in 0..3 {
        cachet_yew::testing::tick();
    }
    rendered_after(&root, 2).await;
    assert!(root.inner_html().contains("polled: Idle"), "{}", root.inner_html());
    assert_eq!(server.hits("PolledTodos"), offline_at, "an offline browser does not poll");
    dispatch_on_window("online");
    let polled = server.clone();
    // Back online, the paused poll (if any) runs; then ticks poll again.
    until(&root, "idle once online", |html| html.contains("polled: Idle")).await;
    let before = polled.hits("PolledTodos");
    poll_once(&root, &server).await;
    assert_eq!(server.hits("PolledTodos"), before + 1);

    // New variables: the previous page stays, marked, until the next one arrives.
    click(&root, "#next-page");
    until(&root, "page 1 kept while page 2 loads", |html| html.contains("page 1 (placeholder)")).await;
    until(&root, "page 2", |html| html.contains("page 2 (own)")).await;
    app.destroy();
}

/// The Suspense form: renders only with data; the fallback meanwhile.
#[function_component]
fn SuspendedTodos() -> HtmlResult {
    let todos = cachet_yew::use_cachet_fetch_suspense::<Todos>(
        // Network-only: a second fetch would reach the server (cache-first would answer it from memory).
        DataRequest::gql(
            "query SuspendedTodos { todos }",
            None,
            GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() },
        ),
        RefetchOptions::default(),
    )?;
    let count = todos.data.map(|data| data.todos.len()).unwrap_or_default();
    Ok(html! { <p id="suspended">{ format!("{count} suspended todos, {:?}", todos.fetch_status) }</p> })
}

#[wasm_bindgen_test]
async fn the_suspense_form_shows_the_fallback_until_the_first_data_then_fetches_no_more() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(3);
    let fallback = html! { <p id="fallback">{ "loading" }</p> };
    let client = client_on(&server, "cachet-yew-test-suspense");
    let (root, app) = mount(client.clone(), html! { <Suspense {fallback}><SuspendedTodos /></Suspense> });
    until(&root, "the fallback while the first fetch runs", |html| html.contains(r#"id="fallback""#)).await;
    until(&root, "the data once it arrived", |html| {
        html.contains("3 suspended todos, Idle") && !html.contains("fallback")
    })
    .await;
    // An absence, proven with a barrier: a second fetch would have been sent by the render that resumed
    // (its effects ran before this test saw the DOM change), so before this sentinel, which is as slow:
    // once the sentinel is answered, the server has counted it.
    let sentinel = GqlOptions { strategy: Some(Strategy::NetworkOnly), ..GqlOptions::default() };
    client.query_gql::<Value>("query SlowSentinel { sentinel }", None, sentinel).await.unwrap();
    assert!(root.inner_html().contains("3 suspended todos, Idle"), "{}", root.inner_html());
    assert_eq!(server.hits("SuspendedTodos"), 1, "the fetch started while suspended is the only one");
    app.destroy();
}

/// A list and two mutations that guess its next data: one the server accepts, one it refuses.
#[function_component]
fn GuessingTodos() -> Html {
    let todos = use_cachet_gql::<Todos>("query GetTodos { todos }", None, GqlOptions::default());
    let options = GqlOptions { invalidate: vec!["todos".into()], ..GqlOptions::default() };
    let accepted = use_cachet_mutation::<Value>("mutation GuessedAdd { add }", options.clone());
    let refused = use_cachet_mutation::<Value>("mutation RefusedAdd { add }", options);
    let guess = |data: &Todos| Todos { todos: data.todos.iter().copied().chain([99]).collect() };
    let on_accepted = Callback::from(move |_| {
        let future = accepted.mutate_optimistic(None, guess);
        wasm_bindgen_futures::spawn_local(async move { drop(future.await) });
    });
    let on_refused = Callback::from(move |_| {
        let future = refused.mutate_optimistic(None, guess);
        wasm_bindgen_futures::spawn_local(async move { drop(future.await) });
    });
    html! {
        <>
            <p id="guessing">{ format!("todos {:?}", todos.data.map(|data| data.todos)) }</p>
            <button id="accepted" onclick={on_accepted}>{ "accepted" }</button>
            <button id="refused" onclick={on_refused}>{ "refused" }</button>
        </>
    }
}

#[wasm_bindgen_test]
async fn an_optimistic_guess_shows_until_the_server_answers_and_rolls_back_on_failure() {
    let server = Rc::new(FakeServer::default());
    server.todos.set(1);
    let (root, app) = mount(client_on(&server, "cachet-yew-test-optimistic"), html! { <GuessingTodos /> });
    until(&root, "the list", |html| html.contains("todos Some([0])")).await;
    click(&root, "#accepted");
    until(&root, "the guess at once", |html| html.contains("todos Some([0, 99])")).await;
    assert_eq!(server.hits("GuessedAdd"), 0, "shown before the server answered");
    until(&root, "the server's data after the re-run", |html| html.contains("todos Some([0, 1])")).await;
    assert_eq!((server.hits("GuessedAdd"), server.hits("GetTodos")), (1, 2));

    click(&root, "#refused");
    until(&root, "the second guess", |html| html.contains("todos Some([0, 1, 99])")).await;
    until(&root, "rolled back once refused", |html| html.contains("todos Some([0, 1])")).await;
    assert_eq!(server.hits("RefusedAdd"), 1);
    assert_eq!(server.hits("GetTodos"), 2, "a refused mutation invalidates nothing");
    app.destroy();
}
