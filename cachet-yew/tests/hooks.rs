//! The hooks with the real agent in headless Chromium. NOT YET PASSING: the agent worker started from a
//! blob module does not answer the bridges inside wasm-bindgen-test (see the report of issue 6), so this
//! binary only runs with `--features agent-browser-tests`.
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use cachet_yew::CachetProvider;
use futures::channel::oneshot;
use wasm_bindgen_test::*;
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

// ---------------------------------------------------------------------------------------------------------
// The hooks, with the real agent: this test binary doubles as the agent's worker script. In the page its
// agent script (`agent_script`, a blob module given to `<CachetProvider agent_module=true>`) loads it in a
// module worker and registers `CachetAgent`, so the hooks talk to the real reactor in a real worker.
// The network is a fake behind the client's injectable `Http`, counting requests.

use cachet_client::{AuthData, Client, ClientOptions, GqlOptions, Http};
use cachet_yew::{
    use_cachet_auth, use_cachet_fetch, use_cachet_gql, use_cachet_mutation, DataRequest, RefetchOptions,
};
use serde_json::{json, Value};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Called by the agent script (below) in the worker: this test binary then serves as the agent.
#[wasm_bindgen]
pub fn start_cachet_agent() {
    use yew_agent::Registrable;
    cachet_worker::agent::CachetAgent::registrar().register();
}

/// A fake backend: todos to count, and how many requests each operation or path got.
#[derive(Default)]
struct FakeServer {
    todos: Cell<u32>,
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
            query.split_whitespace().nth(1).unwrap().to_owned()
        } else {
            path.to_owned()
        };
        *self.hits.borrow_mut().entry(name.clone()).or_default() += 1;
        match name.as_str() {
            "GetTodos" => (json!({ "data": { "todos": (0..self.todos.get()).collect::<Vec<_>>() } }), vec![]),
            "CreateTodo" => {
                self.todos.set(self.todos.get() + 1);
                (json!({ "data": { "createTodo": { "id": self.todos.get() } } }), vec![])
            }
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
            let (answer, headers) = server.answer(&path, &body);
            let init = web_sys::ResponseInit::new();
            let response_headers = web_sys::Headers::new().unwrap();
            response_headers.set("Content-Type", "application/json").unwrap();
            for (name, value) in headers {
                response_headers.set(name, value).unwrap();
            }
            init.set_headers(&response_headers);
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

/// Resolves once `check` holds for the HTML under `root`, re-checked on every DOM change (no polling).
async fn until(root: &web_sys::Element, check: impl Fn(&str) -> bool + 'static) -> String {
    let html = root.inner_html();
    if check(&html) {
        return html;
    }
    let (sender, receiver) = oneshot::channel::<String>();
    let sender = RefCell::new(Some(sender));
    let watched = root.clone();
    let callback = Closure::<dyn FnMut()>::new(move || {
        let html = watched.inner_html();
        if check(&html) {
            if let Some(sender) = sender.borrow_mut().take() {
                let _ = sender.send(html);
            }
        }
    });
    let observer = web_sys::MutationObserver::new(callback.as_ref().unchecked_ref()).unwrap();
    let init = web_sys::MutationObserverInit::new();
    init.set_subtree(true);
    init.set_child_list(true);
    init.set_character_data(true);
    init.set_attributes(true);
    observer.observe_with_options(root, &init).unwrap();
    let html = receiver.await.unwrap();
    observer.disconnect();
    html
}

fn click(root: &web_sys::Element, selector: &str) {
    root.query_selector(selector).unwrap().unwrap().unchecked_into::<web_sys::HtmlElement>().click();
}

#[derive(Properties, PartialEq)]
struct HarnessProps {
    client: Client,
    agent: AttrValue,
    children: Html,
}

#[function_component]
fn Harness(props: &HarnessProps) -> Html {
    html! {
        <CachetProvider client={props.client.clone()} sw_path="/no-sw-in-this-test.js"
                        agent_path={props.agent.clone()} agent_module=true>
            { props.children.clone() }
        </CachetProvider>
    }
}

/// The agent's script for `<CachetProvider agent_module=true>`: a module whose default export starts this
/// test binary with its wasm and registers the agent. (yew-agent calls the default export with no
/// argument, the runner's generated JS has no default wasm path, and a `#[wasm_bindgen(start)]` does not
/// run in a test binary.)
fn agent_script() -> String {
    let origin = gloo::utils::window().location().origin().unwrap();
    let module = format!(
        "import init, {{ start_cachet_agent }} from '{origin}/wasm-bindgen-test.js';\n\
         export default async () => {{\n\
           await init({{ module_or_path: '{origin}/wasm-bindgen-test_bg.wasm' }});\n\
           start_cachet_agent();\n\
         }};\n"
    );
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/javascript");
    let blob =
        web_sys::Blob::new_with_str_sequence_and_options(&js_sys::Array::of1(&module.into()), &bag).unwrap();
    web_sys::Url::create_object_url_with_blob(&blob).unwrap()
}

fn mount(client: Client, children: Html) -> (web_sys::Element, yew::AppHandle<Harness>) {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let app = yew::Renderer::<Harness>::with_root_and_props(
        root.clone(),
        HarnessProps { client, agent: agent_script().into(), children },
    )
    .render();
    (root, app)
}

#[derive(Clone, PartialEq, serde::Deserialize)]
struct Todos {
    todos: Vec<u32>,
}

#[function_component]
fn TodoCount() -> Html {
    let todos = use_cachet_gql::<Todos>("query GetTodos { todos }", None, GqlOptions::default());
    let count = todos.data.as_ref().map(|data| data.todos.len().to_string()).unwrap_or_else(|| "no".into());
    html! { <p id="todos" data-live={ todos.live.to_string() }>{ format!("{count} todos") }</p> }
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
    let (root, app) =
        mount(client_on(&server, "cachet-yew-test-query"), html! { <><TodoCount /><Mutations /></> });
    until(&root, |html| html.contains("1 todos") && html.contains(r#"data-live="true""#)).await;
    assert_eq!(server.hits("GetTodos"), 1);

    // An unrelated mutation (tags `user`, `users`) first, then one hitting `todos`: the channel keeps their
    // order, so had the first caused a refetch, the query would count three requests below.
    click(&root, "#unrelated");
    until(&root, |html| html.contains("unrelated: Success")).await;
    click(&root, "#create");
    until(&root, |html| html.contains("2 todos")).await;
    assert_eq!(server.hits("GetTodos"), 2, "one refetch, for the matching mutation only");
    assert_eq!((server.hits("CreateTodo"), server.hits("UpdateUser")), (1, 1));
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
    until(&root, |html| html.contains("0 items")).await;
    // `items` came from the answer's X-SW-Cache-Tags; the hook subscribes to it after the first answer.
    server.items.set(5);
    client.invalidate_by_tag(&["items"]).await.unwrap();
    until(&root, |html| html.contains("5 items")).await;
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
    until(&root, |html| html.contains("authenticated: false")).await;
    click(&root, "#login");
    until(&root, |html| html.contains(r#"authenticated: true, user: "ada""#)).await;
    click(&root, "#logout");
    until(&root, |html| html.contains("authenticated: false, user: ")).await;
    app.destroy();
}
