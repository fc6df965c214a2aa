//! The parity suite: ONE table of scenarios, run against every edge that answers with the engine:
//! natively over fakes (`engine_table`), in a real Service Worker (`cachet-worker/tests/service_worker_parity.rs`)
//! and in a page with no worker (`cachet-client/tests/browser/parity.rs`). Both browser runs include this
//! file by path, so a rule added to the planner shows up in every run, or a run fails.
//!
//! Each edge implements [`Edge`]: send a request (a GET, or a GraphQL query to an endpoint) with a
//! strategy while the network answers a scripted [`Reply`], invalidate tags, count `cache-updated`
//! announcements. Whether an answer was stored, and with which tags, is observed the way a user would: a
//! later `cache-only` request is answered from the cache or fails, and after invalidating a tag it fails.
#![allow(dead_code)] // each including crate uses its part

/// The config every edge runs the table with.
pub const CONFIG: &str = r#"{
  "features": {
    "auth": {"enabled": true, "type": "cookie", "failure": {"statuses": [401], "header": {"name": "x-session", "value": "expired"}}},
    "graphql": {"enabled": true, "endpoints": ["/graphql", "/admin/graphql"]}
  },
  "cache": {"maxBodyBytes": 40}
}"#;

/// The app plugin every edge installs for the table, as an app would in both (`sw::Options::plugin`,
/// `ClientBuilder::plugin`): it refuses to store an answer the server marked `X-Preview: 1`.
pub struct PreviewPlugin;

impl<R: cachet_core::engine::Message + 'static> cachet_core::engine::Plugin<R> for PreviewPlugin {
    fn cache_will_update(
        &self,
        _call: &cachet_core::engine::Call<'_>,
        fetched: &cachet_core::engine::Fetched<R>,
    ) -> bool {
        fetched.response.header("x-preview").as_deref() != Some("1")
    }
}

/// The second app plugin every edge installs: an app's offline answer for a mutation the network could not
/// carry (200, [`OFFLINE_ANSWER`]), built by each edge as its own response type (`make`). The server
/// never saw that mutation: its answer invalidates nothing.
pub struct OfflineAnswer<R>(pub fn(u16, &'static str) -> R);

/// The body [`OfflineAnswer`] answers with.
pub const OFFLINE_ANSWER: &str = r#"{"data":{"offline":true}}"#;

impl<R: cachet_core::engine::Message + 'static> cachet_core::engine::Plugin<R> for OfflineAnswer<R> {
    fn handler_did_error<'a>(
        &'a self,
        call: &'a cachet_core::engine::Call<'a>,
        _error: &'a dyn std::fmt::Display,
    ) -> cachet_core::engine::plugin::Later<'a, Option<R>> {
        let mutation = call.job.is_none() && call.method == "POST";
        Box::pin(std::future::ready(mutation.then(|| (self.0)(200, OFFLINE_ANSWER))))
    }
}

/// What the network answers; `status: 0` is a network failure.
#[derive(Debug, Clone, Copy)]
pub struct Reply {
    pub status: u16,
    pub body: &'static str,
    /// Response headers.
    pub headers: &'static [(&'static str, &'static str)],
}

const DATA: &str = r#"{"data":{"todos":[{"id":1}]}}"#;
const NEWER: &str = r#"{"data":{"todos":[{"id":1},{"id":2}]}}"#;
/// Over the table's `cache.maxBodyBytes` (40), which every other body is within.
const BIG: &str = r#"{"data":{"todos":[{"id":1},{"id":2},{"id":3}]}}"#;

const OK: Reply = Reply { status: 200, body: DATA, headers: &[] };
const OK_NEWER: Reply = Reply { status: 200, body: NEWER, headers: &[] };
const UNREACHABLE: Reply = Reply { status: 0, body: "", headers: &[] };
/// A good answer whose server allows it to stand in for an error for a minute (RFC 5861).
const OK_STALE_IF_ERROR: Reply =
    Reply { status: 200, body: DATA, headers: &[("cache-control", "stale-if-error=60")] };
