//! The planner: every decision of one cached request, as pure functions of what the store holds and what
//! the network answered. [`super::run()`] asks them in order and carries their answers out.
//!
//! | Strategy | First step | Entry fresh | Entry absent or expired | Network unreachable |
//! |---|---|---|---|---|
//! | cache-first | look up | serve it | ask the network | error |
//! | cache-only | look up | serve it | `not cached` error | never asked |
//! | network-first | ask the network | (only after a network failure) serve it | | look up; error if absent or expired |
//! | stale-while-revalidate | look up, with the body | serve it, re-fetch in the background | ask the network | error |
//! | network-only | ask the network | never looked up | | error |
//! | cache-and-network | look up, with the body | serve it, re-fetch in the background, announce the stored answer even when unchanged | ask the network | error |
//!
//! When the network step fails (unreachable, or a 5xx answer), [`after_failure`] decides whether the
//! entry answers instead: network-first's own fallback to a fresh entry, and stale-if-error (RFC 5861)
//! within `cache.staleIfErrorSeconds` or the stored answer's own `stale-if-error=N`, marked stale.
//!
//! An answer from the network is stored ([`storing`]) only when all of these hold, checked in this order
//! (the first that fails is the [`NotStored`] reason): the strategy stores and the request has an entry
//! (a request in no partition has none: it is sent as network-only), the status is 2xx, the configured
//! auth-failure check does not call it an auth failure (a rule may match a 2xx by a header or a JSON
//! field), the server's `Cache-Control` allows it (below), its body is within `cache.maxBodyBytes`, and a
//! GraphQL document's body is a result without `errors`. It is stored with the request's tags merged with the server's `X-SW-Cache-Tags` (GETs and
//! documents alike), and the store keeps at most `cache.maxEntries` entries in its cache, least recently
//! used evicted first.
//!
//! # The server's `Cache-Control`
//!
//! The answer's header refines what the app configured; it never silently cancels it:
//!
//! | directive | a GET | a GraphQL document |
//! |---|---|---|
//! | `no-store` | not stored ([`NotStored::ServerNoStore`]) | stored: advisory, unless `features.graphql.honorNoStore` makes it binding |
//! | `private` | not stored in the shared partition ([`NotStored::ServerPrivate`]); stored in a signed-in user's | the same |
//!
//! Why a document's `no-store` is advisory by default: servers send it on POST answers to keep HTTP caches
//! and CDNs off (Apollo Server answers every query without cache hints `no-store`, its default since
//! version 4), while an app that turned GraphQL caching on asked cachet to keep its queries, in a cache
//! that is private to one browser profile and partitioned per user. A GET's `no-store` is the server's
//! word about one resource that the app's default route (every same-origin GET) did not choose
//! individually: it binds. `private` means the answer is someone's: the shared partition (nobody signed
//! in, the request without credentials) is never where it goes. Whatever is not stored says why on the
//! answer ([`NotStored::code`] in `X-Cachet-Not-Stored`) and on the console.
//!
//! An entry older than `cache.maxAgeSeconds` counts as absent; one without a stored-at time (not stored by
//! cachet) is served as it is. A background re-fetch that stored a body different from the stale one
//! served (stale-while-revalidate), or any body (cache-and-network: the caller waits for the second
//! answer), announces `cache-updated` with [`Job::announce_url`].

use crate::classify::{GraphqlAction, GraphqlCall, RequestClass};
use crate::config::{CacheBounds, Config};
use crate::graphql::result_is_cacheable;
use crate::partition::Partition;
use crate::protocol::SwEvent;
use crate::strategy::Strategy;
use crate::tags::{merge_tags, parse_tag_list};

use super::key::{document_entry, get_entry, EntryKey};

/// One request the engine answers with a strategy: everything the planner needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The strategy carried out: the requested one, or network-only when the request has no entry.
    pub strategy: Strategy,
    /// Where its answer is stored; `None` when it must never be stored nor answered from a store.
    pub entry: Option<EntryKey>,
    /// The request's own tags (`X-Cachet-Tags`, or a query's auto-tags).
    pub tags: Vec<String>,
    /// A GraphQL document: stored only when its body is a result without `errors`.
    pub document: bool,
    /// `cache.maxEntries`, `cache.maxAgeSeconds`, `cache.maxBodyBytes`.
    pub bounds: CacheBounds,
    /// The URL `cache-updated` names: the URL the page asked for (a GET), or the document's entry URL.
    pub announce_url: String,
    /// Whether the server's `Cache-Control: no-store` keeps the answer out: always for a GET, for a
    /// document only with `features.graphql.honorNoStore` (see the module doc).
    pub no_store_binds: bool,
    /// Whether the entry is in the shared partition, where a `private` answer is never stored.
    pub shared: bool,
}

