//! The planner and the runner, natively: every strategy × what the store holds × what the network
//! answers, over a fake store, network and host. The same decisions run in the Service Worker and in the
//! page (their parity suites run a table of these against the real edges).

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use cachet_core::classify::{classify_request, RequestClass};
use cachet_core::config::{CacheBounds, Config};
use cachet_core::engine::plan::{self, Job, NotStored, Storing};
use cachet_core::engine::plugin::{Message, Plugin};
use cachet_core::engine::{
    mutate, run, Call, EntryKey, Failed, Fetched, Hit, Host, Invalidations, Mutation, Network, Runner,
    Source, Store, Stored,
};
use cachet_core::partition::Partition;
use cachet_core::protocol::SwEvent;
use cachet_core::strategy::Strategy;

use crate::parity_scenarios as parity;

pub(crate) const NOW: u64 = 1_000_000_000;
const MAX_AGE_SECONDS: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Absent,
    Fresh,
    Expired,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Net {
    Ok,
    Unreachable,
    AuthFailure,
    ErrorAnswer,
    OverSize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Error {
    Unreachable,
    /// A store that fails (storage full past eviction, a torn index).
    StoreFailed,
    /// A request the network leaves to another engine (`Network::leaves`).
    Left,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Error::Unreachable => "unreachable",
            Error::StoreFailed => "QuotaExceededError",
            Error::Left => "left to another engine",
        })
    }
}

/// A response of the fakes: its body and headers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resp {
    pub(crate) body: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) status: u16,
}

impl Resp {
    pub(crate) fn new(body: &str) -> Self {
        Resp { body: body.to_owned(), headers: Vec::new(), status: 200 }
    }
}

impl Message for Resp {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.clone())
    }
}

/// Runs `job` over the fakes with the default plugins (and `extra` after them).
pub(crate) async fn run_with<N: Network<Resp, Error> + 'static>(
    job: Job,
    fake: &Rc<Fake>,
    network: N,
    extra: Vec<Rc<dyn Plugin<Resp>>>,
) -> Result<cachet_core::engine::Served<Resp>, Failed<Error>> {
    let plugins = extra;
    let method = if job.document { "POST" } else { "GET" };
    let url = job.announce_url.clone();
    let store = JobStore { begun: fake.invalidations.borrow().begun(), fake: fake.clone() };
    let runner = Runner { store, network, host: fake.clone(), plugins, method, url };
    run(job, Rc::new(runner)).await
}

/// The fake store as one job sees it: an answer whose request began before an invalidation of its tags
/// is not kept (as both edges' stores do).
struct JobStore {
    fake: Rc<Fake>,
    begun: u64,
}

impl Store<Resp, Error> for JobStore {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<Resp>>, Error> {
        self.fake.lookup(entry, read_body).await
    }
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<Resp>,
        tags: &[String],
        keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        if self.fake.invalidations.borrow().since(self.begun, tags) {
            return Ok(Stored::Overtaken);
        }
        self.fake.store(entry, fetched, tags, keep, now).await
    }
    fn used(&self, entry: &EntryKey, now: u64) {
        self.fake.used(entry, now)
    }
}

/// Body, stored-at time, tags.
type Entry = (Resp, Option<u64>, Vec<String>);

#[derive(Default)]
pub(crate) struct Fake {
    pub(crate) entries: RefCell<HashMap<String, Entry>>,
    used: RefCell<Vec<String>>,
    background: RefCell<Vec<Pin<Box<dyn Future<Output = ()>>>>>,
    announced: RefCell<Vec<SwEvent>>,
    warnings: RefCell<Vec<String>>,
    invalidations: RefCell<Invalidations>,
    not_stored: RefCell<Vec<(String, &'static str)>>,
}

impl Fake {
    /// Runs the background work handed so far (the stores after the answers), as a host does.
    pub(crate) fn settle(&self) {
        let background: Vec<_> = self.background.borrow_mut().drain(..).collect();
        background.into_iter().for_each(futures::executor::block_on);
    }
}

impl Store<Resp, Error> for Fake {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<Resp>>, Error> {
        Ok(self.entries.borrow().get(&entry.url).map(|(response, stored_at, _)| Hit {
            response: response.clone(),
            stored_at: *stored_at,
            body: read_body.then(|| response.body.clone().into_bytes()),
        }))
    }
    async fn store(
        &self,
        entry: &EntryKey,
        fetched: &Fetched<Resp>,
        tags: &[String],
        _keep: u32,
        now: u64,
    ) -> Result<Stored, Error> {
        self.entries
            .borrow_mut()
            .insert(entry.url.clone(), (fetched.response.clone(), Some(now), tags.to_vec()));
        Ok(Stored::Kept)
    }
    fn used(&self, entry: &EntryKey, _now: u64) {
        self.used.borrow_mut().push(entry.url.clone());
    }
}

struct Scripted {
    net: Net,
    body: String,
    server_tags: Option<String>,
}

impl Network<Resp, Error> for Scripted {
    async fn fetch(&self, _headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        let (status, auth_failure, body) = match self.net {
            Net::Ok => (200, false, self.body.clone()),
            Net::Unreachable => return Err(Error::Unreachable),
            Net::AuthFailure => (200, true, self.body.clone()),
            Net::ErrorAnswer => (500, false, self.body.clone()),
            Net::OverSize => (200, false, "x".repeat(2_000)),
        };
        Ok(Fetched {
            response: Resp::new(&body),
            status,
            body: body.into_bytes(),
            auth_failure,
            server_tags: self.server_tags.clone(),
            cache_control: None,
        })
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        Ok(fetched.response.clone())
    }
}

impl Host for Fake {
    fn now(&self) -> u64 {
        NOW
    }
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        self.background.borrow_mut().push(work);
    }
    fn announce(&self, event: SwEvent) {
        self.announced.borrow_mut().push(event);
    }
    fn warn(&self, message: &str) {
        self.warnings.borrow_mut().push(message.to_owned());
    }
    fn not_stored(&self, url: &str, reason: &NotStored) {
        self.not_stored.borrow_mut().push((url.to_owned(), reason.code()));
    }
}

