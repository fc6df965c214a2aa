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
