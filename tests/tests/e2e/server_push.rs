//! Server push (issue 21), end to end: another session of alice (as from her phone: a login of its own,
//! outside the browser) adds a todo; the real backend encrypts and VAPID-signs a push for the browser's
//! subscription and POSTs it to a push service. No push service is reachable here, so the subscription's
//! endpoint is a fake one on 127.0.0.1 (`todo_backend::fake_push_service`) that decrypts the message
//! with the subscription's keys, exactly as the browser's push service would hand it over; the test then
//! delivers that payload to the Service Worker with Chrome DevTools' `ServiceWorker.deliverPushMessage`
//! (which needs only the registration's origin and id), the worker stopped first as Chromium stops an
//! idle one. The subscription is registered with the backend from the page, as an app does with what
//! `subscribePush` returns: headless Chromium has no push service, so `pushManager.subscribe` itself
//! fails there, and the last story shows that failure is a typed error.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use cachet_e2e::app::BEARER_CONFIG;
use cachet_e2e::{Harness, BARE_PAGE};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use todo_backend::fake_push_service::FakePushService;
use todo_backend::AuthMode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// The example app's list query, as the app sends it (the cache key hashes the text).
const GET_TODOS: &str = include_str!("../../../examples/todo-app/graphql/get_todos.graphql");

/// One HTTP/1.1 request to the backend from outside the browser (another device): `(status, headers,
/// body)`.
async fn http(
    origin: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, String, String)> {
    let host = origin.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(host).await?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await?;
    // Read until the body is whole (by its Content-Length): a server may keep the connection open.
    let read = async {
        let mut answer = Vec::new();
        let mut chunk = [0_u8; 8192];
        loop {
            let count = stream.read(&mut chunk).await?;
            answer.extend_from_slice(&chunk[..count]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head.lines().find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
                });
                if count == 0 || length.is_some_and(|length| body.len() >= length) {
                    return Ok::<_, anyhow::Error>((head.to_owned(), body.to_owned()));
                }
            } else if count == 0 {
                bail!("the connection closed before an HTTP head");
            }
        }
    };
    let (head, body) = tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .context("no whole HTTP answer within 10 s")??;
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok()).context("no status")?;
    Ok((status, head, body))
}

/// Alice's other device: logs in with a session of its own and adds `title`.
async fn add_from_another_device(harness: &Harness, title: &str) -> Result<()> {
    let login = json!({ "username": "alice", "password": "alice-password" }).to_string();
    let json_type = ("content-type", "application/json");
    let (status, head, _) = http(&harness.url(), "POST", "/api/login", &[json_type], &login).await?;
    if status != 200 {
        bail!("the other device's login answered {status}");
    }
    let cookie = head
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: ").or_else(|| line.strip_prefix("Set-Cookie: ")))
        .and_then(|value| value.split(';').next())
        .context("no session cookie")?
        .to_owned();
    let create = json!({
        "query": "mutation CreateTodo($t: String!) { createTodo(title: $t) { id } }",
        "variables": { "t": title },
    });
    let (status, _, body) =
        http(&harness.url(), "POST", "/graphql", &[json_type, ("cookie", &cookie)], &create.to_string())
            .await?;
    if status != 200 || body.contains("errors") {
        bail!("the other device's add answered {status}: {body}");
    }
    Ok(())
}

/// Hands the browser's subscription (here: the fake push service's) to the backend from the page, with
/// the page's session cookie, as the app does with what `subscribePush` resolves to.
async fn subscribe_page(harness: &Harness, push_service: &FakePushService) -> Result<()> {
    let script = format!(
        "fetch('/api/push/subscription', {{method: 'POST', headers: {{'content-type': 'application/json'}},
           body: JSON.stringify({subscription})}}).then((r) => done(r.status), (e) => done(String(e)));",
        subscription = push_service.subscription_json()
    );
    match harness.run_async(&script).await? {
        Value::Number(status) if status.as_u64() == Some(201) => Ok(()),
        other => bail!("storing the subscription answered {other}"),
    }
}

