//! Invalidation: a page's `invalidate-tags`, a mutation, a push and a replayed queued mutation all
//! invalidate through [`invalidate_tags`]. The generations of the tags are bumped and committed before
//! it answers ([`super::generations`]); the entries that became stale are deleted afterwards
//! ([`super::sweep`]).

use cachet_core::protocol::SwEvent;
use js_sys::Promise;

use super::broadcast::broadcast;
use super::store::note_invalidation;
use super::tag_index::{self, TagIndex};
use super::{generations, sweep};
use crate::Error;

/// Invalidates `tags`: begins forgetting the shim's request names (`super::names`), bumps their
/// generations (committed to IndexedDB: from then on, in this worker instance and in any later one, no
/// entry they carry is served), then broadcasts `cache-invalidated {tags}` and hands the rest of the
/// names' deletion, then the sweep of their stale entries, to `background` (`waitUntil`). Constant time: no
/// entry is read or deleted before it returns.
///
/// The names' deletion is issued first, and only issued: a request made after this returns (a page's
/// read after the mutation's answer or the broadcast, a restarted worker's shim) reaches Cache Storage
/// after it, which the browser runs in the order operations were issued
/// ([`super::names::forget_all`]). Awaited here, the deletion of a cache that holds a name held every
/// invalidation's answer and broadcast by its own time (BENCHMARKS.md, session 38: the mutation's event
/// 0.8× Workbox before the names, 1.0–1.2× with the deletion awaited). Its failure is on the console.
pub async fn invalidate_tags(
    index: &TagIndex,
    tags: &[String],
    background: &dyn Fn(Promise),
) -> Result<(), Error> {
    note_invalidation(Some(tags));
    // Issued now: from here on the shim answers no hit without the engine (`super::names`).
    let forgetting = super::names::forget_all();
    generations::bump(index, tags).await?;
    broadcast(&SwEvent::CacheInvalidated { tags: tags.to_vec() })?;
    // The sweep begins once the names' deletion is done, and reports its failure.
    background(sweep::after_invalidation(tags.to_vec(), Box::pin(forgetting)));
    Ok(())
}

/// [`invalidate_tags`] on the worker's shared entry index: what a page's `invalidate-tags`, a mutation,
/// a push and a replayed queued mutation do.
pub(crate) async fn invalidate_everywhere(
    tags: &[String],
    background: &dyn Fn(Promise),
) -> Result<(), Error> {
    invalidate_tags(&*tag_index::shared().await?, tags, background).await
}
