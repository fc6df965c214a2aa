//! GraphQL: auth failures as HTTP 401, CRUD scoped per user, operation counters.

use serde_json::{json, Value};
use todo_backend::AuthMode;

use crate::{gql, login, post_json, send, server};

const GET_TODOS: &str = "query GetTodos { todos { id title done } }";
const GET_TODO: &str = "query GetTodo($id: ID!) { todo(id: $id) { id title done } }";
const CREATE: &str = "mutation CreateTodo($title: String!) { createTodo(title: $title) { id title done } }";
const UPDATE: &str = "mutation UpdateTodo($id: ID!, $title: String, $done: Boolean) { updateTodo(id: $id, title: $title, done: $done) { id title done } }";
const DELETE: &str = "mutation DeleteTodo($id: ID!) { deleteTodo(id: $id) }";

#[tokio::test]
async fn crud_is_scoped_per_user() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Cookie).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Cookie, "alice").await;
    let bob = login(addr, AuthMode::Cookie, "bob").await;

    let created = gql(addr, &alice, CREATE, json!({ "title": "buy milk" })).await;
    assert_eq!(created.status, 200);
    let todo = created.json()["data"]["createTodo"].clone();
    assert_eq!(todo["title"], "buy milk");
    assert_eq!(todo["done"], false);
    let id = todo["id"].as_str().expect("id").to_owned();

    let list = gql(addr, &alice, GET_TODOS, json!({})).await.json();
    assert_eq!(list["data"]["todos"], json!([todo]));
    let theirs = gql(addr, &bob, GET_TODOS, json!({})).await.json();
    assert_eq!(theirs["data"]["todos"], json!([]));
    let peek = gql(addr, &bob, GET_TODO, json!({ "id": id })).await.json();
    assert_eq!(peek["data"]["todo"], json!(null));
    let steal = gql(addr, &bob, UPDATE, json!({ "id": id, "done": true })).await.json();
    assert!(steal["errors"][0]["message"].as_str().expect("msg").contains("not found"));
    let del = gql(addr, &bob, DELETE, json!({ "id": id })).await.json();
    assert_eq!(del["data"]["deleteTodo"], false);

    let upd = gql(addr, &alice, UPDATE, json!({ "id": id, "done": true })).await.json();
    assert_eq!(upd["data"]["updateTodo"], json!({ "id": id, "title": "buy milk", "done": true }));
    let one = gql(addr, &alice, GET_TODO, json!({ "id": id })).await.json();
    assert_eq!(one["data"]["todo"]["done"], true);
    let me = gql(addr, &alice, "{ me { username } }", json!({})).await.json();
    assert_eq!(me["data"]["me"]["username"], "alice");
    let bad = gql(addr, &alice, GET_TODO, json!({ "id": "abc" })).await.json();
    assert!(bad["errors"][0]["message"].as_str().expect("msg").contains("invalid todo id"));
    let del = gql(addr, &alice, DELETE, json!({ "id": id })).await.json();
    assert_eq!(del["data"]["deleteTodo"], true);
    let list = gql(addr, &alice, GET_TODOS, json!({})).await.json();
    assert_eq!(list["data"]["todos"], json!([]));

    let counts = srv.counts();
    assert_eq!(counts.get("graphql GetTodos"), Some(&3));
    assert_eq!(counts.get("graphql CreateTodo"), Some(&1));
    assert_eq!(counts.get("graphql UpdateTodo"), Some(&2));
    assert_eq!(counts.get("graphql DeleteTodo"), Some(&2));
    assert_eq!(counts.get("graphql GetTodo"), Some(&3));
    assert_eq!(counts.get("graphql <anonymous>"), Some(&1));
    assert_eq!(counts.get("POST /graphql"), Some(&12));
    srv.stop().await;
}

