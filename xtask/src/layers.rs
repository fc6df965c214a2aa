//! A crate's module graph, read from its source: which of its top-level modules names which. A module
//! names another by a `crate::` path in its code (comments left out), directly (`crate::link::container`)
//! or through a name the crate root re-exports (`crate::{Client, Error}`: the module it comes from). A
//! module spread over a folder (`session/`) is one node; a file the root mounts under another name
//! (`#[path = "session_off.rs"] mod session;`) is that module.
//!
//! The tests hold every crate to no cycle among its modules, and the worker's engine (`sw/`, whose
//! parts name each other `super::x`) to none among its parts (issue 33: the client's parts never reach
//! back to the client that holds them; one module's rule never needs another's that needs it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module and the modules it names.
pub(crate) type Graph = BTreeMap<String, BTreeSet<String>>;

/// The code of `text` without its comments (`//` to the end of the line; `/* */` blocks), string
/// literals kept whole so that a `//` inside one ends nothing.
fn code_of(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            code.push(c);
            match c {
                '\\' => code.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                code.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        code.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => code.push(c),
        }
    }
    code
}

/// The first path segment of each item a path starting with `prefix` (`crate::`, or `super::` inside a
/// module's folder) names: one for `crate::a::b`, one per item of `crate::{a::b, C}`.
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let ident =
        |rest: &str| -> String { rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        // `$crate::` in a macro, or a longer identifier ending in `crate` (or `super`).
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += i32::from(c == '{') - i32::from(c == '}');
                    depth == 0
                })
                .map_or(group.len(), |(index, _)| index);
            let mut item_depth = 0;
            let mut start = 0;
            for (index, c) in group[..end].char_indices().chain([(end, ',')]) {
                match c {
                    '{' => item_depth += 1,
                    '}' => item_depth -= 1,
                    ',' if item_depth == 0 => {
                        let name = ident(group[start..index].trim_start());
                        if !name.is_empty() {
                            names.push(name);
                        }
                        start = index + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// Whether `name` is a plain identifier (not a macro's `$name`).
fn is_ident(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The module graph of the crate whose sources are in `src` (its root is `lib.rs`, or `main.rs` for a
/// binary).
pub(crate) fn graph(src: &Path) -> std::io::Result<Graph> {
    let root = if src.join("lib.rs").exists() { "lib.rs" } else { "main.rs" };
    graph_of(src, root, &["crate::"])
}

/// The graph of the modules declared in `src`'s `root` file and kept in `src` (a crate's `src/` and
/// `lib.rs`, or a module's folder and its `mod.rs`), naming each other by a path starting with one of
/// `prefixes`.
fn graph_of(src: &Path, root_file: &str, prefixes: &[&str]) -> std::io::Result<Graph> {
    let root = code_of(&std::fs::read_to_string(src.join(root_file))?);
    // The modules the root declares, and the files mounted under another name.
    let mut modules = BTreeSet::new();
    let mut mounted = BTreeMap::new();
    let mut path_attribute = None;
    // Inside a macro's block (`parts! { engine; store; }`, as the worker's `sw` declares its parts), a
    // lone `name;` declares a module.
    let mut in_macro = false;
    for line in root.lines().map(str::trim) {
        if in_macro {
            in_macro = line != "}";
            if let Some(name) = line.strip_suffix(';').filter(|name| is_ident(name)) {
                modules.insert(name.to_owned());
            }
            continue;
        }
        in_macro = line.ends_with("! {");
        if let Some(path) = line.strip_prefix("#[path = \"").and_then(|rest| rest.strip_suffix("\"]")) {
            path_attribute = Some(path.trim_end_matches(".rs").to_owned());
            continue;
        }
        let declared = line.strip_prefix("pub ").unwrap_or(line);
        let declared = declared.strip_prefix("pub(crate) ").unwrap_or(declared);
        if let Some(name) = declared
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
            .filter(|name| is_ident(name))
        {
            modules.insert(name.to_owned());
            if let Some(file) = path_attribute.take() {
                mounted.insert(file, name.to_owned());
            }
        } else if !line.starts_with("#[") {
            path_attribute = None;
        }
    }
    // The names the root re-exports, by the module they come from.
    let mut reexported = BTreeMap::new();
    for statement in root.split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else { continue };
        let module = used.split("::").next().unwrap_or_default().trim();
        if !modules.contains(module) {
            continue;
        }
        let items = used[module.len()..].trim_start_matches("::");
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.rsplit("::").next().unwrap_or_default().trim();
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                reexported.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    let mut graph: Graph = modules.iter().map(|module| (module.clone(), BTreeSet::new())).collect();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                files.push(entry?.path());
            }
            continue;
        }
        let relative = path.strip_prefix(src).unwrap_or(&path);
        let Some(first) = relative.components().next().and_then(|part| part.as_os_str().to_str()) else {
            continue;
        };
        let stem = first.trim_end_matches(".rs");
        let module = mounted.get(stem).cloned().unwrap_or_else(|| stem.to_owned());
        if !modules.contains(&module) || path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&path)?);
        for name in prefixes.iter().flat_map(|prefix| named_after(&code, prefix)) {
            let target = if modules.contains(&name) { Some(&name) } else { reexported.get(&name) };
            if let Some(target) = target.filter(|target| **target != module) {
                graph.entry(module.clone()).or_default().insert(target.clone());
            }
        }
    }
    Ok(graph)
}

