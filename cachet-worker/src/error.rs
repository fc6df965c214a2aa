//! The one error type of `cachet-worker`.

use wasm_bindgen::{JsCast, JsValue};

/// What went wrong in the worker side. Raw `JsValue`s never leave this crate: they are turned into a
/// typed error carrying the JavaScript error's name and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A browser API threw or rejected.
    #[error("{operation} failed: {name}: {message}")]
    Js {
        /// What cachet was doing (for example `cache.put`).
        operation: &'static str,
        /// The JavaScript error's `name` (for example `QuotaExceededError`).
        name: String,
        /// The JavaScript error's `message`.
        message: String,
    },
    /// The network could not be reached (the `fetch` promise rejected).
    #[error("network error for {url}: {message}")]
    Network {
        /// The request URL.
        url: String,
        /// The browser's message.
        message: String,
    },
    /// `cache-only` was asked for and nothing is cached.
    #[error("no cached response for {url}")]
    NotCached {
        /// The request URL.
        url: String,
    },
    /// No page was there to ask for auth (every tab is closed, or none is controlled yet).
    #[error("no page to ask for auth")]
    NoPage,
    /// The page asked for auth did not answer in time.
    #[error("the page did not answer within {waited_ms} ms")]
    PageSilent {
        /// How long the worker waited.
        waited_ms: u64,
    },
    /// A message from a page could not be decoded.
    #[error("unusable message from a page: {0}")]
    Protocol(#[from] cachet_core::protocol::ProtocolError),
    /// A page answered a `refresh-request` with another reply than the one to it.
    #[error("a page answered refresh-request {asked} with another reply")]
    WrongReply {
        /// The request's id.
        asked: u64,
    },
    /// `set-identity` named a partition or a credential the worker cannot keep.
    #[error("set-identity: {0}")]
    Identity(cachet_core::partition::IdentityError),
    /// A page's `hand-over` was refused whole: more entries than
    /// [`cachet_core::handover::MAX_ENTRIES`].
    #[error(
        "hand-over of {count} entries refused: at most {} are taken",
        cachet_core::handover::MAX_ENTRIES
    )]
    HandoverTooLarge {
        /// How many entries it had.
        count: usize,
    },
    /// A dead-letter action named a mutation that is not a dead letter.
    #[error("mutation {id} is not a dead letter")]
    NotADeadLetter {
        /// The mutation's id.
        id: u64,
    },
    /// A dead letter could not go back to the queue: it holds `queue.maxItems` items.
    #[error("the mutation queue is full (queue.maxItems)")]
    QueueFull,
    /// A push's re-fetch was answered with a status outside 200–299.
    #[error("HTTP {status} from {url}")]
    Http {
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The code runs in a context that lacks the API it needs (for example not in a Service Worker).
    #[error("wrong context: {0}")]
    Context(&'static str),
    /// A page or the config asked for something this worker was built without: the app's `Cargo.toml`
    /// must turn on the named cargo feature (of `cachet-kit`, or of `cachet-worker` directly).
    #[error("{what} needs the `{feature}` cargo feature of cachet-kit (or cachet-worker), which this worker was built without")]
    NotBuilt {
        /// What was asked for (for example `snapshot-request`).
        what: &'static str,
        /// The cargo feature that links it.
        feature: &'static str,
    },
    /// The start module (`sw::install_start`: the engine's fetch path alone) met work that only the
    /// whole engine does; the shim then leaves the event to the whole engine.
    #[error("{what} is the whole engine's work, not the start module's")]
    NotInStartModule {
        /// What was asked for (for example moving an earlier build's databases in).
        what: &'static str,
    },
    /// The start module (`sw::install_start`) met an auth failure of a request the whole engine would
    /// refresh and retry (auth enabled, the request marked `X-Cachet-Auth`): the refresh-and-retry is not
    /// linked into it, so it leaves the request to the whole engine with the `answer` it got and its
    /// `body`, which the whole engine takes as its first send's answer (it does not send again).
    #[error("an auth failure is refreshed by the whole engine, not the start module")]
    AuthFailureLeft {
        /// The network's answer (its status and headers; its body already read).
        answer: web_sys::Response,
        /// The answer's body.
        body: std::rc::Rc<[u8]>,
    },
    /// A store the start module handed to the whole engine (`sw::store_later`) lacks a field, or holds one
    /// of the wrong kind: nothing is stored.
    #[error("a store handed over by the start module is malformed: field `{field}`")]
    HandedStore {
        /// The field.
        field: &'static str,
    },
    /// The core refused something: for example a stored record (the mutation queue) that does not decode.
    #[error(transparent)]
    Core(#[from] cachet_core::Error),
}

impl Error {
    /// Wraps a thrown JavaScript value, keeping its name and message.
    pub fn js(operation: &'static str, value: JsValue) -> Self {
        let (name, message) = js_name_and_message(&value);
        Error::Js { operation, name, message }
    }
}

/// Waits for `transaction` to commit; `operation` names what it wrote. An aborted transaction is an
/// error, not a success: IndexedDB reports a full storage (`QuotaExceededError`) by aborting the
/// transaction at commit, after every request in it succeeded, and a stopped worker aborts it too.
pub async fn commit(transaction: cachet_idb::Transaction, operation: &'static str) -> Result<(), Error> {
    if transaction.done().await.map_err(idb(operation))? {
        return Ok(());
    }
    let cause = match transaction.error() {
        Some(error) => {
            let (name, message) = js_name_and_message(&error);
            format!("{name}: {message}")
        }
        None => "storage full?".to_owned(),
    };
    Err(Error::Js {
        operation,
        name: "AbortError".to_owned(),
        message: ["the transaction was aborted (", &cause, ")"].concat(),
    })
}

/// Maps an IndexedDB error of `operation` (the browser's `DOMException`) to [`Error::Js`] named
/// `IndexedDBError`, its message the exception's name and message (`QuotaExceededError: ...`).
pub(crate) fn idb(operation: &'static str) -> impl Fn(JsValue) -> Error {
    move |error| {
        let (name, message) = js_name_and_message(&error);
        Error::Js { operation, name: "IndexedDBError".to_owned(), message: [name, message].join(": ") }
    }
}

/// The `name` and `message` of a thrown JavaScript value (an `Error`, a `DOMException`, or anything else).
pub(crate) fn js_name_and_message(value: &JsValue) -> (String, String) {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return (String::from(error.name()), String::from(error.message()));
    }
    let name = js_sys::Reflect::get(value, &JsValue::from_str("name"))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| "Error".to_owned());
    let message = js_sys::Reflect::get(value, &JsValue::from_str("message"))
        .ok()
        .and_then(|v| v.as_string())
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"));
    (name, message)
}

impl From<Error> for JsValue {
    fn from(error: Error) -> JsValue {
        js_sys::Error::new(&error.to_string()).into()
    }
}