/// A good answer the server says must be asked again before each use.
const NO_CACHE: Reply = Reply { status: 200, body: DATA, headers: &[("cache-control", "no-cache")] };
/// A good answer fresh for ten minutes (within the config's day).
const MAX_AGE: Reply = Reply { status: 200, body: DATA, headers: &[("cache-control", "max-age=600")] };
const DOWN: Reply = Reply { status: 503, body: "down", headers: &[] };
/// Never asked: a step expected to be answered from the cache fails loudly if the network is asked.
const NOT_ASKED: Reply = Reply { status: 599, body: "the network was asked", headers: &[] };

/// A request of the table.
#[derive(Debug, Clone, Copy)]
pub enum Ask {
    /// `GET /parity/<scenario>/<path>`, with `X-Cachet-Tags: tags` when not empty.
    Get { path: &'static str, tags: &'static str },
    /// `query GetTodos { todos { id } }` with the variable `scenario` posted to `endpoint`.
    Query { endpoint: &'static str },
    /// `mutation AddTodo { addTodo { id } }` posted to `endpoint` (it invalidates `todo` and `todos`).
    Mutation { endpoint: &'static str },
}

/// What a step expects back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// From the cache, with this body.
    Cache(&'static str),
    /// From the network, with this body.
    Network(&'static str),
    /// From the cache under stale-if-error (`X-Cachet-Stale: 1`), with this body.
    Stale(&'static str),
    /// An error (network failure, or cache-only with nothing stored).
    Failed,
}

/// One step of a scenario.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Send `ask` with `strategy` while the network answers `reply`; expect `answer`.
    Send { ask: Ask, strategy: &'static str, reply: Reply, answer: Answer },
    /// Invalidate these tags (as `invalidateByTag` does).
    Invalidate(&'static [&'static str]),
    /// Let background work settle; exactly this many `cache-updated` were announced since the last check.
    Updated(usize),
}

/// A named scenario.
pub struct Scenario {
    pub name: &'static str,
    pub steps: &'static [Step],
}

const fn send(ask: Ask, strategy: &'static str, reply: Reply, answer: Answer) -> Step {
    Step::Send { ask, strategy, reply, answer }
}
/// Stored? A cache-only request answers with `body` from the cache.
const fn held(ask: Ask, body: &'static str) -> Step {
    send(ask, "cache-only", NOT_ASKED, Answer::Cache(body))
}
/// Not stored: a cache-only request fails.
const fn absent(ask: Ask) -> Step {
    send(ask, "cache-only", NOT_ASKED, Answer::Failed)
}

const ITEMS: Ask = Ask::Get { path: "items", tags: "" };
const TAGGED: Ask = Ask::Get { path: "tagged", tags: "list" };
const QUERY: Ask = Ask::Query { endpoint: "/graphql" };
const ADMIN_QUERY: Ask = Ask::Query { endpoint: "/admin/graphql" };
const MUTATION: Ask = Ask::Mutation { endpoint: "/graphql" };
const ADDED: &str = r#"{"data":{"addTodo":{"id":2}}}"#;

/// The table.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "cache-first-stores-then-serves",
        steps: &[
            send(ITEMS, "cache-first", OK, Answer::Network(DATA)),
            send(ITEMS, "cache-first", NOT_ASKED, Answer::Cache(DATA)),
        ],
    },
    Scenario {
        name: "network-first-falls-back-when-unreachable",
        steps: &[
            send(ITEMS, "network-first", OK, Answer::Network(DATA)),
            send(ITEMS, "network-first", UNREACHABLE, Answer::Cache(DATA)),
        ],
    },
    Scenario {
        name: "unreachable-with-nothing-stored-fails",
        steps: &[send(ITEMS, "network-first", UNREACHABLE, Answer::Failed), absent(ITEMS)],
    },
    Scenario { name: "cache-only-with-nothing-stored-fails", steps: &[absent(ITEMS)] },
    Scenario {
        name: "network-only-never-stores",
        steps: &[send(ITEMS, "network-only", OK, Answer::Network(DATA)), absent(ITEMS)],
    },
    Scenario {
        name: "an-error-answer-is-not-stored",
        steps: &[
            send(
                ITEMS,
                "cache-first",
                Reply { status: 500, body: "down", headers: &[] },
                Answer::Network("down"),
            ),
            absent(ITEMS),
        ],
    },
    Scenario {
        name: "an-answer-over-max-body-bytes-is-not-stored",
        steps: &[
            send(ITEMS, "cache-first", Reply { status: 200, body: BIG, headers: &[] }, Answer::Network(BIG)),
            absent(ITEMS),
        ],
    },
    Scenario {
        // Disagreement 1 of issue 15: the worker stored what the failure check calls an auth failure.
        name: "a-2xx-the-auth-failure-check-matches-is-not-stored",
        steps: &[
            send(
                ITEMS,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("x-session", "expired")] },
                Answer::Network(DATA),
            ),
            absent(ITEMS),
            send(
                QUERY,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("x-session", "expired")] },
                Answer::Network(DATA),
            ),
            absent(QUERY),
        ],
    },
    Scenario {
        // Disagreement 2: the worker ignored a GET's tags, so invalidateByTag never reached it.
        name: "a-gets-own-and-server-tags-are-recorded-and-invalidated",
        steps: &[
            send(
                TAGGED,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("x-sw-cache-tags", "todos")] },
                Answer::Network(DATA),
            ),
            held(TAGGED, DATA),
            Step::Invalidate(&["todos"]),
            absent(TAGGED),
            send(TAGGED, "cache-first", OK, Answer::Network(DATA)),
            Step::Invalidate(&["list"]),
            absent(TAGGED),
        ],
    },
    Scenario {
        name: "a-query-is-stored-with-its-auto-tags-and-errors-are-not-stored",
        steps: &[
            send(QUERY, "cache-first", OK, Answer::Network(DATA)),
            held(QUERY, DATA),
            Step::Invalidate(&["todos"]),
            absent(QUERY),
            send(
                QUERY,
                "cache-first",
                Reply { status: 200, body: r#"{"errors":[{"message":"no"}]}"#, headers: &[] },
                Answer::Network(r#"{"errors":[{"message":"no"}]}"#),
            ),
            absent(QUERY),
        ],
    },
    Scenario {
        // Disagreement 3: the same document on two endpoints shared one entry.
        name: "the-same-query-on-two-endpoints-has-two-entries",
        steps: &[
            send(QUERY, "cache-first", OK, Answer::Network(DATA)),
            absent(ADMIN_QUERY),
            send(ADMIN_QUERY, "cache-first", OK_NEWER, Answer::Network(NEWER)),
            held(QUERY, DATA),
            held(ADMIN_QUERY, NEWER),
        ],
    },
    Scenario {
        name: "stale-while-revalidate-serves-stale-then-stores-and-announces",
        steps: &[
            send(ITEMS, "stale-while-revalidate", OK, Answer::Network(DATA)),
            Step::Updated(0),
            send(ITEMS, "stale-while-revalidate", OK_NEWER, Answer::Cache(DATA)),
            Step::Updated(1),
            held(ITEMS, NEWER),
            send(ITEMS, "stale-while-revalidate", OK_NEWER, Answer::Cache(NEWER)),
            Step::Updated(0),
        ],
    },
    Scenario {
        name: "cache-and-network-serves-stored-then-always-announces-the-fresh-answer",
        steps: &[
            send(ITEMS, "cache-and-network", OK, Answer::Network(DATA)),
            Step::Updated(0),
            send(ITEMS, "cache-and-network", OK, Answer::Cache(DATA)),
            Step::Updated(1),
            send(ITEMS, "cache-and-network", OK_NEWER, Answer::Cache(DATA)),
            Step::Updated(1),
            held(ITEMS, NEWER),
        ],
    },
    Scenario {
        // The server's `Cache-Control` refines what the app configured, on every edge (the planner's rule,
        // `cachet_core::engine::plan`): a GET's `no-store` binds; a document's is advisory (Apollo Server
        // sends it on every answer without cache hints); `private` never goes to the shared partition.
        name: "the-servers-cache-control-refines-what-the-app-configured",
        steps: &[
            send(
                ITEMS,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("cache-control", "no-store")] },
                Answer::Network(DATA),
            ),
            absent(ITEMS),
            send(
                QUERY,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("cache-control", "private, max-age=60")] },
                Answer::Network(DATA),
            ),
            absent(QUERY),
            send(
                ITEMS,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("cache-control", "private, max-age=60")] },
                Answer::Network(DATA),
            ),
            absent(ITEMS),
            send(
                QUERY,
                "cache-first",
                Reply { status: 200, body: DATA, headers: &[("cache-control", "no-store")] },
                Answer::Network(DATA),
            ),
            held(QUERY, DATA),
        ],
    },
    Scenario {
        // The app's own plugin, installed on every edge ([`PreviewPlugin`]).
        name: "an-app-plugin-installed-on-every-edge-vetoes-a-store",
        steps: &[
            send(
                QUERY,
                "network-first",
                Reply { status: 200, body: DATA, headers: &[("x-preview", "1")] },
                Answer::Network(DATA),
            ),
            absent(QUERY),
            send(QUERY, "network-first", OK, Answer::Network(DATA)),
            held(QUERY, DATA),
        ],
    },
    Scenario {
        // A mutation is the core's job (`cachet_core::engine::mutation`) on every edge.
        name: "a-mutation-answered-2xx-by-the-network-invalidates-its-tags",
        steps: &[
            send(QUERY, "cache-first", OK, Answer::Network(DATA)),
            send(
                MUTATION,
                "network-only",
                Reply { status: 200, body: ADDED, headers: &[] },
                Answer::Network(ADDED),
            ),
            absent(QUERY),
        ],
    },
    Scenario {
        name: "a-mutation-the-server-refuses-invalidates-nothing",
        steps: &[
            send(QUERY, "cache-first", OK, Answer::Network(DATA)),
            send(
                MUTATION,
                "network-only",
                Reply { status: 500, body: "down", headers: &[] },
                Answer::Network("down"),
            ),
            held(QUERY, DATA),
        ],
    },
    Scenario {
        // Stale-if-error (issue 35): the stored answer's own window lets it stand in for a 5xx, marked.
        name: "a-server-error-is-answered-with-the-last-good-answer-its-server-allowed",
        steps: &[
            send(ITEMS, "network-first", OK_STALE_IF_ERROR, Answer::Network(DATA)),
            send(ITEMS, "network-first", DOWN, Answer::Stale(DATA)),
            send(QUERY, "network-first", OK_STALE_IF_ERROR, Answer::Network(DATA)),
            send(QUERY, "network-first", DOWN, Answer::Stale(DATA)),
            send(QUERY, "network-first", UNREACHABLE, Answer::Cache(DATA)),
        ],
    },
    Scenario {
        // A document's stored Cache-Control sets its life (issue 35 item 2): `no-cache` is asked again,
        // a `max-age` within the config's bound is served from the store; a GET's is not read (static
        // servers send `no-cache` on every file).
        name: "the-answers-cache-control-sets-its-entrys-life",
        steps: &[
            send(QUERY, "cache-first", NO_CACHE, Answer::Network(DATA)),
            send(QUERY, "cache-first", OK_NEWER, Answer::Network(NEWER)),
            send(ADMIN_QUERY, "cache-first", MAX_AGE, Answer::Network(DATA)),
            send(ADMIN_QUERY, "cache-first", NOT_ASKED, Answer::Cache(DATA)),
            send(ITEMS, "cache-first", NO_CACHE, Answer::Network(DATA)),
            send(ITEMS, "cache-first", NOT_ASKED, Answer::Cache(DATA)),
        ],
    },
    Scenario {
        // Without a window (the config's default, no hint) a 5xx is the answer, as before.
        name: "a-server-error-without-a-window-is-the-answer",
        steps: &[
            send(ITEMS, "network-first", OK, Answer::Network(DATA)),
            send(ITEMS, "network-first", DOWN, Answer::Network("down")),
            send(ITEMS, "network-first", UNREACHABLE, Answer::Cache(DATA)),
        ],
    },
    Scenario {
        // Disagreement of issue 33: the page invalidated on any 2xx, the worker only on the network's.
        name: "a-mutation-a-plugin-answers-invalidates-nothing",
        steps: &[
            send(QUERY, "cache-first", OK, Answer::Network(DATA)),
            send(MUTATION, "network-only", UNREACHABLE, Answer::Network(OFFLINE_ANSWER)),
            held(QUERY, DATA),
        ],
    },
];

