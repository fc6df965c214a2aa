//! What the query hooks share: the request a query runs ([`DataRequest`], REST or GraphQL), its refetch
//! options, its handle, and the driver that feeds the core's query machine
//! ([`cachet_core::machines::query`]) and performs its effects.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use cachet_client::{Client, Error, FetchOptions, GqlOptions};
use cachet_core::graphql::operation_of;
use cachet_core::machines::query::{FetchStatus, QueryEffect, QueryEvent, QueryState, QueryStatus};
use cachet_core::tags::{merge_tags, parse_tag_list, query_tags, CACHE_TAGS_HEADER};
use serde::de::DeserializeOwned;
use serde_json::Value;
use yew::Callback;

/// What a query fetches: one data adapter for REST and GraphQL alike (SPEC §6).
#[derive(Debug, Clone, PartialEq)]
pub enum DataRequest {
    /// `fetch_with_cache(url, options)`; the body is decoded from JSON.
    Rest {
        /// The URL.
        url: String,
        /// Method, headers, `auth`, strategy, `tags`.
        options: FetchOptions,
    },
    /// `query_gql(query, variables, options)`; `data` is decoded.
    Gql {
        /// The GraphQL document.
        query: String,
        /// Its variables.
        variables: Option<Value>,
        /// `auth`, `tags`, strategy, endpoint.
        options: GqlOptions,
    },
}

impl DataRequest {
    /// A GET of `url`.
    pub fn get(url: &str) -> Self {
        DataRequest::Rest { url: url.to_owned(), options: FetchOptions::default() }
    }

    /// A GraphQL query.
    pub fn gql(query: &str, variables: Option<Value>, options: GqlOptions) -> Self {
        DataRequest::Gql { query: query.to_owned(), variables, options }
    }

    /// The tags the answer is cached under, as far as the page knows before it arrives: the `tags` option,
    /// else (GraphQL) the tags derived from the operation name.
    pub fn tags(&self) -> Vec<String> {
        let (explicit, derived) = match self {
            DataRequest::Rest { options, .. } => (options.tags.as_ref(), Vec::new()),
            DataRequest::Gql { query, options, .. } => (
                options.tags.as_ref(),
                operation_of(query, options.operation_name.as_deref())
                    .map(|operation| query_tags(operation.kind, operation.name.as_deref()))
                    .unwrap_or_default(),
            ),
        };
        match explicit {
            Some(tags) => parse_tag_list(&tags.join(",")).unwrap_or_default(),
            None => derived,
        }
    }

    /// The strategy the request asks for: its own, or the config's default for its kind.
    pub(crate) fn strategy(&self, config: &cachet_client::Config) -> cachet_client::Strategy {
        match self {
            DataRequest::Rest { options, .. } => options.strategy.unwrap_or(config.strategy.default),
            DataRequest::Gql { options, .. } => options.strategy.unwrap_or(config.strategy.graphql),
        }
    }

    /// The request one fetch sends: with [`Strategy::for_query_fetch`](cachet_client::Strategy::for_query_fetch)
    /// of its strategy, so that a `fresh` fetch (a refetch by hand, on focus, on reconnect, polling) asks
    /// the server instead of answering from the cache again, and a cache-and-network query's first read
    /// goes cache-first (the hook asks for the fresh answer itself).
    pub(crate) fn for_fetch(mut self, config: &cachet_client::Config, fresh: bool) -> Self {
        let strategy = Some(self.strategy(config).for_query_fetch(fresh));
        match &mut self {
            DataRequest::Rest { options, .. } => options.strategy = strategy,
            DataRequest::Gql { options, .. } => options.strategy = strategy,
        }
        self
    }