/// A network answer is stored after it is given: an invalidation of its tags that begins in between
/// overtakes it. It is not kept, and the host is told so with its own reason (it was once reported as a
/// full storage), not as a failure.
#[test]
fn an_answer_overtaken_by_an_invalidation_is_not_kept_and_said_so() {
    let fake = Rc::new(Fake::default());
    let network = Scripted { net: Net::Ok, body: "{\"data\":{}}".into(), server_tags: None };
    let job = get_job(Strategy::NetworkFirst);
    let url = job.announce_url.clone();
    let served = futures::executor::block_on(run_with(job, &fake, network, vec![]));
    assert_eq!(served.map(|served| served.source).ok(), Some(Source::Network));
    fake.invalidations.borrow_mut().note(Some(&["notes".to_owned()]));
    fake.settle();
    assert!(fake.entries.borrow().get(&url).is_none(), "not kept");
    assert_eq!(*fake.not_stored.borrow(), vec![(url, "overtaken")]);
    assert!(fake.warnings.borrow().is_empty(), "no warning: {:?}", fake.warnings.borrow());
}

fn bounds() -> CacheBounds {
    CacheBounds {
        max_entries: 10,
        max_age_seconds: MAX_AGE_SECONDS,
        max_body_bytes: 1_000,
        stale_if_error_seconds: 0,
    }
}

pub(crate) fn get_job(strategy: Strategy) -> Job {
    Job {
        strategy,
        entry: Some(EntryKey { cache: "runtime", url: "https://app.test/api/notes".into() }),
        tags: vec!["notes".into()],
        document: false,
        bounds: bounds(),
        announce_url: "https://app.test/api/notes".into(),
        no_store_binds: true,
        shared: true,
    }
}

/// Runs `job` with `held` in the store and `net` answering; the outcome in a few words, then what the
/// background work (stale-while-revalidate) did after ` ~ `.
fn outcome(job: Job, held: Held, net: Net) -> String {
    let fake = Rc::new(Fake::default());
    let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
    let stored_at = match held {
        Held::Absent => None,
        Held::Fresh => Some(NOW - 1_000),
        Held::Expired => Some(NOW - MAX_AGE_SECONDS * 1000 - 1),
    };
    if let Some(at) = stored_at {
        fake.entries.borrow_mut().insert(url.clone(), (Resp::new("stale"), Some(at), vec![]));
    }
    let network = Scripted { net, body: "{\"data\":{}}".into(), server_tags: None };
    let served = futures::executor::block_on(run_with(job, &fake, network, vec![]));
    let mut words = match served {
        Ok(served) => {
            let source = match served.source {
                Source::Cache => "cache".to_owned(),
                Source::Network => "network".to_owned(),
                Source::Plugin => "plugin".to_owned(),
            };
            match served.storing {
                Some(Storing::Store { .. }) => format!("{source} stored"),
                Some(Storing::Skip(reason)) => format!("{source} skip:{}", reason_word(&reason)),
                None => source,
            }
        }
        Err(Failed::NotCached) => "ERR not-cached".into(),
        Err(Failed::Edge(error)) => format!("ERR {error}"),
    };
    words.push_str(&background_words(&fake, &url));
    words
}

/// Runs the background work handed so far (the stores, a re-fetch) and says, after ` ~ `, what each left
/// at `url` (the entry seeded as `stale` kept, or another stored) and whether `cache-updated` was
/// announced.
fn background_words(fake: &Fake, url: &str) -> String {
    let mut words = String::new();
    let background: Vec<_> = fake.background.borrow_mut().drain(..).collect();
    for work in background {
        futures::executor::block_on(work);
        let now_held = fake.entries.borrow().get(url).map(|entry| entry.0.body.clone()).unwrap_or_default();
        let updated = if fake.announced.borrow().is_empty() { "" } else { " updated" };
        words.push_str(if now_held == "stale" { " ~ kept" } else { " ~ stored" });
        words.push_str(updated);
    }
    words
}

/// The fake host of an edge that leaves a served entry's re-fetch to another engine (as the worker's
/// start module does: `Host::REVALIDATES` false).
struct LeavesRevalidation(Rc<Fake>);

impl Host for LeavesRevalidation {
    const REVALIDATES: bool = false;
    fn now(&self) -> u64 {
        self.0.now()
    }
    fn background(&self, work: Pin<Box<dyn Future<Output = ()>>>) {
        self.0.background(work)
    }
    fn announce(&self, event: SwEvent) {
        self.0.announce(event)
    }
    fn warn(&self, message: &str) {
        self.0.warn(message)
    }
    fn not_stored(&self, url: &str, reason: &NotStored) {
        self.0.not_stored(url, reason)
    }
}

/// A network that counts its sends.
struct Counted(Rc<RefCell<u32>>);

impl Network<Resp, Error> for Counted {
    async fn fetch(&self, _headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        *self.0.borrow_mut() += 1;
        let body = "{\"data\":{}}";
        Ok(Fetched {
            response: Resp::new(body),
            status: 200,
            body: body.as_bytes().to_vec(),
            auth_failure: false,
            server_tags: None,
            cache_control: None,
        })
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        Ok(fetched.response.clone())
    }
}

