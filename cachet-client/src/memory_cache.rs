//! The in-page document cache used while no Service Worker controls the page (first visit, hard
//! reload). It follows the Service Worker's rules with the same config: entries keyed by partition and
//! cache key, tags recorded for invalidation, `cache.maxAgeSeconds` (an older entry counts as absent),
//! `cache.maxEntries` (least recently used evicted first) and `cache.maxBodyBytes`. It lives as long as
//! the page; the Service Worker's Cache Storage takes over once it controls.

use std::collections::HashMap;

use cachet_core::config::CacheBounds;
use cachet_core::tags::is_hit;

use crate::http::HttpResponse;

#[derive(Debug, Clone)]
struct Entry {
    response: HttpResponse,
    tags: Vec<String>,
    stored_at: u64,
    used: u64,
}

/// Entries by key (`get:<partition>:<url>` or `gql:<partition>:<cache key>`).
#[derive(Debug)]
pub(crate) struct MemoryCache {
    bounds: CacheBounds,
    entries: HashMap<String, Entry>,
    uses: u64,
}

impl MemoryCache {
    pub(crate) fn new(bounds: CacheBounds) -> Self {
        MemoryCache { bounds, entries: HashMap::new(), uses: 0 }
    }

    /// The entry at `key`, unless older than `cache.maxAgeSeconds` at `now` (Unix ms); marks it used.
    pub(crate) fn get(&mut self, key: &str, now: u64) -> Option<HttpResponse> {
        let max_age = self.bounds.max_age_seconds.saturating_mul(1000);
        let expired =
            self.entries.get(key).is_some_and(|entry| now.saturating_sub(entry.stored_at) > max_age);
        if expired {
            self.entries.remove(key);
            return None;
        }
        self.uses += 1;
        let uses = self.uses;
        self.entries.get_mut(key).map(|entry| {
            entry.used = uses;
            entry.response.clone()
        })
    }

    /// Stores `response` under `key` with `tags` when it is within `cache.maxBodyBytes`, then evicts the
    /// least recently used entries past `cache.maxEntries`. Returns whether it was stored.
    pub(crate) fn put(&mut self, key: &str, response: &HttpResponse, tags: Vec<String>, now: u64) -> bool {
        if response.body.len() as u64 > self.bounds.max_body_bytes {
            return false;
        }
        self.uses += 1;
        let entry = Entry { response: response.clone(), tags, stored_at: now, used: self.uses };
        self.entries.insert(key.to_owned(), entry);
        let limit = usize::try_from(self.bounds.max_entries).unwrap_or(usize::MAX);
        while self.entries.len() > limit {
            let oldest = self.entries.iter().min_by_key(|(_, entry)| entry.used).map(|(key, _)| key.clone());
            match oldest {
                Some(oldest) => self.entries.remove(&oldest),
                None => break,
            };
        }
        true
    }

    /// Removes every entry carrying one of `tags`; returns how many.
    pub(crate) fn invalidate(&mut self, tags: &[String]) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, entry| !is_hit(&entry.tags, tags));
        before - self.entries.len()
    }

    /// Follows new bounds (the Service Worker's config): the next store evicts past them.
    pub(crate) fn rebound(&mut self, bounds: CacheBounds) {
        self.bounds = bounds;
    }

    /// Removes everything (`clearAuth`, or another tab logged out).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// How many entries are held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