    /// Runs the request: the data (decoded by `decode`), whether it came from a cache, and the tags the
    /// server added.
    pub(crate) async fn run(self, client: Client, decode: Decode) -> Result<Fetched, Error> {
        match self {
            DataRequest::Rest { url, options } => {
                let result = client.fetch_with_cache(&url, options).await?;
                if !result.response.ok() {
                    let body = result.response.text().chars().take(2048).collect();
                    return Err(Error::Http { url, status: result.response.status, body });
                }
                let server_tags = result.response.header(CACHE_TAGS_HEADER).map(parse_tag_list);
                let what = format!("the body of {}", result.response.url);
                Ok(Fetched {
                    data: decode(result.data()?).map_err(|message| Error::Decode { what, message })?,
                    from_cache: result.from_cache,
                    stale: result.stale,
                    server_tags: server_tags.and_then(Result::ok).unwrap_or_default(),
                })
            }
            DataRequest::Gql { query, variables, options } => {
                let result = client.query_gql::<Value>(&query, variables, options).await?;
                let what = "the GraphQL `data`".to_owned();
                let data = decode(result.data).map_err(|message| Error::Decode { what, message })?;
                Ok(Fetched {
                    data,
                    from_cache: result.from_cache,
                    stale: result.stale,
                    server_tags: Vec::new(),
                })
            }
        }
    }
}

/// When a query fetches, besides mount, a change of its request, `refetch()` and a matching
/// `cache-invalidated`; the decisions are the core's query machine's
/// ([`cachet_core::machines::query`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefetchOptions {
    /// When the window gets the focus back (default false).
    pub on_focus: bool,
    /// When the browser comes back online (default true).
    pub on_reconnect: bool,
    /// Whether the query may fetch at all (default true). A dependent query passes `false` until the
    /// value it needs is known; what was asked meanwhile (mount, an invalidation) is fetched on enabling.
    pub enabled: bool,
    /// Polling: fetch again every so often (default none), skipped while offline, while the tab is
    /// hidden and while a fetch runs.
    pub refetch_interval: Option<std::time::Duration>,
    /// When the request changes (new variables), show the previous request's data until the new one's
    /// arrives (default false); the handle's `placeholder` says so.
    pub keep_previous_data: bool,
}

impl Default for RefetchOptions {
    fn default() -> Self {
        RefetchOptions {
            on_focus: false,
            on_reconnect: true,
            enabled: true,
            refetch_interval: None,
            keep_previous_data: false,
        }
    }
}

/// The state of a query hook: status × fetch status, the last data (kept while refetching and after an
/// error), the error, where the data came from, and `refetch`.
#[derive(Debug, Clone, PartialEq)]
pub struct UseCachetQueryHandle<T> {
    /// How the last fetch ended: `Pending`, `Success`, `Error`.
    pub status: QueryStatus,
    /// Whether a fetch runs: `Fetching`, `Paused` (offline), `Idle`.
    pub fetch_status: FetchStatus,
    /// The last data that arrived.
    pub data: Option<T>,
    /// The error of the last fetch, when it failed.
    pub error: Option<Error>,
    /// Whether `data` came from a cache.
    pub from_cache: bool,
    /// Whether `data` is the last good answer, given under stale-if-error because the network failed or
    /// the server answered 5xx (`X-Cachet-Stale`; `cache.staleIfErrorSeconds`).
    pub stale: bool,
    /// Whether the agent has registered the query's tags: from then on no invalidation is missed.
    pub live: bool,
    /// `data` is the previous request's, shown while this one loads (`keep_previous_data`).
    pub placeholder: bool,
    refetch: Callback<()>,
}

impl<T> UseCachetQueryHandle<T> {
    /// Fetches the server's current data now (a cache-first query is sent network-first, see
    /// [`cachet_client::Strategy::for_fresh_data`]); a fetch already running is not duplicated.
    pub fn refetch(&self) {
        self.refetch.emit(());
    }

    /// The same handle with its data mapped by `select` (a part of it, a count): computed from the data
    /// the query already has, never a new fetch.
    pub fn select<U>(&self, select: impl FnOnce(&T) -> U) -> UseCachetQueryHandle<U> {
        UseCachetQueryHandle {
            status: self.status,
            fetch_status: self.fetch_status,
            data: self.data.as_ref().map(select),
            error: self.error.clone(),
            from_cache: self.from_cache,
            stale: self.stale,
            live: self.live,
            placeholder: self.placeholder,
            refetch: self.refetch.clone(),
        }
    }
}

