//! `<CachetProvider>`: registers the Service Worker, starts the agent, provides [`CachetContext`].

use implicit_clone::unsync::IString;
use yew::prelude::*;
use yew_agent::reactor::ReactorProvider;

use cachet_worker::agent::CachetAgent;

use crate::{register_service_worker, Error};

/// Where the Service Worker registration stands.
#[derive(Debug, Clone, PartialEq)]
pub enum SwRegistration {
    /// `register` has not answered yet.
    Pending,
    /// The browser accepted the Service Worker.
    Registered,
    /// Registration failed; the app keeps working straight against the network.
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
}

/// Properties of [`CachetProvider`].
#[derive(Debug, Properties, PartialEq)]
pub struct CachetProviderProps {
    /// URL of the Service Worker shim (default `/service-worker.js`).
    #[prop_or(IString::from("/service-worker.js"))]
    pub sw_path: IString,
    /// URL of the yew-agent worker script (default `/cachet-agent.js`). Its wasm is expected next to it
    /// as `cachet-agent_bg.wasm`.
    #[prop_or(IString::from("/cachet-agent.js"))]
    pub agent_path: IString,
    /// The app.
    #[prop_or_default]
    pub children: Html,
}

/// Wraps a Yew app: registers cachet's Service Worker, starts the yew-agent worker and provides
/// [`CachetContext`] to the hooks.
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
    let registration = use_state(|| SwRegistration::Pending);
    {
        let registration = registration.clone();
        use_effect_with(props.sw_path.clone(), move |sw_path| {
            let sw_path = sw_path.clone();
            wasm_bindgen_futures::spawn_local(async move {
                registration.set(match register_service_worker(&sw_path).await {
                    Ok(()) => SwRegistration::Registered,
                    Err(error) => SwRegistration::Failed(error),
                });
            });
        });
    }
    let context = CachetContext { registration: (*registration).clone() };
    html! {
        <ContextProvider<CachetContext> {context}>
            <ReactorProvider<CachetAgent> path={props.agent_path.to_string()}>
                { props.children.clone() }
            </ReactorProvider<CachetAgent>>
        </ContextProvider<CachetContext>>
    }
}