impl Job {
    /// The job for a request the core classified as `class`, sent to `url` (absolute) on `origin`, in
    /// `partition`; `None` when the class is not answered with a strategy (mutations, subscriptions, auth
    /// routes, requests that are not cachet's business).
    pub fn for_request(
        class: &RequestClass,
        partition: &Partition,
        origin: &str,
        url: &str,
        config: &Config,
    ) -> Option<Job> {
        let (strategy, entry, tags, document) = match class {
            RequestClass::Get { strategy, tags } => {
                (*strategy, get_entry(origin, url, partition), tags.clone(), false)
            }
            RequestClass::Graphql(GraphqlCall {
                endpoint_index,
                action: GraphqlAction::Query { cache_key, tags, strategy },
                ..
            }) => {
                let endpoint = config.features.graphql.endpoints.get(*endpoint_index)?;
                (*strategy, document_entry(origin, endpoint, cache_key, partition), tags.clone(), true)
            }
            _ => return None,
        };
        let announce_url = match (&entry, document) {
            (Some(entry), true) => entry.url.clone(),
            _ => url.to_owned(),
        };
        let strategy = if entry.is_some() { strategy } else { Strategy::NetworkOnly };
        let no_store_binds = !document || config.features.graphql.honor_no_store;
        let shared = *partition == Partition::Shared;
        Some(Job {
            strategy,
            entry,
            tags,
            document,
            bounds: config.cache,
            announce_url,
            no_store_binds,
            shared,
        })
    }
}

/// What the runner does first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Look the entry up; with its body when `read_body` (to compare with a re-fetch).
    Lookup {
        /// Read the stored body too.
        read_body: bool,
    },
    /// Ask the network.
    Fetch,
}

/// The first step of `job`.
pub fn start(job: &Job) -> Start {
    match (job.strategy, &job.entry) {
        (_, None) | (Strategy::NetworkFirst | Strategy::NetworkOnly, _) => Start::Fetch,
        (Strategy::StaleWhileRevalidate | Strategy::CacheAndNetwork, _) => Start::Lookup { read_body: true },
        (Strategy::CacheFirst | Strategy::CacheOnly, _) => Start::Lookup { read_body: false },
    }
}

/// What a lookup found, as the planner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No entry.
    Absent,
    /// An entry within its life ([`Freshness::life_ms`]), or one without a stored-at time.
    Fresh,
    /// Past its life but within the stored answer's `stale-while-revalidate=N`: a strategy that reads the
    /// store first serves it and re-fetches it in the background.
    Revalidate,
    /// Older than that: it counts as absent.
    Expired,
}

/// How long an entry stays fresh, and how long past that it may still be served while it is re-fetched.
///
/// Precedence, decided here for both edges (the server's `Cache-Control` refines what the app
/// configured, never past it):
///
/// | stored answer's `Cache-Control` | life |
/// |---|---|
/// | none, or no freshness directive | `cache.maxAgeSeconds` |
/// | `max-age=N` (`s-maxage=N` instead for an entry in the shared partition, when present) | `min(N, cache.maxAgeSeconds)` |
/// | `no-cache` | 0: stored, but never served without asking the network first (stale-if-error aside) |
/// | `stale-while-revalidate=N` | N more seconds in which cache-first, stale-while-revalidate and cache-and-network serve it and re-fetch it in the background |
///
/// `X-SW-Strategy` (or the config's strategy) chooses the order of store and network; the life decides
/// only whether what the store holds is fresh. Network-first and network-only ask the network first
/// whatever the life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// Fresh for this long after it was stored (ms).
    pub life_ms: u64,
    /// Then servable while re-fetched for this long (ms).
    pub revalidate_ms: u64,
}

