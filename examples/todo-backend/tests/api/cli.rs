//! The `todo-backend` binary: prints its one line once bound, serves, exits on SIGTERM.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::get;

#[tokio::test]
async fn binary_prints_url_serves_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("nested/data/todo.sqlite");
    let mut child = Command::new(env!("CARGO_BIN_EXE_todo-backend"))
        .args(["--addr", "127.0.0.1:0", "--auth-mode", "bearer", "--token-ttl-secs", "60"])
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn todo-backend");
    let stdout = child.stdout.take().expect("stdout");
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    });
    let line = tokio::time::timeout(Duration::from_secs(60), line)
        .await
        .expect("binary prints within 60 s")
        .expect("join")
        .expect("read line");
    let url = line
        .trim_end()
        .strip_prefix("cachet todo backend listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let addr: SocketAddr = url.parse().expect("address in the line");
    assert!(db.exists(), "database and its parent directories created");

    let hello = get(addr, "/api/hello", &[]).await;
    assert_eq!(hello.status, 200);
    // Test hooks are off by default.
    assert_eq!(get(addr, "/__test/counts", &[]).await.status, 404);

    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || child.wait()).await.expect("join").expect("wait");
    assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[test]
fn binary_rejects_a_bad_auth_mode() {
    let out = Command::new(env!("CARGO_BIN_EXE_todo-backend"))
        .args(["--auth-mode", "basic"])
        .output()
        .expect("run todo-backend");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown auth mode `basic`"), "{stderr}");
}
