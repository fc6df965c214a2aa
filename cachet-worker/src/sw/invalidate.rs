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

/// Invalidates `tags`: forgets the shim's request names (`super::names`), bumps their generations
/// (committed to IndexedDB: from then on, in this worker instance and in any later one, no entry they
/// carry is served), then broadcasts `cache-invalidated {tags}`, then hands the sweep of their stale
/// entries to `background` (`waitUntil`). Constant time: no entry is read or deleted before it returns.
pub async fn invalidate_tags(
    index: &TagIndex,
    tags: &[String],
    background: &dyn Fn(Promise),
) -> Result<(), Error> {
    note_invalidation(Some(tags));
    // The shim's names first: from here on it answers no hit without the engine (`super::names`).
    super::names::forget_all().await?;
    generations::bump(index, tags).await?;
    broadcast(&SwEvent::CacheInvalidated { tags: tags.to_vec() })?;
    background(sweep::after_invalidation(tags.to_vec()));
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