/// The [`Freshness`] of an entry of `job` whose stored answer said `stored_cache_control`. A GraphQL
/// document's only: a GET's `Cache-Control` speaks to HTTP caches about one resource the app's route
/// chose without seeing it (static servers send `no-cache` on every file so that browsers revalidate),
/// so a GET lives `cache.maxAgeSeconds` whatever it says (its `no-store` and `private` still bind, see
/// [`storing`]).
pub fn freshness(job: &Job, stored_cache_control: Option<&str>) -> Freshness {
    let configured = job.bounds.max_age_seconds;
    let Some(value) = stored_cache_control.filter(|_| reads_hints(job)) else {
        return Freshness { life_ms: configured.saturating_mul(1000), revalidate_ms: 0 };
    };
    let shared_age = if job.shared { directive_seconds(value, "s-maxage") } else { None };
    let server = if has_directive(value, "no-cache") {
        Some(0)
    } else {
        shared_age.or_else(|| directive_seconds(value, "max-age"))
    };
    let life = server.map_or(configured, |seconds| seconds.min(configured));
    let revalidate = directive_seconds(value, "stale-while-revalidate").unwrap_or(0);
    Freshness { life_ms: life.saturating_mul(1000), revalidate_ms: revalidate.saturating_mul(1000) }
}

/// Whether `job`'s stored `Cache-Control` sets its entry's life ([`freshness`]): a GraphQL document's only.
pub fn reads_hints(job: &Job) -> bool {
    job.document
}

/// Whether an entry stored at `stored_at` (`None` inside `Some`: no readable time) is fresh at `now`,
/// given its [`Freshness`].
pub fn found(stored_at: Option<Option<u64>>, now: u64, freshness: Freshness) -> Found {
    let Some(stored_at) = stored_at else { return Found::Absent };
    let Some(at) = stored_at else { return Found::Fresh };
    // Fresh while its age is below its life (RFC 9111 §4.2): a life of 0 (`no-cache`) is never fresh.
    let age = now.saturating_sub(at);
    if age < freshness.life_ms {
        Found::Fresh
    } else if age < freshness.life_ms.saturating_add(freshness.revalidate_ms) {
        Found::Revalidate
    } else {
        Found::Expired
    }
}

/// Until when (Unix ms, exclusive) a lookup of `job`'s entry, stored at `stored_at` and as fresh as
/// `freshness` says, is answered with the stored entry alone: no re-fetch, no network, nothing but a
/// mark of use ([`after_lookup`] says [`AfterLookup::Serve`] without `revalidate` at every `now` before
/// it). A fresh entry of cache-first or cache-only; `None` for every other strategy (stale-while-revalidate
/// and cache-and-network re-fetch, the network-first ones ask the network first) and for an entry with
/// no readable time. The worker writes it next to the request's name, so that a stopped worker's shim
/// answers such a hit without the engine (cachet-worker's `sw::names`).
pub fn served_alone_until(job: &Job, stored_at: Option<u64>, freshness: Freshness) -> Option<u64> {
    if !matches!(job.strategy, Strategy::CacheFirst | Strategy::CacheOnly) || job.entry.is_none() {
        return None;
    }
    Some(stored_at?.saturating_add(freshness.life_ms))
}

/// What follows a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterLookup {
    /// Answer with the entry (and mark it used); re-fetch it in the background when `revalidate`.
    Serve {
        /// Stale-while-revalidate's background re-fetch.
        revalidate: bool,
    },
    /// Ask the network.
    Fetch,
    /// Answer with a "not cached" error (cache-only).
    NotCached,
}

/// The step after a lookup made first (not a network-first fallback: see [`after_network_failure`]).
pub fn after_lookup(job: &Job, found: Found) -> AfterLookup {
    match (found, job.strategy) {
        (Found::Fresh, strategy) => AfterLookup::Serve {
            revalidate: matches!(strategy, Strategy::StaleWhileRevalidate | Strategy::CacheAndNetwork),
        },
        (
            Found::Revalidate,
            Strategy::CacheFirst | Strategy::StaleWhileRevalidate | Strategy::CacheAndNetwork,
        ) => AfterLookup::Serve { revalidate: true },
        (_, Strategy::CacheOnly) => AfterLookup::NotCached,
        _ => AfterLookup::Fetch,
    }
}

/// What follows a network failure (no answer at all; an error answer such as a 500 is an answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterNetworkFailure {
    /// Network-first: look the entry up and serve it if fresh; the failure stands otherwise.
    FallBack,
    /// The failure is the answer.
    Fail,
}

/// The step after the network could not be reached, for a request whose first step was `start`.
pub fn after_network_failure(job: &Job, start: Start) -> AfterNetworkFailure {
    match (job.strategy, start, &job.entry) {
        (Strategy::NetworkFirst, Start::Fetch, Some(_)) => AfterNetworkFailure::FallBack,
        _ => AfterNetworkFailure::Fail,
    }
}

