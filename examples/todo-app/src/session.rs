//! Logging in and out, and who is signed in.

use cachet_client::{AuthData, FetchOptions};
use cachet_yew::{
    use_cachet_auth, use_cachet_client, use_cachet_fetch, use_cachet_gql, DataRequest, RefetchOptions,
};
use serde::Deserialize;
use serde_json::{json, Value};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// The answer of `GET /api/me`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Me {
    user: User,
    expires_at: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct User {
    username: String,
}

/// `data` of the anonymous `{ me { username } }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct MeData {
    me: User,
}

/// The form that posts `/api/login` and hands the answer to `set_auth`.
#[function_component]
pub(crate) fn LoginForm() -> Html {
    let client = use_cachet_client();
    let auth = use_cachet_auth();
    let username = use_node_ref();
    let password = use_node_ref();
    let error = use_state(|| None::<String>);
    let busy = use_state(|| false);
    let onsubmit = {
        let (username, password, error, busy) =
            (username.clone(), password.clone(), error.clone(), busy.clone());
        let set_auth = auth.set_auth.clone();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            let value = |node: &NodeRef| {
                node.cast::<HtmlInputElement>().map(|input| input.value()).unwrap_or_default()
            };
            let body = json!({ "username": value(&username), "password": value(&password) }).to_string();
            let (client, error, busy, set_auth) =
                (client.clone(), error.clone(), busy.clone(), set_auth.clone());
            busy.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                let options =
                    FetchOptions::new().method("POST").header("content-type", "application/json").body(body);
                let outcome = match client.fetch_with_cache("/api/login", options).await {
                    Ok(result) if result.response.ok() => match result.response.json::<Value>() {
                        Ok(value) => {
                            AuthData::from_json(value).ok_or_else(|| "the server sent no user".to_owned())
                        }
                        Err(decode) => Err(decode.to_string()),
                    },
                    Ok(result) => Err(server_message(&result.response.text(), result.response.status)),
                    Err(network) => Err(network.to_string()),
                };
                busy.set(false);
                match outcome {
                    Ok(auth) => {
                        error.set(None);
                        set_auth.emit(auth);
                    }
                    Err(message) => error.set(Some(message)),
                }
            });
        })
    };
    html! {
        <form id="login" {onsubmit}>
            <h2>{ "Sign in" }</h2>
            <label>{ "user " }<input id="username" ref={username} autocomplete="username" placeholder="alice" /></label>
            <label>{ "password " }<input id="password" ref={password} type="password" autocomplete="current-password" placeholder="alice-password" /></label>
            <button id="login-button" type="submit" disabled={*busy}>{ "Sign in" }</button>
            if let Some(message) = &*error {
                <p id="login-error" class="error">{ message }</p>
            }
            if let Some(message) = auth.error.as_ref() {
                <p id="auth-error" class="error">{ message.to_string() }</p>
            }
        </form>
    }
}

/// The server's `error` field, else the status.
fn server_message(body: &str, status: u16) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| value.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| format!("HTTP {status}"))
}

/// Who is signed in (REST `/api/me`, and the anonymous GraphQL `me`), and the logout button.
#[function_component]
pub(crate) fn Account() -> Html {
    let client = use_cachet_client();
    let auth = use_cachet_auth();
    let me = use_cachet_fetch::<Me>(
        DataRequest::Rest { url: "/api/me".to_owned(), options: FetchOptions::new().auth(true) },
        RefetchOptions::default(),
    );
    let account =
        use_cachet_gql::<MeData>("{ me { username } }", None, cachet_client::GqlOptions::with_auth(true));
    let onclick = {
        let clear_auth = auth.clear_auth.clone();
        Callback::from(move |_| {
            let (client, clear_auth) = (client.clone(), clear_auth.clone());
            wasm_bindgen_futures::spawn_local(async move {
                // Revoke the session on the server (best effort: offline, the local purge still happens),
                // then purge auth, caches and the queue in every tab.
                let options = FetchOptions::new().method("POST").auth(true);
                let _ = client.fetch_with_cache("/api/logout", options).await;
                clear_auth.emit(());
            });
        })
    };
    let whoami = match (&me.data, &me.error) {
        (Some(me), _) => format!("signed in as {}", me.user.username),
        (None, Some(error)) => format!("signed in; /api/me failed: {error}"),
        (None, None) => "signed in".to_owned(),
    };
    let expires = me.data.as_ref().and_then(|me| me.expires_at).map(|at| {
        let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(at as f64));
        format!("session until {}", String::from(date.to_locale_time_string("en-GB")))
    });
    let gql_account = account.data.as_ref().map(|data| data.me.username.clone()).unwrap_or_default();
    html! {
        <section class="account">
            <p id="whoami">{ whoami }</p>
            if let Some(expires) = expires {
                <p class="muted">{ expires }</p>
            }
            <p id="account" class="muted" data-from-cache={ account.from_cache.to_string() }>
                { format!("GraphQL me: {gql_account}") }
            </p>
            <button id="logout" {onclick}>{ "Sign out" }</button>
        </section>
    }
}
