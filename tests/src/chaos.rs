//! Shared steps of the fault stories (issue 20): a bare page with `window.cachet` and nothing else,
//! the queue as the Service Worker stored it, read in the page without waking the worker, and a small
//! seeded random source for the moments of the faults (the seed is printed, so a run can be replayed).

use std::time::{SystemTime, UNIX_EPOCH};

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::Harness;

/// A small xorshift generator: reproducible from the seed each story prints.
pub struct Random(pub u64);

impl Random {
    /// Seeded from the clock, or from `CACHET_CHAOS_SEED` when set (to replay a run).
    pub fn seeded() -> Self {
        let from_env = std::env::var("CACHET_CHAOS_SEED").ok().and_then(|seed| seed.parse::<u64>().ok());
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(1);
        Random(from_env.unwrap_or(nanos as u64) | 1)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// How many runs a story makes: `default`, or `CACHET_CHAOS_RUNS` (set by `cargo xtask chaos`).
pub fn runs(default: usize) -> usize {
    std::env::var("CACHET_CHAOS_RUNS").ok().and_then(|runs| runs.parse().ok()).unwrap_or(default)
}

/// Loads `window.cachet` into the bare page (the config the Service Worker reads, then the API),
/// configures it for `auth` (`cookie` or `bearer`), logs `user` in and gives the client what the login
/// answered (with bearer, the token, which lives in this page's memory only).
pub async fn start_client(harness: &Harness, auth: &str, user: &str) -> Result<()> {
    client_signed_in(harness, auth, user, false).await
}

/// [`start_client`] on a reloaded page, as an app does: it logs `user` in only when the client did not
/// restore the session by itself (`getAuthState()` after the client's start).
pub async fn resume_client(harness: &Harness, auth: &str, user: &str) -> Result<()> {
    client_signed_in(harness, auth, user, true).await
}

async fn client_signed_in(harness: &Harness, auth: &str, user: &str, resume: bool) -> Result<()> {
    let script = format!(
        "const load = (src) => new Promise((resolve, reject) => {{
           const script = document.createElement('script'); script.src = src;
           script.onload = resolve; script.onerror = () => reject(new Error('cannot load ' + src));
           document.head.append(script); }});
         (async () => {{
           await load('/cachet-sw-config.js');
           await load('/cachet/cachet-api.bundle.js');
           await cachet.ready;
           await cachet.configure({{ auth: {{ type: {auth} }} }});
           if ({resume} && (await cachet.getAuthState()).authenticated) return true;
           const response = await fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}},
             body: JSON.stringify({{username: {user}, password: {password}}})}});
           await cachet.setAuth(await response.json());
           return (await cachet.getAuthState()).authenticated;
         }})().then(done, (e) => done(String(e)));",
        auth = json!(auth),
        user = json!(user),
        password = json!(format!("{user}-password")),
        resume = json!(resume),
    );
    match harness.run_async(&script).await? {
        Value::Bool(true) => Ok(()),
        other => bail!("starting window.cachet ({auth}): {other}"),
    }
}

/// A page script's `readStoredQueue()`: the queue as the Service Worker stored it (its record parsed),
/// `null` while the database holds no queue; read in the page, which does not wake the worker. The one
/// reader of the stories' scripts.
pub const READ_STORED_QUEUE: &str = "const readStoredQueue = () => new Promise((resolve, reject) => {
   const open = indexedDB.open('cachet'); open.onerror = () => reject(open.error);
   open.onsuccess = () => {
     const db = open.result;
     if (!db.objectStoreNames.contains('queue')) { db.close(); return resolve(null); }
     const request = db.transaction('queue').objectStore('queue').get('state');
     request.onsuccess = () => { db.close(); resolve(JSON.parse(request.result || 'null')); };
   }; });";

/// Reads, in the page (which does not wake the worker), the queue as the Service Worker stored it: at
/// once, and again on each broadcast of the worker, until it holds no item or `wait_ms` passed.
pub async fn stored_queue_once_empty(harness: &Harness, wait_ms: u64) -> Result<Value> {
    let script = format!(
        "{READ_STORED_QUEUE}
         const read = readStoredQueue;
         const channel = new BroadcastChannel('cachet');
         const finish = (state) => {{ channel.close(); clearTimeout(timer); done(state); }};
         const check = () => read().then((state) => {{ if (state && state.items.length === 0) finish(state); }});
         const timer = setTimeout(() => read().then(finish), {wait_ms});
         channel.onmessage = check;
         check();"
    );
    harness.run_async(&script).await
}

/// `"N items (in flight: id), M dead letters"` of a stored queue.
pub fn queue_summary(stored: &Value) -> String {
    let count = |field: &str| stored[field].as_array().map_or(0, Vec::len);
    let in_flight = stored["inFlight"].as_u64().map(|id| format!(" (in flight: {id})")).unwrap_or_default();
    format!("{} items{in_flight}, {} dead letters", count("items"), count("deadLetters"))
}