/// Where the edge leaves the re-fetch of a served entry to another engine, the runner serves the entry as
/// it would, sends nothing, hands no work to the background, and marks the answer
/// (`Served::revalidate_left`); every other answer is as the default edge gives it, unmarked. The
/// default edge, on the same rows, re-fetches exactly where the other is marked.
#[test]
fn an_edge_that_leaves_revalidation_serves_the_entry_and_marks_what_it_left() {
    #[rustfmt::skip]
    let table: Vec<(Strategy, Option<&str>, Held, bool)> = vec![
        (Strategy::StaleWhileRevalidate, None, Held::Fresh, true),
        (Strategy::CacheAndNetwork, None, Held::Fresh, true),
        (Strategy::CacheFirst, Some("max-age=10, stale-while-revalidate=30"), Held::Fresh, true),
        (Strategy::CacheFirst, None, Held::Fresh, false),
        (Strategy::StaleWhileRevalidate, None, Held::Absent, false),
        (Strategy::NetworkFirst, None, Held::Fresh, false),
    ];
    for (strategy, cache_control, held, left) in table {
        let row = format!("{strategy:?} {cache_control:?} {held:?}");
        for revalidates in [false, true] {
            let fake = Rc::new(Fake::default());
            let mut job = get_job(strategy);
            job.document = cache_control.is_some();
            let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
            if held == Held::Fresh {
                let mut stored = Resp::new("stale");
                // 20 s old: past a stored `max-age=10`, within its `stale-while-revalidate=30`.
                if let Some(value) = cache_control {
                    stored.headers.push(("cache-control".into(), value.into()));
                }
                fake.entries.borrow_mut().insert(url.clone(), (stored, Some(NOW - 20_000), vec![]));
            }
            let sent = Rc::new(RefCell::new(0));
            let store = JobStore { begun: fake.invalidations.borrow().begun(), fake: fake.clone() };
            let method = if job.document { "POST" } else { "GET" };
            let served = if revalidates {
                let runner = Runner {
                    store,
                    network: Counted(sent.clone()),
                    host: fake.clone(),
                    plugins: vec![],
                    method,
                    url,
                };
                futures::executor::block_on(run(job, Rc::new(runner)))
            } else {
                let host = LeavesRevalidation(fake.clone());
                let runner =
                    Runner { store, network: Counted(sent.clone()), host, plugins: vec![], method, url };
                futures::executor::block_on(run(job, Rc::new(runner)))
            };
            let served = served.unwrap_or_else(|_| panic!("{row}: answered"));
            let background: Vec<_> = fake.background.borrow_mut().drain(..).collect();
            let ran = background.len();
            for work in background {
                futures::executor::block_on(work);
            }
            let network_step = !matches!(served.source, Source::Cache);
            if revalidates {
                assert!(!served.revalidate_left, "{row}: the default edge leaves nothing");
                assert_eq!(
                    *sent.borrow(),
                    u32::from(left || network_step),
                    "{row}: the default edge re-fetches"
                );
            } else {
                assert_eq!(served.revalidate_left, left, "{row}: marked");
                if left {
                    assert_eq!(
                        (served.source, *sent.borrow(), ran),
                        (Source::Cache, 0, 0),
                        "{row}: nothing sent or begun"
                    );
                }
            }
        }
    }
}

fn reason_word(reason: &NotStored) -> &'static str {
    match reason {
        NotStored::Strategy => "strategy",
        NotStored::Status(_) => "status",
        NotStored::AuthFailure => "auth",
        NotStored::ServerNoStore => "no-store",
        NotStored::ServerPrivate => "private",
        NotStored::TooLarge { .. } => "too-large",
        NotStored::NotAResult => "not-a-result",
        NotStored::StoreFull => "full",
        NotStored::Overtaken => "overtaken",
        NotStored::StoreFailed => "store-failed",
        NotStored::Plugin => "plugin",
    }
}

/// The fake store whose every store fails, as a full storage or a torn index makes it.
struct FailingStore(Rc<Fake>);

impl Store<Resp, Error> for FailingStore {
    async fn lookup(&self, entry: &EntryKey, read_body: bool) -> Result<Option<Hit<Resp>>, Error> {
        self.0.lookup(entry, read_body).await
    }
    async fn store(
        &self,
        _: &EntryKey,
        _: &Fetched<Resp>,
        _: &[String],
        _: u32,
        _: u64,
    ) -> Result<Stored, Error> {
        Err(Error::StoreFailed)
    }
    fn used(&self, _entry: &EntryKey, _now: u64) {}
}

#[test]
fn a_store_that_fails_costs_the_entry_never_the_answer() {
    for strategy in [Strategy::NetworkFirst, Strategy::CacheFirst, Strategy::StaleWhileRevalidate] {
        let fake = Rc::new(Fake::default());
        let network = Scripted { net: Net::Ok, body: "{\"data\":{}}".into(), server_tags: None };
        let job = get_job(strategy);
        let runner = Runner {
            store: FailingStore(fake.clone()),
            network,
            host: fake.clone(),
            plugins: Vec::new(),
            method: "GET",
            url: job.announce_url.clone(),
        };
        let served = futures::executor::block_on(run(job, Rc::new(runner)));
        let served = served.unwrap_or_else(|_| panic!("{strategy:?}: the answer was lost with the store"));
        assert_eq!(served.response.body, "{\"data\":{}}");
        // The answer is given before the store: the store, and its failure, come in the background.
        assert!(matches!(served.storing, Some(Storing::Store { .. })), "{strategy:?}");
        let background: Vec<_> = fake.background.borrow_mut().drain(..).collect();
        background.into_iter().for_each(futures::executor::block_on);
        let warnings = fake.warnings.borrow();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("https://app.test/api/notes") && w.contains("QuotaExceededError")),
            "{strategy:?}: the failure is reported, naming the entry: {warnings:?}"
        );
    }
}

