//! The walking skeleton, end to end: the Rust Service Worker controls the page on first load, caches a
//! GET, answers it with the backend stopped, and its broadcast reaches a Yew component through the
//! yew-agent worker.

use anyhow::Result;
use cachet_e2e::Harness;
use fantoccini::Locator;
use todo_backend::AuthMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_is_cached_by_the_rust_sw_and_served_with_the_backend_down() -> Result<()> {
    let mut harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let script = harness.run_async("done(navigator.serviceWorker.controller.scriptURL)").await?;
    assert_eq!(script, serde_json::json!(format!("{}/service-worker.js", harness.url())));

    // First GET: a miss, answered by the network and stored by the SW.
    harness.client.find(Locator::Css("#fetch-hello")).await?.click().await?;
    let first = harness.text_of("#hello[data-completed='1']").await?;
    assert!(first.contains("count 1, from network"), "first answer: {first}");
    // Stored after it was given (in the worker's `waitUntil`): looked for until it is there, at most
    // 200 reads 25 ms apart.
    let stored = harness
        .run_async(
            "(async () => {
               for (let read = 0; read < 200; read++) {
                 const response = await (await caches.open('cachet-runtime-v1')).match('/api/hello');
                 if (response) return done((await response.json()).count);
                 await new Promise((resolve) => setTimeout(resolve, 25));
               }
               done(null);
             })();",
        )
        .await?;
    assert_eq!(stored, serde_json::json!(1), "Cache Storage holds the first answer");

    // Second GET: stale-while-revalidate answers from the cache at once, re-fetches in the background,
    // and the changed body is announced: SW -> BroadcastChannel -> yew-agent worker -> component.
    harness.client.find(Locator::Css("#fetch-hello")).await?.click().await?;
    let second = harness.text_of("#hello[data-completed='2']").await?;
    assert!(second.contains("count 1, from cache"), "second answer: {second}");
    let event = harness.wait_for_text_starting_with("#sw-event", "cache updated").await?;
    assert_eq!(event, format!("cache updated: {}/api/hello", harness.url()));
    assert_eq!(harness.count("GET /api/hello"), 2, "one miss plus one background re-fetch");

    // Backend down: the same GET is still answered, from the cache, with the re-fetched body.
    harness.stop_server().await;
    harness.client.find(Locator::Css("#fetch-hello")).await?.click().await?;
    let offline = harness.text_of("#hello[data-completed='3']").await?;
    assert!(offline.contains("count 2, from cache"), "answer with the backend down: {offline}");
    Ok(())
}
