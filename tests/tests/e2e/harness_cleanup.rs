//! The harness leaves nothing running: once dropped, no browser process of its profile is alive.

use std::time::{Duration, Instant};

use anyhow::Result;
use cachet_e2e::Harness;
use todo_backend::AuthMode;

/// Whether a process whose command line names `needle` is running (read from /proc).
fn running_with(needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
            .unwrap_or(false)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_harness_ends_its_browser() -> Result<()> {
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    let profile = harness.profile_dir().display().to_string();
    assert!(running_with(&profile), "the browser runs with the harness's profile");
    drop(harness);
    // Chromium's processes exit shortly after the session closes: bounded wait for them to be gone.
    let started = Instant::now();
    while running_with(&profile) {
        assert!(started.elapsed() < Duration::from_secs(10), "a browser of {profile} outlived the harness");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
