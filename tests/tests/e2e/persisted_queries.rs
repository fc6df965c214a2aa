//! Persisted queries negotiated by the Service Worker (issue 35 item 1), against servers that count what
//! they receive: the example backend (async-graphql's own `ApolloPersistedQueries`), Apollo Server with
//! its defaults (persisted queries on, in memory), and graphql-yoga with its defaults (no persisted
//! queries). A page sends a plain GraphQL `fetch`; the worker sends the hash, the text once when the
//! server asks for it, and GETs once the server is known to hold it: what it knows outlives the page, the
//! tab and the worker, and is learnt again when the server forgets (a restart).

use anyhow::{bail, Result};
use cachet_e2e::{Foreign, Harness};
use serde_json::{json, Value};
use todo_backend::AuthMode;

/// Persisted queries on for `/graphql`, a known hash as a GET up to 2 KB of URL.
const CONFIG: &str = r#"{"features": {"graphql": {"enabled": true,
  "persistedQueries": {"endpoints": ["/graphql"], "getMaxUrlLength": 2048}}}}"#;

/// A query as apps write them (formatted, a fragment): its hash is shorter than its text.
const QUERY: &str = r#"query ApqTodos {
  todos {
    ...TodoFields
  }
  me {
    id
    username
  }
  first: todo(id: "1") {
    ...TodoFields
  }
  second: todo(id: "2") {
    ...TodoFields
  }
}

fragment TodoFields on Todo {
  id
  title
  done
}"#;

/// The answer's members.
const MEMBERS: [&str; 4] = ["first", "me", "second", "todos"];

/// Sends the query with `strategy` from the current tab, as a plain `fetch`: `{status, source, data}`.
async fn send(harness: &Harness, strategy: &str) -> Result<Value> {
    let script = format!(
        "fetch('/graphql', {{method: 'POST', headers: {{'content-type': 'application/json',
           'x-sw-strategy': {strategy}}}, body: JSON.stringify({{query: {query}, operationName: 'ApqTodos'}})}})
           .then(async (r) => {{ const body = await r.json();
             done({{status: r.status, source: r.headers.get('x-cachet-source'),
               data: body.data ? Object.keys(body.data).sort() : body}}); }},
             (e) => done({{error: String(e)}}));",
        strategy = json!(strategy),
        query = json!(QUERY)
    );
    harness.run_async(&script).await
}

/// Sends the query network-only and checks its answer is the query's, from the network.
async fn answered(harness: &Harness) -> Result<()> {
    let answer = send(harness, "network-only").await?;
    if answer != json!({"status": 200, "source": "network", "data": MEMBERS}) {
        bail!("the query's answer: {answer}");
    }
    Ok(())
}

/// What the example backend counted for the query: round trips, hashed (no text), registered (hash
/// and text), GETs, bytes on the wire (bodies, GETs' searches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Wire {
    trips: u64,
    hashed: u64,
    registered: u64,
    gets: u64,
    bytes: u64,
}

impl Wire {
    fn read(harness: &Harness) -> Wire {
        let count = |what: &str| harness.count(&format!("graphql {what}ApqTodos"));
        Wire {
            trips: count(""),
            hashed: count("hashed "),
            registered: count("registered "),
            gets: count("GET "),
            bytes: count("wire "),
        }
    }

    /// What one more query cost: `(trips, hashed, registered, gets)`, and its bytes.
    fn since(self, before: Wire) -> ((u64, u64, u64, u64), u64) {
        let counts = (
            self.trips - before.trips,
            self.hashed - before.hashed,
            self.registered - before.registered,
            self.gets - before.gets,
        );
        (counts, self.bytes - before.bytes)
    }
}

