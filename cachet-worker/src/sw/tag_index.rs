//! The entry index: every entry the engine stored, with its tags and when it was last used, in IndexedDB
//! (through [`cachet_idb`]), so that invalidating a tag and evicting the least recently used entries never scan
//! the cache.
//!
//! One object store, `entries`, keyed by the entry's cache URL, each record
//! `{ url, cache, tags: [..], generation, storedAt, usedAt, request, variables, size, strategy }` (the last
//! four for devtools: `cachet_core::devtools::EntryDetails`; `generation`: the clock when its request
//! began, `cachet_core::generations`) (times in Unix milliseconds), with a multi-entry index on
//! `tags` (looking a tag up is one index read, whatever the number of entries) and an index on
//! `[cache, usedAt]` (the least recently used entries of a cache are its first keys), in the worker's one
//! database (`sw::database`, beside the generations, the identity and the queue). The index may
//! name an entry the cache no longer holds (a failed store, an eviction): deleting a missing cache entry
//! is harmless, so invalidation stays correct.

use cachet_core::json::ObjectWriter;
use cachet_core::protocol::storage::{ENTRIES, GENERATIONS, USE_INDEX};
use cachet_idb::{KeyRange, Store, Transaction, TransactionMode};
use wasm_bindgen::JsValue;

use super::database;
use crate::error::{commit, idb};
use crate::Error;

pub(crate) use cachet_core::protocol::storage::TAGS_INDEX;
/// Above every `usedAt` (JavaScript's largest safe integer).
const MAX_TIME: f64 = 9_007_199_254_740_991.0;

/// An open tag index.
///
/// # How many entries a cache holds
///
/// Eviction asks after every store whether a cache holds more than `cache.maxEntries` entries. IndexedDB
/// counts a key range by walking it, so counting on every store made filling a cache quadratic (the
/// bench's "miss, 10k cached" spent 53 of its 76 ms counting). The index therefore keeps, per cache, the
/// count this worker instance knows: the first question about a cache is answered by one exact count,
/// after which [`TagIndex::record`] (a new URL) and [`TagIndex::remove`] keep it exact, and
/// [`TagIndex::clear`] forgets it. Only the Service Worker writes this database; a write from elsewhere
/// would make the count low (eviction late, never early) until the worker restarts, and every eviction
/// recounts exactly.
#[derive(Debug)]
pub struct TagIndex {
    /// `(cache, entries)` for the caches counted so far (a handful: a vector is smaller than a map).
    counts: std::cell::RefCell<Vec<(String, u32)>>,
}

/// What a sweep reads of one index record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// The entry's URL (the record's key).
    pub url: String,
    /// The name of its cache; empty when unreadable (a stray: a sweep forgets it).
    pub cache: String,
    /// The generation its request began at; `None` when missing or unreadable (never current).
    pub generation: Option<u64>,
    /// Its tags (the readable ones).
    pub tags: Vec<String>,
    /// When its answer was stored (Unix ms); `None` when missing or unreadable.
    pub stored_at: Option<u64>,
}

impl Indexed {
    /// The record's fields; `None` when it has no URL.
    pub(crate) fn read(record: &JsValue) -> Option<Indexed> {
        let field = |name: &str| js_sys::Reflect::get(record, &name.into()).ok();
        let url = field("url")?.as_string()?;
        let generation = field("generation")
            .and_then(|value| value.as_f64())
            .and_then(cachet_core::generations::generation_of);
        let tags = field("tags")
            .filter(js_sys::Array::is_array)
            .map(|tags| js_sys::Array::from(&tags).iter().filter_map(|tag| tag.as_string()).collect())
            .unwrap_or_default();
        let stored_at = field("storedAt").and_then(|value| value.as_f64()).map(|at| at as u64);
        Some(Indexed { url, cache: cache_of(record).unwrap_or_default(), generation, tags, stored_at })
    }
}

/// The `cache` field of a stored record.
fn cache_of(record: &JsValue) -> Option<String> {
    js_sys::Reflect::get(record, &"cache".into()).ok().and_then(|cache| cache.as_string())
}

impl TagIndex {
    /// Opens (creating on first use) the index: the worker's database (`sw::database`).
    pub async fn open() -> Result<Self, Error> {
        database::open().await?;
        Ok(TagIndex { counts: std::cell::RefCell::default() })
    }

