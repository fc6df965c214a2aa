//! What Chromium wrote to its console: pages and their dedicated workers, read through chromedriver's
//! log endpoint (`POST /session/{id}/se/log`, enabled by the `goog:loggingPrefs` capability that
//! [`crate::connect_browser_with`] asks for). A worker's messages are not reachable from the page's
//! JavaScript, so this is how a test sees a warning logged inside the agent worker.

use anyhow::{bail, Result};
use fantoccini::wd::WebDriverCompatibleCommand;
use serde_json::Value;

use crate::Harness;

/// chromedriver's `se/log` command for the `browser` log.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/se/log", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// One console entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// `WARNING`, `SEVERE`, `INFO`, `DEBUG`.
    pub level: String,
    /// The message, prefixed by chromedriver with where it came from (a URL, or `worker`).
    pub message: String,
}

impl Harness {
    /// The browser's console entries since the last call (chromedriver hands each entry out once).
    pub async fn browser_log(&self) -> Result<Vec<LogEntry>> {
        browser_log(&self.client).await
    }
}

/// [`Harness::browser_log`] for a session the harness did not open (a story with a server of its own).
pub async fn browser_log(client: &fantoccini::Client) -> Result<Vec<LogEntry>> {
    let entries = match client.issue_cmd(BrowserLog).await? {
        Value::Array(entries) => entries,
        other => bail!("chromedriver's browser log: {other}"),
    };
    Ok(entries
        .iter()
        .map(|entry| LogEntry {
            level: entry["level"].as_str().unwrap_or_default().to_owned(),
            message: entry["message"].as_str().unwrap_or_default().to_owned(),
        })
        .collect())
}