#[tokio::test]
async fn unauthenticated_or_expired_is_http_401() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let none = ("X-Nothing".to_owned(), "1".to_owned());
    let resp = gql(addr, &none, GET_TODOS, json!({})).await;
    assert_eq!(resp.status, 401);
    assert_eq!(resp.json(), json!({ "errors": [{ "message": "not authenticated" }] }));

    let cred = login(addr, AuthMode::Bearer, "alice").await;
    assert_eq!(gql(addr, &cred, GET_TODOS, json!({})).await.status, 200);
    post_json(addr, "/__test/expire-tokens", &[], &json!({})).await;
    let resp = gql(addr, &cred, GET_TODOS, json!({})).await;
    assert_eq!(resp.status, 401);
    assert_eq!(resp.json()["errors"][0]["message"], "not authenticated");
    // Both attempts were counted under the operation name, auth failure or not.
    assert_eq!(srv.counts().get("graphql GetTodos"), Some(&3));
    srv.stop().await;
}

#[tokio::test]
async fn malformed_graphql_bodies_are_400() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let (name, value) = login(addr, AuthMode::Bearer, "alice").await;
    let headers = [(name.as_str(), value.as_str()), ("Content-Type", "application/json")];
    for raw in ["{\"query\": ", "{\"variables\": {}}", "42"] {
        let resp = send(addr, "POST", "/graphql", &headers, Some(raw)).await.expect("send");
        assert_eq!(resp.status, 400, "{raw}");
        let error = resp.json()["error"].as_str().expect("error").to_owned();
        assert!(error.starts_with("malformed GraphQL request body"), "{error}");
    }
    // Syntax errors in the document are GraphQL errors, not crashes.
    let resp = send(addr, "POST", "/graphql", &headers, Some("{\"query\":\"query {\"}")).await;
    let resp = resp.expect("send");
    assert_eq!(resp.status, 200);
    assert!(resp.json()["errors"].is_array());
    srv.stop().await;
}

#[tokio::test]
async fn the_fail_graphql_hook_answers_the_next_requests_with_the_status_asked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Cookie).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Cookie, "alice").await;
    let set = post_json(addr, "/__test/fail-graphql?status=422&status=503", &[], &json!({})).await;
    assert_eq!(set.json(), json!({ "statuses": [422, 503] }));
    for expected in [422, 503] {
        let failed = gql(addr, &alice, CREATE, json!({ "title": "refused" })).await;
        assert_eq!(failed.status, expected);
        assert!(failed.json()["errors"][0]["message"].as_str().expect("msg").contains("on purpose"));
    }
    let list = gql(addr, &alice, GET_TODOS, json!({})).await;
    assert_eq!((list.status, list.json()["data"]["todos"].clone()), (200, json!([])), "nothing was created");
    assert_eq!(srv.counts()["graphql CreateTodo"], 2, "failed requests are counted");
    for bad in ["status=abc", "count=1&status=500", "what=1", ""] {
        let refused = post_json(addr, &format!("/__test/fail-graphql?{bad}"), &[], &json!({})).await;
        assert_eq!(refused.status, 400, "{bad}");
    }
    srv.stop().await;
}