    pub(crate) async fn entries(&self, mode: TransactionMode) -> Result<(Transaction, Store), Error> {
        let transaction = database::transaction(&[ENTRIES], mode).await?;
        let store = transaction.store(ENTRIES).map_err(idb("tag index store"))?;
        Ok((transaction, store))
    }

    /// A transaction on the generations' object store ([`super::generations`]).
    pub(crate) async fn generations(&self, mode: TransactionMode) -> Result<(Transaction, Store), Error> {
        let transaction = database::transaction(&[GENERATIONS], mode).await?;
        let store = transaction.store(GENERATIONS).map_err(idb("generations store"))?;
        Ok((transaction, store))
    }

    /// Records that the entry at `url` of the cache named `cache` carries `tags` (replacing what was
    /// recorded for it), stored and used at `now` (Unix milliseconds), its request begun at generation 0.
    #[cfg(feature = "test-support")]
    pub async fn record(&self, url: &str, cache: &str, tags: &[String], now: u64) -> Result<(), Error> {
        let details = cachet_core::devtools::EntryDetails::describe(
            url,
            None,
            0,
            cachet_core::strategy::Strategy::CacheFirst,
        );
        self.record_with(url, cache, tags, 0, now, &details).await
    }

    /// [`TagIndex::record`], with the generation its request began at and what devtools show of the entry.
    pub async fn record_with(
        &self,
        url: &str,
        cache: &str,
        tags: &[String],
        generation: u64,
        now: u64,
        details: &cachet_core::devtools::EntryDetails,
    ) -> Result<(), Error> {
        let mut record = String::new();
        ObjectWriter::start(&mut record)
            .string("url", url)
            .string("cache", cache)
            .strings("tags", tags)
            .number("generation", generation)
            .number("storedAt", now)
            .number("usedAt", now)
            .string("request", &details.request)
            .option("variables", details.variables.as_deref())
            .number("size", details.size)
            .string("strategy", details.strategy)
            .end();
        let value = js_sys::JSON::parse(&record).map_err(|e| Error::js("JSON.parse", e))?;
        let (transaction, store) = self.entries(TransactionMode::Readwrite).await?;
        let before = store.get(JsValue::from_str(url)).await.map_err(idb("read an entry"))?;
        store.put(&value, None).await.map_err(idb("record tags"))?;
        commit(transaction, "commit tags").await?;
        let before = before.as_ref().and_then(cache_of);
        if before.as_deref() != Some(cache) {
            self.adjust(before.as_deref(), -1);
            self.adjust(Some(cache), 1);
        }
        Ok(())
    }

    /// Adds `by` to the known count of `cache`, when one is known.
    fn adjust(&self, cache: Option<&str>, by: i32) {
        let mut counts = self.counts.borrow_mut();
        if let Some((_, count)) = cache.and_then(|cache| counts.iter_mut().find(|(name, _)| name == cache)) {
            *count = count.saturating_add_signed(by);
        }
    }

    /// Every entry carrying at least one of `tags`, each once: its URL and the name of its cache.
    #[cfg(feature = "test-support")]
    pub async fn entries_tagged(&self, tags: &[String]) -> Result<Vec<(String, String)>, Error> {
        Ok(self.records_tagged(tags).await?.into_iter().map(|record| (record.url, record.cache)).collect())
    }

    /// The records of every entry carrying at least one of `tags`, each once.
    pub async fn records_tagged(&self, tags: &[String]) -> Result<Vec<Indexed>, Error> {
        let (_transaction, store) = self.entries(TransactionMode::Readonly).await?;
        let index = store.index(TAGS_INDEX).map_err(idb("tag index"))?;
        let mut records: Vec<Indexed> = Vec::new();
        for tag in tags {
            let range = KeyRange::only(&JsValue::from_str(tag)).map_err(idb("tag key range"))?;
            for record in index.get_all(Some(range), None).await.map_err(idb("look tags up"))? {
                let Some(record) = Indexed::read(&record) else { continue };
                if !records.iter().any(|known| known.url == record.url) {
                    records.push(record);
                }
            }
        }
        Ok(records)
    }

