//! A CPU profile of a Service Worker, through Chrome DevTools on the browser's own debugging port
//! (chromedriver's `goog/cdp/execute` only reaches the page, not its worker): attach to the worker's
//! target, run `Profiler.start`, let the page work, `Profiler.stop`, and add up the self time of each
//! function.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A DevTools session with one target, over the browser's WebSocket.
pub struct Session {
    socket: Socket,
    session_id: String,
    next_id: u64,
}

/// Self time per function of a profile, and the time the worker was idle.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// `(function, where)` → self milliseconds.
    pub functions: BTreeMap<(String, String), f64>,
    /// Milliseconds with nothing running on the worker's thread.
    pub idle: f64,
    /// Every sampled millisecond.
    pub total: f64,
}

impl Session {
    /// Attaches to the running Service Worker whose script URL starts with `origin`. `debugger` is the
    /// browser's `host:port` (chromedriver reports it as `goog:chromeOptions.debuggerAddress`).
    pub async fn attach_to_worker(debugger: &str, origin: &str) -> Result<Self> {
        let mut session = Session::browser(debugger).await?;
        let targets = session.send("Target.getTargets", json!({})).await?;
        let target = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|info| {
                info["type"] == "service_worker"
                    && info["url"].as_str().is_some_and(|u| u.starts_with(origin))
            })
            .context("no running service worker of that origin")?;
        let attached = session
            .send("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }))
            .await?;
        session.session_id = attached["sessionId"].as_str().context("no sessionId")?.to_owned();
        Ok(session)
    }

    /// A session with the browser itself, attached to no target: what it traces covers every process
    /// (a worker started later included).
    pub async fn browser(debugger: &str) -> Result<Self> {
        let version = http_get(debugger, "/json/version").await?;
        let url = version["webSocketDebuggerUrl"].as_str().context("no webSocketDebuggerUrl")?;
        let (socket, _) = tokio_tungstenite::connect_async(url).await.context("connecting to DevTools")?;
        Ok(Session { socket, session_id: String::new(), next_id: 1 })
    }

    /// Starts tracing `categories` (e.g. `v8.wasm`), events reported as they are collected.
    pub async fn start_tracing(&mut self, categories: &[&str]) -> Result<()> {
        let config = json!({ "includedCategories": categories, "recordMode": "recordAsMuchAsPossible" });
        self.send("Tracing.start", json!({ "traceConfig": config, "transferMode": "ReportEvents" })).await?;
        Ok(())
    }

    /// Ends tracing; returns every event collected (`Tracing.dataCollected`) until the trace is complete.
    pub async fn end_tracing(&mut self) -> Result<Vec<Value>> {
        let id = self.next_id;
        self.next_id += 1;
        let command = json!({ "id": id, "method": "Tracing.end", "params": {} });
        self.socket.send(Message::text(command.to_string())).await?;
        let mut events = Vec::new();
        tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(message) = self.socket.next().await {
                let Message::Text(text) = message? else { continue };
                let value: Value = serde_json::from_str(&text)?;
                if value["id"] == json!(id) {
                    if let Some(error) = value.get("error") {
                        bail!("Tracing.end failed: {error}");
                    }
                    continue;
                }
                match value["method"].as_str() {
                    Some("Tracing.dataCollected") => {
                        events.extend(value["params"]["value"].as_array().into_iter().flatten().cloned())
                    }
                    Some("Tracing.tracingComplete") => return Ok(()),
                    _ => {}
                }
            }
            bail!("DevTools closed the connection")
        })
        .await
        .context("DevTools did not complete the trace")??;
        Ok(events)
    }

    /// Sends one command to the attached target (or the browser before attaching); returns its result.
    pub async fn send(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let mut command = json!({ "id": id, "method": method, "params": params });
        if !self.session_id.is_empty() {
            command["sessionId"] = json!(self.session_id);
        }
        self.socket.send(Message::text(command.to_string())).await?;
        let answer = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(message) = self.socket.next().await {
                if let Message::Text(text) = message? {
                    let value: Value = serde_json::from_str(&text)?;
                    if value["id"] == json!(id) {
                        return Ok(value);
                    }
                }
            }
            bail!("DevTools closed the connection")
        })
        .await
        .with_context(|| format!("DevTools did not answer {method}"))??;
        if let Some(error) = answer.get("error") {
            bail!("{method} failed: {error}");
        }
        Ok(answer["result"].clone())
    }

    /// Starts sampling every `interval_us` microseconds.
    pub async fn start_profiler(&mut self, interval_us: u64) -> Result<()> {
        self.send("Profiler.enable", json!({})).await?;
        self.send("Profiler.setSamplingInterval", json!({ "interval": interval_us })).await?;
        self.send("Profiler.start", json!({})).await?;
        Ok(())
    }

    /// Stops sampling; returns the profile as DevTools saves it (a `.cpuprofile`).
    pub async fn stop_profiler(&mut self) -> Result<Value> {
        let stopped = self.send("Profiler.stop", json!({})).await?;
        Ok(stopped["profile"].clone())
    }
}