#[tokio::test]
async fn a_repeated_idempotency_key_gets_the_first_answer_and_applies_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Bearer, "alice").await;
    let keyed = |key: &'static str, title: &'static str| {
        let alice = alice.clone();
        async move {
            let body = json!({ "query": CREATE, "variables": { "title": title } });
            post_json(addr, "/graphql", &[(&alice.0, &alice.1), ("Idempotency-Key", key)], &body).await
        }
    };
    let first = keyed("key-1", "milk").await;
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.header("idempotent-replayed"), None);
    // The same key again, even with another body, and many at once: the first answer, nothing applied.
    let again = keyed("key-1", "eggs").await;
    assert_eq!((again.status, again.json()), (200, first.json()));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let (one, two, three) =
        tokio::join!(keyed("key-2", "bread"), keyed("key-2", "bread"), keyed("key-2", "bread"));
    let answers: Vec<Value> = [one, two, three].iter().map(|resp| resp.json()).collect();
    assert!(answers.iter().all(|answer| *answer == answers[0]), "{answers:?}");
    let list = gql(addr, &alice, GET_TODOS, json!({})).await.json();
    let titles: Vec<&str> =
        list["data"]["todos"].as_array().expect("todos").iter().filter_map(|t| t["title"].as_str()).collect();
    assert_eq!(titles, ["milk", "bread"]);
    assert_eq!(srv.counts().get("graphql idempotent replay").copied(), Some(3));

    // Keys are the caller's: bob's "key-1" is his own.
    let bob = login(addr, AuthMode::Bearer, "bob").await;
    let body = json!({ "query": CREATE, "variables": { "title": "bob's" } });
    let bobs = post_json(addr, "/graphql", &[(&bob.0, &bob.1), ("Idempotency-Key", "key-1")], &body).await;
    assert_eq!(bobs.json()["data"]["createTodo"]["title"], "bob's");

    // A malformed key is a 400 naming it; nothing is applied.
    let bad = post_json(addr, "/graphql", &[(&alice.0, &alice.1), ("Idempotency-Key", "a b")], &body).await;
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("invalid Idempotency-Key header"), "{}", bad.text());
    // An auth failure keeps nothing: the same key with valid auth then runs.
    let unauthed = post_json(addr, "/graphql", &[("Idempotency-Key", "key-3")], &body).await;
    assert_eq!(unauthed.status, 401);
    let authed = keyed("key-3", "after 401").await;
    assert_eq!(authed.json()["data"]["createTodo"]["title"], "after 401");
    srv.stop().await;
}

#[tokio::test]
async fn an_operation_and_its_kept_answer_land_together_or_not_at_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Bearer, "alice").await;
    // Keeping the answer of "key-torn" fails (as a full disk or a crash between the two writes would).
    let outside = rusqlite::Connection::open(dir.path().join("db/todo.sqlite")).expect("open");
    outside
        .execute_batch(
            "CREATE TRIGGER refuse_torn BEFORE INSERT ON idempotency WHEN NEW.key = 'key-torn'
             BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
        )
        .expect("trigger");
    let body = json!({ "query": CREATE, "variables": { "title": "once" } });
    let headers = [(&alice.0[..], &alice.1[..]), ("Idempotency-Key", "key-torn")];
    let failed = post_json(addr, "/graphql", &headers, &body).await;
    assert_eq!(failed.status, 500, "{}", failed.text());
    let titles = |list: Value| -> Vec<String> {
        list["data"]["todos"]
            .as_array()
            .expect("todos")
            .iter()
            .filter_map(|t| t["title"].as_str().map(str::to_owned))
            .collect()
    };
    let after_failure = titles(gql(addr, &alice, GET_TODOS, json!({})).await.json());
    assert!(after_failure.is_empty(), "the effect went with its answer: {after_failure:?}");

    outside.execute_batch("DROP TRIGGER refuse_torn").expect("drop");
    let retried = post_json(addr, "/graphql", &headers, &body).await;
    assert_eq!(retried.status, 200, "{}", retried.text());
    let again = post_json(addr, "/graphql", &headers, &body).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(titles(gql(addr, &alice, GET_TODOS, json!({})).await.json()), ["once"], "applied once");
    srv.stop().await;
}