    /// Every record of the index (a start-up sweep's one read).
    pub(crate) async fn all_records(&self) -> Result<Vec<Indexed>, Error> {
        let (_transaction, store) = self.entries(TransactionMode::Readonly).await?;
        let records = store.get_all(None, None).await.map_err(idb("read the entry index"))?;
        Ok(records.iter().filter_map(Indexed::read).collect())
    }

    /// Marks the entry at `url` used at `now`; nothing when it is not recorded.
    pub async fn touch(&self, url: &str, now: u64) -> Result<(), Error> {
        let (transaction, store) = self.entries(TransactionMode::Readwrite).await?;
        if let Some(record) = store.get(JsValue::from_str(url)).await.map_err(idb("read an entry"))? {
            js_sys::Reflect::set(&record, &"usedAt".into(), &JsValue::from_f64(now as f64))
                .map_err(|e| Error::js("set usedAt", e))?;
            store.put(&record, None).await.map_err(idb("touch an entry"))?;
        }
        commit(transaction, "commit touch").await?;
        Ok(())
    }

    /// The URLs of the least recently used entries of the cache named `cache` beyond the `keep` most
    /// recently used ones, least recently used first.
    pub async fn beyond(&self, cache: &str, keep: u32) -> Result<Vec<String>, Error> {
        if self.counts.borrow().iter().any(|(name, known)| name == cache && *known <= keep) {
            return Ok(Vec::new());
        }
        let (_transaction, store) = self.entries(TransactionMode::Readonly).await?;
        let index = store.index(USE_INDEX).map_err(idb("use index"))?;
        let bound =
            |time: f64| js_sys::Array::of2(&JsValue::from_str(cache), &JsValue::from_f64(time)).into();
        let range = || KeyRange::bound(&bound(0.0), &bound(MAX_TIME), None, None).map_err(idb("use range"));
        let count = index.count(Some(range()?)).await.map_err(idb("count entries"))?;
        {
            let mut counts = self.counts.borrow_mut();
            counts.retain(|(name, _)| name != cache);
            counts.push((cache.to_owned(), count));
        }
        if count <= keep {
            return Ok(Vec::new());
        }
        let keys =
            index.get_all_keys(Some(range()?), Some(count - keep)).await.map_err(idb("oldest entries"))?;
        Ok(keys.into_iter().filter_map(|key| key.as_string()).collect())
    }

    /// Forgets every entry.
    pub async fn clear(&self) -> Result<(), Error> {
        let (transaction, store) = self.entries(TransactionMode::Readwrite).await?;
        store.clear().await.map_err(idb("clear the tag index"))?;
        commit(transaction, "commit clearing").await?;
        self.counts.borrow_mut().clear();
        Ok(())
    }

    /// Forgets the entries at `urls`, all at once, in one transaction; none: no transaction (every store
    /// evicts nothing most of the time, and an empty `readwrite` transaction still waits its turn behind
    /// every other write of the entry index and commits).
    pub async fn remove(&self, urls: &[String]) -> Result<(), Error> {
        use cachet_core::join::all_at_once;
        if urls.is_empty() {
            return Ok(());
        }
        let (transaction, store) = self.entries(TransactionMode::Readwrite).await?;
        // Per entry: read its cache (for the count), then delete it; all entries at once.
        let records = all_at_once(urls.iter().map(|url| {
            let key = JsValue::from_str(url);
            let store = &store;
            async move {
                let record = store.get(key.clone()).await?;
                store.delete(key).await?;
                Ok::<_, JsValue>(record)
            }
        }))
        .await
        .map_err(idb("forget an entry"))?;
        commit(transaction, "commit removal").await?;
        for record in records.iter().flatten() {
            self.adjust(cache_of(record).as_deref(), -1);
        }
        Ok(())
    }
}

thread_local! {
    // A handle, not state: after the browser stops the worker, the next start opens the database again.
    static SHARED: std::cell::RefCell<Option<std::rc::Rc<TagIndex>>> = const { std::cell::RefCell::new(None) };
}

/// The worker's tag index, opened on first use.
pub async fn shared() -> Result<std::rc::Rc<TagIndex>, Error> {
    if let Some(index) = SHARED.with(|shared| shared.borrow().clone()) {
        return Ok(index);
    }
    let index = std::rc::Rc::new(TagIndex::open().await?);
    SHARED.with(|shared| *shared.borrow_mut() = Some(index.clone()));
    Ok(index)
}
