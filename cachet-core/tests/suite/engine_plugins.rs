//! The plugin hooks, natively: each hook's effect on the runner, their order, the one retry, and the
//! default `CacheControl` plugin. The same runner calls them in the Service Worker and in the page (the
//! parity table's `no-store` scenario runs the default plugin on every edge).

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;

use cachet_core::engine::plugin::{AfterFetch, CacheControl, Call, Later, Plugin};
use cachet_core::engine::{pass, EntryKey, Failed, Fetched, Job, Network, Source, Storing};
use cachet_core::strategy::Strategy;

use crate::engine_table::{get_job, run_with, Error, Fake, Resp, NOW};

/// One scripted answer: status, body, headers; `None`: the network is unreachable.
type Scripted = Option<(u16, &'static str, &'static [(&'static str, &'static str)])>;
/// The headers of each send.
type Sent = Rc<RefCell<Vec<Vec<(String, String)>>>>;

/// A network that answers from a script, one reply per send (`None`: unreachable), and records the
/// headers each send carried.
#[derive(Default)]
struct Script {
    replies: RefCell<Vec<Scripted>>,
    sent: Sent,
}

impl Script {
    fn new(replies: Vec<Scripted>) -> Self {
        Script { replies: RefCell::new(replies), sent: Rc::default() }
    }
}

impl Network<Resp, Error> for Script {
    async fn fetch(&self, headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        self.sent.borrow_mut().push(headers.to_vec());
        let next = self.replies.borrow_mut().remove(0);
        let (status, body, headers) = next.ok_or(Error::Unreachable)?;
        let headers: Vec<(String, String)> =
            headers.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
        let cache_control = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("cache-control"))
            .map(|(_, value)| value.clone());
        Ok(Fetched {
            response: Resp { body: body.to_owned(), headers, status: 200 },
            status,
            body: body.as_bytes().to_vec(),
            auth_failure: status == 401,
            server_tags: None,
            cache_control,
        })
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        Ok(fetched.response.clone())
    }
}

/// A plugin that records which hooks ran, under its name, and does what its fields say.
#[derive(Default)]
struct Probe {
    name: &'static str,
    log: Rc<RefCell<Vec<String>>>,
    header: Option<(&'static str, &'static str)>,
    retry_on_401: bool,
    refuse_cached: bool,
    veto_store: bool,
    instead: Option<&'static str>,
    key_suffix: Option<&'static str>,
}

impl Probe {
    fn note(&self, hook: &str) {
        self.log.borrow_mut().push(format!("{}.{hook}", self.name));
    }
}

impl Plugin<Resp> for Probe {
    fn cache_key_will_be_used(&self, call: &Call<'_>, mut entry: EntryKey) -> EntryKey {
        // The plugin sees the job it changes the key of (its strategy, tags).
        self.note(if call.job.is_some_and(|job| job.entry.is_some()) { "key" } else { "key-without-job" });
        if let Some(suffix) = self.key_suffix {
            entry.url.push_str(suffix);
        }
        entry
    }
    fn cached_response_will_be_used(&self, _call: &Call<'_>, cached: Resp) -> Option<Resp> {
        self.note("cached");
        (!self.refuse_cached).then_some(cached)
    }
    fn request_will_fetch(&self, _call: &Call<'_>, headers: &mut Vec<(String, String)>) {
        self.note("request");
        if let Some((name, value)) = self.header {
            headers.push((name.to_owned(), value.to_owned()));
        }
    }
    fn fetch_did_succeed<'a>(
        &'a self,
        _call: &'a Call<'a>,
        fetched: &'a Fetched<Resp>,
        retried: bool,
    ) -> Later<'a, AfterFetch> {
        self.note(if retried { "succeeded(retried)" } else { "succeeded" });
        let retry = self.retry_on_401 && fetched.status == 401;
        Box::pin(async move {
            if retry {
                AfterFetch::Retry
            } else {
                AfterFetch::Keep
            }
        })
    }
    fn fetch_did_fail<'a>(&'a self, _call: &'a Call<'a>, error: &'a dyn Display) -> Later<'a, ()> {
        self.note(&format!("failed({error})"));
        Box::pin(async {})
    }
    fn cache_will_update(&self, _call: &Call<'_>, _fetched: &Fetched<Resp>) -> bool {
        self.note("update");
        !self.veto_store
    }
    fn handler_did_error<'a>(
        &'a self,
        _call: &'a Call<'a>,
        error: &'a dyn Display,
    ) -> Later<'a, Option<Resp>> {
        self.note(&format!("error({error})"));
        Box::pin(std::future::ready(self.instead.map(Resp::new)))
    }
    fn handler_will_respond(&self, _call: &Call<'_>, mut response: Resp, source: Source) -> Resp {
        self.note(&format!("respond({source:?})"));
        response.body.push_str(&format!("+{}", self.name));
        response
    }
}

fn block<T>(future: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(future)
}