/// A query's data, decoded to the hook's `T` and kept without its type, so that the driver (most of a
/// query hook's code) is compiled once rather than once per `T`: each `use_cachet_gql::<T>` costs only
/// its [`decode_as`] and a downcast.
pub(crate) type Data = Rc<dyn Any>;

/// Decodes JSON into the hook's `T`, as [`Data`]; the error is serde's message.
pub(crate) type Decode = fn(Value) -> Result<Data, String>;

/// The [`Decode`] of `T`.
pub(crate) fn decode_as<T: DeserializeOwned + 'static>(value: Value) -> Result<Data, String> {
    serde_json::from_value::<T>(value).map(|data| Rc::new(data) as Data).map_err(|error| error.to_string())
}

/// The data of one fetch.
pub(crate) struct Fetched {
    pub(crate) data: Data,
    pub(crate) from_cache: bool,
    pub(crate) stale: bool,
    pub(crate) server_tags: Vec<String>,
}

thread_local! {
    /// The page's live query drivers, for optimistic updates (a mutation guesses the data of the queries
    /// its invalidation will hit).
    static LIVE: RefCell<Vec<std::rc::Weak<Driver>>> = const { RefCell::new(Vec::new()) };
}

/// A mutation's guess for the data of one type: `None` for data of another type.
pub(crate) type Guess = Rc<dyn Fn(&dyn Any) -> Option<Data>>;

/// Shows `guess` in every live query whose tags `tags` hit and whose data it applies to; returns those
/// queries, to roll back if the mutation fails.
pub(crate) fn guess_hit_queries(tags: &[String], guess: &Guess) -> Vec<Rc<Driver>> {
    let live: Vec<Rc<Driver>> = LIVE.with(|live| {
        let mut live = live.borrow_mut();
        live.retain(|driver| driver.strong_count() > 0);
        live.iter().filter_map(std::rc::Weak::upgrade).collect()
    });
    live.into_iter()
        .filter(|driver| {
            let request = driver.request.borrow().as_ref().map(|(request, _)| request.clone());
            request.is_some_and(|request| cachet_core::tags::is_hit(&driver.tags(&request), tags))
        })
        .filter_map(|driver| {
            let data = driver.data()?;
            let guessed = guess(data.as_ref())?;
            driver.dispatch(QueryEvent::Optimistic(guessed));
            Some(driver)
        })
        .collect()
}

/// Feeds one query's machine and performs its effects. One per hook and request.
pub(crate) struct Driver {
    decode: Decode,
    state: RefCell<QueryState<Data, Error>>,
    request: RefCell<Option<(DataRequest, Client)>>,
    server_tags: RefCell<Vec<String>>,
    live: std::cell::Cell<bool>,
    rerender: RefCell<Option<Rc<dyn Fn()>>>,
    /// Made once, so that handles of one driver compare equal.
    refetch: std::cell::OnceCell<Callback<()>>,
    /// Suspended renders waiting for the first data or error (the Suspense form).
    suspended: RefCell<Vec<yew::suspense::SuspensionHandle>>,
    /// The first fetch was started by a suspended render (which runs no effects): the mount effect,
    /// once it runs, does not fetch a second time.
    started_in_render: std::cell::Cell<bool>,
}

impl Driver {
    /// A driver showing `previous` (another request's data) until its own arrives; fetches only once
    /// `enabled`.
    /// A driver for a query sent with `strategy` (its own, or the config's default for it).
    pub(crate) fn new(
        online: bool,
        decode: Decode,
        previous: Option<Data>,
        enabled: bool,
        strategy: cachet_client::Strategy,
    ) -> Self {
        let network_after_cache = strategy == cachet_client::Strategy::CacheAndNetwork;
        let state = QueryState { enabled, network_after_cache, ..QueryState::keeping(online, previous) };
        Driver {
            decode,
            state: RefCell::new(state),
            request: RefCell::new(None),
            server_tags: RefCell::new(Vec::new()),
            live: std::cell::Cell::new(false),
            rerender: RefCell::new(None),
            refetch: std::cell::OnceCell::new(),
            suspended: RefCell::new(Vec::new()),
            started_in_render: std::cell::Cell::new(false),
        }
    }

