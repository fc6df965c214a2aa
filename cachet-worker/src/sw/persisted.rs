//! Persisted queries, as the worker carries them out for the endpoints of
//! `features.graphql.persistedQueries`. Every decision (the first way a query goes, how an answer is read,
//! what the endpoint's memory learns, what is sent next) is the core's
//! ([`cachet_core::graphql::persisted`]); here the requests are built and sent, and each endpoint's
//! [`Memory`] is kept: in this instance's memory, shared by every tab's requests (a negotiation updates
//! it in place, so two at once lose nothing), and in the database's `meta` store under
//! `persisted <endpoint URL>` (`Memory::to_text`), read by the instance's first hashed query and written
//! when it changes (before the answer is given: a worker stopped right after still knows it). A record that cannot be
//! read is reported on the console and started again empty: it costs one round trip per query.

#[cfg(feature = "persisted-queries")]
pub(crate) use negotiation::send;

/// A query to an endpoint whose queries go as persisted-query hashes (made only with the
/// `persisted-queries` feature: without it, the router makes none).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "persisted-queries"), allow(dead_code))]
pub(crate) struct Persisted {
    /// The endpoint's URL, without a search: the memory's key, and the GET's base.
    pub(crate) endpoint: String,
    /// `features.graphql.persistedQueries.getMaxUrlLength`.
    pub(crate) get_max_url_length: usize,
}

/// The negotiation, linked only with the `persisted-queries` feature.
#[cfg(feature = "persisted-queries")]
mod negotiation {
    use std::cell::RefCell;

    use cachet_core::graphql::persisted::{next, verdict, Memory, Next, Outgoing, Prepared};
    use cachet_core::protocol::storage::META;
    use cachet_idb::TransactionMode;
    use wasm_bindgen::JsValue;
    use web_sys::{Request, RequestInit, Response};

    use super::Persisted;
    use crate::error::{commit, idb};
    use crate::sw::database;
    use crate::sw::http::{fetch_network, sent_headers, without_cachet_headers};
    use crate::Error;

    thread_local! {
        // Read from the database once per instance (a stopped worker's next instance reads it again). A list:
        // an app has a handful of endpoints (and a `HashMap` would cost the worker its hasher).
        static MEMORIES: RefCell<Vec<(String, Memory)>> = const { RefCell::new(Vec::new()) };
    }

    /// Sends the query whose body is `body` (the page's `request`'s) as the core's negotiation says, with the
    /// plugins' `headers` set on every send; returns the last answer (as [`fetch_network`] does). A body that
    /// is not a query with its text goes as it is.
    pub(crate) async fn send(
        request: &Request,
        body: &[u8],
        headers: &[(String, String)],
        persisted: &Persisted,
    ) -> Result<(Response, Vec<u8>, Response), Error> {
        let endpoint = persisted.endpoint.as_str();
        let Some(query) = Prepared::new(body) else {
            return fetch_network(&without_cachet_headers(request, Some(body), headers)?).await;
        };
        let (mut way, mut outgoing) =
            query.first(&memory(endpoint).await, endpoint, persisted.get_max_url_length);
        // Ends: every `Next::Send` moves forward through `Way`'s four ways (the core's test shows it).
        loop {
            let sent = match outgoing.take() {
                None => without_cachet_headers(request, Some(body), headers)?,
                Some(Outgoing::Post(text)) => {
                    without_cachet_headers(request, Some(text.as_bytes()), headers)?
                }
                Some(Outgoing::Get(url)) => get_request(request, &url, headers)?,
            };
            let (response, bytes, answer) = fetch_network(&sent).await?;
            let answered = verdict(response.status(), &bytes);
            let (then, learnt) = with_memory(endpoint, Memory::default, |memory| {
                let before = memory.clone();
                let then = next(memory, &query.hash, way, answered);
                (then, (*memory != before).then(|| memory.to_text()))
            });
            if let Some(text) = learnt {
                if let Err(error) = save(endpoint, &text).await {
                    let line = format!("cachet: persisted queries of {endpoint}: not kept ({error})");
                    web_sys::console::warn_1(&line.into());
                }
            }
            match then {
                Next::Done => return Ok((response, bytes, answer)),
                Next::Send(then) => (way, outgoing) = (then, query.outgoing(then, endpoint)),
            }
        }
    }

    /// Runs `change` on this instance's memory of `endpoint`, made with `absent` when it has none.
    fn with_memory<T>(
        endpoint: &str,
        absent: impl FnOnce() -> Memory,
        change: impl FnOnce(&mut Memory) -> T,
    ) -> T {
        MEMORIES.with(|memories| {
            let mut memories = memories.borrow_mut();
            let index = match memories.iter().position(|(url, _)| url == endpoint) {
                Some(index) => index,
                None => {
                    memories.push((endpoint.to_owned(), absent()));
                    memories.len() - 1
                }
            };
            change(&mut memories[index].1)
        })
    }

    /// The memory of `endpoint`: this instance's, else the database's, else empty.
    async fn memory(endpoint: &str) -> Memory {
        let known = MEMORIES.with(|memories| {
            memories.borrow().iter().find(|(url, _)| url == endpoint).map(|(_, memory)| memory.clone())
        });
        if let Some(memory) = known {
            return memory;
        }
        let stored = match read(endpoint).await {
            Ok(text) => text.map_or(Ok(Memory::default()), |text| Memory::from_text(&text)),
            Err(error) => Err(error.to_string()),
        };
        let stored = stored.unwrap_or_else(|error| {
            let line = format!("cachet: persisted queries of {endpoint}: {error}; starting again");
            web_sys::console::warn_1(&line.into());
            Memory::default()
        });
        // Another request may have read and changed it meanwhile: its memory is kept.
        with_memory(endpoint, || stored, |memory| memory.clone())
    }

    fn key(endpoint: &str) -> JsValue {
        JsValue::from_str(&["persisted ", endpoint].concat())
    }

    async fn read(endpoint: &str) -> Result<Option<String>, Error> {
        let transaction = database::transaction(&[META], TransactionMode::Readonly).await?;
        let store = transaction.store(META).map_err(idb("meta store"))?;
        let value = store.get(key(endpoint)).await.map_err(idb("read persisted queries"))?;
        Ok(value.map(|value| value.as_string().unwrap_or_default()))
    }

    async fn save(endpoint: &str, text: &str) -> Result<(), Error> {
        let transaction = database::transaction(&[META], TransactionMode::Readwrite).await?;
        let store = transaction.store(META).map_err(idb("meta store"))?;
        store
            .put(&JsValue::from_str(text), Some(&key(endpoint)))
            .await
            .map_err(idb("keep persisted queries"))?;
        commit(transaction, "keep persisted queries").await
    }

    /// A GET of `url` with `request`'s headers as any send has them ([`sent_headers`]), credentials and
    /// mode. Its `Content-Type` is kept: Apollo Server's CSRF prevention (on by default) refuses a GET
    /// that carries no header a simple form could not send.
    fn get_request(request: &Request, url: &str, set: &[(String, String)]) -> Result<Request, Error> {
        let headers = sent_headers(request, set)?;
        let init = RequestInit::new();
        init.set_method("GET");
        init.set_headers(&headers);
        init.set_credentials(request.credentials());
        if request.mode() != web_sys::RequestMode::Navigate {
            init.set_mode(request.mode());
        }
        Request::new_with_str_and_init(url, &init).map_err(|e| Error::js("new Request", e))
    }
}