fn probes(log: &Rc<RefCell<Vec<String>>>, a: Probe, b: Probe) -> Vec<Rc<dyn Plugin<Resp>>> {
    vec![
        Rc::new(Probe { name: "a", log: log.clone(), ..a }),
        Rc::new(Probe { name: "b", log: log.clone(), ..b }),
    ]
}

const OK: Scripted = Some((200, "fresh", &[]));

#[test]
fn every_hook_runs_in_the_order_the_plugins_were_installed() {
    let log = Rc::default();
    let fake = Rc::new(Fake::default());
    let network = Script::new(vec![OK]);
    let sent = network.sent.clone();
    let plugins = probes(&log, Probe { header: Some(("x-a", "1")), ..Probe::default() }, Probe::default());
    let served = block(run_with(get_job(Strategy::CacheFirst), &fake, network, plugins)).unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "a.key",
            "b.key",
            "a.request",
            "b.request",
            "a.succeeded",
            "b.succeeded",
            "a.update",
            "b.update",
            "a.respond(Network)",
            "b.respond(Network)"
        ]
    );
    assert_eq!(
        *sent.borrow(),
        [vec![("x-a".to_owned(), "1".to_owned())]],
        "request_will_fetch's header was sent"
    );
    assert_eq!(served.response.body, "fresh+a+b", "handler_will_respond replaced the answer, in order");
    assert!(matches!(served.storing, Some(Storing::Store { .. })));
}

#[test]
fn a_plugin_moves_the_key_vetoes_a_store_and_refuses_a_cached_entry() {
    let log = Rc::default();
    let fake = Rc::new(Fake::default());
    let plugins = probes(&log, Probe { key_suffix: Some("#v2"), ..Probe::default() }, Probe::default());
    block(run_with(get_job(Strategy::CacheFirst), &fake, Script::new(vec![OK]), plugins)).unwrap();
    fake.settle();
    let stored: Vec<String> = fake.entries.borrow().keys().cloned().collect();
    assert_eq!(stored, ["https://app.test/api/notes#v2"], "stored under the key the plugin chose");

    let vetoed = Rc::new(Fake::default());
    let plugins = probes(&log, Probe::default(), Probe { veto_store: true, ..Probe::default() });
    let served =
        block(run_with(get_job(Strategy::CacheFirst), &vetoed, Script::new(vec![OK]), plugins)).unwrap();
    assert_eq!(served.storing, Some(Storing::Skip(cachet_core::engine::NotStored::Plugin)));
    assert!(vetoed.entries.borrow().is_empty());

    // A fresh entry the plugin refuses counts as absent: the network answers.
    let held = Rc::new(Fake::default());
    held.entries
        .borrow_mut()
        .insert("https://app.test/api/notes".into(), (Resp::new("held"), Some(NOW - 1), vec![]));
    let plugins = probes(&log, Probe { refuse_cached: true, ..Probe::default() }, Probe::default());
    let served =
        block(run_with(get_job(Strategy::CacheFirst), &held, Script::new(vec![OK]), plugins)).unwrap();
    assert_eq!((served.source, served.response.body.as_str()), (Source::Network, "fresh+a+b"));
    let plugins = probes(&log, Probe::default(), Probe::default());
    let served = block(run_with(get_job(Strategy::CacheFirst), &held, Script::new(vec![]), plugins)).unwrap();
    assert_eq!((served.source, served.response.body.as_str()), (Source::Cache, "fresh+a+b"));
}

#[test]
fn a_retry_is_asked_by_fetch_did_succeed_and_happens_once() {
    const DENIED: Scripted = Some((401, "denied", &[]));
    for (replies, expected_sends, expected_body) in [
        (vec![DENIED, OK], 2, "fresh+a+b"),
        // The retry is denied again: its answer stands, no third send.
        (vec![DENIED, DENIED, OK], 2, "denied+a+b"),
    ] {
        let log = Rc::default();
        let fake = Rc::new(Fake::default());
        let network = Script::new(replies);
        let sent = network.sent.clone();
        let plugins = probes(&log, Probe { retry_on_401: true, ..Probe::default() }, Probe::default());
        let served = block(run_with(get_job(Strategy::NetworkFirst), &fake, network, plugins)).unwrap();
        assert_eq!(sent.borrow().len(), expected_sends);
        assert_eq!(served.response.body, expected_body);
        assert!(log.borrow().contains(&"a.succeeded(retried)".to_owned()));
    }
}

