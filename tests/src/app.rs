//! Driving the example todo app as its user does: the login form, the add form, the list's checkboxes and
//! delete buttons; and reading what the user sees. Every wait is bounded (see [`Harness::wait_for`]).

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::Harness;

/// A `cachet.config.json` with bearer auth on and GraphQL at `/graphql`: give it to
/// [`Harness::start_with_config`] with a bearer backend, and the app and its Service Worker speak bearer.
pub const BEARER_CONFIG: &str = r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#;

/// Everything the origin stored, read in the page: `{"db/store": [records], "cache:name": [[url,
/// request headers, response headers, body], ...], "localStorage": {..}, "sessionStorage": {..}}`, the
/// SW's own wasm cache and the app shell (the build's files, `cachet-shell-*`) left out. See [`Stored`].
const STORAGE: &str = "(async () => {
  const found = {};
  for (const info of await indexedDB.databases()) {
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(info.name); open.onsuccess = () => resolve(open.result); open.onerror = reject; });
    for (const store of db.objectStoreNames) {
      found[info.name + '/' + store] = await new Promise((resolve) => {
        const all = db.transaction(store).objectStore(store).getAll(); all.onsuccess = () => resolve(all.result); });
    }
    db.close();
  }
  for (const name of (await caches.keys()).filter((name) => !/^cachet-(sw-wasm|shell)-/.test(name))) {
    const cache = await caches.open(name);
    found['cache:' + name] = [];
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      found['cache:' + name].push([request.url, [...request.headers], [...response.headers], await response.text()]);
    }
  }
  found.localStorage = {...localStorage};
  found.sessionStorage = {...sessionStorage};
  return found;
})()";

/// What the origin stored (see [`Harness::stored`]).
#[derive(Debug)]
pub struct Stored(serde_json::Map<String, Value>);

impl Stored {
    /// All of it as one text, to look for a string anywhere.
    pub fn text(&self) -> String {
        Value::Object(self.0.clone()).to_string()
    }

    /// How many records each IndexedDB store (`"db/store"`) and entries each cache (`"cache:name"`) holds.
    pub fn counts(&self) -> std::collections::BTreeMap<String, usize> {
        self.0
            .iter()
            .filter_map(|(place, held)| held.as_array().map(|held| (place.clone(), held.len())))
            .collect()
    }

    /// Every Cache Storage entry read, in every cache: `[url, request headers, response headers, body]`.
    pub fn cache_entries(&self) -> impl Iterator<Item = &Value> {
        self.0
            .iter()
            .filter(|(place, _)| place.starts_with("cache:"))
            .filter_map(|(_, held)| held.as_array())
            .flatten()
    }

    /// The records of the IndexedDB store `db/store` (none when it does not exist).
    pub fn records(&self, store: &str) -> &[Value] {
        self.0.get(store).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }
}

impl Harness {
    /// Everything the origin stored: every IndexedDB store, every Cache Storage entry but the SW's own
    /// wasm and the app shell, localStorage and sessionStorage.
    pub async fn stored(&self) -> Result<Stored> {
        match self.eval(STORAGE).await? {
            Value::Object(found) if !found.contains_key("error") => Ok(Stored(found)),
            other => bail!("reading the origin's storage: {other}"),
        }
    }

    /// [`Harness::stored`] once `ready` holds for it (read again every 25 ms, at most 200 times; the last
    /// read is returned either way, for the caller's assertion to name). Answers are stored after they are
    /// given, in the worker's `waitUntil`: the UI can show an answer before its entry is written.
    pub async fn stored_when(&self, ready: impl Fn(&Stored) -> bool) -> Result<Stored> {
        let mut stored = self.stored().await?;
        for _ in 0..200 {
            if ready(&stored) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            stored = self.stored().await?;
        }
        Ok(stored)
    }

