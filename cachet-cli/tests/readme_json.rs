//! Every JSON block of the README (and of the guides in `docs/`) is a config the reader accepts (issue
//! 36: snippets a user copies must work as written).
#![allow(clippy::unwrap_used)]

use std::path::Path;

use cachet_core::config::Config;

/// The ```json blocks of `text`, with the line each starts on.
fn json_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        if line.trim() == "```json" {
            let body: Vec<&str> =
                lines.by_ref().map(|(_, line)| line).take_while(|line| line.trim() != "```").collect();
            blocks.push((number + 1, body.join("\n")));
        }
    }
    blocks
}

#[test]
fn every_json_snippet_is_read_by_the_config_reader() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("README.md")];
    if let Ok(guides) = std::fs::read_dir(root.join("docs")) {
        files.extend(
            guides
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|extension| extension == "md")),
        );
    }
    let mut read = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, block) in json_blocks(&text) {
            if let Err(error) = Config::from_json_str(&block) {
                panic!("{}:{line}: the config reader refuses this snippet: {error}\n{block}", file.display());
            }
            read += 1;
        }
    }
    assert!(read >= 1, "the README has a JSON snippet: a test that reads none proves nothing");
}

#[test]
fn a_broken_snippet_is_caught() {
    let blocks = json_blocks("text\n```json\n\"features\": {}\n```\n");
    assert_eq!(blocks.len(), 1);
    assert!(Config::from_json_str(&blocks[0].1).is_err(), "a fragment is not a config");
}

/// The leaf keys of `value` (objects walked, anything else a leaf), dotted.
fn leaf_keys(prefix: &str, value: &serde_json::Value, keys: &mut Vec<String>) {
    match value.as_object() {
        Some(object) => {
            for (key, inner) in object {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                leaf_keys(&path, inner, keys);
            }
        }
        None => keys.push(prefix.to_owned()),
    }
}

/// `docs/configuration.md` names every key the config reader knows (issue 36: a configuration reference
/// with every key): its first JSON block sets every key, and each key the reader writes back for it is in
/// the page's table, as itself or as the rule it belongs to (`features.auth.failure.header` for its
/// `name`).
#[test]
fn the_configuration_reference_names_every_key() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let page = std::fs::read_to_string(root.join("docs/configuration.md")).unwrap();
    let (_, every_key) = json_blocks(&page).into_iter().next().expect("a JSON block setting every key");
    let config = Config::from_json_str(&every_key).unwrap();
    let written = serde_json::to_value(&config).unwrap();
    let mut keys = Vec::new();
    leaf_keys("", &written, &mut keys);
    assert!(keys.len() >= 25, "{keys:?}");
    let named = |key: &str| page.contains(&format!("| `{key}` |"));
    let missing: Vec<&String> = keys
        .iter()
        .filter(|key| !named(key) && !key.rsplit_once('.').is_some_and(|(rule, _)| named(rule)))
        .collect();
    assert!(missing.is_empty(), "docs/configuration.md does not name {missing:?}");
    // And the example sets every key: none is left at a default the reader would fill in silently.
    let mut set = Vec::new();
    leaf_keys("", &serde_json::from_str(&every_key).unwrap(), &mut set);
    let unset: Vec<&String> = keys.iter().filter(|key| !set.contains(key)).collect();
    assert!(unset.is_empty(), "the example of docs/configuration.md leaves out {unset:?}");
}