/// The Service Worker registration's id, as DevTools knows it: `ServiceWorker.enable` on a DevTools
/// session of the page reports every registration (`ServiceWorker.workerRegistrationUpdated`), over the
/// browser's own DevTools socket (chromedriver's `goog/cdp/execute` answers commands, not events).
async fn registration_id(harness: &Harness) -> Result<String> {
    let debugger = harness
        .client
        .capabilities()
        .and_then(|capabilities| capabilities.get("goog:chromeOptions"))
        .and_then(|options| options["debuggerAddress"].as_str())
        .map(str::to_owned)
        .context("chromedriver reported no debuggerAddress")?;
    let (_, _, version) = http(&format!("http://{debugger}"), "GET", "/json/version", &[], "").await?;
    let version: Value = serde_json::from_str(&version)?;
    let socket_url = version["webSocketDebuggerUrl"].as_str().context("no webSocketDebuggerUrl")?;
    let (mut socket, _) = tokio_tungstenite::connect_async(socket_url).await?;
    let origin = harness.url();
    let mut next_id = 0;
    let mut send = |method: &str, params: Value, session: Option<&str>| {
        next_id += 1;
        let mut command = json!({ "id": next_id, "method": method, "params": params });
        if let Some(session) = session {
            command["sessionId"] = json!(session);
        }
        Message::text(command.to_string())
    };
    socket.send(send("Target.getTargets", json!({}), None)).await?;
    let found = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(message) = socket.next().await {
            let Message::Text(text) = message? else { continue };
            let value: Value = serde_json::from_str(&text)?;
            if let Some(targets) = value["result"]["targetInfos"].as_array() {
                let page = targets
                    .iter()
                    .find(|target| {
                        target["type"] == "page"
                            && target["url"].as_str().is_some_and(|url| url.starts_with(&origin))
                    })
                    .context("no page of the app's origin")?;
                let attach = json!({ "targetId": page["targetId"], "flatten": true });
                socket.send(send("Target.attachToTarget", attach, None)).await?;
            } else if let Some(id) = value["result"]["sessionId"].as_str() {
                socket.send(send("ServiceWorker.enable", json!({}), Some(id))).await?;
            } else if value["method"] == "ServiceWorker.workerRegistrationUpdated" {
                let registrations = value["params"]["registrations"].as_array().cloned().unwrap_or_default();
                if let Some(registration) = registrations.iter().find(|registration| {
                    registration["isDeleted"] == false
                        && registration["scopeURL"].as_str().is_some_and(|scope| scope.starts_with(&origin))
                }) {
                    return Ok::<_, anyhow::Error>(
                        registration["registrationId"].as_str().unwrap_or_default().to_owned(),
                    );
                }
            } else if let Some(error) = value.get("error") {
                bail!("DevTools: {error}");
            }
        }
        bail!("DevTools closed the connection")
    })
    .await
    .context("DevTools reported no registration")??;
    Ok(found)
}

/// Delivers `data` as a push to the registration `id` of the app's origin.
async fn deliver_push(harness: &Harness, id: &str, data: &str) -> Result<()> {
    harness.devtools("ServiceWorker.enable", json!({})).await?;
    harness
        .devtools(
            "ServiceWorker.deliverPushMessage",
            json!({ "origin": harness.url(), "registrationId": id, "data": data }),
        )
        .await?;
    Ok(())
}

