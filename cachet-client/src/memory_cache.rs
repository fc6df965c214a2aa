//! The in-page store used while no Service Worker controls the page (first visit, hard reload): the
//! engine runner's [`cachet_core::engine::Store`] on the page (through `page_engine`). It keeps entries by
//! the same [`EntryKey`] as the Service Worker's Cache Storage, with their tags (for invalidation), their
//! stored-at time (the planner decides expiry) and their last use; a store keeps at most the `keep` most
//! recently used entries of the entry's cache, as the worker's index does. Every decision (what is stored,
//! for how long, how many) is the core planner's. It lives as long as the page; the Service Worker's Cache
//! Storage takes over once it controls.

use std::collections::HashMap;

use cachet_core::engine::{EntryKey, Invalidations};
use cachet_core::handover::{HandedEntry, HandedRequest, HandedResponse, MAX_ENTRIES};
use cachet_core::tags::is_hit;

use crate::http::HttpResponse;

#[derive(Debug, Clone)]
struct Entry {
    response: HttpResponse,
    tags: Vec<String>,
    stored_at: u64,
    used: u64,
    /// The request it answered, until it is handed to the worker ([`MemoryCache::hand_over`]).
    handed: Option<HandedRequest>,
}

/// Entries by their [`EntryKey`].
#[derive(Debug, Default)]
pub(crate) struct MemoryCache {
    entries: HashMap<EntryKey, Entry>,
    uses: u64,
    /// The invalidations and clears begun, by tags: an answer stored after one that its request predates
    /// is not kept (see `crate::page_engine`); their count is [`MemoryCache::generation`].
    pub(crate) invalidations: Invalidations,
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

    /// Stores `response` at `key` with `tags`, stored at `now`, answering `handed` (kept to be handed to
    /// the worker), then evicts the least recently used entries of `key.cache` beyond `keep`.
    pub(crate) fn put(
        &mut self,
        key: &EntryKey,
        response: &HttpResponse,
        tags: &[String],
        keep: u32,
        now: u64,
        handed: Option<HandedRequest>,
    ) {
        self.uses += 1;
        let entry = Entry {
            response: response.clone(),
            tags: tags.to_vec(),
            stored_at: now,
            used: self.uses,
            handed,
        };
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

    /// What a worker that takes control is handed ([`cachet_core::handover`]): the entries not handed
    /// yet, most recently used first, at most [`MAX_ENTRIES`], each once. What was invalidated, evicted
    /// or cleared is gone from here, so it is never handed; an answer whose body is not UTF-8 text stays
    /// in the page only.
    pub(crate) fn hand_over(&mut self) -> Vec<HandedEntry> {
        let mut waiting: Vec<&mut Entry> =
            self.entries.values_mut().filter(|entry| entry.handed.is_some()).collect();
        cachet_core::sort::sort_by(&mut waiting, |left, right| right.used.cmp(&left.used));
        let mut handed = Vec::new();
        for entry in waiting {
            if handed.len() == MAX_ENTRIES {
                break;
            }
            let Some(request) = entry.handed.take() else { continue };
            let Ok(body) = String::from_utf8(entry.response.body.clone()) else { continue };
            let response = HandedResponse {
                status: entry.response.status,
                headers: entry.response.headers.clone(),
                body,
            };
            handed.push(HandedEntry { request, response, stored_at: entry.stored_at });
        }
        handed
    }

    /// Removes every entry carrying one of `tags`; returns how many.
    pub(crate) fn invalidate(&mut self, tags: &[String]) -> usize {
        self.invalidations.note(Some(tags));
        let before = self.entries.len();
        self.entries.retain(|_, entry| !is_hit(&entry.tags, tags));
        before - self.entries.len()
    }

    /// Removes everything (`clearAuth`, or another tab logged out).
    pub(crate) fn clear(&mut self) {
        self.invalidations.note(None);
        self.entries.clear();
    }

    /// How many invalidations and clears this page has seen: a read asked after one must not share the
    /// answer of an identical read sent before it (`crate::dedup`), which may predate the change.
    pub(crate) fn generation(&self) -> u64 {
        self.invalidations.begun()
    }

    /// How many entries are held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    fn key(name: &str) -> EntryKey {
        EntryKey { cache: "runtime", url: format!("https://app.test/{name}") }
    }

    fn response(body: &[u8]) -> HttpResponse {
        HttpResponse { url: String::new(), status: 200, headers: Vec::new(), body: body.to_vec() }
    }

    fn request(name: &str) -> Option<HandedRequest> {
        Some(HandedRequest {
            method: "GET".into(),
            url: format!("https://app.test/{name}"),
            headers: Vec::new(),
            body: None,
            authorization: None,
        })
    }

    fn urls(entries: &[HandedEntry]) -> Vec<String> {
        entries
            .iter()
            .map(|entry| entry.request.url.trim_start_matches("https://app.test/").to_owned())
            .collect()
    }

    #[wasm_bindgen_test]
    fn what_is_invalidated_cleared_or_not_text_is_never_handed_and_the_rest_once() {
        let mut cache = MemoryCache::default();
        cache.put(&key("a"), &response(b"{}"), &["a".into()], 100, 1, request("a"));
        cache.put(&key("b"), &response(b"{}"), &["b".into()], 100, 2, request("b"));
        cache.put(&key("binary"), &response(&[0xff, 0xfe]), &[], 100, 3, request("binary"));
        cache.put(&key("unrecorded"), &response(b"{}"), &[], 100, 4, None);
        cache.invalidate(&["a".into()]);
        let handed = cache.hand_over();
        assert_eq!(urls(&handed), ["b"]);
        assert_eq!(handed[0].stored_at, 2);
        assert_eq!(cache.hand_over(), Vec::new(), "each entry once");
        cache.put(&key("c"), &response(b"{}"), &[], 100, 5, request("c"));
        cache.clear();
        assert_eq!(cache.hand_over(), Vec::new(), "nothing after a clear (sign-out)");
    }

    #[wasm_bindgen_test]
    fn at_most_the_cap_most_recently_used_first_and_the_rest_later() {
        let mut cache = MemoryCache::default();
        for index in 0..MAX_ENTRIES + 8 {
            let name = format!("{index}");
            cache.put(&key(&name), &response(b"{}"), &[], 1_000, index as u64, request(&name));
        }
        cache.touch(&key("0"));
        let first = cache.hand_over();
        assert_eq!(first.len(), MAX_ENTRIES);
        assert_eq!(urls(&first)[..2], ["0", &format!("{}", MAX_ENTRIES + 7)]);
        assert_eq!(cache.hand_over().len(), 8);
    }
}
