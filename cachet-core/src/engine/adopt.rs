//! An answer the store did not fetch itself, adopted by the same storing step as a network answer: a
//! page's hand-over ([`crate::handover`]), whose entries the Service Worker takes when it starts
//! controlling the page.

use std::fmt::Display;

use super::plan::{self, Found, Job, Storing};
use super::plugin::Call;
use super::run::{keep, keyed, Fetched, Host, Runner, Store};

/// Stores `fetched`, which the page stored at `stored_at`, for `job`, as the runner stores a network
/// answer: under the plugins' key (`cache_key_will_be_used`), when the planner's storing rules and every
/// plugin's `cache_will_update` agree. An entry the store holds fresh is never replaced: `Ok(None)`.
/// `runner`'s network is never asked (`()` will do).
pub async fn adopt<R: 'static, E: Display, S: Store<R, E>, N, H: Host>(
    job: Job,
    fetched: &Fetched<R>,
    stored_at: u64,
    runner: &Runner<R, S, N, H>,
) -> Result<Option<Storing>, E> {
    let job = keyed(job, runner.method, &runner.url, &runner.plugins);
    let now = runner.host.now();
    if let Some(entry) = &job.entry {
        let held = runner.store.lookup(entry, false).await?;
        // The config's life only: a hand-over never replaces an entry the worker still counts as fresh.
        if plan::found(held.map(|hit| hit.stored_at), now, plan::freshness(&job, None)) == Found::Fresh {
            return Ok(None);
        }
    }
    let call = Call { method: runner.method, url: &runner.url, job: Some(&job) };
    Ok(Some(keep(&call, fetched, &runner.store, &runner.host, &runner.plugins, stored_at.min(now)).await))
}
