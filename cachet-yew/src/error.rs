//! The one error type of `cachet-yew`.

/// What went wrong on the page side. `Clone + PartialEq` so it can live in Yew state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The browser has no Service Worker support (for example an insecure origin).
    #[error("service workers are not available in this browser context")]
    ServiceWorkerUnsupported,
    /// `navigator.serviceWorker.register` rejected.
    #[error("registering the service worker {script} failed: {name}: {message}{}", not_served(.missing))]
    Registration {
        /// The script URL passed to `register`.
        script: String,
        /// The JavaScript error's name.
        name: String,
        /// The JavaScript error's message.
        message: String,
        /// The files the worker loads that did not answer 200 (`URL: reason`), fetched after the failure.
        missing: Vec<String>,
    },
    /// The browser took the script but the worker did not install (it became `redundant`): its engine
    /// (`cachet-sw.js`, `cachet-sw_bg.wasm`) or one of its scripts did not load.
    #[error("the service worker {script} did not install: its engine did not load{}", not_served(.missing))]
    Install {
        /// The script URL passed to `register`.
        script: String,
        /// The files the worker loads that did not answer 200 (`URL: reason`).
        missing: Vec<String>,
    },
}

/// `; not served: a, b`, or where to look when every file was served.
fn not_served(missing: &[String]) -> String {
    if missing.is_empty() {
        "; every file it loads answered 200: the reason is on the Service Worker's console".to_owned()
    } else {
        format!("; not served: {}", missing.join(", "))
    }
}