#[test]
fn an_unreachable_network_is_seen_by_fetch_did_fail_and_handler_did_error_may_answer() {
    let log = Rc::default();
    let fake = Rc::new(Fake::default());
    let plugins = probes(&log, Probe::default(), Probe { instead: Some("queued"), ..Probe::default() });
    let served =
        block(run_with(get_job(Strategy::NetworkFirst), &fake, Script::new(vec![None]), plugins)).unwrap();
    assert_eq!((served.source, served.response.body.as_str()), (Source::Plugin, "queued+a+b"));
    let log = log.borrow();
    let hooks: Vec<&str> = log.iter().map(String::as_str).filter(|hook| !hook.ends_with(".key")).collect();
    assert_eq!(
        hooks,
        [
            "a.request",
            "b.request",
            "a.failed(unreachable)",
            "b.failed(unreachable)",
            "a.error(unreachable)",
            "b.error(unreachable)",
            "a.respond(Plugin)",
            "b.respond(Plugin)"
        ]
    );
    // Without a plugin's answer the failure stands; cache-only's "not cached" goes through the hook too.
    let log = Rc::default();
    let plugins = probes(&log, Probe::default(), Probe::default());
    let failed = block(run_with(get_job(Strategy::CacheOnly), &fake, Script::new(vec![]), plugins));
    assert!(matches!(failed, Err(Failed::NotCached)));
    assert!(log.borrow().contains(&"a.error(cache-only: nothing cached)".to_owned()));
}

/// A network that leaves every request to another engine after sending it (as the worker's start module
/// leaves an auth failure to the whole engine, `Network::leaves`).
struct Leaving;

impl Network<Resp, Error> for Leaving {
    async fn fetch(&self, _headers: &[(String, String)]) -> Result<Fetched<Resp>, Error> {
        Err(Error::Left)
    }
    fn unreachable(error: &Error) -> bool {
        *error == Error::Unreachable
    }
    fn answer_copy(&self, fetched: &Fetched<Resp>) -> Result<Resp, Error> {
        Ok(fetched.response.clone())
    }
    fn leaves(error: &Error) -> bool {
        *error == Error::Left
    }
}

#[test]
fn a_request_left_to_another_engine_is_given_back_as_it_is_and_no_plugin_answers_in_its_place() {
    let log = Rc::default();
    let fake = Rc::new(Fake::default());
    let instead = || Probe { instead: Some("fallback"), ..Probe::default() };
    let plugins = probes(&log, instead(), instead());
    let left = block(run_with(get_job(Strategy::NetworkFirst), &fake, Leaving, plugins.clone()));
    assert!(matches!(left, Err(Failed::Edge(Error::Left))), "{:?}", left.map(|served| served.response));
    let call = Call { method: "POST", url: "https://app.test/graphql", job: None };
    let passed = block(pass(call, &Leaving, &plugins));
    assert!(matches!(passed, Err(Failed::Edge(Error::Left))));
    // The engine it goes to runs the last hooks; here, none ran, and the failure hooks neither.
    let log = log.borrow();
    assert!(log.iter().all(|hook| hook.ends_with(".key") || hook.ends_with(".request")), "{log:?}");
}

#[test]
fn a_request_without_a_job_passes_through_the_same_hooks_and_is_never_stored() {
    let log = Rc::default();
    let network = Script::new(vec![Some((401, "denied", &[])), OK]);
    let plugins = probes(&log, Probe { retry_on_401: true, ..Probe::default() }, Probe::default());
    let call = Call { method: "POST", url: "https://app.test/graphql", job: None };
    let served = block(pass(call, &network, &plugins)).unwrap();
    assert_eq!((served.response.body.as_str(), served.storing), ("fresh+a+b", None));
    assert!(!log.borrow().iter().any(|hook| hook.ends_with(".update") || hook.ends_with(".key")));
}

#[test]
fn cache_control_plugin_reads_no_store_as_an_http_cache_would_and_private_only_when_strict() {
    let store = |job: Job, cache_control: &'static str, extra: Vec<Rc<dyn Plugin<Resp>>>| {
        let fake = Rc::new(Fake::default());
        let headers: &'static [(&'static str, &'static str)] =
            Box::leak(Box::new([("Cache-Control", cache_control)]));
        let network = Script::new(vec![Some((200, r#"{"data":{}}"#, headers))]);
        let served = block(run_with(job, &fake, network, extra)).unwrap();
        served.storing.map(|storing| match storing {
            Storing::Store { .. } => "stored",
            Storing::Skip(reason) => reason.code(),
        })
    };
    let get = || Job { shared: false, ..get_job(Strategy::CacheFirst) };
    let document = || Job { document: true, no_store_binds: false, ..get() };
    // Without a plugin: the planner's rule (a document's no-store is advisory).
    assert_eq!(store(get(), "no-store", vec![]), Some("server-no-store"));
    assert_eq!(store(document(), "no-store", vec![]), Some("stored"));
    assert_eq!(store(get(), "private, max-age=60", vec![]), Some("stored"));
    assert_eq!(
        store(get(), "no-cache", vec![]),
        Some("stored"),
        "no-cache allows storing (it asks for revalidation)"
    );
    // With it: no-store binds everywhere, a document's too; strict refuses private.
    assert_eq!(store(document(), "no-store", vec![Rc::new(CacheControl::default())]), Some("plugin"));
    assert_eq!(store(get(), "private", vec![Rc::new(CacheControl::strict())]), Some("plugin"));
    assert_eq!(store(get(), "public, max-age=60", vec![Rc::new(CacheControl::strict())]), Some("stored"));
    assert!(!CacheControl::default().forbids("x-no-store-y"), "a directive is matched whole");
}
