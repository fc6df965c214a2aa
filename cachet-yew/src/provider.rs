//! `<CachetProvider>`: builds (or takes) the page client, registers the Service Worker, starts the agent,
//! reports the page's auth state to the agent, and provides [`CachetContext`].

use std::rc::Rc;

use cachet_client::{Client, ClientEvent, Config};
use cachet_core::protocol::{AgentRequest, AgentResponse};
use implicit_clone::unsync::IString;
use yew::prelude::*;

use crate::agent_bridge::{use_bridge_of, AgentBridge, AgentLink, AgentMode};
use crate::{register_service_worker, Error};

/// Where the Service Worker registration stands.
#[derive(Debug, Clone, PartialEq)]
pub enum SwRegistration {
    /// `register` has not answered yet.
    Pending,
    /// The browser accepted the Service Worker.
    Registered,
    /// Registration or installation failed (also logged with `console.error`, naming the script, the
    /// reason and the files not served); the app keeps working straight against the network.
    Failed(Error),
}

impl std::fmt::Display for SwRegistration {
    /// `pending`, `registered`, or `failed: <the error>`.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SwRegistration::Pending => formatter.write_str("pending"),
            SwRegistration::Registered => formatter.write_str("registered"),
            SwRegistration::Failed(error) => write!(formatter, "failed: {error}"),
        }
    }
}

/// What `<CachetProvider>` gives to the components below it.
#[derive(Debug, Clone, PartialEq)]
pub struct CachetContext {
    /// The Service Worker registration state.
    pub registration: SwRegistration,
    /// The page client every hook executes through.
    pub client: Client,
    /// The way to the agent hub, shared by every hook's bridge: in this one context rather than a
    /// second provider of its own (a `ContextProvider` is a component of its own in the page's wasm).
    pub(crate) link: AgentLink,
}

/// Properties of [`CachetProvider`].
#[derive(Debug, Properties, PartialEq)]
pub struct CachetProviderProps {
    /// The config. Default: `window.CACHET_CONFIG`, which the generated `cachet-sw-config.js` sets
    /// when the page loads it, else the defaults. Ignored when `client` is given.
    #[prop_or_default]
    pub config: Option<Rc<Config>>,
    /// A client built in code (your auth adapter, your `Http`); default: one built from `config`.
    #[prop_or_default]
    pub client: Option<Client>,
    /// URL of the Service Worker shim (default `/service-worker.js`).
    #[prop_or(IString::from("/service-worker.js"))]
    pub sw_path: IString,
    /// Where the agent hub runs: [`AgentMode::Worker`] (default), the yew-agent worker at `agent_path`,
    /// or `AgentMode::InPage` (cargo feature `in-page-agent`), the same hub in the page (no worker script).
    #[prop_or_default]
    pub agent: AgentMode,
    /// URL of the yew-agent worker script (default `/cachet-agent.js`), in [`AgentMode::Worker`]. Its
    /// wasm is expected next to it as `cachet-agent_bg.wasm`.
    #[prop_or(IString::from("/cachet-agent.js"))]
    pub agent_path: IString,
    /// Whether the agent script is an ES module (`wasm-bindgen --target web`) rather than `no-modules`.
    #[prop_or(false)]
    pub agent_module: bool,
    /// The app.
    #[prop_or_default]
    pub children: Html,
}

/// Wraps a Yew app: builds the page client from the config, registers cachet's Service Worker, starts the
/// agent hub (the yew-agent worker, or in the page: see [`AgentMode`]) and provides [`CachetContext`] to
/// the hooks.
///
/// # Panics
/// When no client can be built from the config (`custom` auth needs your adapter: pass `client`).
///
/// # Example
/// ```no_run
/// use cachet_yew::CachetProvider;
/// use yew::prelude::*;
///
/// #[function_component]
/// fn App() -> Html {
///     html! { <CachetProvider sw_path="/service-worker.js"><main>{"my app"}</main></CachetProvider> }
/// }
/// ```
#[function_component]
pub fn CachetProvider(props: &CachetProviderProps) -> Html {
    let client = use_memo((props.client.clone(), props.config.clone()), |(client, config)| {
        client.clone().unwrap_or_else(|| {
            let builder = match config {
                Some(config) => Ok(Client::builder().config_shared(config.clone())),
                None => Client::builder().config_from_global(),
            };
            builder.and_then(|builder| builder.build()).unwrap_or_else(|error| {
                panic!("<CachetProvider> cannot build the cachet client ({error}): pass client={{...}}")
            })
        })
    });
    let registration = use_state(|| SwRegistration::Pending);
    {
        let registration = registration.clone();
        use_effect_with(props.sw_path.clone(), move |sw_path| {
            let sw_path = sw_path.clone();
            wasm_bindgen_futures::spawn_local(async move {
                registration.set(match register_service_worker(&sw_path).await {
                    Ok(()) => SwRegistration::Registered,
                    Err(error) => {
                        // Loud: the app keeps working against the network, but nothing is cached.
                        web_sys::console::error_1(&format!("cachet: {error}; nothing is cached").into());
                        SwRegistration::Failed(error)
                    }
                });
            });
        });
    }
    let link =
        use_memo((props.agent, props.agent_path.clone(), props.agent_module), |(mode, path, module)| {
            AgentLink::new(*mode, path, *module)
        });
    use_auth_relay(&client, &link);
    let context = CachetContext {
        registration: (*registration).clone(),
        client: (*client).clone(),
        link: (*link).clone(),
    };
    html! {
        <ContextProvider<CachetContext> {context}>
            { props.children.clone() }
        </ContextProvider<CachetContext>>
    }
}

/// The provider's context; `hook` names the caller in the panic message.
#[hook]
pub(crate) fn use_cachet_context(hook: &'static str) -> CachetContext {
    use_context::<CachetContext>().unwrap_or_else(|| {
        panic!("{hook} must be used inside <CachetProvider>: wrap your app's root in <CachetProvider>")
    })
}

/// Opens this component's bridge to the agent hub, on the provider's link; `on_response` (refreshed every
/// render) hears every response.
///
/// # Panics
/// Outside `<CachetProvider>`.
#[hook]
pub(crate) fn use_agent_bridge<F>(on_response: F) -> AgentBridge
where
    F: Fn(AgentResponse) + 'static,
{
    let link = use_cachet_context("cachet's hooks").link;
    use_bridge_of(link, Rc::new(on_response))
}

/// Reports the page client's auth state to the agent: once restored, and on every change made here or
/// in another tab (the client hears those over the `cachet-auth` channel). The agent tells every hook.
/// A hook of the provider's, not a component of its own (a component is code of its own in the page).
#[hook]
fn use_auth_relay(client: &Client, link: &AgentLink) {
    let bridge = use_bridge_of(link.clone(), Rc::new(|_| {}));
    use_effect_with(client.clone(), move |client| {
        let report = {
            let client = client.clone();
            Rc::new(move || {
                let authenticated = client.auth_state().authenticated;
                bridge.send(&AgentRequest::ReportAuth { authenticated });
            })
        };
        let restored = report.clone();
        let client_ready = client.clone();
        wasm_bindgen_futures::spawn_local(async move {
            client_ready.ready().await;
            restored();
        });
        let subscription = client.subscribe(move |event| {
            if matches!(event, ClientEvent::StateChanged(_) | ClientEvent::AuthStateChange { .. }) {
                report();
            }
        });
        move || drop(subscription)
    });
}
