//! The in-page store used while no Service Worker controls the page (first visit, hard reload): the
//! engine runner's [`cachet_core::engine::Store`] on the page (through `page_engine`). It keeps entries by
//! the same [`EntryKey`] as the Service Worker's Cache Storage, with their tags (for invalidation), their
//! stored-at time (the planner decides expiry) and their last use; a store keeps at most the `keep` most
//! recently used entries of the entry's cache, as the worker's index does. Every decision (what is stored,
//! for how long, how many) is the core planner's. It lives as long as the page; the Service Worker's Cache
//! Storage takes over once it controls.

use std::collections::HashMap;

use cachet_core::engine::EntryKey;
use cachet_core::tags::is_hit;

use crate::http::HttpResponse;

#[derive(Debug, Clone)]
struct Entry {
    response: HttpResponse,
    tags: Vec<String>,
    stored_at: u64,
    used: u64,
}

/// Entries by their [`EntryKey`].
#[derive(Debug, Default)]
pub(crate) struct MemoryCache {
    entries: HashMap<EntryKey, Entry>,
    uses: u64,
    /// Bumped by every invalidation and clear: see [`MemoryCache::generation`].
    generation: u64,
}

impl MemoryCache {
    /// The entry at `key` and when it was stored (Unix ms).
    pub(crate) fn get(&self, key: &EntryKey) -> Option<(HttpResponse, u64)> {
        self.entries.get(key).map(|entry| (entry.response.clone(), entry.stored_at))
    }

    /// Marks the entry at `key` used now (least-recently-used eviction).
    pub(crate) fn touch(&mut self, key: &EntryKey) {
        self.uses += 1;
        let uses = self.uses;
        if let Some(entry) = self.entries.get_mut(key) {
            entry.used = uses;
        }
    }

    /// Stores `response` at `key` with `tags`, stored at `now`, then evicts the least recently used
    /// entries of `key.cache` beyond `keep`.
    pub(crate) fn put(
        &mut self,
        key: &EntryKey,
        response: &HttpResponse,
        tags: &[String],
        keep: u32,
        now: u64,
    ) {
        self.uses += 1;
        let entry =
            Entry { response: response.clone(), tags: tags.to_vec(), stored_at: now, used: self.uses };
        self.entries.insert(key.clone(), entry);
        let limit = usize::try_from(keep).unwrap_or(usize::MAX);
        while self.entries.keys().filter(|held| held.cache == key.cache).count() > limit {
            let oldest = self
                .entries
                .iter()
                .filter(|(held, _)| held.cache == key.cache)
                .min_by_key(|(_, entry)| entry.used)
                .map(|(held, _)| held.clone());
            match oldest {
                Some(oldest) => self.entries.remove(&oldest),
                None => break,
            };
        }
    }

    /// Removes every entry carrying one of `tags`; returns how many.
    pub(crate) fn invalidate(&mut self, tags: &[String]) -> usize {
        self.generation += 1;
        let before = self.entries.len();
        self.entries.retain(|_, entry| !is_hit(&entry.tags, tags));
        before - self.entries.len()
    }

    /// Removes everything (`clearAuth`, or another tab logged out).
    pub(crate) fn clear(&mut self) {
        self.generation += 1;
        self.entries.clear();
    }

    /// How many invalidations and clears this page has seen: a read asked after one must not share the
    /// answer of an identical read sent before it (`crate::dedup`), which may predate the change.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// How many entries are held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
