//! What a deployed cachet app serves at its root, one list for everyone who checks it: `cachet doctor`
//! (in a built `dist/`), and `<CachetProvider>` when the Service Worker fails to register or to install
//! (it fetches each file and names the ones that do not answer 200).

/// One file the Service Worker or the provider loads, by URL path from the site's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedFile {
    /// Its path, without the leading `/` (as in `dist/`).
    pub path: &'static str,
    /// Who loads it.
    pub loaded_by: &'static str,
    /// What writes it, so that a missing one says how to fix it.
    pub made_by: &'static str,
}

/// The Service Worker's files, in the order the shim loads them.
pub const SERVICE_WORKER_FILES: [ServedFile; 5] = [
    ServedFile {
        path: "service-worker.js",
        loaded_by: "navigator.serviceWorker.register",
        made_by: "`cachet generate`, copied by index.html's `<link data-trunk rel=\"copy-file\" href=\"service-worker.js\" />`",
    },
    ServedFile {
        path: "cachet-sw-config.js",
        loaded_by: "service-worker.js (importScripts)",
        made_by: "`cachet generate`, copied by index.html's `<link data-trunk rel=\"copy-file\" href=\"cachet-sw-config.js\" />`",
    },
    ServedFile {
        path: "cachet-build.js",
        loaded_by: "service-worker.js (importScripts)",
        made_by: "the post-build hook `cachet init --trunk` adds to Trunk.toml",
    },
    ServedFile {
        path: "cachet-sw.js",
        loaded_by: "service-worker.js (importScripts)",
        made_by: "trunk, from index.html's `<link data-trunk rel=\"rust\" data-bin=\"cachet-sw\" data-type=\"worker\" />`",
    },
    ServedFile {
        path: "cachet-sw_bg.wasm",
        loaded_by: "service-worker.js (the engine)",
        made_by: "trunk, from index.html's `<link data-trunk rel=\"rust\" data-bin=\"cachet-sw\" data-type=\"worker\" />`",
    },
];

/// The agent's files, loaded by `<CachetProvider>` in its default `AgentMode::Worker`.
pub const AGENT_FILES: [ServedFile; 2] = [
    ServedFile {
        path: "cachet-agent.js",
        loaded_by: "<CachetProvider> (new Worker)",
        made_by: "trunk, from index.html's `<link data-trunk rel=\"rust\" data-bin=\"cachet-agent\" data-type=\"worker\" />`",
    },
    ServedFile {
        path: "cachet-agent_bg.wasm",
        loaded_by: "cachet-agent.js",
        made_by: "trunk, from index.html's `<link data-trunk rel=\"rust\" data-bin=\"cachet-agent\" data-type=\"worker\" />`",
    },
];

/// The wasm of a worker script at `script`: every `.js` replaced by `_bg.wasm` (yew-agent's rule,
/// `cachet-agent.js` → `cachet-agent_bg.wasm`). By hand over bytes: `str::replace` with a text pattern
/// links the two-way string searcher (about 2 KB of a page's wasm) for this one call. Tested against
/// `str::replace`.
pub fn worker_wasm_path(script: &str) -> String {
    let mut wasm = String::with_capacity(script.len() + 8);
    let mut rest = script;
    while let Some(at) = rest.as_bytes().windows(3).position(|window| window == b".js") {
        // `.` is ASCII: `at` and `at + 3` are character boundaries.
        wasm.push_str(rest.get(..at).unwrap_or_default());
        wasm.push_str("_bg.wasm");
        rest = rest.get(at + 3..).unwrap_or_default();
    }
    wasm.push_str(rest);
    wasm
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The oracle: `str::replace`, on texts made of `.js` (often several), its pieces and others.
        #[test]
        fn the_wasm_path_is_what_str_replace_gives(
            pieces in prop::collection::vec(prop::sample::select(vec![".js", ".", "j", "s", "js", "/", "a", "\u{e9}", "\u{1f600}"]), 0..12)
        ) {
            let script = pieces.concat();
            prop_assert_eq!(super::worker_wasm_path(&script), script.replace(".js", "_bg.wasm"));
        }
    }

    #[test]
    fn the_agents_wasm_sits_next_to_its_script() {
        assert_eq!(
            super::worker_wasm_path("https://a.test/x/cachet-agent.js"),
            "https://a.test/x/cachet-agent_bg.wasm"
        );
    }
}