#[test]
fn every_strategy_entry_and_network_answer() {
    use Held::*;
    let nets = [Net::Ok, Net::Unreachable, Net::AuthFailure, Net::ErrorAnswer, Net::OverSize];
    #[rustfmt::skip]
    let table: Vec<(Strategy, Held, [&str; 5])> = vec![
        //                                     ok                      unreachable        auth failure (2xx)   error answer (500)     over-size
        (Strategy::CacheFirst, Absent,        ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::CacheFirst, Fresh,         ["cache",               "cache",           "cache",             "cache",               "cache"]),
        (Strategy::CacheFirst, Expired,       ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::CacheOnly, Absent,         ["ERR not-cached",      "ERR not-cached",  "ERR not-cached",    "ERR not-cached",      "ERR not-cached"]),
        (Strategy::CacheOnly, Fresh,          ["cache",               "cache",           "cache",             "cache",               "cache"]),
        (Strategy::CacheOnly, Expired,        ["ERR not-cached",      "ERR not-cached",  "ERR not-cached",    "ERR not-cached",      "ERR not-cached"]),
        (Strategy::NetworkFirst, Absent,      ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::NetworkFirst, Fresh,       ["network stored ~ stored","cache",           "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::NetworkFirst, Expired,     ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::StaleWhileRevalidate, Absent, ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::StaleWhileRevalidate, Fresh,  ["cache ~ stored updated", "cache ~ kept", "cache ~ kept",   "cache ~ kept",        "cache ~ kept"]),
        (Strategy::StaleWhileRevalidate, Expired, ["network stored ~ stored","ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::NetworkOnly, Absent,       ["network skip:strategy", "ERR unreachable", "network skip:strategy", "network skip:strategy", "network skip:strategy"]),
        (Strategy::NetworkOnly, Fresh,        ["network skip:strategy", "ERR unreachable", "network skip:strategy", "network skip:strategy", "network skip:strategy"]),
        (Strategy::CacheAndNetwork, Absent, ["network stored ~ stored",  "ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::CacheAndNetwork, Fresh,  ["cache ~ stored updated", "cache ~ kept",   "cache ~ kept",      "cache ~ kept",        "cache ~ kept"]),
        (Strategy::CacheAndNetwork, Expired, ["network stored ~ stored", "ERR unreachable", "network skip:auth", "network skip:status", "network skip:too-large"]),
        (Strategy::NetworkOnly, Expired,      ["network skip:strategy", "ERR unreachable", "network skip:strategy", "network skip:strategy", "network skip:strategy"]),
    ];
    assert_eq!(table.len(), Strategy::ALL.len() * 3, "every strategy × absent / fresh / expired");
    for (strategy, held, expected) in table {
        for (net, expected) in nets.into_iter().zip(expected) {
            assert_eq!(
                outcome(get_job(strategy), held, net),
                expected,
                "{strategy} with the entry {held:?}, network {net:?}"
            );
        }
    }
}

/// A row of the stale-if-error table: strategy, the entry's age past its life in s (`None`: absent;
/// negative: fresh), the config's window, the stored answer's `Cache-Control`, the outcomes.
type StaleRow = (Strategy, Option<i64>, u64, Option<&'static str>, [&'static str; 2]);

/// Stale-if-error (issue 35 item 4): the entry answers in place of a network failure or a 5xx, marked
/// stale, within `cache.staleIfErrorSeconds` or its stored answer's own `stale-if-error=N` past its life;
/// without either window a 5xx is the answer and an unreachable network fails (network-first's own
/// fallback to a fresh entry aside, unmarked as before).
#[test]
fn stale_if_error_serves_the_last_good_answer_within_its_window() {
    // (strategy, entry's age past its life in s (None: absent; negative: fresh), config window, stored
    // answer's Cache-Control, [unreachable, 500])
    #[rustfmt::skip]
    let table: Vec<StaleRow> = vec![
        // No window: today's behaviour.
        (Strategy::NetworkFirst, Some(-10), 0, None,                        ["cache", "network"]),
        (Strategy::NetworkFirst, Some(10), 0, None,                         ["ERR unreachable", "network"]),
        (Strategy::CacheFirst, Some(10), 0, None,                           ["ERR unreachable", "network"]),
        // The config's window.
        (Strategy::NetworkFirst, Some(-10), 60, None,                       ["cache", "cache stale"]),
        (Strategy::NetworkFirst, Some(10), 60, None,                        ["cache stale", "cache stale"]),
        (Strategy::NetworkFirst, Some(61), 60, None,                        ["ERR unreachable", "network"]),
        (Strategy::CacheFirst, Some(10), 60, None,                          ["cache stale", "cache stale"]),
        (Strategy::StaleWhileRevalidate, Some(10), 60, None,                ["cache stale", "cache stale"]),
        (Strategy::CacheAndNetwork, Some(10), 60, None,                     ["cache stale", "cache stale"]),
        (Strategy::CacheFirst, None, 60, None,                              ["ERR unreachable", "network"]),
        // Never looked up, or never asks the network.
        (Strategy::NetworkOnly, Some(-10), 60, None,                        ["ERR unreachable", "network"]),
        (Strategy::CacheOnly, Some(10), 60, None,                           ["ERR not-cached", "ERR not-cached"]),
        // The stored answer's own hint, longer than the config's window, or alone.
        (Strategy::CacheFirst, Some(100), 0, Some("max-age=60, stale-if-error=300"), ["cache stale", "cache stale"]),
        (Strategy::CacheFirst, Some(100), 60, Some("stale-if-error=300"),   ["cache stale", "cache stale"]),
        (Strategy::CacheFirst, Some(301), 60, Some("stale-if-error=300"),   ["ERR unreachable", "network"]),
        (Strategy::NetworkFirst, Some(-10), 0, Some("Stale-If-Error=\"30\""), ["cache", "cache stale"]),
        (Strategy::CacheFirst, Some(10), 0, Some("stale-if-error=soon"),    ["ERR unreachable", "network"]),
    ];
    for (strategy, past_life, window, hint, expected) in table {
        for (net, expected) in [Net::Unreachable, Net::ErrorAnswer].into_iter().zip(expected) {
            let fake = Rc::new(Fake::default());
            let mut job = get_job(strategy);
            job.bounds.stale_if_error_seconds = window;
            let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
            if let Some(past) = past_life {
                let age_ms = (MAX_AGE_SECONDS as i64 + past) * 1000;
                let mut stored = Resp::new("good");
                if let Some(hint) = hint {
                    stored.headers.push(("cache-control".into(), hint.into()));
                }
                fake.entries.borrow_mut().insert(url, (stored, Some(NOW - age_ms as u64), vec![]));
            }
            let network = Scripted { net, body: "down".into(), server_tags: None };
            let got = match futures::executor::block_on(run_with(job, &fake, network, vec![])) {
                Ok(served) if served.source == Source::Cache => {
                    assert_eq!(served.response.body, "good");
                    if served.stale {
                        "cache stale".to_owned()
                    } else {
                        "cache".to_owned()
                    }
                }
                Ok(served) => {
                    assert!(!served.stale);
                    assert_eq!(served.response.body, "down");
                    "network".to_owned()
                }
                Err(Failed::NotCached) => "ERR not-cached".into(),
                Err(Failed::Edge(error)) => format!("ERR {error}"),
            };
            assert_eq!(
                got, expected,
                "{strategy} {past_life:?}s past its life, window {window}, hint {hint:?}, {net:?}"
            );
        }
    }
}

#[test]
fn a_document_is_stored_only_as_a_result_without_errors() {
    let job = || Job { document: true, ..get_job(Strategy::CacheFirst) };
    let answered = |body: &'static [u8]| plan::Answered {
        status: 200,
        auth_failure: false,
        body,
        server_tags: None,
        cache_control: None,
    };
    let stores = |body| matches!(plan::storing(&job(), &answered(body)), Storing::Store { .. });
    assert!(stores(br#"{"data":{"notes":[]}}"#));
    assert!(!stores(br#"{"data":null,"errors":[{"message":"no"}]}"#));
    assert!(!stores(b"<html>"));
    // A GET stores any 2xx body.
    assert!(matches!(
        plan::storing(&get_job(Strategy::CacheFirst), &answered(b"<html>")),
        Storing::Store { .. }
    ));
}

#[test]
fn server_tags_join_the_request_tags_for_gets_and_documents_and_bad_ones_are_ignored_with_a_warning() {
    for document in [false, true] {
        let job = Job { document, ..get_job(Strategy::CacheFirst) };
        let body = br#"{"data":{}}"#;
        let with = |server_tags| plan::Answered {
            status: 200,
            auth_failure: false,
            body,
            server_tags,
            cache_control: None,
        };
        let Storing::Store { tags, ignored_server_tags, keep } =
            plan::storing(&job, &with(Some("notes, user:7")))
        else {
            panic!("stored");
        };
        assert_eq!((tags, ignored_server_tags, keep), (vec!["notes".into(), "user:7".into()], None, 10));
        let Storing::Store { tags, ignored_server_tags, .. } = plan::storing(&job, &with(Some("a,,b")))
        else {
            panic!("stored");
        };
        assert_eq!(tags, vec!["notes".to_owned()]);
        assert!(ignored_server_tags.is_some_and(|warning| warning.contains("X-SW-Cache-Tags")));
    }
}

/// The server's `Cache-Control` refines what the app configured (interop matrix, issue 31): a GET's
/// `no-store` binds, a GraphQL document's is advisory unless `features.graphql.honorNoStore`; `private`
/// never goes to the shared partition. Rows: (document, honorNoStore, partition, Cache-Control, stored or
/// the reason's code).
#[test]
fn the_servers_cache_control_refines_what_the_app_configured() {
    let user = || Partition::User("p1".into());
    let rows: &[(bool, bool, Partition, Option<&str>, &str)] = &[
        // Apollo Server's default answer to every query without cache hints.
        (true, false, Partition::Shared, Some("no-store"), "stored"),
        (true, false, user(), Some("no-store"), "stored"),
        (true, true, Partition::Shared, Some("no-store"), "server-no-store"),
        (true, true, user(), Some("max-age=0, No-Store"), "server-no-store"),
        (false, false, Partition::Shared, Some("no-store"), "server-no-store"),
        (false, false, user(), Some("no-store"), "server-no-store"),
        (true, false, Partition::Shared, Some("private, max-age=60"), "server-private"),
        (false, false, Partition::Shared, Some("private"), "server-private"),
        (true, false, user(), Some("private, max-age=60"), "stored"),
        (false, false, user(), Some("private"), "stored"),
        (false, false, Partition::Shared, Some("public, max-age=60"), "stored"),
        (false, false, Partition::Shared, Some("no-cache"), "stored"),
        (false, false, Partition::Shared, Some("x-no-store-y, privately"), "stored"),
        (true, true, Partition::Shared, None, "stored"),
    ];
    for (document, honor, partition, cache_control, expected) in rows {
        let config = Config::from_json_str(&format!(
            r#"{{"features": {{"graphql": {{"enabled": true, "honorNoStore": {honor}}}}}}}"#
        ))
        .unwrap();
        let class = if *document {
            let body = br#"{"query": "query GetNotes { notes { id } }"}"#;
            classify_request("POST", "/graphql", &|_: &str| None, Some(body), &config).unwrap()
        } else {
            RequestClass::Get { strategy: Strategy::CacheFirst, tags: vec![] }
        };
        let url = if *document { "https://a.test/graphql" } else { "https://a.test/api/x" };
        let job = Job::for_request(&class, partition, "https://a.test", url, &config).unwrap();
        let body = br#"{"data":{"notes":[]}}"#;
        let answered = plan::Answered {
            status: 200,
            auth_failure: false,
            body,
            server_tags: None,
            cache_control: *cache_control,
        };
        let got = match plan::storing(&job, &answered) {
            Storing::Store { .. } => "stored",
            Storing::Skip(reason) => reason.code(),
        };
        assert_eq!(
            got, *expected,
            "document {document}, honorNoStore {honor}, {partition:?}, {cache_control:?}"
        );
    }
}

#[test]
fn a_request_in_no_partition_is_network_only_and_never_looked_up() {
    let config = Config::default();
    let class = RequestClass::Get { strategy: Strategy::CacheFirst, tags: vec![] };
    let job = Job::for_request(&class, &Partition::Uncached, "https://a.test", "https://a.test/x", &config);
    let job = job.unwrap();
    assert_eq!((job.strategy, job.entry.is_none()), (Strategy::NetworkOnly, true));
    assert_eq!(plan::start(&job), plan::Start::Fetch);
    assert_eq!(outcome(job, Held::Fresh, Net::Ok), "network skip:strategy");
}

#[test]
fn the_same_document_on_two_endpoints_has_two_entries_and_announces_its_entry_url() {
    let config = Config::from_json_str(
        r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql", "/admin/graphql"]}}}"#,
    )
    .unwrap();
    let body = br#"{"query": "query GetNotes { notes { id } }"}"#;
    let job = |path: &str| {
        let class = classify_request("POST", path, &|_: &str| None, Some(body), &config).unwrap();
        Job::for_request(
            &class,
            &Partition::Shared,
            "https://a.test",
            &format!("https://a.test{path}"),
            &config,
        )
        .unwrap()
    };
    let (one, two) = (job("/graphql"), job("/admin/graphql"));
    assert_ne!(one.entry, two.entry);
    assert_eq!(one.announce_url, one.entry.as_ref().unwrap().url);
    assert!(one.tags.contains(&"notes".to_owned()), "auto-tags: {:?}", one.tags);
    // A GET announces the URL the page asked for, wherever its entry lives.
    let class = RequestClass::Get { strategy: Strategy::CacheFirst, tags: vec![] };
    let user = Partition::User("abc".into());
    let get = Job::for_request(&class, &user, "https://a.test", "https://a.test/api/x", &config).unwrap();
    assert_eq!(get.announce_url, "https://a.test/api/x");
    assert_ne!(get.entry.unwrap().url, get.announce_url);
}

/// The parity table over the fakes: the planner and the runner alone.
struct NativeEdge {
    fake: Rc<Fake>,
    config: Config,
}

const ORIGIN: &str = "https://app.test";

struct ReplyNetwork {
    reply: parity::Reply,
    rule: cachet_core::config::AuthFailureRule,
}

impl Network<Resp, Error> for ReplyNetwork {
    async fn fetch(&self, _headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        let reply = self.reply;
        if reply.status == 0 {
            return Err(Error::Unreachable);
        }
        let header = |name: &str| {
            reply
                .headers
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| (*value).to_owned())
        };
        let view = cachet_core::config::FailureResponse::new(reply.status, &header, reply.body.as_bytes());
        Ok(Fetched {
            response: Resp {
                body: reply.body.to_owned(),
                headers: reply
                    .headers
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect(),
                status: reply.status,
            },
            status: reply.status,
            body: reply.body.as_bytes().to_vec(),
            auth_failure: self.rule.check(&view),
            server_tags: header("x-sw-cache-tags"),
            cache_control: header("cache-control"),
        })
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        Ok(fetched.response.clone())
    }
}

impl parity::Edge for NativeEdge {
    async fn send(
        &self,
        scenario: &str,
        ask: parity::Ask,
        strategy: &str,
        reply: parity::Reply,
    ) -> parity::Got {
        let (method, path, body) = parity::request_of(scenario, ask);
        let headers = |name: &str| match name {
            "x-sw-strategy" => Some(strategy.to_owned()),
            "x-cachet-tags" => parity::tags_of(ask).map(str::to_owned),
            _ => None,
        };
        let class =
            classify_request(method, &path, &headers, body.as_deref().map(str::as_bytes), &self.config)
                .unwrap();
        let url = format!("{ORIGIN}{path}");
        let network = ReplyNetwork { reply, rule: self.config.features.auth.failure.clone() };
        let offline = parity::OfflineAnswer(|status, body| Resp { status, ..Resp::new(body) });
        let plugins: Vec<Rc<dyn Plugin<Resp>>> = vec![Rc::new(parity::PreviewPlugin), Rc::new(offline)];
        if let Some(mutation) = Mutation::for_request(&class, &headers, false, 0) {
            let call = Call { method, url: &url, job: None };
            let Ok(mutated) = mutate::<Resp, Error, _>(&mutation, call, &network, &plugins).await else {
                return parity::Got::Failed;
            };
            let tags: Vec<&str> = mutated.invalidate.iter().map(String::as_str).collect();
            parity::Edge::invalidate(self, &tags).await;
            return parity::Got::Network(mutated.served.response.body);
        }
        let job = Job::for_request(&class, &Partition::Shared, ORIGIN, &url, &self.config).unwrap();
        match run_with(job, &self.fake, network, plugins).await {
            Ok(served) if served.stale => parity::Got::Stale(served.response.body),
            Ok(served) if served.source == Source::Cache => parity::Got::Cache(served.response.body),
            Ok(served) => parity::Got::Network(served.response.body),
            Err(_) => parity::Got::Failed,
        }
    }
    async fn invalidate(&self, tags: &[&str]) {
        let tags: Vec<String> = tags.iter().map(|tag| (*tag).to_owned()).collect();
        self.fake.invalidations.borrow_mut().note(Some(&tags));
        self.fake.entries.borrow_mut().retain(|_, entry| !entry.2.iter().any(|tag| tags.contains(tag)));
    }
    async fn updated(&self, _expected: usize) -> usize {
        let background: Vec<_> = self.fake.background.borrow_mut().drain(..).collect();
        for work in background {
            work.await;
        }
        self.fake.announced.borrow_mut().drain(..).count()
    }
}

#[test]
fn the_parity_table_over_the_fakes() {
    let edge =
        NativeEdge { fake: Rc::new(Fake::default()), config: Config::from_json_str(parity::CONFIG).unwrap() };
    futures::executor::block_on(parity::run_all(&edge));
}

/// Workbox's order: a miss is answered before its answer is stored (the store runs in the background),
/// yet the engine reads its own writes: a lookup of the entry while its store still runs waits for it.
#[test]
fn a_miss_is_answered_before_it_is_stored_and_a_lookup_waits_for_the_store() {
    use futures::task::LocalSpawnExt;
    for strategy in [Strategy::CacheFirst, Strategy::NetworkFirst, Strategy::StaleWhileRevalidate] {
        let fake = Rc::new(Fake::default());
        let job = get_job(strategy);
        let url = job.announce_url.clone();
        let network = Scripted { net: Net::Ok, body: "{\"data\":{}}".into(), server_tags: None };
        let served = futures::executor::block_on(run_with(job, &fake, network, vec![]));
        assert_eq!(served.map(|served| served.source).ok(), Some(Source::Network), "{strategy:?}");
        assert!(fake.entries.borrow().get(&url).is_none(), "{strategy:?}: stored before the answer");
        assert_eq!(fake.background.borrow().len(), 1, "{strategy:?}: the store is background work");

        // The host runs its background work beside the next request, which comes first: offline, a
        // cache-first lookup must find what the first answer is being stored as.
        let mut pool = futures::executor::LocalPool::new();
        for work in fake.background.borrow_mut().drain(..) {
            pool.spawner().spawn_local(work).expect("spawn");
        }
        let offline = Scripted { net: Net::Unreachable, body: String::new(), server_tags: None };
        let again = pool.run_until(run_with(get_job(Strategy::CacheFirst), &fake, offline, vec![]));
        let again = again.unwrap_or_else(|error| panic!("{strategy:?}: the second request failed: {error}"));
        assert_eq!((again.source, again.response.body.as_str()), (Source::Cache, "{\"data\":{}}"));
    }
}

/// A network whose answers wait until the test releases them, counting the calls sent.
struct Gated {
    sent: Rc<std::cell::Cell<u32>>,
    gates: Rc<RefCell<Vec<futures::channel::oneshot::Sender<()>>>>,
}

impl Network<Resp, Error> for Gated {
    async fn fetch(&self, _headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        self.sent.set(self.sent.get() + 1);
        let (open, wait) = futures::channel::oneshot::channel();
        self.gates.borrow_mut().push(open);
        let _ = wait.await;
        let body = format!("{{\"data\":{{\"call\":{}}}}}", self.sent.get());
        Ok(Fetched {
            response: Resp::new(&body),
            status: 200,
            body: body.into_bytes(),
            auth_failure: false,
            server_tags: None,
            cache_control: None,
        })
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        let mut copy = fetched.response.clone();
        copy.headers.push(("x-copy".into(), "1".into()));
        Ok(copy)
    }
}

/// Issue 35 item 3: requests for one entry made while its network call runs share that call (each gets
/// an answer of its own, the answer is stored once); another entry (another partition) never shares; a
/// request made after an invalidation began sends its own.
#[test]
fn requests_for_one_entry_share_the_network_call_in_flight() {
    use futures::task::LocalSpawnExt;
    let fake = Rc::new(Fake::default());
    let (sent, gates) = (Rc::new(std::cell::Cell::new(0)), Rc::new(RefCell::new(Vec::new())));
    let mut pool = futures::executor::LocalPool::new();
    let answers: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
    let ask = |job: Job, label: &'static str| {
        let (fake, answers) = (fake.clone(), answers.clone());
        let network = Gated { sent: sent.clone(), gates: gates.clone() };
        async move {
            let served = run_with(job, &fake, network, vec![]).await.map_err(|_| ()).unwrap_or_else(|()| {
                panic!("{label}: no answer");
            });
            let copy = if served.response.header("x-copy").is_some() { " (copy)" } else { "" };
            answers.borrow_mut().push((label.to_owned(), format!("{}{copy}", served.response.body)));
        }
    };
    let alice = get_job(Strategy::NetworkFirst);
    let mut bob = get_job(Strategy::NetworkFirst);
    bob.entry.as_mut().unwrap().url = "https://app.test/__cachet/get/bob/api%2Fnotes".into();
    let spawner = pool.spawner();
    for label in ["tab 1", "tab 2", "tab 3"] {
        spawner.spawn_local(ask(alice.clone(), label)).unwrap();
    }
    spawner.spawn_local(ask(bob.clone(), "bob")).unwrap();
    pool.run_until_stalled();
    assert_eq!(sent.get(), 2, "one call for alice's three requests, one for bob's");
    assert_eq!(cachet_core::engine::flights::in_flight(), 2);

    // An invalidation begins: a request made now sends its own call, the calls in flight still answer.
    fake.invalidations.borrow_mut().note(Some(&["other".to_owned()]));
    spawner.spawn_local(ask(alice.clone(), "after")).unwrap();
    pool.run_until_stalled();
    assert_eq!(sent.get(), 3, "asked after the invalidation: its own call");
    for gate in gates.borrow_mut().drain(..) {
        let _ = gate.send(());
    }
    pool.run_until_stalled();
    fake.settle();
    let mut answers = answers.borrow().clone();
    answers.sort();
    assert_eq!(
        answers,
        [
            ("after".to_owned(), r#"{"data":{"call":3}}"#.to_owned()),
            ("bob".to_owned(), r#"{"data":{"call":3}}"#.to_owned()),
            ("tab 1".to_owned(), r#"{"data":{"call":3}}"#.to_owned()),
            ("tab 2".to_owned(), r#"{"data":{"call":3}} (copy)"#.to_owned()),
            ("tab 3".to_owned(), r#"{"data":{"call":3}} (copy)"#.to_owned()),
        ]
    );
    assert_eq!(cachet_core::engine::flights::in_flight(), 0, "every call ended");
    assert_eq!(fake.entries.borrow().len(), 2, "alice's entry and bob's, each stored");
}

/// A row of the freshness table: strategy, whether the entry is in the shared partition, the stored
/// answer's `Cache-Control`, its age in s, what the network does, the outcome.
type FreshRow = (Strategy, bool, &'static str, u64, Net, &'static str);

/// A GET's `Cache-Control` speaks to HTTP caches (static servers send `no-cache` on every file): its entry
/// lives `cache.maxAgeSeconds` whatever it says.
#[test]
fn a_gets_cache_control_does_not_set_its_entrys_life() {
    for cache_control in ["no-cache", "max-age=0", "max-age=10"] {
        let fake = Rc::new(Fake::default());
        let job = get_job(Strategy::CacheFirst);
        let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
        let mut stored = Resp::new("stale");
        stored.headers.push(("cache-control".into(), cache_control.into()));
        fake.entries.borrow_mut().insert(url, (stored, Some(NOW - 20_000), vec![]));
        let network = Scripted { net: Net::Ok, body: "{\"data\":{}}".into(), server_tags: None };
        let served = futures::executor::block_on(run_with(job, &fake, network, vec![]));
        assert!(served.is_ok_and(|served| served.source == Source::Cache), "{cache_control}");
    }
}

/// Issue 35 item 2: a GraphQL document's stored `Cache-Control` sets its entry's life within
/// `cache.maxAgeSeconds` (60 s here): `max-age` (`s-maxage` in the shared partition), `no-cache` (life 0), and
/// `stale-while-revalidate` (served while re-fetched in the background by the strategies that read the
/// store first).
#[test]
fn the_stored_answers_cache_control_sets_its_entrys_life() {
    use Net::{Ok as Up, Unreachable as Down};
    #[rustfmt::skip]
    let table: Vec<FreshRow> = vec![
        (Strategy::CacheFirst, true, "max-age=10", 5, Up,                                 "cache"),
        (Strategy::CacheFirst, true, "max-age=10", 20, Up,                                "network stored ~ stored"),
        (Strategy::CacheFirst, true, "max-age=600", 100, Up,                              "network stored ~ stored"),
        (Strategy::CacheFirst, true, "public, max-age=600", 50, Up,                       "cache"),
        (Strategy::CacheFirst, true, "no-cache", 1, Up,                                   "network stored ~ stored"),
        (Strategy::CacheFirst, true, "max-age=10, stale-while-revalidate=30", 20, Up,     "cache ~ stored updated"),
        (Strategy::CacheFirst, true, "max-age=10, stale-while-revalidate=30", 50, Up,     "network stored ~ stored"),
        (Strategy::StaleWhileRevalidate, true, "max-age=10, stale-while-revalidate=30", 20, Up, "cache ~ stored updated"),
        (Strategy::CacheFirst, true, "s-maxage=5, max-age=30", 10, Up,                    "network stored ~ stored"),
        (Strategy::CacheFirst, false, "s-maxage=5, max-age=30", 10, Up,                   "cache"),
        (Strategy::CacheFirst, true, "max-age=junk", 30, Up,                              "cache"),
        (Strategy::CacheOnly, true, "no-cache", 1, Up,                                    "ERR not-cached"),
        (Strategy::CacheOnly, true, "max-age=10, stale-while-revalidate=30", 20, Up,      "ERR not-cached"),
        (Strategy::NetworkFirst, true, "max-age=10", 5, Down,                             "cache"),
        // Offline, past the server's life but within the config's: served (marked stale, see the
        // stale-if-error table); past the config's: the error.
        (Strategy::NetworkFirst, true, "max-age=10", 20, Down,                            "cache"),
        (Strategy::CacheFirst, true, "no-cache", 20, Down,                                "cache"),
        (Strategy::NetworkFirst, true, "max-age=10", 61, Down,                            "ERR unreachable"),
    ];
    for (strategy, shared, cache_control, age, net, expected) in table {
        let fake = Rc::new(Fake::default());
        let mut job = get_job(strategy);
        job.shared = shared;
        job.document = true;
        let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
        let mut stored = Resp::new("stale");
        stored.headers.push(("cache-control".into(), cache_control.into()));
        fake.entries.borrow_mut().insert(url.clone(), (stored, Some(NOW - age * 1000), vec![]));
        let network = Scripted { net, body: "{\"data\":{}}".into(), server_tags: None };
        let mut words = match futures::executor::block_on(run_with(job, &fake, network, vec![])) {
            Ok(served) => match (served.source, served.storing) {
                (Source::Cache, _) => "cache".to_owned(),
                (_, Some(Storing::Store { .. })) => "network stored".to_owned(),
                (_, other) => format!("network {other:?}"),
            },
            Err(Failed::NotCached) => "ERR not-cached".into(),
            Err(Failed::Edge(error)) => format!("ERR {error}"),
        };
        words.push_str(&background_words(&fake, &url));
        assert_eq!(
            words, expected,
            "{strategy}, shared {shared}, Cache-Control {cache_control:?}, {age} s old, {net:?}"
        );
    }
}

/// A plugin that keeps every default: it says it may shape cached answers.
struct Shapes;

impl Plugin<Resp> for Shapes {}

#[test]
fn a_fresh_cache_first_hit_is_served_alone_until_its_life_ends_unless_a_plugin_may_shape_it() {
    let life = MAX_AGE_SECONDS * 1000;
    let stored_at = NOW - 1_000;
    let served = |strategy: Strategy, plugins: Vec<Rc<dyn Plugin<Resp>>>| {
        let job = get_job(strategy);
        let fake = Rc::new(Fake::default());
        let url = job.entry.as_ref().map(|entry| entry.url.clone()).unwrap_or_default();
        fake.entries.borrow_mut().insert(url, (Resp::new("stored"), Some(stored_at), vec![]));
        let network = Scripted { net: Net::Ok, body: "{\"data\":{}}".into(), server_tags: None };
        futures::executor::block_on(run_with(job, &fake, network, plugins))
            .ok()
            .map(|served| served.alone_until)
    };
    assert_eq!(served(Strategy::CacheFirst, vec![]), Some(Some(stored_at + life)));
    assert_eq!(served(Strategy::CacheOnly, vec![]), Some(Some(stored_at + life)));
    let never_shapes: Rc<dyn Plugin<Resp>> = Rc::new(cachet_core::engine::CacheControl::strict());
    assert_eq!(served(Strategy::CacheFirst, vec![never_shapes]), Some(Some(stored_at + life)));
    assert_eq!(served(Strategy::CacheFirst, vec![Rc::new(Shapes)]), Some(None), "a plugin may shape it");
    for strategy in [
        Strategy::StaleWhileRevalidate,
        Strategy::CacheAndNetwork,
        Strategy::NetworkFirst,
        Strategy::NetworkOnly,
    ] {
        assert_eq!(served(strategy, vec![]), Some(None), "{strategy:?}");
    }
}

proptest::proptest! {
    /// The rule the worker names hits by says what the planner does: before the time it gives, every
    /// lookup serves the entry with no re-fetch; from then on, none does so.
    #[test]
    fn served_alone_until_is_when_the_planner_stops_serving_the_entry_alone(
        strategy in proptest::sample::select(vec![
            Strategy::CacheFirst,
            Strategy::CacheOnly,
            Strategy::StaleWhileRevalidate,
            Strategy::CacheAndNetwork,
            Strategy::NetworkFirst,
            Strategy::NetworkOnly,
        ]),
        stored_at in 0_u64..2_000_000,
        life_ms in 0_u64..100_000,
        revalidate_ms in 0_u64..100_000,
        after in 0_u64..300_000,
    ) {
        let job = get_job(strategy);
        let freshness = plan::Freshness { life_ms, revalidate_ms };
        let now = stored_at + after;
        let alone = plan::start(&job) != plan::Start::Fetch
            && plan::after_lookup(&job, plan::found(Some(Some(stored_at)), now, freshness))
                == plan::AfterLookup::Serve { revalidate: false };
        match plan::served_alone_until(&job, Some(stored_at), freshness) {
            Some(until) => proptest::prop_assert_eq!(alone, now < until),
            None => proptest::prop_assert!(!alone),
        }
    }
}
