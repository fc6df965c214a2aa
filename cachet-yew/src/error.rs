//! The one error type of `cachet-yew`.

/// What went wrong on the page side. `Clone + PartialEq` so it can live in Yew state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The browser has no Service Worker support (for example an insecure origin).
    #[error("service workers are not available in this browser context")]
    ServiceWorkerUnsupported,
    /// `navigator.serviceWorker.register` rejected.
    #[error("registering the service worker {script} failed: {name}: {message}")]
    Registration {
        /// The script URL passed to `register`.
        script: String,
        /// The JavaScript error's name.
        name: String,
        /// The JavaScript error's message.
        message: String,
    },
}
