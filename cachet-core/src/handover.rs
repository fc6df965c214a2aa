//! The first visit's answers, handed to the Service Worker when it takes control (issue 19; what
//! Workbox's `CACHE_URLS` message does for URLs, here for answers, so that nothing is fetched twice).
//!
//! A page no worker controls answers its cached requests itself, from its memory cache. When a worker
//! takes control (`controllerchange`), the page posts what it stored, at most [`MAX_ENTRIES`] entries,
//! once, as `hand-over {requestId, entries}` ([`crate::protocol::PageToSw::HandOver`]): for each, the
//! request as the page built it (cachet's headers, never an `Authorization`: only the
//! [`auth_fingerprint`](crate::cache_key::auth_fingerprint) of the one it was sent with), the answer, and
//! when it was stored.
//!
//! The worker trusts none of it beyond what it would accept from the page's own `fetch`: [`admit`] runs
//! the live path's decisions on each entry (same origin, the shim's route rule, the core's classification,
//! the partition from the entry's own credentials and the worker's identity, the job), and the runner's
//! storing rules follow ([`crate::engine::adopt()`]: the plugins' key, the planner's `storing` with the
//! auth-failure check, the plugins' `cache_will_update`). So a hand-over can only fill the entry the worker
//! itself would have stored had the page's request reached it, in the partition the worker derives: a
//! token nobody vouched for, a request in no partition, or one the worker would never store is dropped,
//! and an entry the worker already holds fresh is never replaced. A same-origin page can write Cache
//! Storage directly anyway: these checks keep a buggy page from putting an answer where the worker's
//! rules would not, they are not a wall against a hostile one.
//!
//! | the entry | refused as |
//! |---|---|
//! | more than [`MAX_ENTRIES`] in one message | the whole message: [`Refused::TooMany`] |
//! | a method other than GET or POST | [`Refused::Method`] |
//! | another origin than the worker's | [`Refused::CrossOrigin`] |
//! | not routed to the engine by the shim (a pass-through path, a POST elsewhere than a GraphQL endpoint) | [`Refused::NotRouted`] |
//! | an `Authorization` header among its headers, or a fingerprint that is not one | [`Refused::Credentials`] |
//! | a request or answer body over `cache.maxBodyBytes` | [`Refused::TooLarge`] |
//! | a request the core does not classify, or answers without a strategy (a mutation) | [`Refused::Unclassified`], [`Refused::NoJob`] |
//! | in no partition (a token nobody vouched for; marked with nobody signed in) | [`Refused::NoPartition`] |
//! | stored longer ago than `cache.maxAgeSeconds` | [`Refused::Expired`] |
//! | an answer the browser cannot rebuild (a status or header it refuses) | [`Refused::Unreadable`] |
//! | the worker holds the entry fresh | [`Refused::Held`] |
//! | the planner or a plugin would not store it | [`Refused::NotStored`] |

use crate::classify::{classify_request, RequestClass};
use crate::config::Config;
use crate::engine::plan::{self, Found, Job, NotStored};
use crate::partition::{is_marked, partition_of, Identity};

/// At most this many entries in one hand-over (the most recently used the page holds).
pub const MAX_ENTRIES: usize = 32;

pub use crate::protocol::handover::{HandedEntry, HandedRequest, HandedResponse};

impl HandedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        header(&self.headers, name)
    }
}

impl HandedResponse {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        header(&self.headers, name)
    }
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.clone())
}

/// Why the worker did not take an entry (or a whole hand-over).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// More entries than [`MAX_ENTRIES`]: the whole message is refused.
    #[error("{count} entries handed over, at most {MAX_ENTRIES}")]
    TooMany {
        /// How many there were.
        count: usize,
    },
    /// Not a GET or a POST.
    #[error("method {}: only GET and POST answers are handed over", crate::json::quoted(.0))]
    Method(String),
    /// The URL is not on the worker's origin (or is no URL: an empty origin is nobody's).
    #[error("{0}: not on this worker's origin")]
    CrossOrigin(String),
    /// The shim would not route the request to the engine.
    #[error("{0}: not routed to the worker")]
    NotRouted(String),
    /// An `Authorization` header among the headers (a hand-over carries its fingerprint only), or a
    /// fingerprint that is not 16 hex digits.
    #[error("credentials: {0}")]
    Credentials(&'static str),
    /// A body over `cache.maxBodyBytes`.
    #[error("{what} body of {size} bytes, over cache.maxBodyBytes {max}")]
    TooLarge {
        /// `request` or `response`.
        what: &'static str,
        /// Its size.
        size: u64,
        /// `cache.maxBodyBytes`.
        max: u64,
    },
    /// The core could not classify the request (what the live path sends untouched).
    #[error("unclassified: {0}")]
    Unclassified(String),
    /// The answer cannot be rebuilt as a response (a status or header the browser refuses).
    #[error("unreadable answer: {0}")]
    Unreadable(String),
    /// The request is not answered with a strategy (a mutation, an auth route).
    #[error("not answered with a strategy")]
    NoJob,
    /// The request is in no partition (credentials the worker cannot vouch for).
    #[error("in no cache partition (credentials nobody vouched for, or nobody signed in)")]
    NoPartition,
    /// Stored longer ago than `cache.maxAgeSeconds`.
    #[error("expired")]
    Expired,
    /// The worker holds a fresh entry for it: it is never replaced.
    #[error("already held")]
    Held,
    /// The planner (or a plugin's `cache_will_update`) would not store it.
    #[error("not stored: {}", .0.describe())]
    NotStored(NotStored),
}