/// What an edge answered, to compare with an [`Answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    Cache(String),
    Network(String),
    Stale(String),
    Failed,
}

impl From<Answer> for Got {
    fn from(answer: Answer) -> Self {
        match answer {
            Answer::Cache(body) => Got::Cache(body.to_owned()),
            Answer::Network(body) => Got::Network(body.to_owned()),
            Answer::Stale(body) => Got::Stale(body.to_owned()),
            Answer::Failed => Got::Failed,
        }
    }
}

/// The request of `ask` in `scenario`: method, path, body.
pub fn request_of(scenario: &str, ask: Ask) -> (&'static str, String, Option<String>) {
    match ask {
        Ask::Get { path, .. } => ("GET", format!("/parity/{scenario}/{path}"), None),
        Ask::Query { endpoint } => (
            "POST",
            endpoint.to_owned(),
            Some(format!(
                r#"{{"query":"query GetTodos {{ todos {{ id }} }}","variables":{{"scenario":"{scenario}"}}}}"#
            )),
        ),
        Ask::Mutation { endpoint } => (
            "POST",
            endpoint.to_owned(),
            Some(format!(
                r#"{{"query":"mutation AddTodo {{ addTodo {{ id }} }}","variables":{{"scenario":"{scenario}"}}}}"#
            )),
        ),
    }
}

