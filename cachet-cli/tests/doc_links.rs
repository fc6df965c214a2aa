//! Every relative link of the README and of the guides in `docs/` reaches a file of this repository and,
//! with an anchor, a heading of that file (issue 36: the README's sections moved into `docs/`, and a link
//! to a section that moved is a dead end for the reader).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// GitHub's anchor of a heading: lower case, spaces to `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// The targets of `](target)` links of `text` (outside code blocks), with their line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut in_code = false;
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((number + 1, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    found
}

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    guides.sort();
    files.extend(guides);
    files
}

#[test]
fn every_relative_link_of_the_readme_and_the_guides_reaches_its_file_and_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documents(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let folder = file.parent().unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) =
                target.split_once('#').map_or((target.as_str(), None), |(p, f)| (p, Some(f)));
            let linked = if path.is_empty() { file.clone() } else { folder.join(path) };
            let name = format!("{}:{line}: {target}", file.strip_prefix(&root).unwrap().display());
            let Ok(linked_text) = std::fs::read(&linked) else {
                broken.push(format!("{name}: no such file"));
                continue;
            };
            if let Some(fragment) = fragment {
                let headings = anchors(&String::from_utf8_lossy(&linked_text));
                if !headings.iter().any(|heading| heading == fragment) {
                    broken.push(format!("{name}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 40, "only {checked} links checked: a test that reads none proves nothing");
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(anchor(" Quick start (Yew app)"), "quick-start-yew-app");
    assert_eq!(anchor(" What is stored, and where: decided once"), "what-is-stored-and-where-decided-once");
    assert_eq!(anchor(" What `cachet init --trunk` changes"), "what-cachet-init---trunk-changes");
    assert_eq!(anchor(" Compatibility matrix (SPEC §5.9)"), "compatibility-matrix-spec-59");
    assert_eq!(
        links("see [a](docs/a.md#b) and ![c](c.png)\n```\n[x](y)\n```\n"),
        [(1, "docs/a.md#b".to_owned()), (1, "c.png".to_owned())]
    );
}