/// A cycle of `graph` (its modules in order, the first again at the end), if it has one.
pub(crate) fn cycle(graph: &Graph) -> Option<Vec<String>> {
    // Depth first; `stack` is the path from the current root, `done` what is known to lead to no cycle.
    fn visit(
        graph: &Graph,
        module: &str,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|seen| seen == module) {
            let mut found = stack[at..].to_vec();
            found.push(module.to_owned());
            return Some(found);
        }
        if done.contains(module) {
            return None;
        }
        stack.push(module.to_owned());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(found) = visit(graph, next, stack, done) {
                return Some(found);
            }
        }
        stack.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_src(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
    }

    #[test]
    fn paths_after_crate_are_read_from_code_only() {
        let code = code_of(
            "use crate::{a::B, c, d::{E, F}};\n// crate::comment\nlet x = \"// crate::in_string\"; \
             crate::g::h(); $crate::macro_only; mycrate::no;\n/* crate::block */",
        );
        assert_eq!(named_after(&code, "crate::"), ["a", "c", "d", "in_string", "g"]);
    }

    #[test]
    fn a_cycle_is_found_and_named() {
        let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")];
        let mut graph = Graph::new();
        for (from, to) in edges {
            graph.entry(from.to_owned()).or_default().insert(to.to_owned());
        }
        assert_eq!(cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
        graph.get_mut("c").map(|next| next.remove("a"));
        assert_eq!(cycle(&graph), None);
    }

    /// The page client's parts (settings, transport and its link, the event hub, the session) never name
    /// the client, nor a flow that spans them: no module of the crate reaches back (issue 33).
    #[test]
    fn the_page_client_has_no_module_cycle() -> std::io::Result<()> {
        let graph = graph(&crate_src("cachet-client"))?;
        assert!(graph.get("client").is_some_and(|named| named.contains("session")), "{graph:#?}");
        assert_eq!(cycle(&graph), None, "{graph:#?}");
        for part in ["settings", "transport", "link", "hub", "session"] {
            let named = &graph[part];
            assert!(!named.contains("client") && !named.contains("pipeline"), "{part} names {named:?}");
        }
        Ok(())
    }

    #[test]
    fn the_core_has_no_module_cycle() -> std::io::Result<()> {
        let graph = graph(&crate_src("cachet-core"))?;
        assert!(graph.len() > 10, "{graph:#?}");
        assert_eq!(cycle(&graph), None, "{graph:#?}");
        Ok(())
    }

    /// No crate has a cycle among its modules, nor the worker's engine (`sw/`) among its parts (issue 33
    /// item 3).
    #[test]
    fn no_crate_has_a_module_cycle() -> std::io::Result<()> {
        let crates =
            ["cachet-worker", "cachet-yew", "cachet-api", "cachet-cli", "cachet-idb", "cachet-kit", "xtask"];
        for name in crates {
            let graph = graph(&crate_src(name))?;
            assert_eq!(cycle(&graph), None, "{name}: {graph:#?}");
        }
        let sw = graph_of(&crate_src("cachet-worker").join("sw"), "mod.rs", &["super::", "crate::sw::"])?;
        assert!(sw.len() > 20 && sw["engine"].contains("store"), "{sw:#?}");
        assert_eq!(cycle(&sw), None, "cachet-worker's sw: {sw:#?}");
        Ok(())
    }
}