    /// Deletes every request name (cachet-worker's `sw::names`: the shim's `servedAlone` answers a stopped
    /// worker's hit from them), as the engine's forgetting does: for a story that writes the worker's
    /// database behind the engine's back, or that wants a hit answered by an engine. Call it with the
    /// worker stopped: a warm engine names a hit once it is quiet (up to a second after it), and that
    /// write would land after a forgetting made while it runs.
    pub async fn forget_request_names(&self) -> Result<()> {
        let forgotten =
            "caches.keys().then((all) => Promise.all(all.filter((name) => name.startsWith('cachet-names-'))
             .map((name) => caches.delete(name)))).then(() => done(true));";
        self.run_async(forgotten).await.map(drop)
    }

    /// Every bearer token the backend handed out so far (login and refresh).
    pub fn issued_tokens(&self) -> Vec<String> {
        self.server.as_ref().map(todo_backend::RunningServer::issued_tokens).unwrap_or_default()
    }

    /// Logs `user` in (`POST /api/login`) from a page running `window.cachet` and hands the answer to
    /// `cachet.setAuth`: the client, and through it the Service Worker, know who is signed in.
    pub async fn set_auth(&self, user: &str) -> Result<()> {
        let script = format!(
            "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
               body: JSON.stringify({{username: {user}, password: {user} + '-password'}})}})
               .then((r) => r.json()).then((answer) => cachet.setAuth(answer)).then(() => done(true),
                 (e) => done(String(e)));",
            user = json!(user)
        );
        let outcome = self.run_async(&script).await?;
        if outcome != json!(true) {
            bail!("signing {user} in with cachet.setAuth: {outcome}");
        }
        Ok(())
    }

    /// Drops the whole engine's wasm ([`crate::WHOLE_WASM`]) from the shim's cache and has the server hold
    /// it (until `/__test/release-static`): a worker that starts now cannot load it.
    pub async fn hold_the_whole_engine(&self) -> Result<()> {
        let dropped = format!(
            "caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith('cachet-sw-wasm-'))
               .map((name) => caches.open(name).then((cache) => cache.delete(new URL({}, location.href).href)))))
               .then((gone) => done(gone));",
            serde_json::json!(crate::WHOLE_WASM)
        );
        let gone = self.run_async(&dropped).await?;
        anyhow::ensure!(gone == serde_json::json!([true]), "the shim's copy of the whole engine: {gone}");
        self.test_hook(&format!("/__test/hold-static?path={}", crate::WHOLE_WASM)).await?;
        Ok(())
    }

    /// `POST`s to a backend test hook (`/__test/...`) from the page, and fails unless it answers 2xx.
    pub async fn test_hook(&self, path_and_query: &str) -> Result<Value> {
        let script = format!(
            "fetch({url}, {{method: 'POST', headers: {{'X-SW-Strategy': 'network-only'}}}})
               .then(async (r) => done({{status: r.status, body: await r.text()}}), (e) => done({{status: 0, body: String(e)}}));",
            url = json!(path_and_query)
        );
        let answer = self.run_async(&script).await?;
        if !answer["status"].as_u64().is_some_and(|status| (200..300).contains(&status)) {
            bail!("test hook {path_and_query} answered {answer}");
        }
        Ok(answer)
    }

    /// Sets the page's network emulation (Chrome DevTools) offline or back online: the page's
    /// `navigator.onLine` follows and `offline` / `online` fire.
    pub async fn emulate_offline(&self, offline: bool) -> Result<()> {
        self.devtools("Network.enable", json!({})).await?;
        let conditions =
            json!({"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1});
        self.devtools("Network.emulateNetworkConditions", conditions).await?;
        Ok(())
    }

    /// Evaluates `expression` (a value or a promise) in the page; a rejection comes back as
    /// `{"error": kind}`: the `kind` of a `window.cachet` error, else the error's text.
    pub async fn eval(&self, expression: &str) -> Result<Value> {
        self.run_async(&format!(
            "Promise.resolve().then(() => {expression}).then(done, (e) => done({{error: e.kind || String(e)}}));"
        ))
        .await
    }

    /// Waits until the JS `expression` is truthy in the page and returns its value. It is evaluated at
    /// once, on every DOM change (a `MutationObserver`) and every 50 ms (for what is not in the DOM, such
    /// as events recorded by [`Harness::watch_page`]), and gives up after 15 s with an error naming
    /// `expression` and `what`, with the page's text.
    pub async fn wait_for(&self, what: &str, expression: &str) -> Result<Value> {
        let script = format!(
            "const check = () => {{ try {{ return ({expression}); }} catch (e) {{ return null; }} }};
             const first = check();
             if (first) {{ done(first); }} else {{
               const again = () => {{
                 const value = check();
                 if (value) {{ observer.disconnect(); clearInterval(tick); clearTimeout(timer); done(value); }} }};
               const observer = new MutationObserver(again);
               const tick = setInterval(again, 50);
               const timer = setTimeout(() => {{ observer.disconnect(); clearInterval(tick); done({{__timeout: true}}); }}, 15000);
               observer.observe(document, {{subtree: true, childList: true, characterData: true, attributes: true}});
             }}"
        );
        let value = self.run_async(&script).await?;
        if value.get("__timeout").is_some() {
            let page = self
                .eval("document.body.innerText + ' | events: ' + JSON.stringify(window.__seen)")
                .await
                .unwrap_or_default();
            bail!("timed out waiting for {what} ({expression}); the page reads: {page}");
        }
        Ok(value)
    }

    /// Types into the input matching `css` (once it exists).
    pub async fn type_into(&self, css: &str, text: &str) -> Result<()> {
        let element = self.element(css).await?;
        element.clear().await?;
        element.send_keys(text).await?;
        Ok(())
    }

    /// Clicks the element matching `css` (once it exists).
    pub async fn click(&self, css: &str) -> Result<()> {
        self.element(css).await?.click().await?;
        Ok(())
    }

    /// Signs `user` in through the app's form (seeded password `<user>-password`) and waits until the
    /// app says so (from `GET /api/me`).
    pub async fn sign_in(&self, user: &str) -> Result<()> {
        self.type_into("#username", user).await?;
        self.type_into("#password", &format!("{user}-password")).await?;
        self.click("#login-button").await?;
        let expected = format!("signed in as {user}");
        let condition = format!(
            "document.querySelector('#whoami')?.textContent === {expected} ||
             document.querySelector('#login-error, #auth-error')?.textContent",
            expected = json!(expected)
        );
        let seen = self.wait_for(&expected, &condition).await?;
        if seen != Value::Bool(true) {
            bail!("signing {user} in failed: {seen}");
        }
        Ok(())
    }

    /// Signs out with the app's button and waits for the login form.
    pub async fn sign_out(&self) -> Result<()> {
        self.click("#logout").await?;
        self.wait_for("the login form", "document.querySelector('#login') !== null").await?;
        Ok(())
    }

    /// Adds a todo through the form.
    pub async fn add_todo(&self, title: &str) -> Result<()> {
        self.type_into("#new-title", title).await?;
        self.click("#add-button").await
    }

    /// Waits until the list (the server's items, not those pending in the queue) shows exactly `titles`,
    /// in order, and returns the list's "from cache" / "from network" marker.
    pub async fn wait_for_list(&self, titles: &[&str]) -> Result<String> {
        let condition = format!(
            "(() => {{
               const source = document.querySelector('#todos-source');
               if (!source || source.textContent === '') return null;
               const titles = [...document.querySelectorAll('#todos li[data-id] .title')].map((e) => e.textContent);
               return JSON.stringify(titles) === JSON.stringify({expected}) ? source.textContent : null;
             }})()",
            expected = json!(titles)
        );
        match self.wait_for(&format!("the list {titles:?}"), &condition).await? {
            Value::String(source) => Ok(source),
            other => bail!("unexpected list marker {other}"),
        }
    }

    /// The titles the list shows now, queued ones included (`"title (queued)"`).
    pub async fn list_now(&self) -> Result<Vec<String>> {
        let value = self
            .eval(
                "[...document.querySelectorAll('#todos li')].map((li) =>
                   li.querySelector('.title').textContent + (li.classList.contains('pending') ? ' (queued)' : ''))",
            )
            .await?;
        Ok(serde_json::from_value(value)?)
    }

    /// Opens the app in a new window of the same browser session and switches to it; returns the handle
    /// of the window it came from.
    pub async fn open_second_tab(&self) -> Result<fantoccini::wd::WindowHandle> {
        let first = self.client.window().await?;
        let second = self.client.new_window(false).await?.handle;
        self.client.switch_to_window(second).await?;
        self.open_controlled().await?;
        Ok(first)
    }

    /// Records, in the page, every `sw-auth-state-change` and `cache-invalidated` window event in
    /// `window.__seen`, and whether any text of `forbidden` ever appeared in the DOM in
    /// `window.__leaked` (from now on: a second call replaces the first's watch).
    pub async fn watch_page(&self, forbidden: &[&str]) -> Result<()> {
        let script = format!(
            "window.__seen = []; window.__leaked = [];
             for (const name of ['sw-auth-state-change', 'cache-invalidated']) {{
               window.addEventListener(name, (event) => window.__seen.push({{name, detail: event.detail}}));
             }}
             const forbidden = {forbidden};
             const look = () => {{ for (const text of forbidden) {{
               if (document.body.innerText.includes(text) && !window.__leaked.includes(text)) window.__leaked.push(text); }} }};
             if (window.__watcher) window.__watcher.disconnect();
             window.__watcher = new MutationObserver(look);
             window.__watcher.observe(document, {{subtree: true, childList: true, characterData: true}});
             look(); done(true);",
            forbidden = json!(forbidden)
        );
        self.run_async(&script).await?;
        Ok(())
    }
}
