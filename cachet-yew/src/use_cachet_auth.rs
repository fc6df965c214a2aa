//! `use_cachet_auth`: the auth UI adapter of SPEC §6.

use cachet_client::{AuthData, Error};
use cachet_core::protocol::AgentResponse;
use yew::prelude::*;

use crate::provider::use_agent_bridge;
use crate::provider::use_cachet_context;

/// The handle of [`use_cachet_auth`]: `{ authenticated, auth, online, set_auth, clear_auth }`; `set_auth`
/// and `clear_auth` with the cargo feature `auth` (without it the state says who is signed in: nobody,
/// and the connectivity).
#[derive(Debug, Clone, PartialEq)]
pub struct UseCachetAuthHandle {
    /// Whether auth is present.
    pub authenticated: bool,
    /// The auth held by the page (the user, the expiry and, in bearer mode, the token).
    pub auth: Option<AuthData>,
    /// Connectivity.
    pub online: bool,
    /// `setAuth(data)` after the app's login request; every tab follows.
    #[cfg(feature = "auth")]
    pub set_auth: Callback<AuthData>,
    /// `clearAuth()`: purges auth, caches and the mutation queue; every tab follows.
    #[cfg(feature = "auth")]
    pub clear_auth: Callback<()>,
    /// The error of the last `set_auth` / `clear_auth`, if it failed.
    pub error: Option<Error>,
}

/// The auth state, re-rendering on a login, refresh, logout or clear made in this tab or another one,
/// and on connectivity changes, as the agent reports them.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_yew::use_cachet_auth;
/// use yew::prelude::*;
///
/// #[function_component]
/// fn Account() -> Html {
///     let auth = use_cachet_auth();
///     let logout = auth.clear_auth.reform(|_| ());
///     let user = auth.auth.as_ref().and_then(|auth| auth.user.clone()).unwrap_or_default();
///     html! {
///         if auth.authenticated {
///             <p>{ format!("signed in as {user}") }<button onclick={logout}>{ "log out" }</button></p>
///         } else {
///             <p>{ if auth.online { "signed out" } else { "signed out, offline" } }</p>
///         }
///     }
/// }
/// ```
#[hook]
pub fn use_cachet_auth() -> UseCachetAuthHandle {
    let client = use_cachet_context("use_cachet_auth").client;
    let snapshot = use_state_eq(|| client.auth_state());
    let error = use_state_eq(|| None::<Error>);
    {
        let (client, snapshot) = (client.clone(), snapshot.clone());
        use_agent_bridge(move |response| {
            if matches!(response, AgentResponse::AuthState { .. } | AgentResponse::OnlineChanged { .. }) {
                snapshot.set(client.auth_state());
            }
        });
    }
    #[cfg(feature = "auth")]
    let set_auth = use_memo(client.clone(), |client| {
        let (client, error) = (client.clone(), error.setter());
        Callback::from(move |auth: AuthData| {
            let (client, error) = (client.clone(), error.clone());
            wasm_bindgen_futures::spawn_local(async move { error.set(client.set_auth(auth).await.err()) });
        })
    });
    #[cfg(feature = "auth")]
    let clear_auth = use_memo(client, |client| {
        let (client, error) = (client.clone(), error.setter());
        Callback::from(move |()| {
            let (client, error) = (client.clone(), error.clone());
            wasm_bindgen_futures::spawn_local(async move { error.set(client.clear_auth().await.err()) });
        })
    });
    UseCachetAuthHandle {
        authenticated: snapshot.authenticated,
        auth: snapshot.auth.clone(),
        online: snapshot.online,
        #[cfg(feature = "auth")]
        set_auth: (*set_auth).clone(),
        #[cfg(feature = "auth")]
        clear_auth: (*clear_auth).clone(),
        error: (*error).clone(),
    }
}
