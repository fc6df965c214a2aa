//! In-process end-to-end tests of the todo backend over real TCP.

mod auth;
mod cli;
mod client;
mod graphql;
mod lifecycle;
mod push;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use todo_backend::{start, AuthMode, RunningServer, ServerConfig};

pub use client::{send, Conn, Resp};

pub fn config(dir: &Path, mode: AuthMode) -> ServerConfig {
    ServerConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        static_dir: None,
        db_path: dir.join("db/todo.sqlite"),
        auth_mode: mode,
        token_ttl: Duration::from_secs(900),
        test_hooks: true,
    }
}

/// A server with test hooks on a free port, its database in `dir`.
pub async fn server(dir: &Path, mode: AuthMode) -> RunningServer {
    start(config(dir, mode)).await.expect("server starts")
}

pub async fn post_json(addr: SocketAddr, path: &str, auth: &[(&str, &str)], body: &Value) -> Resp {
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(auth);
    send(addr, "POST", path, &headers, Some(&body.to_string())).await.expect("request")
}

pub async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Resp {
    send(addr, "GET", path, headers, None).await.expect("request")
}

/// Logs in and returns the credential header: `Cookie` or `Authorization`, by mode.
pub async fn login(addr: SocketAddr, mode: AuthMode, user: &str) -> (String, String) {
    let body = json!({ "username": user, "password": format!("{user}-password") });
    let resp = post_json(addr, "/api/login", &[], &body).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    match mode {
        AuthMode::Cookie => {
            let cookie = resp.header("set-cookie").expect("set-cookie");
            let pair = cookie.split(';').next().expect("pair").to_owned();
            ("Cookie".into(), pair)
        }
        AuthMode::Bearer => {
            let token = resp.json()["token"].as_str().expect("token").to_owned();
            ("Authorization".into(), format!("Bearer {token}"))
        }
    }
}

/// Runs a GraphQL operation with the given credential header.
pub async fn gql(addr: SocketAddr, cred: &(String, String), query: &str, vars: Value) -> Resp {
    let body = json!({ "query": query, "variables": vars });
    post_json(addr, "/graphql", &[(&cred.0, &cred.1)], &body).await
}