/// GraphQL over HTTP's GET: a query is answered as the same query posted; a mutation is refused with 405
/// (`Allow: POST`) and applies nothing; malformed `variables` are a 400.
#[tokio::test]
async fn a_query_sent_as_get_is_answered_and_a_mutation_sent_as_get_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Bearer, "alice").await;
    let auth = [(alice.0.as_str(), alice.1.as_str())];
    assert_eq!(gql(addr, &alice, CREATE, json!({ "title": "over get" })).await.status, 200);
    let search = |query: &str, variables: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", query)
            .append_pair("variables", variables)
            .finish()
    };
    let got = crate::get(addr, &format!("/graphql?{}", search(GET_TODOS, "{}")), &auth).await;
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.json()["data"]["todos"][0]["title"], "over get");
    let mutation =
        crate::get(addr, &format!("/graphql?{}", search(CREATE, r#"{"title":"no"}"#)), &auth).await;
    assert_eq!((mutation.status, mutation.header("allow")), (405, Some("POST")), "{}", mutation.text());
    let bad = crate::get(addr, &format!("/graphql?{}", search(GET_TODOS, "[1")), &auth).await;
    assert_eq!(bad.status, 400, "{}", bad.text());
    let titles: Vec<String> =
        srv.todos_of("alice").expect("todos").into_iter().map(|todo| todo.title).collect();
    assert_eq!(titles, ["over get"], "the mutation sent as GET applied nothing");
    srv.stop().await;
}

/// An answer that selects `todos` carries `X-SW-Cache-Tags: todos` (the resolver adds it), whatever the
/// operation's name, so that every todo mutation reaches it (SPEC §4); one that does not select them
/// carries no tag.
#[tokio::test]
async fn an_answer_selecting_todos_is_tagged_todos() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Bearer, "alice").await;
    let listing = gql(addr, &alice, "query Listing { todos { title } }", json!({})).await;
    assert_eq!(
        (listing.status, listing.header("x-sw-cache-tags")),
        (200, Some("todos")),
        "{}",
        listing.text()
    );
    let me = gql(addr, &alice, "query Me { me { username } }", json!({})).await;
    assert_eq!((me.status, me.header("x-sw-cache-tags")), (200, None), "{}", me.text());
    srv.stop().await;
}

/// async-graphql's own automatic persisted queries, read by cachet's rule
/// (`cachet_core::graphql::persisted`): a hash it does not hold is `PersistedQueryNotFound`, a hash with
/// its text is run and kept, then the hash alone is answered, posted or as a GET; each way and its bytes
/// are counted.
#[tokio::test]
async fn persisted_queries_are_answered_and_each_way_is_counted() {
    use cachet_core::graphql::persisted::{verdict, Outgoing, Prepared, Verdict, Way};
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    let addr = srv.addr();
    let alice = login(addr, AuthMode::Bearer, "alice").await;
    let auth = [(alice.0.as_str(), alice.1.as_str())];
    let body = json!({ "query": GET_TODOS, "operationName": "GetTodos" }).to_string();
    let query = Prepared::new(body.as_bytes()).expect("a query");
    let post = |way| match query.outgoing(way, "/graphql") {
        Some(Outgoing::Post(text)) => text,
        other => panic!("{way:?}: {other:?}"),
    };
    let (hashed, registered) = (post(Way::Hash), post(Way::Register));
    let (hashed_json, registered_json): (Value, Value) =
        (serde_json::from_str(&hashed).expect("json"), serde_json::from_str(&registered).expect("json"));
    let send = |body| post_json(addr, "/graphql", &auth, body);

    let unknown = send(&hashed_json).await;
    assert_eq!(verdict(unknown.status, unknown.text().as_bytes()), Verdict::NotFound, "{}", unknown.text());
    let kept = send(&registered_json).await;
    assert_eq!(verdict(kept.status, kept.text().as_bytes()), Verdict::Data, "{}", kept.text());
    let held = send(&hashed_json).await;
    assert_eq!(held.json()["data"]["todos"], json!([]), "{}", held.text());
    let Some(Outgoing::Get(url)) = query.outgoing(Way::HashGet, "/graphql") else { panic!("a GET") };
    let got = crate::get(addr, &url, &auth).await;
    assert_eq!(got.json()["data"]["todos"], json!([]), "{}", got.text());

    let counts = srv.counts();
    let count = |key: &str| counts.get(key).copied().unwrap_or(0);
    assert_eq!(count("graphql GetTodos"), 4);
    assert_eq!(count("graphql hashed GetTodos"), 3);
    assert_eq!(count("graphql registered GetTodos"), 1);
    assert_eq!(count("graphql GET GetTodos"), 1);
    let search = url.split_once('?').map_or(0, |(_, search)| search.len());
    assert_eq!(count("graphql wire GetTodos") as usize, 2 * hashed.len() + registered.len() + search);
    srv.stop().await;
}
