//! The one error type of `cachet-client`.

use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

/// Everything that can go wrong in the page client. `Clone + PartialEq` so that Yew state can hold it;
/// raw `JsValue`s never leave the crate: a thrown JavaScript value becomes [`Error::Js`] with its name and
/// message.
///
/// A GraphQL call says which of its four stages failed, as urql's `CombinedError` does: [`Error::Network`]
/// (no answer), [`Error::Http`] (an answer with a non-2xx status), [`Error::Graphql`] (a 2xx answer whose
/// `errors` is non-empty) or [`Error::Decode`] (a body that is not what was expected). An auth failure that
/// the silent refresh could not fix is [`Error::Unauthorized`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request got no answer: `fetch` rejected (offline, DNS, CORS, server down).
    #[error("network error for {url}: {message}")]
    Network {
        /// The request URL.
        url: String,
        /// The browser's message.
        message: String,
    },
    /// The server answered with a status outside 200–299.
    #[error("HTTP {status} from {url}")]
    Http {
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The body as text (at most 2 KiB, cut on a character boundary), for diagnostics.
        body: String,
    },
    /// A `queueOffline` mutation that could not be queued: the Service Worker answered 507 with
    /// `X-Cachet-Not-Queued` (the queue is full, the browser's storage is full, or the queue could not
    /// be written: nothing was kept and nothing was sent; or the worker is built without the queue and
    /// the send failed). Retry it later, or tell the user.
    #[error("not queued: {url} ({})", reason.as_str())]
    NotQueued {
        /// The request URL.
        url: String,
        /// Why: `queue-full`, `storage-full`, `unwritable` or `queue-not-built`.
        reason: cachet_core::machines::queue::NotQueued,
    },
    /// The answer is an auth failure (by `features.auth.failure` of the config) and refreshing did not
    /// help: there is no session, the refresh was refused, or the retry failed again.
    #[error("not authenticated: {url} answered {status}")]
    Unauthorized {
        /// The request URL.
        url: String,
        /// The HTTP status of the failing answer.
        status: u16,
    },
    /// A GraphQL result carried a non-empty `errors` list.
    #[error("GraphQL errors: {}", graphql_messages(errors))]
    Graphql {
        /// The `errors` entries as the server sent them (each usually has `message`, `path`, `extensions`).
        errors: Vec<Value>,
        /// The partial `data`, when the server sent any.
        data: Option<Value>,
    },
    /// A body could not be decoded: not JSON, or not of the shape asked for.
    #[error("cannot decode {what}: {message}")]
    Decode {
        /// What was being decoded (for example `the GraphQL result of /graphql`).
        what: String,
        /// The decoder's message.
        message: String,
    },
    /// The Service Worker refused a message (`nack`), with its own reason.
    #[error("the service worker refused {asked}: {reason}")]
    ServiceWorkerRefused {
        /// The message's `type` (for example `clear-all`).
        asked: String,
        /// The worker's reason.
        reason: String,
    },
    /// The Service Worker did not answer a message within the client's `service_worker_timeout`.
    #[error("the service worker did not answer {asked} within {waited_ms} ms")]
    ServiceWorkerSilent {
        /// The message's `type`.
        asked: String,
        /// How long the page waited.
        waited_ms: u64,
    },
    /// The Service Worker answered a message with a message of another kind.
    #[error("the service worker answered {asked} with {answered}")]
    ServiceWorkerAnswer {
        /// The message's `type`.
        asked: String,
        /// The answer's `type`.
        answered: String,
    },
    /// The call needs a cachet Service Worker, and none serves this page yet.
    #[error("no cachet Service Worker serves this page yet")]
    NoServiceWorker,
    /// The config the Service Worker answered with (`config-request`) is not one this client reads.
    #[error("the service worker's config: {0}")]
    ServiceWorkerConfig(cachet_core::Error),
    /// A cachet rule refused the input: the config, a tag, a GraphQL document (see [`cachet_core::Error`]).
    #[error(transparent)]
    Core(#[from] cachet_core::Error),
    /// A tag given in a call's `tags` or `invalidate` option contains a comma (tags travel as one
    /// comma-separated header).
    #[error("{option}: a tag cannot contain a comma: {}", cachet_core::json::quoted(tag))]
    TagWithComma {
        /// The option (`tags` or `invalidate`).
        option: &'static str,
        /// The tag.
        tag: String,
    },
    /// `features.auth.type` is `custom`, and the client was built without the app's `AuthAdapter`.
    #[error("features.auth.type is custom: give the client your AuthAdapter (ClientBuilder::adapter)")]
    NoAuthAdapter,
    /// A call's `endpoint_index` is past the configured GraphQL endpoints.
    #[error("endpoint index {index} is past the {} configured GraphQL endpoint(s)", endpoints.len())]
    NoSuchEndpoint {
        /// The index asked for.
        index: usize,
        /// The configured endpoints (`features.graphql.endpoints`).
        endpoints: Vec<String>,
    },
    /// The VAPID public key given to `subscribe_push` is not one.
    #[error(transparent)]
    VapidKey(#[from] cachet_core::protocol::push::VapidKeyError),
    /// A token refresh did not finish within the client's `refresh_timeout`: the waiting requests get
    /// their auth failure, and the user stays signed in.
    #[error("token refresh took longer than {waited_ms} ms")]
    RefreshTimedOut {
        /// How long the page waited.
        waited_ms: u64,
    },
    /// Another tab refreshed the token, and its new token did not reach this tab within the client's
    /// `peer_wait`.
    #[error("another tab refreshed the token, but it did not arrive here within {waited_ms} ms")]
    RefreshLost {
        /// How long the page waited.
        waited_ms: u64,
    },
    /// The client runs outside a page (no `window`), or the browser lacks an API it needs.
    #[error("{api} is missing: cachet-client runs in a page of a current browser")]
    Unsupported {
        /// The missing API (for example `window`, `navigator.locks.request`).
        api: &'static str,
    },
    /// An argument of the bundler-free API (`window.cachet`) is not of the shape asked for.
    #[error("{what}: expected {expected}, got {got}")]
    InvalidArgument {
        /// The argument (for example `options.tags`, `configure: auth.type`).
        what: String,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        got: String,
    },
    /// The bundler-free API was called before `cachet.configure(...)`.
    #[error("cachet is not configured: call cachet.configure(...) first")]
    NotConfigured,
    /// The call needs a feature that is off in the config the client runs on (which follows the Service
    /// Worker's): it is refused rather than sent without what it asked for (an `auth: true` query sent
    /// unmarked could be cached where another user would read it).
    #[error(
        "{call} needs {key} on in cachet.config.json ({enable}), but the config this page runs on has it off"
    )]
    FeatureOff {
        /// The call and option that needs it, e.g. `queryGql(…, { auth: true })`.
        call: &'static str,
        /// The config key, e.g. `features.auth.enabled`.
        key: &'static str,
        /// How to turn it on, e.g. `cachet add auth, then cachet generate`.
        enable: &'static str,
    },
    /// A call needs a part of cachet this build was compiled without: a cargo feature, which no config
    /// can turn on. Its config key is a separate switch ([`Error::FeatureOff`]); both must be on.
    #[error(
        "{call} needs the cargo feature `{feature}`, which this build of cachet was compiled without ({how}); the config key features.{feature}.enabled is a separate switch, and must be on too"
    )]
    NotBuilt {
        /// The call, or what asked for it, e.g. `fetchWithCache(…, { auth: true })`.
        call: &'static str,
        /// The cargo feature, e.g. `auth`.
        feature: &'static str,
        /// Where to turn it on, e.g. ``the `auth` feature of cachet-kit (`cachet add auth` adds it)``.
        how: &'static str,
    },
    /// Server push was asked for with bearer or custom auth: SPEC §5.8 allows it with cookie auth only,
    /// because the Service Worker handles a push with no page open and holds no token.
    #[error("{}", cachet_core::config::PushRefusal::NeedsCookieAuth(*auth_type))]
    PushNeedsCookieAuth {
        /// The auth type of the config in force.
        auth_type: cachet_core::config::AuthType,
    },
    /// The browser could not subscribe to push (or read or end its subscription): no Service Worker
    /// registration, no Push API, notification permission denied, or no push service reachable (as in
    /// headless Chromium). `name` and `message` are the browser's.
    #[error("push is unavailable in this browser: {name}: {message}")]
    PushUnavailable {
        /// The JavaScript error's `name` (for example `AbortError`, `NotAllowedError`).
        name: String,
        /// The JavaScript error's `message`.
        message: String,
    },
    /// IndexedDB failed while reading or writing the persisted (non-secret) auth record.
    #[error("IndexedDB {operation} failed: {message}")]
    Storage {
        /// What was being done.
        operation: &'static str,
        /// The error's message.
        message: String,
    },
    /// A browser API threw or rejected.
    #[error("{operation} failed: {name}: {message}")]
    Js {
        /// What cachet was doing (for example `new BroadcastChannel`).
        operation: &'static str,
        /// The JavaScript error's `name` (for example `TypeError`).
        name: String,
        /// The JavaScript error's `message`.
        message: String,
    },
}

