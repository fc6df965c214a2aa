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

    /// Sends one Chrome DevTools command (for example `Storage.overrideQuotaForOrigin`).
    pub async fn devtools(
        &self,
        command: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value> {
        devtools(&self.client, command, params).await
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