/// Why the network step gave no usable answer, for [`after_failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// No answer at all (unreachable, offline, a timed-out connection).
    Unreachable,
    /// The server answered with this 5xx status (`504 Gateway Timeout` included).
    ServerError(u16),
}

impl Failure {
    /// The failure an answer with `status` is, if any: a 5xx.
    pub fn of_status(status: u16) -> Option<Failure> {
        (500..600).contains(&status).then_some(Failure::ServerError(status))
    }
}

/// What follows a failed network step once the entry is looked up ([`after_failure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Answer with the entry; `stale` marks it (`X-Cachet-Stale: 1`): served past its life or in place of
    /// a server's error, under stale-if-error.
    Serve {
        /// Served under stale-if-error rather than as the strategy's own fallback.
        stale: bool,
    },
    /// The failure stands (the 5xx answer is given as it is; no answer is an error).
    Fail,
}

/// Whether a failed network step makes the runner look the entry up again: a job with an entry whose
/// strategy both asks the network and reads the store (not network-only, never looked up; not
/// cache-only, which never asks). A 5xx is looked up too: the stored answer's own `stale-if-error` is
/// read on it.
pub fn looks_up_after(job: &Job) -> bool {
    job.entry.is_some() && !matches!(job.strategy, Strategy::NetworkOnly | Strategy::CacheOnly)
}

/// The stale-if-error window of an entry, in ms: the longer of `cache.staleIfErrorSeconds` and the
/// stored answer's own `Cache-Control: stale-if-error=N` (RFC 5861: the server's hint, read when the
/// entry is needed). Zero: off.
pub fn stale_if_error_ms(job: &Job, stored_cache_control: Option<&str>) -> u64 {
    let hinted =
        stored_cache_control.and_then(|value| directive_seconds(value, "stale-if-error")).unwrap_or(0);
    job.bounds.stale_if_error_seconds.max(hinted).saturating_mul(1000)
}

/// The value of a `Cache-Control` directive `name=N` (seconds), when present and a whole number.
pub fn directive_seconds(cache_control: &str, name: &str) -> Option<u64> {
    cache_control.split(',').find_map(|directive| {
        let (key, value) = directive.split_once('=')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim().trim_matches('"').parse().ok())?
    })
}

/// The console line that says the answer to `url` (the query `operation`, when named) is its stored
/// entry, marked stale ([`after_failure`]): the same words on both edges.
pub fn stale_line(url: &str, operation: Option<&str>) -> String {
    let operation = operation.map(|name| [" ", name].concat()).unwrap_or_default();
    let why = " from its stored entry, marked stale: the network failed or the server answered 5xx";
    ["cachet: answered ", url, &operation, why].concat()
}

/// What follows `failure` of a network step that began as `start`, given the entry's age at the lookup
/// after it (`None`: no entry; `Some(None)`: an entry without a stored-at time), its life (`life_ms`,
/// [`Freshness::life_ms`]) and its stale-if-error window (`window_ms`, [`stale_if_error_ms`]):
///
/// | failure | entry within its life | expired, within the window | older, or none |
/// |---|---|---|---|
/// | unreachable | network-first: served (its own fallback, not marked) | served, stale | the error (but see below) |
/// | 5xx, window > 0 | served, stale | served, stale | the 5xx |
/// | 5xx, no window | the 5xx | the 5xx | the 5xx |
///
/// Unreachable, an entry past the life its server gave it ([`freshness`]: a document's `max-age` or
/// `no-cache`) but within `cache.maxAgeSeconds` is served, marked stale, window or not: offline, the
/// app's choice to keep answers that long stands.
///
/// A cache-first, stale-while-revalidate or cache-and-network job asked the network because its entry
/// was absent or expired, so only the window's column applies to it. The entry is the job's own: its key
/// carries the partition, so another user's answer is never served.
pub fn after_failure(
    job: &Job,
    start: Start,
    failure: Failure,
    age_ms: Option<Option<u64>>,
    life_ms: u64,
    window_ms: u64,
) -> AfterFailure {
    let Some(age) = age_ms else { return AfterFailure::Fail };
    let life = life_ms;
    let fresh = age.is_none_or(|age| age < life);
    let within_window = age.is_none_or(|age| age < life.saturating_add(window_ms));
    // Past the life the server gave it, within the one the app configured: offline, the app's choice
    // to keep answers that long is not cancelled by the server's hint; the answer says it is stale.
    let configured = job.bounds.max_age_seconds.saturating_mul(1000);
    let within_configured = age.is_none_or(|age| age < configured);
    match failure {
        Failure::Unreachable if fresh => match after_network_failure(job, start) {
            AfterNetworkFailure::FallBack => AfterFailure::Serve { stale: false },
            AfterNetworkFailure::Fail if window_ms > 0 => AfterFailure::Serve { stale: true },
            AfterNetworkFailure::Fail => AfterFailure::Fail,
        },
        Failure::Unreachable if within_configured => AfterFailure::Serve { stale: true },
        _ if window_ms > 0 && within_window => AfterFailure::Serve { stale: true },
        _ => AfterFailure::Fail,
    }
}

