//! Deduplication: concurrent identical reads share one request.
//!
//! Two reads are identical when their partition, strategy, cache key (the URL of a GET, the body hash of
//! a GraphQL query) and tags are: see [`crate::pipeline`]. The first caller's future runs; callers that
//! arrive while it runs await the same outcome. Once it settles the key is free again, so a later call
//! sends again (or reads the cache). Mutations are never deduplicated.

use std::cell::RefCell;

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

/// The reads in flight, by key: a list, not a map (a page has tens of reads out at most, and a
/// `HashMap` of its own key and value links hashbrown's insert, rehash and lookup for them).
#[derive(Default)]
pub(crate) struct InFlight {
    flights: RefCell<Vec<(String, Flight)>>,
}

impl InFlight {
    /// Joins the read in flight under `key`, or starts `start()` there.
    pub(crate) async fn run(
        &self,
        key: String,
        start: impl FnOnce() -> LocalBoxFuture<'static, Result<Answer, Error>>,
    ) -> Result<Answer, Error> {
        let existing =
            self.flights.borrow().iter().find(|(at, _)| *at == key).map(|(_, flight)| flight.clone());
        let flight = match existing {
            Some(flight) => flight,
            None => {
                let flight = start().shared();
                self.flights.borrow_mut().push((key.clone(), flight.clone()));
                flight
            }
        };
        let outcome = flight.clone().await;
        // Every caller tries to free the key (the first may have been dropped), but only for this flight.
        let mut flights = self.flights.borrow_mut();
        if let Some(at) = flights.iter().position(|(at, current)| *at == key && current.ptr_eq(&flight)) {
            drop(flights.swap_remove(at));
        }
        outcome
    }

    /// How many reads are in flight.
    pub(crate) fn len(&self) -> usize {
        self.flights.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::cell::Cell;
    use std::rc::Rc;

    use futures::channel::oneshot;
    use futures::future::join;
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    fn answer(status: u16) -> Answer {
        Answer {
            response: HttpResponse { url: String::new(), status, headers: Vec::new(), body: Vec::new() },
            from_cache: false,
        }
    }

    /// Reads under one key share the first one's run; another key runs on its own; a key is free again
    /// once its read settled, and only the flight that settled frees it.
    #[wasm_bindgen_test]
    async fn identical_reads_share_one_run_and_free_their_key() {
        let flights = InFlight::default();
        let started = Rc::new(Cell::new(0));
        let (release, released) = oneshot::channel::<()>();
        let released = released.shared();
        let start = |status: u16| {
            let (started, released) = (started.clone(), released.clone());
            move || -> LocalBoxFuture<'static, Result<Answer, Error>> {
                started.set(started.get() + 1);
                Box::pin(async move {
                    let _ = released.await;
                    Ok(answer(status))
                })
            }
        };
        let first = flights.run("a".to_owned(), start(200));
        let second = flights.run("a".to_owned(), start(500));
        let other = flights.run("b".to_owned(), start(201));
        let both = join(join(first, second), other);
        let releasing = async {
            release.send(()).unwrap();
        };
        let (((first, second), other), ()) = join(both, releasing).await;
        assert_eq!(started.get(), 2, "one run for key a, one for key b");
        assert_eq!(first.unwrap().response.status, 200);
        assert_eq!(second.unwrap().response.status, 200, "the second caller got the first run's answer");
        assert_eq!(other.unwrap().response.status, 201);
        assert_eq!(flights.len(), 0, "every key is free once its read settled");
        let again = flights.run("a".to_owned(), start(204)).await;
        assert_eq!((again.unwrap().response.status, started.get()), (204, 3), "a later read runs again");
    }
}