impl Error {
    /// Wraps a thrown JavaScript value, keeping its name and message.
    pub fn js(operation: &'static str, value: JsValue) -> Self {
        let (name, message) = js_name_and_message(&value);
        Error::Js { operation, name, message }
    }

    /// Which stage of a call failed, as a short word the bundler-free API exposes as `error.kind`:
    /// `network`, `http`, `not-queued`, `unauthorized`, `graphql`, `decode`, `service-worker`, `invalid`,
    /// `refresh`, `feature-off`, `not-built`, `push-needs-cookie-auth`, `push-unavailable`, `storage` or
    /// `browser`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Network { .. } => "network",
            Error::Http { .. } => "http",
            Error::NotQueued { .. } => "not-queued",
            Error::Unauthorized { .. } => "unauthorized",
            Error::Graphql { .. } => "graphql",
            Error::Decode { .. } => "decode",
            Error::ServiceWorkerRefused { .. }
            | Error::ServiceWorkerSilent { .. }
            | Error::ServiceWorkerAnswer { .. }
            | Error::ServiceWorkerConfig(_)
            | Error::NoServiceWorker => "service-worker",
            Error::Core(_)
            | Error::TagWithComma { .. }
            | Error::NoAuthAdapter
            | Error::NoSuchEndpoint { .. }
            | Error::VapidKey(_)
            | Error::InvalidArgument { .. }
            | Error::NotConfigured => "invalid",
            Error::RefreshTimedOut { .. } | Error::RefreshLost { .. } => "refresh",
            Error::Unsupported { .. } => "browser",
            Error::FeatureOff { .. } => "feature-off",
            Error::NotBuilt { .. } => "not-built",
            Error::PushNeedsCookieAuth { .. } => "push-needs-cookie-auth",
            Error::PushUnavailable { .. } => "push-unavailable",
            Error::Storage { .. } => "storage",
            Error::Js { .. } => "browser",
        }
    }
}

