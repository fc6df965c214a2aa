//! The state of one query on two axes (TanStack Query's model): [`QueryStatus`] × [`FetchStatus`].
//!
//! | Event | Effect on the state | Effects |
//! |---|---|---|
//! | [`QueryEvent::Fetch`] (mount, a new request) | online: `Fetching`; offline: `Paused`; already `Fetching`: nothing (deduplicated) | `StartFetch` when it goes `Fetching` |
//! | [`QueryEvent::Refresh`] (manual refetch, focus, reconnect) | like `Fetch`, and the fetch it starts (now or once enabled and online) is `fresh` | `StartFetch { fresh: true }` |
//! | [`QueryEvent::Invalidated`] (a tag hit) | like `Fetch`, but a fetch already running is superseded: its answer may predate the mutation | `StartFetch` |
//! | [`QueryEvent::Resolved`] of the current fetch | `Success`, `Idle`, new data, error cleared | none |
//! | [`QueryEvent::Resolved`] from the cache, for a cache-and-network query ([`QueryState::network_after_cache`]), of a fetch that was not fresh | as above, then at once a fresh fetch: the second answer | `StartFetch { fresh: true }` |
//! | [`QueryEvent::Failed`] of the current fetch, online | `Error`, `Idle`, **last data kept** | none |
//! | [`QueryEvent::Failed`] of the current fetch, offline | status unchanged, `Paused`: it is fetched again on reconnect | none |
//! | an answer of a superseded fetch (older `seq`) | ignored | none |
//! | [`QueryEvent::Online`] | `Paused` becomes `Fetching` | `StartFetch` |
//! | [`QueryEvent::Offline`] | a running fetch keeps running (the Service Worker may answer from its cache) | none |
//! | [`QueryEvent::Enabled`]`(false)` | no fetch starts (`Fetch`, `Invalidated`, `Online`, `Tick` are remembered as wanted) | none |
//! | [`QueryEvent::Enabled`]`(true)` after `false` | fetches when a fetch was wanted meanwhile or no data arrived yet | `StartFetch` then |
//! | [`QueryEvent::Tick`] (the polling interval) | a `fresh` fetch, only when enabled, online, visible and idle | `StartFetch { fresh: true }` then |
//! | [`QueryEvent::Visible`]`(v)` | remembered: a hidden tab does not poll | none |
//! | [`QueryEvent::Optimistic`]`(data)` (a mutation's guess) | `data` shown, the data before the first guess kept aside | none |
//! | [`QueryEvent::RollBack`] (the mutation failed) | the data kept aside is shown again | none |
//! | [`QueryEvent::Resolved`] after a guess | the server's data replaces the guess (the re-run after invalidation) | none |
//!
//! A `fresh` fetch wants the server's current data, not the stored answer a first render may take: the
//! edge sends it with [`crate::strategy::Strategy::for_fresh_data`] of its strategy (a cache-first query
//! is sent network-first: still stored, still answered from the cache when offline).
//!
//! Data is kept across refetches and errors: status says how the *last* fetch ended, `data` is the
//! last data that arrived. A query may start with the data of the request it replaces
//! ([`QueryState::keeping`]: new variables loading): `placeholder` says so until its own data arrives.

/// How the last fetch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryStatus {
    /// No fetch has ended yet.
    Pending,
    /// The last fetch brought data.
    Success,
    /// The last fetch failed.
    Error,
}

/// Whether a fetch is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchStatus {
    /// A fetch is running.
    Fetching,
    /// A fetch is wanted but the browser is offline.
    Paused,
    /// Nothing is running.
    Idle,
}

/// One query's state; `T` is its data, `E` its error.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryState<T, E> {
    /// How the last fetch ended.
    pub status: QueryStatus,
    /// Whether a fetch is running.
    pub fetch_status: FetchStatus,
    /// The last data that arrived.
    pub data: Option<T>,
    /// The error of the last fetch, when it failed.
    pub error: Option<E>,
    /// When `data` arrived (Unix ms).
    pub data_updated_at: Option<u64>,
    /// Whether `data` came from the Service Worker's cache.
    pub from_cache: bool,
    /// Whether `data` is a stored answer given under stale-if-error (`X-Cachet-Stale`): the last good
    /// data, the network or the server having failed.
    pub stale: bool,
    /// Connectivity as last reported.
    pub online: bool,
    /// Number of the current fetch; answers carrying another number are ignored.
    pub seq: u64,
    /// Whether fetches may start (dependent queries wait for a value).
    pub enabled: bool,
    /// A fetch was wanted while disabled: it starts when enabled.
    pub wanted: bool,
    /// Whether the tab is visible (polling pauses while hidden).
    pub visible: bool,
    /// A fresh fetch was asked while none could start: the next one is fresh.
    pub fresh_wanted: bool,
    /// Whether the current (or last) fetch is fresh.
    pub fresh_fetch: bool,
    /// A cache-and-network query: an answer from the cache is followed by a fresh fetch.
    pub network_after_cache: bool,
    /// `data` is the previous request's, shown while this one's first data loads.
    pub placeholder: bool,
    /// While `data` is a mutation's guess: the data it replaced, to show again if the mutation fails.
    pub before_guess: Option<Option<T>>,
}