    /// Makes this driver one of the page's live queries (for optimistic updates), while it lives.
    pub(crate) fn register(self: &Rc<Self>) {
        LIVE.with(|live| live.borrow_mut().push(Rc::downgrade(self)));
    }

    /// For a suspended render: starts the first fetch now (a suspended component runs no effects), once.
    pub(crate) fn start_in_render(self: &Rc<Self>) {
        if !self.started_in_render.replace(true) {
            self.dispatch(QueryEvent::Fetch);
        }
    }

    /// For the mount effect: whether it should fetch (not when a suspended render already did).
    pub(crate) fn mount_fetches(&self) -> bool {
        !self.started_in_render.get()
    }

    /// Resumes `suspension` once the query has data or an error.
    pub(crate) fn resume_when_settled(&self, suspension: yew::suspense::SuspensionHandle) {
        self.suspended.borrow_mut().push(suspension);
    }

    /// What the next fetch runs, and how to re-render the component.
    pub(crate) fn update(&self, request: DataRequest, client: Client, rerender: Rc<dyn Fn()>) {
        *self.request.borrow_mut() = Some((request, client));
        *self.rerender.borrow_mut() = Some(rerender);
    }

    /// The tags to subscribe to: the request's and those the server added.
    pub(crate) fn tags(&self, request: &DataRequest) -> Vec<String> {
        merge_tags(&request.tags(), &self.server_tags.borrow())
    }

    pub(crate) fn set_live(&self) {
        self.live.set(true);
        self.rerender();
    }

    /// The data held now (for the next request's placeholder).
    pub(crate) fn data(&self) -> Option<Data> {
        self.state.borrow().data.clone()
    }

    /// Applies one event and starts the fetches it asks for.
    pub(crate) fn dispatch(self: &Rc<Self>, event: QueryEvent<Data, Error>) {
        let current = self.state.borrow().clone();
        let (next, effects) = current.reduce(event);
        let settled = next.data.is_some() || next.error.is_some();
        *self.state.borrow_mut() = next;
        if settled {
            for suspension in self.suspended.borrow_mut().drain(..) {
                suspension.resume();
            }
        }
        self.rerender();
        for QueryEffect::StartFetch { seq, fresh } in effects {
            let Some((request, client)) = self.request.borrow().clone() else { continue };
            let request = request.for_fetch(&client.config(), fresh);
            let driver = self.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let event = match request.run(client, driver.decode).await {
                    Ok(fetched) => {
                        *driver.server_tags.borrow_mut() = fetched.server_tags;
                        let now = js_sys::Date::now() as u64;
                        QueryEvent::Resolved {
                            seq,
                            data: fetched.data,
                            from_cache: fetched.from_cache,
                            stale: fetched.stale,
                            now,
                        }
                    }
                    Err(error) => QueryEvent::Failed { seq, error },
                };
                driver.dispatch(event);
            });
        }
    }

    /// The handle the hook returns; `T` is the type [`Driver::new`]'s `decode` decodes to.
    pub(crate) fn handle<T: Clone + 'static>(self: &Rc<Self>) -> UseCachetQueryHandle<T> {
        let weak = Rc::downgrade(self);
        let refetch = self.refetch.get_or_init(|| {
            Callback::from(move |()| {
                if let Some(driver) = weak.upgrade() {
                    driver.dispatch(QueryEvent::Refresh);
                }
            })
        });
        let state = self.state.borrow();
        UseCachetQueryHandle {
            status: state.status,
            fetch_status: state.fetch_status,
            data: state.data.as_ref().and_then(|data| data.downcast_ref::<T>()).cloned(),
            error: state.error.clone(),
            from_cache: state.from_cache,
            stale: state.stale,
            live: self.live.get(),
            placeholder: state.placeholder,
            refetch: refetch.clone(),
        }
    }

    fn rerender(&self) {
        let rerender = self.rerender.borrow().clone();
        if let Some(rerender) = rerender {
            rerender();
        }
    }
}
