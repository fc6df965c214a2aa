//! The Service Worker's IndexedDB layout: one database, [`DATABASE`], that the worker writes and pages
//! read (their queue alarm reads the mutation queue, [`QUEUE`]). Written once here, for both edges and
//! for the tests that inspect or corrupt a record on purpose.
//!
//! | Object store | Keys | Records |
//! |---|---|---|
//! | [`ENTRIES`] | key path `url` | the entry index: `{ url, cache, tags, generation, storedAt, usedAt, … }`, with a multi-entry index [`TAGS_INDEX`] on `tags` and an index [`USE_INDEX`] on `[cache, usedAt]` |
//! | [`GENERATIONS`] | key path `tag` | one record per invalidated tag `{ tag, at }` and the clock `{ tag: "", clock, floor }` |
//! | [`IDENTITY`] | out of line | the signed-in user under [`IDENTITY_KEY`] |
//! | [`QUEUE`] | out of line | the whole mutation queue as JSON text under [`QUEUE_KEY`]; records that did not decode kept aside under `unreadable-<time>` |
//! | [`META`] | out of line | under [`MIGRATED_KEY`], that the databases of earlier builds were moved in (how many records); under `persisted <endpoint URL>`, what the endpoint's server holds of persisted queries ([`crate::graphql::persisted::Memory::to_text`]); nothing of a user, never purged |
//!
//! Until 0.x builds of November 2026 the same stores lived in three databases ([`LEGACY`]); the worker
//! moves them into [`DATABASE`] once, in one transaction that also writes [`MIGRATED_KEY`], then deletes
//! them.

/// The Cache Storage caches of the app shell: `cachet-shell-<build stamp>`, one per build, written whole
/// by the shim at install (the build's files its `cachet-build.js` lists) and read by the engine when the
/// network fails and its own cache has nothing; the shim deletes the earlier builds' at activation.
pub const SHELL_CACHE_PREFIX: &str = "cachet-shell-";

/// The Cache Storage caches of request names: `cachet-names-<build stamp>`, one per build. Each entry,
/// keyed by the shim's name of a whole request (a URL the shim makes from a SHA-256 of its method, URL,
/// headers and body), points at the stored answer a fresh cache-first hit of that request got
/// ([`crate::engine::plan::served_alone_until`]): its cache ([`NAME_ENTRY_CACHE_HEADER`]), its URL
/// ([`NAME_ENTRY_URL_HEADER`]), its stored-at mark (`X-Cachet-Stored-At`) and the time it stops being
/// served alone ([`NAME_UNTIL_HEADER`]). The engine writes them (cachet-worker's `sw::names`) and deletes
/// the cache before any change that could alter an answer (an invalidation, an identity written,
/// clear-all) is acknowledged; the shim of a stopped worker answers from them without the engine, and
/// deletes the earlier builds' at activation.
pub const NAMES_CACHE_PREFIX: &str = "cachet-names-";
/// A request name's header: the cache of the entry it points at.
pub const NAME_ENTRY_CACHE_HEADER: &str = "x-cachet-entry-cache";
/// A request name's header: the URL of the entry it points at.
pub const NAME_ENTRY_URL_HEADER: &str = "x-cachet-entry-url";
/// A request name's header: until when (Unix ms, exclusive) the entry is served alone.
pub const NAME_UNTIL_HEADER: &str = "x-cachet-served-alone-until";

/// The worker's database.
pub const DATABASE: &str = "cachet";
/// Its version (the layout above).
pub const VERSION: u32 = 1;
/// The entry index's object store.
pub const ENTRIES: &str = "entries";
/// The multi-entry index of [`ENTRIES`] on `tags`.
pub const TAGS_INDEX: &str = "tags";
/// The index of [`ENTRIES`] on `[cache, usedAt]`.
pub const USE_INDEX: &str = "cacheUsedAt";
/// The generations' object store.
pub const GENERATIONS: &str = "generations";
/// The identity's object store.
pub const IDENTITY: &str = "identity";
/// The key of the signed-in user's record in [`IDENTITY`].
pub const IDENTITY_KEY: &str = "current";
/// The object store of what the worker keeps about the database itself.
pub const META: &str = "meta";
/// The key, in [`META`], of the record that says the [`LEGACY`] databases were moved in.
pub const MIGRATED_KEY: &str = "migrated";
/// The mutation queue's object store.
pub const QUEUE: &str = "queue";
/// The key of the queue's record in [`QUEUE`].
pub const QUEUE_KEY: &str = "state";

/// What a worker instance reads first, in one readonly transaction, in this order: the migration mark,
/// the signed-in user, every generations record (`None`: every record of the store). A cold start's
/// first answer needs all three. The shim reads them as the worker's script is evaluated (`cachet
/// generate` writes this list into `cachet-sw-config.js`, `self.CACHET_DATABASE`), while the wasm
/// compiles; an engine given nothing by the shim reads them itself on its first open.
pub const START_READS: [(&str, Option<&str>); 3] =
    [(META, Some(MIGRATED_KEY)), (IDENTITY, Some(IDENTITY_KEY)), (GENERATIONS, None)];

/// The databases of earlier builds, each with the object stores moved from it into [`DATABASE`] (same
/// names, same records).
pub const LEGACY: [(&str, &[&str]); 3] = [
    ("cachet-sw-identity", &[IDENTITY]),
    ("cachet-sw-queue", &[QUEUE]),
    ("cachet-sw", &[ENTRIES, GENERATIONS]),
];
