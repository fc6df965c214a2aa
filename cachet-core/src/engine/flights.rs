//! One network call for every caller: requests for the same entry (the same entry key, so the same URL or
//! GraphQL document and the same partition) whose network step starts while another's is running await
//! that one's answer instead of sending their own (issue 35: four tabs sending the same 50 queries at once
//! cost the server 50 requests, not 200). Each caller still gets its own answer (a copy made by the edge,
//! [`super::Network::answer_copy`]), and the answer is stored once, by the call that was sent.
//!
//! What may share, decided here for both edges:
//! - the same entry URL ([`super::EntryKey::url`]): never across partitions, endpoints or documents;
//! - a call begun before an invalidation is not joined after it: [`invalidated`] (run by
//!   [`super::Invalidations::note`], the one log both edges keep) detaches every call in flight, so a
//!   request asked after an invalidation always sends its own, as the store would not keep the older
//!   answer either. Every call, not only those of the invalidated tags: an entry's tags are known whole
//!   only once its answer (and the server's `X-SW-Cache-Tags`) is in, and a lost chance to share costs one
//!   request, a shared stale answer a wrong screen;
//! - only the first network step of a request ([`super::run()`]'s fetch-then-store); a background re-fetch
//!   (stale-while-revalidate) and a mutation are never shared.
//!
//! One instance of the engine (one worker, one page) keeps its calls in flight in a list, as `commit` keeps
//! its stores: there are as many as requests answered at once.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use crate::shared::Shared;

use super::plan::Storing;
use super::response::Fetched;

/// What a call in flight ends with: the answer and what its storing was decided to be, or the edge's
/// error. Filled by the call that was sent, read by every caller that joined it.
pub(super) type Outcome<R, E> = RefCell<Option<Result<(Rc<Fetched<R>>, Storing), E>>>;

struct Flight {
    url: String,
    done: Shared,
    /// An `Rc<Outcome<R, E>>` of the edge's own `R` and `E`.
    outcome: Rc<dyn Any>,
}

thread_local! {
    static FLIGHTS: RefCell<Vec<Flight>> = const { RefCell::new(Vec::new()) };
}

/// The call in flight for `url`, if one can be joined: when it ends, and where its outcome will be.
pub(super) fn join<R: 'static, E: 'static>(url: &str) -> Option<(Shared, Rc<Outcome<R, E>>)> {
    FLIGHTS.with(|flights| {
        let flights = flights.borrow();
        let flight = flights.iter().find(|flight| flight.url == url)?;
        let outcome = flight.outcome.clone().downcast::<Outcome<R, E>>().ok()?;
        Some((flight.done.clone(), outcome))
    })
}

/// Starts `work` as the call in flight for `url`, whose outcome is `outcome`: joinable until it ends or
/// an invalidation begins.
pub(super) fn start<R: 'static, E: 'static>(url: String, work: Shared, outcome: Rc<Outcome<R, E>>) {
    FLIGHTS.with(|flights| flights.borrow_mut().push(Flight { url, done: work, outcome }));
}

/// The call `work` has ended: nobody joins it any more.
pub(super) fn end(work: &Shared) {
    FLIGHTS.with(|flights| flights.borrow_mut().retain(|flight| !flight.done.same(work)));
}

/// An invalidation begins: no call in flight is joined any more (their callers still get their answers).
pub fn invalidated() {
    FLIGHTS.with(|flights| flights.borrow_mut().clear());
}

/// How many calls are in flight and joinable (for tests).
pub fn in_flight() -> usize {
    FLIGHTS.with(|flights| flights.borrow().len())
}