/// What the network answered, as the planner needs it.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    /// HTTP status.
    pub status: u16,
    /// The configured auth-failure check's verdict on this answer.
    pub auth_failure: bool,
    /// The body.
    pub body: &'a [u8],
    /// The server's `X-SW-Cache-Tags`, if present.
    pub server_tags: Option<&'a str>,
    /// The server's `Cache-Control`, if present.
    pub cache_control: Option<&'a str>,
}

/// Why an answer was not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotStored {
    /// The strategy never stores (network-only), or the request has no entry (no partition).
    Strategy,
    /// Not a 2xx.
    Status(u16),
    /// The auth-failure check called it an auth failure.
    AuthFailure,
    /// The server said `Cache-Control: no-store`, and it binds (a GET; a document with
    /// `features.graphql.honorNoStore`).
    ServerNoStore,
    /// The server said `Cache-Control: private`, and the entry would be in the shared partition.
    ServerPrivate,
    /// Larger than `cache.maxBodyBytes`.
    TooLarge {
        /// The body's size.
        size: u64,
        /// `cache.maxBodyBytes`.
        max: u64,
    },
    /// A GraphQL document whose body is not a result without `errors`.
    NotAResult,
    /// The store refused it (storage full even after eviction).
    StoreFull,
    /// An invalidation of its tags, or a clear-all, began while it was on its way
    /// ([`super::edge::Stored::Overtaken`]).
    Overtaken,
    /// The store failed (its error is the host's warning); the answer is given all the same.
    StoreFailed,
    /// A plugin's `cache_will_update` refused it (the default [`super::CacheControl`]: `no-store`).
    Plugin,
}

impl NotStored {
    /// The reason as one token, the value of `X-Cachet-Not-Stored`
    /// ([`crate::protocol::NOT_STORED_HEADER`]) on an answer that was not stored.
    pub fn code(&self) -> &'static str {
        match self {
            NotStored::Strategy => "strategy",
            NotStored::Status(_) => "status",
            NotStored::AuthFailure => "auth-failure",
            NotStored::ServerNoStore => "server-no-store",
            NotStored::ServerPrivate => "server-private",
            NotStored::TooLarge { .. } => "too-large",
            NotStored::NotAResult => "graphql-errors",
            NotStored::StoreFull => "store-full",
            NotStored::Overtaken => "overtaken",
            NotStored::StoreFailed => "store-failed",
            NotStored::Plugin => "plugin",
        }
    }

    /// Whether a bound of cachet's declined it (`cache.maxBodyBytes`, the browser's storage): an answer
    /// the app's strategy asked to store. The edges say so as a console warning, naming the bound
    /// (issue 36: an app shell over `maxBodyBytes` was missing offline, with nothing on the console); the
    /// other reasons are the strategy's or the server's choice, said at debug level.
    pub fn is_bound(&self) -> bool {
        matches!(self, NotStored::TooLarge { .. } | NotStored::StoreFull)
    }

    /// The console line that says an answer to `url` (the query `operation`, when named) was not
    /// stored, and why: the same words on both edges.
    pub fn line(&self, url: &str, operation: Option<&str>) -> String {
        let operation = operation.map(|name| [" ", name].concat()).unwrap_or_default();
        ["cachet: not stored ", url, &operation, ": ", self.describe()].concat()
    }

    /// The reason in words, for the console and the devtools (written out rather than `Debug`, which
    /// would cost the wasm its formatting code).
    pub fn describe(&self) -> &'static str {
        match self {
            NotStored::Strategy => "the strategy never stores, or the request is in no partition",
            NotStored::Status(_) => "not a 2xx",
            NotStored::AuthFailure => "an auth failure",
            NotStored::ServerNoStore => "the server said Cache-Control: no-store",
            NotStored::ServerPrivate => "the server said Cache-Control: private, and nobody is signed in",
            NotStored::TooLarge { .. } => "over cache.maxBodyBytes",
            NotStored::NotAResult => "not a GraphQL result without errors",
            NotStored::StoreFull => "storage is full, even after evicting the least recently used entries",
            NotStored::Overtaken => "an invalidation overtook it",
            NotStored::StoreFailed => "the store failed",
            NotStored::Plugin => "a plugin refused it",
        }
    }
}

