//! The interop matrix of `docs/status.md` ([`STATUS_PAGE`], moved there from the README), written from
//! the run: `tests/tests/e2e/interop.rs` writes one
//! `target/interop/<backend>-<browser>.json` per backend and engine (`{backend, browser, order, rows:
//! [{client, story, outcome}]}`); [`write_status_table`] renders them, one column per backend and, in
//! each cell, one mark per engine (Chromium, Firefox, WebKit), between the page's markers.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// The page that holds the matrix, between its markers.
pub const STATUS_PAGE: &str = "docs/status.md";
const BEGIN: &str = "<!-- interop-matrix:begin";
const END: &str = "<!-- interop-matrix:end -->";
/// The engines, in the order of a cell's marks.
const BROWSERS: [&str; 3] = ["chromium", "firefox", "webkit"];

/// The column heading of each backend the stories name.
fn heading(backend: &str) -> String {
    match backend {
        "apollo" => "Apollo Server 5 (defaults)".to_owned(),
        "yoga" => "graphql-yoga 5".to_owned(),
        "graphql-http" => "graphql-http (reference)".to_owned(),
        "todo-backend" => "example backend (async-graphql)".to_owned(),
        other => other.to_owned(),
    }
}

/// The mark of one story in one run: ✓ passed, ✗ failed, — left out, · not run.
fn mark(run: Option<&Value>, row: &Value) -> &'static str {
    let found = run.and_then(|run| run["rows"].as_array()).and_then(|rows| {
        rows.iter().find(|other| other["client"] == row["client"] && other["story"] == row["story"])
    });
    match found.and_then(|found| found["outcome"].as_str()) {
        Some("passed") => "✓",
        Some("failed") => "✗",
        Some(_) => "—",
        None => "·",
    }
}

/// The Markdown table of the runs in `folder`.
pub fn render(folder: &Path) -> Result<String> {
    let mut runs: Vec<Value> = Vec::new();
    for entry in std::fs::read_dir(folder).with_context(|| format!("reading {}", folder.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|extension| extension == "json") {
            let text = std::fs::read_to_string(&path)?;
            runs.push(serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?);
        }
    }
    if runs.is_empty() {
        bail!("{} holds no run of the interop matrix", folder.display());
    }
    runs.sort_by_key(|run| run["order"].as_u64().unwrap_or(u64::MAX));
    let mut backends: Vec<&str> = Vec::new();
    for run in &runs {
        let backend = run["backend"].as_str().unwrap_or("?");
        if !backends.contains(&backend) {
            backends.push(backend);
        }
    }
    let mut table = String::from("| client | story |");
    for backend in &backends {
        table.push_str(&format!(" {} |", heading(backend)));
    }
    table.push_str("\n|---|---|");
    table.push_str(&"---|".repeat(backends.len()));
    table.push('\n');
    let rows = runs[0]["rows"].as_array().cloned().unwrap_or_default();
    for row in &rows {
        let (client, story) = (row["client"].as_str().unwrap_or("?"), row["story"].as_str().unwrap_or("?"));
        table.push_str(&format!("| {client} | {story} |"));
        for backend in &backends {
            let marks: Vec<&str> = BROWSERS
                .iter()
                .map(|browser| {
                    let run = runs.iter().find(|run| {
                        run["backend"].as_str() == Some(backend) && run["browser"].as_str() == Some(browser)
                    });
                    mark(run, row)
                })
                .collect();
            table.push_str(&format!(" {} |", marks.join(" ")));
        }
        table.push('\n');
    }
    Ok(table)
}

/// Replaces the table between the status page's markers with the runs in `folder`.
pub fn write_status_table(root: &Path, folder: &Path) -> Result<()> {
    let page_path = root.join(STATUS_PAGE);
    let page = std::fs::read_to_string(&page_path)?;
    let begin =
        page.find(BEGIN).with_context(|| format!("{STATUS_PAGE} has no interop-matrix:begin marker"))?;
    let begin = begin + page[begin..].find('\n').context("marker line")? + 1;
    let end = page.find(END).with_context(|| format!("{STATUS_PAGE} has no interop-matrix:end marker"))?;
    if end < begin {
        bail!("{STATUS_PAGE}'s interop-matrix markers are out of order");
    }
    let written = format!("{}{}{}", &page[..begin], render(folder)?, &page[end..]);
    std::fs::write(page_path, written)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask test` writes the matrix there after the end-to-end tests: the markers must be there.
    #[test]
    fn the_status_page_holds_the_markers_in_order() -> Result<()> {
        let page =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(STATUS_PAGE))?;
        let begin = page.find(BEGIN).context("begin marker")?;
        let end = page.find(END).context("end marker")?;
        assert!(begin < end);
        Ok(())
    }

    #[test]
    fn one_column_per_backend_in_order_one_mark_per_engine() -> Result<()> {
        let folder = std::env::temp_dir().join(format!("cachet-matrix-{}", std::process::id()));
        std::fs::create_dir_all(&folder)?;
        let run = |backend: &str, browser: &str, order: u64, outcome: &str| {
            let rows = serde_json::json!([
                {"client": "fetch", "story": "cached", "outcome": "passed"},
                {"client": "urql", "story": "cached", "outcome": outcome},
            ]);
            let run =
                serde_json::json!({"backend": backend, "browser": browser, "order": order, "rows": rows});
            std::fs::write(folder.join(format!("{backend}-{browser}.json")), run.to_string())
        };
        run("todo-backend", "chromium", 3, "left out")?;
        run("apollo", "chromium", 0, "passed")?;
        run("apollo", "firefox", 0, "failed")?;
        run("apollo", "webkit", 0, "passed")?;
        let table = render(&folder);
        std::fs::remove_dir_all(&folder)?;
        assert_eq!(
            table?,
            "| client | story | Apollo Server 5 (defaults) | example backend (async-graphql) |\n\
             |---|---|---|---|\n\
             | fetch | cached | ✓ ✓ ✓ | ✓ · · |\n\
             | urql | cached | ✓ ✗ ✓ | — · · |\n"
        );
        Ok(())
    }
}
