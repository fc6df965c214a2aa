//! Foreign GraphQL servers for the interop matrix (issue 31): Apollo Server, graphql-yoga and the
//! GraphQL-over-HTTP reference server `graphql-http`, each with its defaults, run by
//! `tests/interop/server.mjs` (Node, installed by `cargo xtask test` from `tests/interop/package-lock.json`)
//! on 127.0.0.1. The same process serves the built app's files, small bearer-auth routes
//! (`/api/login`, `/api/refresh`, `/api/me`, `/api/logout`) and the foreign clients' browser bundle
//! (`/__interop/clients.js`: urql, Apollo Client, graphql-request). See `tests/interop/README.md`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// A GraphQL server of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// `@apollo/server` 5 with its defaults (`csrfPrevention` on; `Cache-Control: no-store` on every answer
    /// without cache hints).
    Apollo,
    /// `graphql-yoga` 5 with its defaults (no `Cache-Control`).
    Yoga,
    /// `graphql-http`, the GraphQL-over-HTTP reference server, with its defaults.
    GraphqlHttp,
}

impl Foreign {
    /// Every foreign server of the matrix.
    pub const ALL: [Foreign; 3] = [Foreign::Apollo, Foreign::Yoga, Foreign::GraphqlHttp];

    /// The `--server` name `server.mjs` takes.
    pub fn name(self) -> &'static str {
        match self {
            Foreign::Apollo => "apollo",
            Foreign::Yoga => "yoga",
            Foreign::GraphqlHttp => "graphql-http",
        }
    }
}

/// A running `server.mjs`. Dropping it ends the process (`kill_on_drop`, by its PID); the process also
/// ends by itself when its standard input closes, so a test that dies leaves nothing running.
pub struct ForeignServer {
    child: Child,
    port: u16,
}

impl ForeignServer {
    /// Starts `kind` serving `static_dir` on `port` (0: a free one) and waits until it listens.
    pub async fn start(kind: Foreign, static_dir: &Path, port: u16) -> Result<Self> {
        let script = crate::workspace_root().join("tests/interop/server.mjs");
        if !crate::workspace_root().join("tests/interop/node_modules").exists() {
            bail!("tests/interop has no node_modules: run `cargo xtask test` (it installs them first)");
        }
        let mut child = Command::new("node")
            .arg(&script)
            .args(["--server", kind.name(), "--port", &port.to_string()])
            .arg("--static")
            .arg(static_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting node {}", script.display()))?;
        let stdout = child.stdout.take().context("server.mjs stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let listening = tokio::time::timeout(crate::WAIT, async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.strip_prefix("LISTENING http://127.0.0.1:") {
                    return Ok::<_, anyhow::Error>(Some(url.trim().parse::<u16>()?));
                }
            }
            Ok(None)
        })
        .await;
        let port = match listening {
            Ok(Ok(Some(port))) => port,
            other => {
                let _ = child.start_kill();
                bail!("{} did not start listening: {other:?}", kind.name());
            }
        };
        // Keep reading its stdout so that the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(ForeignServer { child, port })
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Ends the process and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// `GET /__interop/counts`: `{routes: {"POST /graphql": n, ...}, operations: {...}, idempotencyKeys}`.
    pub async fn counts(&self) -> Result<serde_json::Value> {
        let (status, body) = request(self.port, "GET", "/__interop/counts", None).await?;
        if status != 200 {
            bail!("GET /__interop/counts answered {status}: {body}");
        }
        Ok(serde_json::from_str(&body)?)
    }

    /// The titles of `user`'s todos as the server holds them (`anonymous`: the anonymous list), oldest
    /// first.
    pub async fn todos(&self, user: &str) -> Result<Vec<String>> {
        let (status, body) =
            request(self.port, "GET", &format!("/__interop/todos?user={user}"), None).await?;
        if status != 200 {
            bail!("GET /__interop/todos answered {status}: {body}");
        }
        Ok(serde_json::from_str(&body)?)
    }

    /// Sends `POST path` with a JSON `body` to the server's test hooks; fails unless it answers 2xx.
    pub async fn hook(&self, path: &str, body: serde_json::Value) -> Result<()> {
        let (status, text) = request(self.port, "POST", path, Some(&body.to_string())).await?;
        if !(200..300).contains(&status) {
            bail!("POST {path} answered {status}: {text}");
        }
        Ok(())
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port` with `Connection: close`: the status and the body.
async fn request(port: u16, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        let body = body.unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status = text.split(' ').nth(1).and_then(|code| code.parse::<u16>().ok()).unwrap_or(0);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
        let body = if chunked { dechunk(body) } else { body.to_owned() };
        Ok::<_, anyhow::Error>((status, body))
    };
    tokio::time::timeout(Duration::from_secs(10), exchange).await.context("test hook timed out")?
}

/// A chunked HTTP/1.1 body, joined.
fn dechunk(mut body: &str) -> String {
    let mut joined = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        joined.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    joined
}
