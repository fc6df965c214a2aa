//! Start/stop/restart, persistence, static files, counters and the respond hook.

use std::time::Duration;

use serde_json::json;
use todo_backend::{start, AuthMode};

use crate::{config, get, gql, login, post_json, send, server, Conn};

#[tokio::test]
async fn stop_closes_listener_and_keep_alive_connections() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Cookie).await;
    let addr = srv.addr();
    assert_eq!(srv.url(), format!("http://127.0.0.1:{}", addr.port()));

    let mut conn = Conn::open(addr).await.expect("connect");
    let first = conn.send("GET", "/api/hello", &[], None).await.expect("first");
    assert_eq!(first.status, 200);
    let second = conn.send("GET", "/api/hello", &[], None).await.expect("second");
    assert_eq!(second.json()["count"], 2);

    tokio::time::timeout(Duration::from_secs(5), srv.stop()).await.expect("stop finishes promptly");

    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "new connections must be refused after stop()"
    );
    let after = conn.send("GET", "/api/hello", &[], None).await;
    assert!(after.is_err(), "keep-alive connection must be dropped: {after:?}");
}

#[tokio::test]
async fn restart_on_same_port_keeps_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join("db/todo.sqlite");
    let srv = server(dir.path(), AuthMode::Bearer).await;
    assert!(db_path.exists(), "database created on first run");
    let addr = srv.addr();
    let cred = login(addr, AuthMode::Bearer, "alice").await;
    let create = "mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }";
    assert_eq!(gql(addr, &cred, create, json!({ "t": "persist me" })).await.status, 200);
    srv.stop().await;

    let mut cfg = config(dir.path(), AuthMode::Bearer);
    cfg.addr = addr;
    let srv = start(cfg).await.expect("restart on the same port");
    assert_eq!(srv.addr(), addr);
    assert!(srv.counts().is_empty(), "counters start fresh");
    // The token survived too (sessions are stored in the database).
    let list = gql(addr, &cred, "query GetTodos { todos { title } }", json!({})).await;
    assert_eq!(list.json()["data"]["todos"], json!([{ "title": "persist me" }]));
    srv.stop().await;
}

#[tokio::test]
async fn static_files_spa_fallback_and_cache_headers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).expect("dist");
    std::fs::write(dist.join("index.html"), "<!doctype html><p>todo</p>").expect("index");
    std::fs::write(dist.join("app.js"), "console.log(1)").expect("js");
    std::fs::write(dist.join("app_bg.wasm"), b"\0asm\x01\0\0\0").expect("wasm");
    std::fs::write(dist.join("style.css"), "p{}").expect("css");
    let mut cfg = config(dir.path(), AuthMode::Cookie);
    cfg.static_dir = Some(dist);
    let srv = start(cfg).await.expect("start");
    let addr = srv.addr();

    let root = get(addr, "/", &[]).await;
    assert_eq!(root.status, 200);
    assert!(root.text().contains("todo"));
    assert_eq!(root.header("cache-control"), Some("no-cache"));
    let wasm = get(addr, "/app_bg.wasm", &[]).await;
    assert_eq!(wasm.header("content-type"), Some("application/wasm"));
    assert_eq!(wasm.header("cache-control"), Some("no-cache"));
    let js = get(addr, "/app.js", &[]).await;
    assert!(js.header("content-type").expect("ct").contains("javascript"));
    assert_eq!(js.header("cache-control"), Some("no-cache"));
    let css = get(addr, "/style.css", &[]).await;
    assert_eq!(css.header("cache-control"), None);

    let spa = get(addr, "/todos/42", &[]).await;
    assert_eq!(spa.status, 200);
    assert!(spa.text().contains("todo"));
    let api = get(addr, "/api/unknown", &[]).await;
    assert_eq!(api.status, 404);
    assert_eq!(api.json(), json!({ "error": "no route for GET /api/unknown" }));
    srv.stop().await;
}

#[tokio::test]
async fn counters_hello_and_test_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let srv = server(dir.path(), AuthMode::Cookie).await;
    let addr = srv.addr();
    for n in 1..=3 {
        let hello = get(addr, "/api/hello", &[]).await.json();
        assert_eq!(hello["message"], "hello from the cachet todo backend");
        assert_eq!(hello["count"], n);
        assert!(hello["servedAt"].as_i64().expect("servedAt") > 1_600_000_000_000);
    }
    post_json(addr, "/api/refresh", &[], &json!({})).await;
    assert_eq!(srv.counts().get("GET /api/hello"), Some(&3));
    assert_eq!(srv.counts().get("POST /api/refresh"), Some(&1));
    let over_http = get(addr, "/__test/counts", &[]).await.json();
    assert_eq!(over_http["GET /api/hello"], 3);

    srv.reset_counts();
    assert!(srv.counts().is_empty());
    get(addr, "/api/hello", &[]).await;
    let reset = send(addr, "POST", "/__test/reset", &[], None).await.expect("reset");
    assert_eq!(reset.status, 204);
    assert!(srv.counts().is_empty());

    let path = "/__test/respond?status=502&body=%7Bnot%20json&content_type=application/json\
                &header=X-Test:%20yes&header=X-Other:2";
    let resp = get(addr, path, &[]).await;
    assert_eq!(resp.status, 502);
    assert_eq!(resp.text(), "{not json");
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(resp.header("x-test"), Some("yes"));
    assert_eq!(resp.header("x-other"), Some("2"));
    let posted = send(addr, "POST", "/__test/respond?status=201", &[], None).await;
    assert_eq!(posted.expect("post").status, 201);
    let bad = get(addr, "/__test/respond?status=99999", &[]).await;
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().expect("error").contains("99999"));
    srv.stop().await;

    // Without test hooks the routes do not exist.
    let mut cfg = config(dir.path(), AuthMode::Cookie);
    cfg.test_hooks = false;
    let srv = start(cfg).await.expect("start");
    assert_eq!(get(srv.addr(), "/__test/counts", &[]).await.status, 404);
    srv.stop().await;
}
