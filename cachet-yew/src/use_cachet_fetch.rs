//! `use_cachet_fetch`: the data hook, for REST and GraphQL alike.

use std::cell::Cell;
use std::rc::Rc;

use cachet_core::machines::query::QueryEvent;
use cachet_core::protocol::{AgentRequest, AgentResponse};
use gloo::events::EventListener;
use serde::de::DeserializeOwned;
use yew::prelude::*;

use crate::provider::use_agent_bridge;
use crate::provider::use_cachet_context;
use crate::query::{decode_as, DataRequest, Decode, Driver, RefetchOptions, UseCachetQueryHandle};

/// The handle of [`use_cachet_fetch`].
pub type UseCachetFetchHandle<T> = UseCachetQueryHandle<T>;

thread_local! {
    static NEXT_SUBSCRIPTION: Cell<u64> = const { Cell::new(0) };
}

/// Fetches `request` through the page client (and so the Service Worker's cache) and keeps it fresh: it
/// fetches again when a `cache-invalidated` hits its tags (a mutation in this tab or another, a replayed
/// queued mutation), when the browser comes back online, on focus if asked, and on `refetch()`. The last
/// data stays while it refetches. A REST answer's `X-SW-Cache-Tags` are subscribed to as well.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_yew::{use_cachet_fetch, DataRequest, RefetchOptions};
/// use yew::prelude::*;
///
/// #[derive(Clone, PartialEq, serde::Deserialize)]
/// struct Hello { message: String }
///
/// #[function_component]
/// fn Greeting() -> Html {
///     let refetch = RefetchOptions { on_focus: true, ..RefetchOptions::default() };
///     let hello = use_cachet_fetch::<Hello>(DataRequest::get("/api/hello"), refetch);
///     match &hello.data {
///         Some(hello) => html! { <p>{ &hello.message }</p> },
///         None => html! { <p>{ format!("{:?}", hello.status) }</p> },
///     }
/// }
/// ```
#[hook]
pub fn use_cachet_fetch<T>(request: DataRequest, refetch: RefetchOptions) -> UseCachetFetchHandle<T>
where
    T: DeserializeOwned + Clone + PartialEq + 'static,
{
    use_query(request, refetch, decode_as::<T>).handle::<T>()
}

/// [`use_cachet_fetch`] that suspends (Yew's `<Suspense>`) until the first data or error: the component
/// renders only with them, and the `<Suspense fallback>` meanwhile. Later refetches keep the data shown
/// and do not suspend again. A query that is not `enabled` suspends until it is.
///
/// # Panics
/// When used outside `<CachetProvider>`.
///
/// # Example
/// ```no_run
/// use cachet_yew::{use_cachet_fetch_suspense, DataRequest, RefetchOptions};
/// use yew::prelude::*;
///
/// #[derive(Clone, PartialEq, serde::Deserialize)]
/// struct Hello { message: String }
///
/// #[function_component]
/// fn Greeting() -> HtmlResult {
///     let hello = use_cachet_fetch_suspense::<Hello>(DataRequest::get("/api/hello"), RefetchOptions::default())?;
///     Ok(html! { <p>{ hello.data.map(|hello| hello.message).unwrap_or_default() }</p> })
/// }
///
/// #[function_component]
/// fn Page() -> Html {
///     html! { <Suspense fallback={ html! { <p>{ "loading" }</p> } }><Greeting /></Suspense> }
/// }
/// ```
#[hook]
pub fn use_cachet_fetch_suspense<T>(
    request: DataRequest,
    refetch: RefetchOptions,
) -> yew::suspense::SuspensionResult<UseCachetFetchHandle<T>>
where
    T: DeserializeOwned + Clone + PartialEq + 'static,
{
    let driver = use_query(request, refetch, decode_as::<T>);
    let handle = driver.handle::<T>();
    if handle.data.is_some() || handle.error.is_some() {
        return Ok(handle);
    }
    driver.start_in_render();
    let (suspension, resume) = yew::suspense::Suspension::new();
    driver.resume_when_settled(resume);
    Err(suspension)
}

