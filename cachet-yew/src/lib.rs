//! Yew components and hooks for cachet.
//!
//! Wrap the app in [`CachetProvider`]: it registers cachet's Service Worker and starts the yew-agent worker
//! that mirrors the Service Worker's events. Components then use the hooks.
//!
//! ```no_run
//! use cachet_yew::{use_cachet_sw_event, CachetProvider};
//! use yew::prelude::*;
//!
//! #[function_component]
//! fn LastEvent() -> Html {
//!     let event = use_cachet_sw_event();
//!     html! { <p>{ format!("{event:?}") }</p> }
//! }
//!
//! #[function_component]
//! fn App() -> Html {
//!     html! { <CachetProvider><LastEvent /></CachetProvider> }
//! }
//! ```
#![deny(missing_docs)]

mod error;
mod provider;
mod sw_registration;
mod use_cachet_sw_event;

pub use error::Error;
pub use provider::{CachetContext, CachetProvider, CachetProviderProps, SwRegistration};
pub use sw_registration::register_service_worker;
pub use use_cachet_sw_event::use_cachet_sw_event;