/// The `X-Cachet-Tags` of `ask`, if any.
pub fn tags_of(ask: Ask) -> Option<&'static str> {
    match ask {
        Ask::Get { tags, .. } if !tags.is_empty() => Some(tags),
        _ => None,
    }
}

/// An edge the table runs against.
#[allow(async_fn_in_trait)]
pub trait Edge {
    /// Sends `ask` for `scenario` with `X-SW-Strategy: strategy`, the network answering `reply`.
    async fn send(&self, scenario: &str, ask: Ask, strategy: &str, reply: Reply) -> Got;
    /// Invalidates `tags`.
    async fn invalidate(&self, tags: &[&str]);
    /// Waits for background work (for at least `expected` announcements, within a bound), and returns
    /// how many `cache-updated` were announced since the last call.
    async fn updated(&self, expected: usize) -> usize;
}

/// Runs every scenario against `edge`; panics naming the scenario and step that differ.
pub async fn run_all(edge: &impl Edge) {
    for scenario in SCENARIOS {
        edge.updated(0).await;
        for (number, step) in scenario.steps.iter().enumerate() {
            let at = format!("{} step {number}: {step:?}", scenario.name);
            match *step {
                Step::Send { ask, strategy, reply, answer } => {
                    assert_eq!(
                        edge.send(scenario.name, ask, strategy, reply).await,
                        Got::from(answer),
                        "{at}"
                    );
                }
                Step::Invalidate(tags) => edge.invalidate(tags).await,
                Step::Updated(count) => assert_eq!(edge.updated(count).await, count, "{at}"),
            }
        }
    }
}
