//! A bearer session across a reload in a lone tab (issue 36): no token survives a reload and no other
//! tab can lend one, so the page restores the session with the backend's refresh cookie (`POST
//! /api/refresh` with the cookie alone); offline it is signed in from its stored record and its cache
//! stays its own, restored when the browser is back online; refused, the session is over and the worker
//! forgets the user (purged as a logout), so nothing more is stored in their partition.

use std::time::Duration;

use anyhow::{bail, Result};
use cachet_e2e::app::BEARER_CONFIG;
use cachet_e2e::Harness;
use todo_backend::AuthMode;

/// Reloads the page and waits until the Service Worker controls it again.
async fn reload(harness: &Harness) -> Result<()> {
    harness.client.refresh().await?;
    harness.open_controlled_here().await
}

/// Waits until the backend counted `count` requests of `route` (every 25 ms, at most 10 s).
async fn wait_for_count(harness: &Harness, route: &str, count: u64) -> Result<()> {
    for _ in 0..400 {
        if harness.count(route) >= count {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    bail!("{route}: {} requests, waited for {count}", harness.count(route))
}

/// The worker's stored identity records.
async fn identity(harness: &Harness) -> Result<Vec<serde_json::Value>> {
    Ok(harness.stored().await?.records("cachet/identity").to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_tab_reloaded_online_and_offline_keeps_its_bearer_session() -> Result<()> {
    let mut harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.add_todo("milk").await?;
    harness.wait_for_list(&["milk"]).await?;
    let tokens = harness.issued_tokens().len();

    // Online: the session is restored from the refresh cookie, once, and the app is alice's at once.
    reload(&harness).await?;
    harness
        .wait_for(
            "alice, restored",
            "document.querySelector('#whoami')?.textContent === 'signed in as alice'",
        )
        .await?;
    harness.wait_for_list(&["milk"]).await?;
    assert_eq!(harness.count("POST /api/refresh"), 1, "one restore");
    assert_eq!(harness.issued_tokens().len(), tokens + 1, "a new token, from the cookie alone");
    assert_eq!(identity(&harness).await?.len(), 1, "the worker still knows alice");

    // Offline (the server down, the browser offline: Chromium's emulation does not reach the worker's
    // own fetches): signed in from the stored record, nobody asked.
    harness.stop_server().await;
    harness.emulate_offline(true).await?;
    reload(&harness).await?;
    harness
        .wait_for(
            "signed in, offline",
            "document.querySelector('#whoami')?.textContent.startsWith('signed in')",
        )
        .await?;
    // The page loaded offline from alice's partition (her app files), and the worker still knows her:
    // her cache stays hers. (The hooks' queries wait for the network offline: the query machine's rule.)
    let offline = harness.stored().await?;
    assert_eq!(offline.records("cachet/identity").len(), 1, "the worker still knows alice");
    let record = offline.records("cachet-client/auth").to_vec();

    // Back online: the session is restored by itself (the restarted server counts from zero): the new
    // token's fingerprint is persisted and the worker vouches for it.
    harness.restart_server().await?;
    harness.emulate_offline(false).await?;
    wait_for_count(&harness, "POST /api/refresh", 1).await?;
    let restored =
        harness.stored_when(|stored| stored.records("cachet-client/auth") != record.as_slice()).await?;
    assert_ne!(restored.records("cachet-client/auth"), record.as_slice(), "the new token's fingerprint");
    let vouched = |stored: &cachet_e2e::app::Stored| stored.records("cachet/identity")[0].to_string();
    // The record is stored as its JSON text.
    let text = restored.records("cachet-client/auth")[0].as_str().unwrap_or_default().to_owned();
    let Some(fingerprint) =
        serde_json::from_str::<serde_json::Value>(&text)?["authFingerprint"].as_str().map(str::to_owned)
    else {
        bail!("no fingerprint in {text}");
    };
    let with_it = harness.stored_when(|stored| vouched(stored).contains(&fingerprint)).await?;
    assert!(vouched(&with_it).contains(&fingerprint), "{}", vouched(&with_it));
    // (Chromium's emulation gives the agent worker no `online` event: a reload shows the app again.)
    reload(&harness).await?;
    harness
        .wait_for(
            "alice, confirmed",
            "document.querySelector('#whoami')?.textContent === 'signed in as alice'",
        )
        .await?;
    harness.wait_for_list(&["milk"]).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_tab_whose_session_was_refused_is_signed_out_and_the_worker_forgets_the_user() -> Result<()> {
    let harness = Harness::start_with_config(AuthMode::Bearer, BEARER_CONFIG).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.add_todo("alice's secret").await?;
    harness.wait_for_list(&["alice's secret"]).await?;
    let before = harness.stored().await?;
    assert!(before.text().contains("alice's secret"), "stored in alice's partition");
    let identity =
        before.records("cachet/identity").first().and_then(|record| record.as_str()).unwrap_or_default();
    let alice = serde_json::from_str::<serde_json::Value>(identity)?["partition"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!alice.is_empty(), "alice's partition: {identity}");

    harness.test_hook("/__test/fail-refresh?on=true").await?;
    reload(&harness).await?;
    wait_for_count(&harness, "POST /api/refresh", 1).await?;
    harness.wait_for("the login form", "document.querySelector('#login') !== null").await?;
    // The worker forgot alice; nothing was purged (her entries and queue wait for her next login), and
    // nothing more is stored in her partition: the page's next answer goes to the shared one.
    let stored = harness.stored_when(|stored| stored.records("cachet/identity").is_empty()).await?;
    assert!(
        stored.records("cachet/identity").is_empty(),
        "identity: {:?}",
        stored.records("cachet/identity")
    );
    assert!(stored.records("cachet-client/auth").is_empty(), "the record is gone");
    assert!(stored.text().contains("alice's secret"), "not a logout: alice's answers are kept");
    let fetched = harness
        .run_async("fetch('/api/hello?after-the-refusal').then((r) => r.text()).then(() => done(true), (e) => done(String(e)));")
        .await?;
    assert_eq!(fetched, serde_json::json!(true));
    let stored = harness.stored_when(|stored| stored.text().contains("after-the-refusal")).await?;
    let url = stored
        .text()
        .split('"')
        .find(|part| part.contains("after-the-refusal"))
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(!url.contains(&alice), "stored in alice's partition ({alice}): {url}");
    // A shared-partition GET is stored at its own URL (a user's under `/__cachet/get/<partition>/`).
    assert_eq!(url, format!("{}/api/hello?after-the-refusal", harness.url()), "the shared partition");
    assert_eq!(harness.count("POST /api/refresh"), 1, "asked once, refused");
    Ok(())
}
