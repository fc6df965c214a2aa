//! `use_cachet_sw_event`: the latest event the Service Worker broadcast.

use cachet_core::protocol::{decode_sw_event, SwEvent};
use cachet_worker::agent::CachetAgent;
use yew::prelude::*;
use yew_agent::reactor::{use_reactor_bridge, ReactorEvent};

use crate::CachetContext;

/// The latest event the Service Worker broadcast since this component mounted (`None` before the first),
/// delivered through cachet's yew-agent worker. Re-renders the component on every event.
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
    use_context::<CachetContext>()
        .expect("use_cachet_sw_event must be used inside <CachetProvider>: wrap your app's root in it");
    let latest = use_state(|| None);
    let setter = latest.setter();
    let _bridge = use_reactor_bridge::<CachetAgent, _>(move |output: ReactorEvent<CachetAgent>| {
        if let ReactorEvent::Output(wire) = output {
            // The agent forwards only messages that decode; a failure here would mean two builds disagree.
            if let Ok(event) = decode_sw_event(&wire) {
                setter.set(Some(event));
            }
        }
    });
    (*latest).clone()
}