/// Posts `replay-queue` to the page's controller (as the client's queue alarm's question does when the head is due).
pub async fn ask_for_replay(harness: &Harness) -> Result<()> {
    harness
        .run_async(
            "navigator.serviceWorker.controller.postMessage(JSON.stringify({v: 1, type: 'replay-queue'}));
             done(true);",
        )
        .await?;
    Ok(())
}

/// Reads the caches and the entry index in the page: `{entries: {cache: [urls]}, records: [[url, cache]],
/// again: {cache: [urls]}}`: the caches, then the index, then the caches again.
///
/// The page cannot read both at one instant, and the worker may be writing meanwhile (the start-up
/// sweep, an eviction after a store: each deletes an entry, then its record). An entry read, then
/// deleted with its record before the index is read, would look unrecorded in a single pass. An entry
/// present in both reads of the caches was there while the index was read, so its record was too (a
/// store writes the record before the entry, a deletion removes the entry before the record): only
/// those count as unrecorded ([`consistency`]).
pub const READ_STORE: &str = "(async () => {
  const names = ['cachet-runtime-v1', 'cachet-graphql-v2'];
  const read = async () => {
    const entries = {};
    for (const name of names) {
      entries[name] = (await caches.has(name)) ? (await (await caches.open(name)).keys()).map((r) => r.url) : [];
    }
    return entries;
  };
  const entries = await read();
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open('cachet'); open.onsuccess = () => resolve(open.result); open.onerror = reject; });
  let records = [];
  if (db.objectStoreNames.contains('entries')) {
    records = await new Promise((resolve) => {
      const all = db.transaction('entries').objectStore('entries').getAll();
      all.onsuccess = () => resolve(all.result.map((r) => [r.url, r.cache])); });
  }
  db.close();
  return {entries, records, again: await read()};
})().then(done, (e) => done({error: String(e)}));";

/// What a run found in the store.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Consistency {
    /// Cache entries in cachet's caches.
    pub entries: usize,
    /// Entries no index record names (invalidation cannot find them).
    pub entries_without_record: usize,
    /// Index records whose entry is gone.
    pub records_without_entry: usize,
    /// Those records, `(url, cache)`: what a failure names.
    pub without_entry: Vec<(String, String)>,
    /// Entries per cache.
    pub per_cache: BTreeMap<String, usize>,
    /// A hash of every entry and record read (cache and URL), so that two reads agree only when nothing
    /// changed between them, not only their counts.
    pub state: u64,
}

/// Reads the caches and the entry index in the page and compares them. An entry invalidated but not yet
/// swept (issue 16: invalidation bumps generations, the entries are deleted after) is still an entry
/// with its record here, and still counts toward `maxEntries`, as it does in the worker
/// (ARCHITECTURE.md, "Invalidation by generations"): the sweep deletes the entry, then its record.
pub async fn consistency(harness: &Harness) -> Result<Consistency> {
    let read = harness.run_async(READ_STORE).await?;
    if read.get("error").is_some() {
        bail!("reading the store: {read}");
    }
    let mut records: BTreeMap<(String, String), ()> = BTreeMap::new();
    for record in read["records"].as_array().into_iter().flatten() {
        let pair = (
            record[0].as_str().unwrap_or_default().to_owned(),
            record[1].as_str().unwrap_or_default().to_owned(),
        );
        records.insert(pair, ());
    }
    let mut found = Consistency::default();
    let mut seen = BTreeMap::new();
    for (cache, urls) in read["entries"].as_object().into_iter().flatten() {
        for url in urls.as_array().into_iter().flatten().filter_map(Value::as_str) {
            found.entries += 1;
            *found.per_cache.entry(cache.clone()).or_default() += 1;
            let key = (url.to_owned(), cache.clone());
            let still_there = read["again"][cache.as_str()]
                .as_array()
                .is_some_and(|again| again.iter().any(|other| other.as_str() == Some(url)));
            if !records.contains_key(&key) && still_there {
                found.entries_without_record += 1;
            }
            seen.insert(key, ());
        }
    }
    found.without_entry = records.keys().filter(|key| !seen.contains_key(*key)).cloned().collect();
    found.records_without_entry = found.without_entry.len();
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(
        &(records.keys().collect::<Vec<_>>(), seen.keys().collect::<Vec<_>>()),
        &mut hasher,
    );
    found.state = std::hash::Hasher::finish(&hasher);
    Ok(found)
}

/// [`consistency`] once the worker's background stores have settled: read again every 250 ms until two
/// reads in a row find the same entries and records (at most 45 s). Answers are stored after they are
/// given, so after a burst of misses the stores go on for seconds; each writes its record, then its
/// entry, and counts alone could agree between two reads taken in the middle of two stores.
pub async fn settled_consistency(harness: &Harness) -> Result<Consistency> {
    let mut last = consistency(harness).await?;
    for _ in 0..180 {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let now = consistency(harness).await?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    Ok(last)
}