/// Sends the query and returns what it cost at the example backend.
async fn cost(harness: &Harness) -> Result<((u64, u64, u64, u64), u64)> {
    let before = Wire::read(harness);
    answered(harness).await?;
    Ok(Wire::read(harness).since(before))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_goes_as_its_hash_remembered_through_reloads_tabs_a_stopped_worker_and_a_restart(
) -> Result<()> {
    let mut harness = Harness::start_with_config(AuthMode::Cookie, CONFIG).await?;
    harness.open_plain_page("auth=cookie").await?;
    harness.login("alice").await?;
    let plain_bytes = json!({"query": QUERY, "operationName": "ApqTodos"}).to_string().len() as u64;

    // The first time: the hash, not found, then hash and text (two round trips, once).
    let (first, registered_bytes) = cost(&harness).await?;
    assert_eq!(first, (2, 1, 1, 0), "the first query");
    // From then on: one GET of the hash, a fraction of the text's bytes.
    let (again, get_bytes) = cost(&harness).await?;
    assert_eq!(again, (1, 1, 0, 1), "the second query");
    assert!(get_bytes < plain_bytes && plain_bytes < registered_bytes, "{get_bytes}, {plain_bytes}");

    // A reload, a second tab, a stopped worker: what the server holds is remembered.
    harness.open_plain_page("auth=cookie").await?;
    assert_eq!(cost(&harness).await?.0, (1, 1, 0, 1), "after a reload");
    let first_tab = harness.client.window().await?;
    let second_tab = harness.client.new_window(false).await?.handle;
    harness.client.switch_to_window(second_tab).await?;
    harness.open_plain_page("auth=cookie").await?;
    assert_eq!(cost(&harness).await?.0, (1, 1, 0, 1), "in a second tab");
    harness.client.switch_to_window(first_tab).await?;
    harness.stop_service_workers().await?;
    assert_eq!(cost(&harness).await?.0, (1, 1, 0, 1), "after the worker stopped");

    // The server restarts and forgets: its not-found for a known hash registers it again, once.
    harness.restart_server().await?;
    assert_eq!(cost(&harness).await?.0, (2, 1, 1, 1), "after the server forgot");
    assert_eq!(cost(&harness).await?.0, (1, 1, 0, 1), "once registered again");

    // The way it was sent does not change where its answer is stored: cache-first stores the hashed
    // answer under the page's request's key, and the same request is then a hit.
    let stored = send(&harness, "cache-first").await?;
    assert_eq!(stored["source"], json!("network"), "{stored}");
    let hit = send(&harness, "cache-first").await?;
    assert_eq!(hit, json!({"status": 200, "source": "cache", "data": MEMBERS}));
    Ok(())
}

/// The foreign server's count of `route` (`"POST /graphql"`, `"GET /graphql"`).
async fn routes(harness: &Harness, route: &str) -> Result<u64> {
    let Some(server) = harness.foreign() else { bail!("no foreign server") };
    Ok(server.counts().await?["routes"][route].as_u64().unwrap_or(0))
}

/// Sends the query and returns the foreign server's `(POSTs, GETs)` for it.
async fn foreign_cost(harness: &Harness) -> Result<(u64, u64)> {
    let before = (routes(harness, "POST /graphql").await?, routes(harness, "GET /graphql").await?);
    answered(harness).await?;
    let after = (routes(harness, "POST /graphql").await?, routes(harness, "GET /graphql").await?);
    Ok((after.0 - before.0, after.1 - before.1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apollo_server_with_its_defaults_holds_the_hashes() -> Result<()> {
    let harness = Harness::start_foreign(Foreign::Apollo, CONFIG).await?;
    harness.open_plain_page("auth=bearer").await?;
    assert_eq!(foreign_cost(&harness).await?, (2, 0), "the hash, not found, then registered");
    assert_eq!(foreign_cost(&harness).await?, (0, 1), "a GET of the hash it holds");
    harness.stop_service_workers().await?;
    assert_eq!(foreign_cost(&harness).await?, (0, 1), "after the worker stopped");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_persisted_queries_gets_plain_requests_from_then_on() -> Result<()> {
    let harness = Harness::start_foreign(Foreign::Yoga, CONFIG).await?;
    harness.open_plain_page("auth=bearer").await?;
    // graphql-yoga with its defaults refuses the hash (no text); the same query plain is answered:
    // the endpoint is remembered as not speaking the protocol.
    assert_eq!(foreign_cost(&harness).await?, (2, 0), "the hash refused, then plain");
    assert_eq!(foreign_cost(&harness).await?, (1, 0), "plain from then on");
    harness.open_plain_page("auth=bearer").await?;
    harness.stop_service_workers().await?;
    assert_eq!(foreign_cost(&harness).await?, (1, 0), "after the worker stopped");
    Ok(())
}
