//! The example todo app of cachet: a Yew app on `<CachetProvider>` and the hooks, against the example
//! backend (`examples/todo-backend`).
//!
//! | Part | What it uses |
//! |---|---|
//! | login form, logout | `POST /api/login` / `/api/logout` through the page client, then `set_auth` / `clear_auth` of [`cachet_yew::use_cachet_auth`] |
//! | "signed in as" | REST `GET /api/me` with [`cachet_yew::use_cachet_fetch`] (an auth route: never cached) |
//! | the list | `query GetTodos` with [`cachet_yew::use_cachet_gql`] (cached, tags `gettodos`, `todos`), marked "from cache" or "from network" |
//! | add, toggle, delete | `CreateTodo`, `UpdateTodo`, `DeleteTodo` with [`cachet_yew::use_cachet_mutation`]; the list re-runs by itself, in every tab |
//! | the summary | `query TodoSummary` with explicit `tags: ["summary"]`; the mutations name it in `invalidate` |
//! | the account line | an anonymous query `{ me { username } }`: cached in the user's partition, never tag-invalidated |
//! | offline adds | `CreateTodo` with `queue_offline`: queued by the Service Worker when the server is unreachable, shown as pending until replayed |
//! | the indicator | `online` of `use_cachet_auth` |
//! | the "cachet" corner button | [`cachet_yew::CachetDevtools`]: the worker's entries, tags, queue, dead letters and events (feature `devtools`, on by default) |
//!
//! The config is the one `cachet generate` wrote to `cachet-sw-config.js`: `index.html` loads that
//! file, which sets `window.CACHET_CONFIG`, and `<CachetProvider>` reads it, so the page and the Service
//! Worker (which loads the same file) always agree, and one build serves cookie and bearer backends alike
//! (the end-to-end tests swap that one file).
#![deny(missing_docs)]

pub mod cachet;
mod hello;
mod operations;
mod session;
mod todos;

use cachet_client::Client;
use cachet_core::protocol::SwEvent;
use cachet_yew::{use_cachet_auth, use_cachet_sw_event, CachetContext, CachetProvider};
use yew::prelude::*;

/// The page client: the config of `window.CACHET_CONFIG` (see the crate docs), cachet's default adapter
/// of its auth type, and the app's failure check (`src/cachet/auth/check.rs`, which the Service Worker
/// compiles in too).
fn build_client() -> Result<Client, cachet_client::Error> {
    Client::builder()
        .config_from_global()?
        .failure_check(cachet::auth::check::is_auth_failure_response)
        .build()
}

/// The app's root component.
#[function_component]
pub fn App() -> Html {
    let client = use_memo((), |()| build_client());
    let client = match &*client {
        Ok(client) => client.clone(),
        Err(error) => {
            return html! { <main><p id="fatal" class="error">{ format!("cachet: {error}") }</p></main> }
        }
    };
    html! {
        <CachetProvider {client}>
            <main>
                <header>
                    <h1>{ "cachet todo" }</h1>
                    <Connectivity />
                </header>
                <Body />
                <footer>
                    <SwStatus />
                    <LastSwEvent />
                    <hello::Hello />
                </footer>
            </main>
            <cachet_yew::CachetDevtools />
        </CachetProvider>
    }
}

/// The login form when nobody is signed in; the account line and the todos otherwise.
#[function_component]
fn Body() -> Html {
    let auth = use_cachet_auth();
    if !auth.authenticated {
        return html! { <session::LoginForm /> };
    }
    html! {
        <>
            <session::Account />
            <todos::Todos />
        </>
    }
}

/// The online/offline indicator.
#[function_component]
fn Connectivity() -> Html {
    let auth = use_cachet_auth();
    let (class, text) = if auth.online { ("badge online", "online") } else { ("badge offline", "offline") };
    html! { <span id="online" {class}>{ text }</span> }
}

#[function_component]
fn SwStatus() -> Html {
    let context = use_context::<CachetContext>().expect("inside <CachetProvider>");
    let text = format!("service worker: {}", context.registration);
    html! { <p id="sw-status">{ text }</p> }
}

#[function_component]
fn LastSwEvent() -> Html {
    let text = match use_cachet_sw_event() {
        None => "no service worker event yet".to_owned(),
        Some(SwEvent::Activated { build }) => format!("service worker activated: {build}"),
        Some(SwEvent::CacheUpdated { url }) => format!("cache updated: {url}"),
        Some(SwEvent::CacheInvalidated { tags }) => format!("cache invalidated: {}", tags.join(", ")),
        Some(other) => format!("{other:?}"),
    };
    html! { <p id="sw-event">{ text }</p> }
}
