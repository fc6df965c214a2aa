//! `cargo xtask screenshot`: the README's picture of the example app, taken in headless Chromium. Starts
//! the real backend and the built app (`dist/`) through the e2e harness, signs alice in, adds and ticks
//! a few todos, and writes a PNG of the window (default `docs/todo-app.png`), then one with the devtools
//! panel open (`docs/todo-app-devtools.png`).

use anyhow::{Context, Result};
use cachet_e2e::Harness;
use todo_backend::AuthMode;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "docs/todo-app.png".to_owned());
    let harness = Harness::start(AuthMode::Cookie).await?;
    harness.open_controlled().await?;
    harness.sign_in("alice").await?;
    harness.wait_for_list(&[]).await?;
    let titles = ["Buy milk", "Read the cachet ARCHITECTURE.md", "Ship the offline queue"];
    for (count, title) in titles.iter().enumerate() {
        harness.add_todo(title).await?;
        harness.wait_for_list(&titles[..=count]).await?;
    }
    harness.click("#todos li[data-id] .toggle").await?;
    harness
        .wait_for("the summary", "document.querySelector('#summary')?.textContent === '1 of 3 done'")
        .await?;
    // A reload: the list now comes from the Service Worker's cache, and says so.
    harness.client.refresh().await?;
    harness.open_controlled_here().await?;
    harness.wait_for_list(&titles).await?;
    let png = harness.client.screenshot().await?;
    std::fs::write(&out, png).with_context(|| format!("writing {out}"))?;
    println!("wrote {out}");
    // The devtools panel open over the same page (README's Devtools section): `<out>-devtools.png`.
    harness.click("#cachet-devtools-toggle").await?;
    harness
        .wait_for("the panel's entries", "document.querySelectorAll('#cachet-devtools tr.entry').length >= 2")
        .await?;
    let devtools_out = out.replace(".png", "-devtools.png");
    let png = harness.client.screenshot().await?;
    std::fs::write(&devtools_out, png).with_context(|| format!("writing {devtools_out}"))?;
    println!("wrote {devtools_out}");
    Ok(())
}