/// Whether a `Cache-Control` value holds the directive `name` (matched whole, case-insensitive).
pub fn has_directive(cache_control: &str, name: &str) -> bool {
    cache_control
        .split(',')
        .any(|directive| directive.split('=').next().unwrap_or_default().trim().eq_ignore_ascii_case(name))
}

/// Whether and how an answer is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storing {
    /// Store under the job's entry with `tags`, then keep at most `keep` entries in its cache.
    Store {
        /// The request's tags merged with the server's.
        tags: Vec<String>,
        /// `cache.maxEntries`.
        keep: u32,
        /// A malformed `X-SW-Cache-Tags`, ignored (the entry keeps the request's tags): worth a warning.
        ignored_server_tags: Option<String>,
    },
    /// Not stored.
    Skip(NotStored),
}

/// What the store's `outcome` makes of `storing` (the [`storing`] answer it carried out). A store that
/// fails (storage full past eviction, a torn index) costs the entry, never the answer:
/// [`NotStored::StoreFailed`], and the error goes to `warn`, naming `url`.
pub fn after_store<E: std::fmt::Display>(
    outcome: Result<super::edge::Stored, E>,
    storing: Storing,
    url: &str,
    warn: &dyn Fn(&str),
) -> Storing {
    match outcome {
        Ok(super::edge::Stored::Kept) => storing,
        Ok(super::edge::Stored::Full) => Storing::Skip(NotStored::StoreFull),
        Ok(super::edge::Stored::Overtaken) => Storing::Skip(NotStored::Overtaken),
        Err(error) => {
            warn(&format!("storing {url} failed ({error}); answered, not stored"));
            Storing::Skip(NotStored::StoreFailed)
        }
    }
}

/// Whether `answered` is stored for `job`, and with which tags.
pub fn storing(job: &Job, answered: &Answered<'_>) -> Storing {
    let size = answered.body.len() as u64;
    let skip = if !job.strategy.stores() || job.entry.is_none() {
        Some(NotStored::Strategy)
    } else if !(200..300).contains(&answered.status) {
        Some(NotStored::Status(answered.status))
    } else if answered.auth_failure {
        Some(NotStored::AuthFailure)
    } else if job.no_store_binds
        && answered.cache_control.is_some_and(|value| has_directive(value, "no-store"))
    {
        Some(NotStored::ServerNoStore)
    } else if job.shared && answered.cache_control.is_some_and(|value| has_directive(value, "private")) {
        Some(NotStored::ServerPrivate)
    } else if size > job.bounds.max_body_bytes {
        Some(NotStored::TooLarge { size, max: job.bounds.max_body_bytes })
    } else if job.document && !result_is_cacheable(answered.body) {
        Some(NotStored::NotAResult)
    } else {
        None
    };
    if let Some(reason) = skip {
        return Storing::Skip(reason);
    }
    let (server, ignored_server_tags) = match answered.server_tags.map(parse_tag_list) {
        None => (Vec::new(), None),
        Some(Ok(tags)) => (tags, None),
        Some(Err(error)) => (
            Vec::new(),
            Some(format!(
                "ignored X-SW-Cache-Tags {}: {error}",
                crate::json::quoted(answered.server_tags.unwrap_or_default())
            )),
        ),
    };
    Storing::Store { tags: merge_tags(&job.tags, &server), keep: job.bounds.max_entries, ignored_server_tags }
}

/// What a finished background re-fetch announces: `cache-updated` when it stored a body that differs from
/// the `stale` one served, or any body for cache-and-network.
pub fn after_revalidate(job: &Job, stale: &[u8], fresh: &[u8], stored: bool) -> Option<SwEvent> {
    let announced = stored && (stale != fresh || job.strategy == Strategy::CacheAndNetwork);
    announced.then(|| SwEvent::CacheUpdated { url: job.announce_url.clone() })
}
