//! `use_cachet_sw_event`: the latest event the Service Worker broadcast.

use cachet_core::protocol::{AgentRequest, AgentResponse, SwEvent};
use yew::prelude::*;

use crate::provider::use_agent_bridge;
use crate::provider::use_cachet_context;

/// The latest event the Service Worker broadcast since this component mounted (`None` before the first),
/// delivered through cachet's agent hub. Re-renders the component on every event.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_core::protocol::SwEvent;
/// use cachet_yew::use_cachet_sw_event;
/// use yew::prelude::*;
///
/// #[function_component]
/// fn Updates() -> Html {
///     match use_cachet_sw_event() {
///         Some(SwEvent::CacheUpdated { url }) => html! { <p>{ format!("cache updated: {url}") }</p> },
///         _ => html! {},
///     }
/// }
/// ```
#[hook]
pub fn use_cachet_sw_event() -> Option<SwEvent> {
    use_cachet_context("use_cachet_sw_event");
    let latest = use_state(|| None);
    let setter = latest.setter();
    let bridge = use_agent_bridge(move |response| {
        if let AgentResponse::SwEvent { event } = response {
            setter.set(Some(event));
        }
    });
    use_effect_with((), move |()| bridge.send(&AgentRequest::WatchSwEvents));
    (*latest).clone()
}
