//! Storage full: a `QuotaExceededError` while storing evicts the least recently used half of the cache and
//! retries once; every answer still reaches the page, and nothing crashes. The answers are the app's own
//! SW wasm file (about 270 KB) under distinct query strings, which the static server ignores.

use anyhow::Result;
use cachet_e2e::Harness;
use serde_json::json;
use todo_backend::AuthMode;

const FETCHES: u64 = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_storage_evicts_and_retries_and_every_answer_reaches_the_page() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let size = harness
        .run_async("fetch('/cachet-sw_bg.wasm', {cache: 'no-store'}).then((r) => r.arrayBuffer()).then((b) => done(b.byteLength));")
        .await?
        .as_u64()
        .unwrap_or_default();
    // Room for about three answers beyond what the origin holds now.
    let usage = harness.run_async("navigator.storage.estimate().then((e) => done(e.usage));").await?;
    let quota = usage.as_u64().unwrap_or_default() + 3 * size + size / 2;
    harness
        .devtools("Storage.overrideQuotaForOrigin", json!({"origin": harness.url(), "quotaSize": quota}))
        .await?;

    let answers = harness
        .run_async(&format!(
            "(async () => {{
               const lengths = [];
               for (let n = 0; n < {FETCHES}; n++) {{
                 const r = await fetch('/cachet-sw_bg.wasm?n=' + n, {{headers: {{'X-SW-Strategy': 'cache-first'}}}});
                 lengths.push((await r.arrayBuffer()).byteLength);
               }}
               // Answers are stored after they are given: the newest asked again of the same worker
               // waits for its store.
               const again = await fetch('/cachet-sw_bg.wasm?n=' + ({FETCHES} - 1), {{headers: {{'X-SW-Strategy': 'cache-first'}}}});
               await again.arrayBuffer();
               done({{lengths, again: again.headers.get('x-cachet-source')}});
             }})();"
        ))
        .await?;
    assert_eq!(
        answers["lengths"],
        json!(vec![size; FETCHES as usize]),
        "every answer reached the page whole"
    );
    assert_eq!(answers["again"], json!("cache"), "the newest answer was stored after the eviction");

    let stored = harness
        .run_async(
            "caches.open('cachet-runtime-v1').then((c) => c.keys()).then((keys) => done(keys
               .map((k) => new URL(k.url)).filter((u) => u.pathname === '/cachet-sw_bg.wasm' && u.searchParams.has('n'))
               .map((u) => Number(u.searchParams.get('n')))));",
        )
        .await?;
    let stored: Vec<u64> = serde_json::from_value(stored)?;
    assert!(!stored.is_empty() && stored.len() < FETCHES as usize, "evicted to make room: {stored:?}");
    assert!(stored.contains(&(FETCHES - 1)), "the newest answer was stored after the eviction: {stored:?}");
    assert!(!stored.contains(&0), "the least recently used went first: {stored:?}");
    Ok(())
}