/// Refuses a hand-over of more than [`MAX_ENTRIES`] entries.
pub fn check_count(entries: &[HandedEntry]) -> Result<(), Refused> {
    match entries.len() {
        count if count > MAX_ENTRIES => Err(Refused::TooMany { count }),
        _ => Ok(()),
    }
}

/// Where an entry's URL points, as the worker's URL parser reads it.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The worker's own origin.
    pub worker_origin: &'a str,
    /// The origin of the entry's URL.
    pub origin: &'a str,
    /// The path of the entry's URL.
    pub path: &'a str,
}

/// The job the worker would run for `entry`'s request, had it reached it: the live path's decisions in
/// its order (the table of this module), with `identity` the worker's signed-in user, at `now`.
pub fn admit(
    entry: &HandedEntry,
    place: Place<'_>,
    identity: Option<&Identity>,
    config: &Config,
    now: u64,
) -> Result<Job, Refused> {
    let request = &entry.request;
    let method = request.method.to_ascii_uppercase();
    if method != "GET" && method != "POST" {
        return Err(Refused::Method(request.method.clone()));
    }
    if place.origin.is_empty() || place.origin != place.worker_origin {
        return Err(Refused::CrossOrigin(request.url.clone()));
    }
    if !config.sw_routes().routes(&method, place.path) {
        return Err(Refused::NotRouted(request.url.clone()));
    }
    if request.header("authorization").is_some() {
        return Err(Refused::Credentials("an Authorization header: hand over its fingerprint only"));
    }
    let fingerprint = request.authorization.as_deref();
    if fingerprint
        .is_some_and(|print| print.len() != 16 || !print.bytes().all(|byte| byte.is_ascii_hexdigit()))
    {
        return Err(Refused::Credentials("the fingerprint is not 16 hex digits"));
    }
    let max = config.cache.max_body_bytes;
    for (what, size) in
        [("request", request.body.as_ref().map_or(0, String::len)), ("response", entry.response.body.len())]
    {
        let size = size as u64;
        if size > max {
            return Err(Refused::TooLarge { what, size, max });
        }
    }
    let lookup = |name: &str| request.header(name);
    let partition = partition_of(fingerprint, is_marked(&lookup), identity);
    // Classified with the URL's search, as the live path is: a GET of `/graphql?query=…` is a query.
    let search = request.url.split('#').next().unwrap_or_default().split_once('?').map(|(_, search)| search);
    let path_and_search = match search {
        Some(search) => [place.path, "?", search].concat(),
        None => place.path.to_owned(),
    };
    let body = request.body.as_deref().map(str::as_bytes);
    let class = classify_request(&method, &path_and_search, &lookup, body, config)
        .map_err(|error| Refused::Unclassified(error.to_string()))?;
    if matches!(class, RequestClass::Other | RequestClass::AuthRoute) {
        return Err(Refused::NoJob);
    }
    let job = Job::for_request(&class, &partition, place.worker_origin, &request.url, config)
        .ok_or(Refused::NoJob)?;
    if job.entry.is_none() {
        return Err(Refused::NoPartition);
    }
    if !job.strategy.stores() {
        return Err(Refused::NotStored(NotStored::Strategy));
    }
    // The config's bound (the answer's own `max-age` is read again at the worker's next lookup, from the
    // stored response's headers).
    let freshness = plan::freshness(&job, None);
    if plan::found(Some(Some(entry.stored_at.min(now))), now, freshness) != Found::Fresh {
        return Err(Refused::Expired);
    }
    Ok(job)
}