/// The body of [`use_cachet_fetch`], the same for every `T` (see [`crate::query::Data`]).
#[hook]
fn use_query(request: DataRequest, refetch: RefetchOptions, decode: Decode) -> Rc<Driver> {
    let client = use_cachet_context("use_cachet_fetch").client;
    let subscription = *use_memo((), |()| NEXT_SUBSCRIPTION.with(|next| next.replace(next.get() + 1) + 1));
    let online = client.auth_state().online;
    // The driver of the request before this one, for `keep_previous_data`.
    let previous = use_mut_ref(|| None::<Rc<Driver>>);
    let driver = (*use_memo(request.clone(), |_| {
        let kept =
            refetch.keep_previous_data.then(|| previous.borrow().as_ref().and_then(|driver| driver.data()));
        let strategy = request.strategy(&client.config());
        let driver = Rc::new(Driver::new(online, decode, kept.flatten(), refetch.enabled, strategy));
        driver.register();
        driver
    }))
    .clone();
    *previous.borrow_mut() = Some(driver.clone());
    let rerender = use_force_update();
    driver.update(request.clone(), client.clone(), Rc::new(move || rerender.force_update()));
    let bridge = {
        let (driver, client) = (driver.clone(), client.clone());
        use_agent_bridge(move |response| match response {
            AgentResponse::Invalidated { subscriptions, tags } if subscriptions.contains(&subscription) => {
                // The hub may hear an invalidation before the client's own listener has dropped the
                // in-page entries: drop them first, or a cache-first re-run reads the stale copy.
                client.forget_cached(&tags);
                driver.dispatch(QueryEvent::Invalidated)
            }
            AgentResponse::Subscribed { subscription: acknowledged } if acknowledged == subscription => {
                driver.set_live()
            }
            AgentResponse::OnlineChanged { online: true } => {
                driver.dispatch(QueryEvent::Online);
                if refetch.on_reconnect {
                    driver.dispatch(QueryEvent::Refresh);
                }
            }
            AgentResponse::OnlineChanged { online: false } => driver.dispatch(QueryEvent::Offline),
            _ => {}
        })
    };
    let tags = driver.tags(&request);
    use_effect_with(tags, {
        let bridge = bridge.clone();
        move |tags| {
            bridge.send(&AgentRequest::Subscribe { subscription, tags: tags.clone() });
            move || bridge.send(&AgentRequest::Unsubscribe { subscription })
        }
    });
    let enabling = driver.clone();
    use_effect_with(refetch.enabled, move |enabled| enabling.dispatch(QueryEvent::Enabled(*enabled)));
    let mounted = driver.clone();
    use_effect_with(request.clone(), move |_| {
        if mounted.mount_fetches() {
            mounted.dispatch(QueryEvent::Fetch)
        }
    });
    let polled = driver.clone();
    use_effect_with((request.clone(), refetch.refetch_interval), move |(_, interval)| {
        let polling = interval.map(|interval| {
            let document = gloo::utils::document();
            let visible = polled.clone();
            visible.dispatch(QueryEvent::Visible(!document.hidden()));
            let watched = document.clone();
            let listener = EventListener::new(&document, "visibilitychange", move |_| {
                visible.dispatch(QueryEvent::Visible(!watched.hidden()))
            });
            let millis = u32::try_from(interval.as_millis()).unwrap_or(u32::MAX).max(1);
            let ticking = polled.clone();
            let timer = crate::polling::poll_timer(millis, move || ticking.dispatch(QueryEvent::Tick));
            (listener, timer)
        });
        move || drop(polling)
    });
    let focused = driver.clone();
    use_effect_with((request, refetch.on_focus), move |(_, on_focus)| {
        let window = gloo::utils::window();
        let listener = on_focus
            .then(|| EventListener::new(&window, "focus", move |_| focused.dispatch(QueryEvent::Refresh)));
        move || drop(listener)
    });
    driver
}