/// The pushes the running worker ignored (its snapshot's `ignoredPushes`), once it names one (at most
/// 200 reads, 25 ms apart).
async fn ignored_pushes(harness: &Harness) -> Result<Value> {
    for _ in 0..200 {
        let snapshot = harness.eval("cachet.getSnapshot({ limit: 1 })").await?;
        let ignored = &snapshot["ignoredPushes"];
        if ignored.as_array().is_some_and(|list| !list.is_empty()) {
            return Ok(ignored.clone());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    bail!("the worker's snapshot never named an ignored push")
}

/// Lets the origin show notifications (a `userVisibleOnly` push shows one).
async fn allow_notifications(harness: &Harness) -> Result<()> {
    let grant = json!({ "permissions": ["notifications"], "origin": harness.url() });
    harness.devtools("Browser.grantPermissions", grant).await?;
    Ok(())
}

/// The notifications the registration shows: `[title, body, tag]` each.
async fn notifications(harness: &Harness) -> Result<Value> {
    harness
        .eval(
            "navigator.serviceWorker.ready.then((r) => r.getNotifications())
               .then((all) => all.map((n) => [n.title, n.body, n.tag]))",
        )
        .await
}

/// Waits (at most 10 s) until the registration shows a notification; returns them all. None by then:
/// what the page and the worker say of it (seen once under two CPU hogs, with nothing said; not
/// reproduced in 4 runs after).
async fn wait_for_notifications(harness: &Harness) -> Result<Value> {
    let started = std::time::Instant::now();
    loop {
        let shown = notifications(harness).await?;
        if shown.as_array().is_some_and(|all| !all.is_empty()) {
            return Ok(shown);
        }
        if started.elapsed() > Duration::from_secs(10) {
            let said = harness
                .run_async(&format!(
                    "Promise.race([{}.then((snapshot) => snapshot.ignoredPushes),
                       new Promise((resolve) => setTimeout(() => resolve('no snapshot within 5 s'), 5000))])
                     .then((ignoredPushes) => done({{permission: Notification.permission, ignoredPushes}}));",
                    cachet_e2e::WORKER_SNAPSHOT
                ))
                .await?;
            println!("no notification within 10 s; the page and the worker say: {said}");
            return Ok(shown);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The bodies of the cached GraphQL documents.
async fn cached_documents(harness: &Harness) -> Result<Vec<String>> {
    Ok(documents(&harness.stored().await?))
}

/// [`cached_documents`] once one holds `text`: an answer is stored after it is given (at most 200
/// reads, 25 ms apart; the last read is returned for the caller's assertion).
async fn cached_documents_holding(harness: &Harness, text: &str) -> Result<Vec<String>> {
    let stored =
        harness.stored_when(|stored| documents(stored).iter().any(|body| body.contains(text))).await?;
    Ok(documents(&stored))
}

fn documents(stored: &cachet_e2e::app::Stored) -> Vec<String> {
    let entries = stored.records(&format!("cache:{}", cachet_core::engine::key::DOCUMENT_CACHE));
    entries.iter().map(|entry| entry[3].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_another_device_reaches_the_open_tab_through_a_push() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    assert_eq!(harness.wait_for_list(&[]).await?, "from network");
    let push_service = FakePushService::start().await?;
    subscribe_page(&harness, &push_service).await?;
    allow_notifications(&harness).await?;
    let registration = registration_id(&harness).await?;
    let runs = harness.count("graphql GetTodos");

    // The other device's change: the backend pushes its tags to this browser's subscription.
    add_from_another_device(&harness, "eggs").await?;
    let received = push_service.wait_for(1, Duration::from_secs(10)).await;
    let payload =
        received.first().context("the backend sent no push")?.payload.clone().map_err(anyhow::Error::msg)?;
    assert_eq!(payload, r#"{"v":1,"type":"invalidate","tags":["todo","todos","summary"]}"#);
    assert_eq!(harness.count("push sent"), 1);
    // Nothing else told this browser: the tab still shows the cached, stale list.
    assert_eq!(harness.list_now().await?, Vec::<String>::new());
    assert_eq!(harness.count("graphql GetTodos"), runs);

    // The push arrives while the worker is stopped (as an idle one is): it starts for the push alone.
    harness.stop_service_workers().await?;
    deliver_push(&harness, &registration, &payload).await?;
    assert_eq!(
        harness.wait_for_list(&["eggs"]).await?,
        "from network",
        "the worker's entry was gone: the hook's re-run could not be a cache hit"
    );
    harness
        .wait_for("the summary", "document.querySelector('#summary')?.textContent === '0 of 1 done'")
        .await?;
    assert_eq!(harness.count("graphql GetTodos"), runs + 1);
    assert_eq!(
        wait_for_notifications(&harness).await?,
        json!([["Todos changed", "Your todo list changed on another device.", "todos"]]),
        "features.push.notification of the app's config"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_tab_of_the_app_open_a_push_drops_the_entries_and_refetches_what_it_names() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.wait_for_list(&[]).await?;
    harness
        .wait_for("the summary", "document.querySelector('#summary')?.textContent === '0 of 0 done'")
        .await?;
    allow_notifications(&harness).await?;
    let registration = registration_id(&harness).await?;
    // Only a bare page of the origin stays open: no hook to re-run anything.
    harness.client.goto(&format!("{}{BARE_PAGE}", harness.url())).await?;
    harness.open_controlled_here().await?;
    harness
        .eval("(window.__heard = [], new BroadcastChannel('cachet').onmessage = (e) => window.__heard.push(e.data), true)")
        .await?;
    let before = cached_documents_holding(&harness, "\"todos\":[]").await?;
    assert!(before.iter().any(|body| body.contains("\"todos\":[]")), "the list is cached: {before:?}");
    add_from_another_device(&harness, "eggs").await?;
    let runs = harness.count("graphql GetTodos");

    // Malformed pushes first: each is ignored (a console warning in the worker), nothing changes, and
    // the worker goes on to handle the next push.
    for garbage in [
        "not json",
        r#"{"v":2,"type":"invalidate","tags":["todos"]}"#,
        r#"{"v":1,"type":"invalidate","tags":"todos"}"#,
    ] {
        harness.stop_service_workers().await?;
        deliver_push(&harness, &registration, garbage).await?;
    }
    let shown = wait_for_notifications(&harness).await?;
    assert_eq!(shown[0][0], json!("Todos changed"), "a push the worker ignores still shows one: {shown}");
    assert_eq!(cached_documents(&harness).await?, before, "an ignored push changes nothing");

    // The tags of the change: the list and the summary are gone from the worker's cache.
    harness.stop_service_workers().await?;
    deliver_push(&harness, &registration, r#"{"v":1,"type":"invalidate","tags":["todo","todos","summary"]}"#)
        .await?;
    harness
        .wait_for(
            "cache-invalidated on the channel",
            "window.__heard.some((m) => m.includes('cache-invalidated') && m.includes('\"todos\"'))",
        )
        .await?;
    let after = cached_documents(&harness).await?;
    assert!(!after.iter().any(|body| body.contains("todos")), "list and summary entries removed: {after:?}");
    assert_eq!(after.len(), before.len() - 2, "the anonymous `me` query has no tags and stays");
    assert_eq!(harness.count("graphql GetTodos"), runs, "nothing re-ran: no tab of the app is open");

    // A push that names the list to re-fetch: the worker fetches it in the background and stores it.
    harness.stop_service_workers().await?;
    let refetch = json!({ "v": 1, "type": "invalidate", "tags": [], "refetch": [{ "query": GET_TODOS }] });
    deliver_push(&harness, &registration, &refetch.to_string()).await?;
    let started = std::time::Instant::now();
    while !cached_documents(&harness).await?.iter().any(|body| body.contains("eggs")) {
        if started.elapsed() > Duration::from_secs(10) {
            bail!("the re-fetched list never reached the cache: {:?}", cached_documents(&harness).await?);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(harness.count("graphql GetTodos"), runs + 1);
    // Opening the app now: the list comes from the cache the push filled, with the change.
    harness.client.goto(&harness.url()).await?;
    harness.open_controlled_here().await?;
    assert_eq!(harness.wait_for_list(&["eggs"]).await?, "from cache");
    assert_eq!(harness.count("graphql GetTodos"), runs + 1);
    let shown = notifications(&harness).await?;
    assert_eq!(shown.as_array().map(Vec::len), Some(1), "one tag: each push replaced the last: {shown}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_is_a_typed_error_where_it_cannot_work() -> Result<()> {
    let subscribe = |key: &str| {
        format!(
            "cachet.subscribePush({key}).then((s) => done({{subscribed: s}}),
               (e) => done({{name: e.name, kind: e.kind, browserError: e.browserError || null, message: e.message}}));",
            key = json!(key)
        )
    };
    // Cookie auth, push on: the real Push API is asked. Without notification permission (headless
    // Chromium denies it) the browser refuses at once.
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.open_plain_page("").await?;
    let (_, _, key) = http(&harness.url(), "GET", "/api/push/key", &[], "").await?;
    let denied = harness.run_async(&subscribe(&key)).await?;
    println!("subscribePush, no permission: {denied}");
    assert_eq!(denied["name"], json!("CachetError"), "{denied}");
    assert_eq!(denied["kind"], json!("push-unavailable"), "{denied}");
    assert_eq!(denied["browserError"], json!("NotAllowedError"), "{denied}");
    // With permission, Chromium tries its push service, which is unreachable here, and never settles:
    // the client gives up after its bound.
    allow_notifications(&harness).await?;
    let started = std::time::Instant::now();
    let hung = harness.run_async(&subscribe(&key)).await?;
    println!("subscribePush, permission granted: {hung} after {:?}", started.elapsed());
    assert_eq!(hung["kind"], json!("push-unavailable"), "{hung}");
    assert_eq!(hung["browserError"], json!("TimeoutError"), "{hung}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(harness.eval("cachet.getPushSubscription()").await?, Value::Null);
    assert_eq!(harness.eval("cachet.unsubscribePush()").await?, Value::Null);
    let bad_key = harness.run_async(&subscribe("not-a-key")).await?;
    assert_eq!(bad_key["kind"], json!("invalid"), "{bad_key}");
    // clearAuth ends the subscription (none here) and still purges.
    assert_eq!(harness.eval("cachet.clearAuth().then(() => 'cleared')").await?, json!("cleared"));
    drop(harness);

    // Bearer auth: refused before the browser is asked, saying why (SPEC §5.8).
    let bearer_push =
        BEARER_CONFIG.replacen("\"features\": {", "\"features\": {\"push\": {\"enabled\": true}, ", 1);
    let harness = Harness::start_with_config(AuthMode::Bearer, &bearer_push).await?;
    harness.open_controlled().await?;
    harness.open_plain_page("auth=bearer").await?;
    let refused = harness.run_async(&subscribe(&key)).await?;
    assert_eq!(refused["kind"], json!("push-needs-cookie-auth"), "{refused}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("server push needs cookie auth (SPEC §5.8)"), "{message}");

    // And the bearer worker ignores a push: its cached entries stay.
    let signed_in = harness
        .run_async(&format!(
            "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
               body: JSON.stringify({{username: 'alice', password: 'alice-password'}})}})
               .then((r) => r.json()).then((data) => cachet.setAuth(data))
               .then(() => cachet.queryGql({GET_TODOS}, {{}}, {{auth: true}}))
               .then((r) => done(r.data), (e) => done(String(e)));",
            GET_TODOS = json!(GET_TODOS)
        ))
        .await?;
    assert_eq!(signed_in, json!({ "todos": [] }));
    let registration = registration_id(&harness).await?;
    let before = cached_documents_holding(&harness, "\"todos\":[]").await?;
    assert_eq!(before.len(), 1, "{before:?}");
    harness.stop_service_workers().await?;
    deliver_push(&harness, &registration, r#"{"v":1,"type":"invalidate","tags":["todos"]}"#).await?;
    // A barrier, not a sleep: the worker names the push it ignored in its snapshot, and it decides that
    // before it does anything with a push, so nothing of this one can land after it.
    let ignored = ignored_pushes(&harness).await?;
    assert!(ignored[0].as_str().is_some_and(|why| why.contains("needs cookie auth")), "{ignored}");
    assert_eq!(cached_documents(&harness).await?, before);
    Ok(())
}