/// An input.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryEvent<T, E> {
    /// Fetch now (mount, a new request): the strategy may answer from the cache.
    Fetch,
    /// Fetch the server's current data now (manual refetch, focus, reconnect).
    Refresh,
    /// A tag of this query was invalidated.
    Invalidated,
    /// The fetch `seq` brought data.
    Resolved {
        /// Which fetch.
        seq: u64,
        /// The data.
        data: T,
        /// Whether it came from the cache.
        from_cache: bool,
        /// Whether it is the last good data, given under stale-if-error.
        stale: bool,
        /// Current time (Unix ms).
        now: u64,
    },
    /// The fetch `seq` failed.
    Failed {
        /// Which fetch.
        seq: u64,
        /// Why.
        error: E,
    },
    /// The browser went online.
    Online,
    /// The browser went offline.
    Offline,
    /// The query may fetch (`true`) or must wait (`false`).
    Enabled(bool),
    /// The polling interval elapsed.
    Tick,
    /// The tab became visible (`true`) or hidden.
    Visible(bool),
    /// A mutation's guess of the data, shown until the server's arrives.
    Optimistic(T),
    /// The mutation behind the guess failed: show the data from before it.
    RollBack,
}

/// What the edge must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryEffect {
    /// Run fetch number `seq` and report its outcome with that number.
    StartFetch {
        /// The fetch's number.
        seq: u64,
        /// Send it with [`crate::strategy::Strategy::for_fresh_data`]: fresh data is wanted.
        fresh: bool,
    },
}

impl<T, E> QueryState<T, E> {
    /// `Pending` and `Idle`, no data.
    pub fn new(online: bool) -> Self {
        QueryState {
            status: QueryStatus::Pending,
            fetch_status: FetchStatus::Idle,
            data: None,
            error: None,
            data_updated_at: None,
            from_cache: false,
            stale: false,
            online,
            seq: 0,
            enabled: true,
            wanted: false,
            visible: true,
            fresh_wanted: false,
            fresh_fetch: false,
            network_after_cache: false,
            placeholder: false,
            before_guess: None,
        }
    }

    /// [`Self::new`] showing `previous` (the data of the request this query replaces) until its own
    /// data arrives: `placeholder` is set, the status stays `Pending`.
    pub fn keeping(online: bool, previous: Option<T>) -> Self {
        let placeholder = previous.is_some();
        QueryState { data: previous, placeholder, ..QueryState::new(online) }
    }

    /// Applies one event.
    pub fn reduce(mut self, event: QueryEvent<T, E>) -> (Self, Vec<QueryEffect>) {
        let mut effects = Vec::new();
        match event {
            QueryEvent::Fetch | QueryEvent::Refresh if self.fetch_status == FetchStatus::Fetching => {}
            QueryEvent::Fetch | QueryEvent::Invalidated => self.start(&mut effects, false),
            QueryEvent::Refresh => self.start(&mut effects, true),
            QueryEvent::Enabled(enabled) => {
                let was = self.enabled;
                self.enabled = enabled;
                let never_fetched =
                    self.status == QueryStatus::Pending && self.fetch_status == FetchStatus::Idle;
                if enabled && !was && (self.wanted || never_fetched) {
                    self.start(&mut effects, false);
                }
            }
            QueryEvent::Tick => {
                if self.visible && self.online && self.fetch_status == FetchStatus::Idle {
                    self.start(&mut effects, true);
                }
            }
            QueryEvent::Visible(visible) => self.visible = visible,
            QueryEvent::Optimistic(guess) => {
                let before = self.data.replace(guess);
                self.before_guess.get_or_insert(before);
            }
            QueryEvent::RollBack => {
                if let Some(before) = self.before_guess.take() {
                    self.data = before;
                }
            }
            QueryEvent::Resolved { seq, data, from_cache, stale, now } if seq == self.seq => {
                self.placeholder = false;
                self.before_guess = None;
                self.status = QueryStatus::Success;
                self.fetch_status = FetchStatus::Idle;
                self.data = Some(data);
                self.error = None;
                self.data_updated_at = Some(now);
                self.from_cache = from_cache;
                self.stale = stale;
                if from_cache && self.network_after_cache && !self.fresh_fetch {
                    self.start(&mut effects, true);
                }
            }
            QueryEvent::Failed { seq, error }
                if seq == self.seq && self.fetch_status == FetchStatus::Fetching =>
            {
                if self.online {
                    self.status = QueryStatus::Error;
                    self.fetch_status = FetchStatus::Idle;
                    self.error = Some(error);
                } else {
                    self.fetch_status = FetchStatus::Paused;
                }
            }
            QueryEvent::Resolved { .. } | QueryEvent::Failed { .. } => {}
            QueryEvent::Online => {
                self.online = true;
                if self.fetch_status == FetchStatus::Paused {
                    self.start(&mut effects, false);
                }
            }
            QueryEvent::Offline => self.online = false,
        }
        (self, effects)
    }

    fn start(&mut self, effects: &mut Vec<QueryEffect>, fresh: bool) {
        self.fresh_wanted |= fresh;
        if !self.enabled {
            self.wanted = true;
            return;
        }
        self.wanted = false;
        if !self.online {
            self.fetch_status = FetchStatus::Paused;
            return;
        }
        self.seq += 1;
        self.fetch_status = FetchStatus::Fetching;
        self.fresh_fetch = std::mem::take(&mut self.fresh_wanted);
        effects.push(QueryEffect::StartFetch { seq: self.seq, fresh: self.fresh_fetch });
    }
}
