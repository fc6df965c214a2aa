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
