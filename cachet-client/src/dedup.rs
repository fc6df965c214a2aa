//! Deduplication: concurrent identical reads share one request.
//!
//! Two reads are identical when their partition, strategy, cache key (the URL of a GET, the body hash of
//! a GraphQL query) and tags are: see [`crate::pipeline`]. The first caller's future runs; callers that
//! arrive while it runs await the same outcome. Once it settles the key is free again, so a later call
//! sends again (or reads the cache). Mutations are never deduplicated.

use std::cell::RefCell;
use std::collections::HashMap;

use futures::future::{FutureExt, LocalBoxFuture, Shared};

use crate::http::HttpResponse;
use crate::Error;

/// A request's answer and whether it came from a cache.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub(crate) response: HttpResponse,
    pub(crate) from_cache: bool,
}

impl Answer {
    /// Whether it is a stored answer given under stale-if-error (`X-Cachet-Stale`, set by either edge).
    pub(crate) fn stale(&self) -> bool {
        cachet_core::protocol::headers::marker_is_set(
            self.response.header(cachet_core::protocol::headers::STALE_HEADER),
        )
    }
}

type Flight = Shared<LocalBoxFuture<'static, Result<Answer, Error>>>;

/// The reads in flight, by key.
#[derive(Default)]
pub(crate) struct InFlight {
    flights: RefCell<HashMap<String, Flight>>,
}

impl InFlight {
    /// Joins the read in flight under `key`, or starts `start()` there.
    pub(crate) async fn run(
        &self,
        key: String,
        start: impl FnOnce() -> LocalBoxFuture<'static, Result<Answer, Error>>,
    ) -> Result<Answer, Error> {
        let existing = self.flights.borrow().get(&key).cloned();
        let flight = match existing {
            Some(flight) => flight,
            None => {
                let flight = start().shared();
                self.flights.borrow_mut().insert(key.clone(), flight.clone());
                flight
            }
        };
        let outcome = flight.clone().await;
        // Every caller tries to free the key (the first may have been dropped), but only for this flight.
        let mut flights = self.flights.borrow_mut();
        if flights.get(&key).is_some_and(|current| current.ptr_eq(&flight)) {
            flights.remove(&key);
        }
        outcome
    }

    /// How many reads are in flight.
    pub(crate) fn len(&self) -> usize {
        self.flights.borrow().len()
    }
}
