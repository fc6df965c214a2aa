//! The storing step, in two halves: [`decide`] when the answer arrives (the planner's rules, the plugins'
//! `cache_will_update`), [`commit`] when the store writes it. A network answer is given first and
//! committed in the background ([`in_background`], as Workbox stores in `waitUntil`). An answer whose
//! request began before an invalidation of its tags is then not kept: each store asks the one log of
//! [`super::invalidations`] (and the worker's generation stamp says the same across a stopped worker).
//!
//! One instance of the engine reads its own writes: an entry whose store is still running is
//! [`settled`] before it is looked up, so the request after a miss is a hit even when it comes before
//! the store has finished.

use std::cell::RefCell;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::shared::Shared;

use super::edge::{Host, Store};
use super::key::EntryKey;
use super::plan::{self, Answered, NotStored, Storing};
use super::plugin::{Call, Plugin};
use super::response::Fetched;

thread_local! {
    /// The stores still running in this instance of the engine (one worker, one page), each with its
    /// entry URL. Whoever polls one first drives it (the host's background task, or a lookup that came
    /// before the background ran it), so a lookup never waits on a host that has not run it yet. A list:
    /// there are as many as misses answered at once, and a `HashMap` of them cost the worker's wasm more
    /// than the scan.
    static PENDING: RefCell<Vec<(String, Shared)>> = const { RefCell::new(Vec::new()) };
}

/// Whether `fetched` is stored for `call`'s job: [`plan::storing`], then every plugin's
/// `cache_will_update` (the first refusal is [`NotStored::Plugin`]). A malformed `X-SW-Cache-Tags` is
/// reported to `host`.
pub(super) fn decide<R: 'static, H: Host>(
    call: &Call<'_>,
    fetched: &Fetched<R>,
    host: &H,
    plugins: &[Rc<dyn Plugin<R>>],
) -> Storing {
    let Some(job) = call.job else { return Storing::Skip(NotStored::Strategy) };
    let answered = Answered {
        status: fetched.status,
        auth_failure: fetched.auth_failure,
        body: &fetched.body,
        server_tags: fetched.server_tags.as_deref(),
        cache_control: fetched.cache_control.as_deref(),
    };
    let storing = plan::storing(job, &answered);
    let Storing::Store { ignored_server_tags, .. } = &storing else { return storing };
    if let Some(warning) = ignored_server_tags {
        host.warn(warning);
    }
    if plugins.iter().all(|plugin| plugin.cache_will_update(call, fetched)) {
        storing
    } else {
        Storing::Skip(NotStored::Plugin)
    }
}

/// Carries out `storing` (a [`decide`] answer) of `fetched` at `entry`, stored at `now`: what it became
/// ([`plan::after_store`]: a store that fails costs the entry, reported to `host`, never an error here).
pub(super) async fn commit<R, E: Display, S: Store<R, E>, H: Host>(
    entry: &EntryKey,
    announce_url: &str,
    fetched: &Fetched<R>,
    storing: Storing,
    store: &S,
    host: &H,
    now: u64,
) -> Storing {
    let Storing::Store { tags, keep, .. } = &storing else { return storing };
    let stored = store.store(entry, fetched, tags, *keep, now).await;
    let outcome = plan::after_store(stored, storing, announce_url, &|warning| host.warn(warning));
    // A failed store was just warned of; a declined one is said as a reason.
    if let Storing::Skip(reason @ (NotStored::StoreFull | NotStored::Overtaken)) = &outcome {
        host.not_stored(announce_url, reason);
    }
    outcome
}

/// Stores `fetched` at `entry` with `tags` (then keeps at most `keep` entries), stored at `now`, in
/// `host`'s background as the runner stores a network answer (`commit`, in `in_background`): a lookup
/// of the entry in this instance waits for it, and what it became is reported to `host` alike. For a
/// store decided by another engine (the worker's start module, which hands its stores to the whole
/// engine): `decide` already ran there, with the plugins.
#[allow(clippy::too_many_arguments)] // a store's whole description, as `commit` takes it
pub fn commit_decided<R, E, S, H>(
    host: Rc<H>,
    entry: EntryKey,
    announce_url: String,
    fetched: Fetched<R>,
    tags: Vec<String>,
    keep: u32,
    store: S,
    now: u64,
) where
    R: 'static,
    E: Display + 'static,
    S: Store<R, E> + 'static,
    H: Host + 'static,
{
    let url = entry.url.clone();
    let storing = Storing::Store { tags, keep, ignored_server_tags: None };
    let background = host.clone();
    let work = async move {
        commit(&entry, &announce_url, &fetched, storing, &store, &*host, now).await;
    };
    in_background(&*background, url, Box::pin(work));
}

/// Hands `work`, the store of `url`, to `host`'s background, known to [`settled`] until it finishes.
pub(super) fn in_background<H: Host>(host: &H, url: String, work: Pin<Box<dyn Future<Output = ()>>>) {
    let running = Shared::new(work);
    PENDING.with(|pending| pending.borrow_mut().push((url, running.clone())));
    host.background(Box::pin(async move {
        running.clone().await;
        PENDING.with(|pending| pending.borrow_mut().retain(|(_, other)| !other.same(&running)));
    }));
}

/// Waits until the last store of `url` still running in this instance, if any, has finished.
pub(super) async fn settled(url: &str) {
    let running = PENDING.with(|pending| {
        pending.borrow().iter().rev().find(|(stored, _)| stored == url).map(|(_, running)| running.clone())
    });
    if let Some(running) = running {
        running.await;
    }
}