/// The `name` and `message` of a thrown JavaScript value (an `Error`, a `DOMException`, or anything else).
pub(crate) fn js_name_and_message(value: &JsValue) -> (String, String) {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return (String::from(error.name()), String::from(error.message()));
    }
    let field = |name: &str| js_sys::Reflect::get(value, &JsValue::from_str(name)).ok()?.as_string();
    let name = field("name").unwrap_or_else(|| "Error".to_owned());
    let message = field("message").or_else(|| value.as_string()).unwrap_or_else(|| format!("{value:?}"));
    (name, message)
}

/// At most `limit` bytes of `text`, cut on a character boundary.
pub(crate) fn truncate(text: &str, limit: usize) -> String {
    let mut cut = text.len().min(limit);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    // `get`, not `text[..cut]`: a slice's panic path links its message's formatting (a `char`'s and a
    // range's `Debug`, 3.6 KB of the API's wasm before gzip), though `cut` is a boundary here.
    text.get(..cut).unwrap_or_default().to_owned()
}

fn graphql_messages(errors: &[Value]) -> String {
    let messages: Vec<&str> = errors
        .iter()
        .map(|error| error.get("message").and_then(Value::as_str).unwrap_or("(no message)"))
        .collect();
    messages.join("; ")
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    use super::truncate;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    fn truncate_cuts_on_a_character_boundary_at_most_the_limit() {
        assert_eq!(truncate("abcdef", 4), "abcd");
        assert_eq!(truncate("abc", 10), "abc");
        assert_eq!(truncate("", 3), "");
        // "é" is two bytes: a cut inside it steps back before it.
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(truncate("aé", 3), "aé");
        assert_eq!(truncate("😀x", 3), "");
        assert_eq!(truncate("x😀", 5), "x😀");
    }
}