/// Adds up a V8 CPU profile (`Profiler.Profile`): each sample's time delta goes to its node's function.
pub fn self_times(profile: &Value) -> Profile {
    let mut frames: BTreeMap<u64, (String, String)> = BTreeMap::new();
    for node in profile["nodes"].as_array().into_iter().flatten() {
        let frame = &node["callFrame"];
        let name = frame["functionName"].as_str().unwrap_or_default();
        let url = frame["url"].as_str().unwrap_or_default();
        let place = if url.starts_with("wasm://") || url.ends_with(".wasm") {
            "wasm".to_owned()
        } else {
            url.rsplit('/').next().unwrap_or_default().split('?').next().unwrap_or_default().to_owned()
        };
        let name = if name.is_empty() { "(anonymous)".to_owned() } else { name.to_owned() };
        frames.insert(node["id"].as_u64().unwrap_or(0), (name, place));
    }
    let mut result = Profile::default();
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"].as_array().cloned().unwrap_or_default();
    // Each delta is the time before its sample: it is charged to the sample before it.
    for (index, sample) in samples.iter().enumerate() {
        let ms = deltas.get(index + 1).and_then(Value::as_f64).unwrap_or(0.0) / 1000.0;
        let Some(frame) = frames.get(&sample.as_u64().unwrap_or(0)) else { continue };
        result.total += ms;
        if frame.0 == "(idle)" {
            result.idle += ms;
        }
        *result.functions.entry(frame.clone()).or_default() += ms;
    }
    result
}

async fn http_get(host_port: &str, path: &str) -> Result<Value> {
    let mut stream = tokio::net::TcpStream::connect(host_port)
        .await
        .with_context(|| format!("connecting to {host_port}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    // Read until the body is whole JSON: the server may keep the connection open.
    let read = async {
        let mut answer = Vec::new();
        let mut chunk = [0_u8; 4096];
        loop {
            let count = stream.read(&mut chunk).await?;
            answer.extend_from_slice(&chunk[..count]);
            let text = String::from_utf8_lossy(&answer);
            if let Some((_, body)) = text.split_once("\r\n\r\n") {
                if let Ok(value) = serde_json::from_str::<Value>(body) {
                    return Ok(value);
                }
            }
            if count == 0 {
                bail!("{host_port}{path}: the answer ended before a JSON body: {text}");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .with_context(|| format!("GET {host_port}{path}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_time_goes_to_the_sampled_function() {
        let profile = json!({
            "nodes": [
                {"id": 1, "callFrame": {"functionName": "(root)", "url": ""}},
                {"id": 2, "callFrame": {"functionName": "(idle)", "url": ""}},
                {"id": 3, "callFrame": {"functionName": "hash", "url": "http://x/cachet-sw_bg.wasm"}},
            ],
            "samples": [3, 3, 2],
            "timeDeltas": [0, 1000, 500],
        });
        let result = self_times(&profile);
        assert_eq!(result.functions[&("hash".to_owned(), "wasm".to_owned())], 1.5);
        assert_eq!((result.idle, result.total), (0.0, 1.5));
    }
}
