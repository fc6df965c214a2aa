//! Chrome DevTools commands through chromedriver.

use anyhow::Result;
use fantoccini::Client;

use crate::Harness;

/// A Chrome DevTools command sent through chromedriver (`POST /session/{id}/goog/cdp/execute`).
#[derive(Debug)]
struct DevTools {
    command: &'static str,
    params: serde_json::Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for DevTools {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _url: &url::Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "cmd": self.command, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

impl Harness {
    /// Stops every Service Worker of the browser (as Chromium does to an idle one): whatever the SW
    /// kept only in memory is gone; the next event starts it again.
    pub async fn stop_service_workers(&self) -> Result<()> {
        // The DevTools ServiceWorker domain refuses commands until enabled (enabling twice is harmless).
        for command in ["ServiceWorker.enable", "ServiceWorker.stopAllWorkers"] {
            self.devtools(command, serde_json::json!({})).await?;
        }
        Ok(())
    }

    /// [`Harness::stop_service_workers`], then waits until no worker runs ([`stop_all_service_workers`]).
    pub async fn stop_service_workers_until_stopped(&self) -> Result<()> {
        stop_all_service_workers(&self.client).await
    }

    /// Whether a Service Worker runs now ([`service_worker_running`]).
    pub async fn service_worker_running(&self) -> Result<bool> {
        service_worker_running(&self.client).await
    }

    /// Sends one Chrome DevTools command (for example `Storage.overrideQuotaForOrigin`).
    pub async fn devtools(
        &self,
        command: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value> {
        devtools(&self.client, command, params).await
    }
}

/// Whether any Service Worker runs now in `client`'s browser (a DevTools `service_worker` target exists).
pub async fn service_worker_running(client: &Client) -> Result<bool> {
    let targets = devtools(client, "Target.getTargets", serde_json::json!({})).await?;
    Ok(targets["targetInfos"]
        .as_array()
        .is_some_and(|infos| infos.iter().any(|info| info["type"] == "service_worker")))
}

/// Stops every Service Worker of `client`'s browser (`ServiceWorker.stopAllWorkers`) and waits until
/// none runs (checked with `Target.getTargets` every 20 ms, at most 10 s), so that the next event starts
/// its worker cold. The stop is sent again every half second while one runs: a page's event can start a
/// worker again meanwhile (the queue alarm asks again 2 s after a question the stop left unanswered), and
/// that worker, idle, would otherwise run on for the browser's 30 s.
pub async fn stop_all_service_workers(client: &Client) -> Result<()> {
    devtools(client, "ServiceWorker.enable", serde_json::json!({})).await?;
    let started = std::time::Instant::now();
    let mut stopped_at = None;
    loop {
        if stopped_at
            .is_none_or(|at: std::time::Instant| at.elapsed() >= std::time::Duration::from_millis(500))
        {
            devtools(client, "ServiceWorker.stopAllWorkers", serde_json::json!({})).await?;
            stopped_at = Some(std::time::Instant::now());
        }
        if !service_worker_running(client).await? {
            return Ok(());
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            anyhow::bail!("a service worker still runs 10 s after stopAllWorkers");
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Sends one Chrome DevTools command to the page of `client`'s session.
pub async fn devtools(
    client: &Client,
    command: &'static str,
    params: serde_json::Value,
) -> Result<serde_json::Value> {
    Ok(client.issue_cmd(DevTools { command, params }).await?)
}
