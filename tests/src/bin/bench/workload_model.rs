//! The bench's vocabulary, shared by the workloads, the report and the profile phase: what is measured
//! ([`Workload`]), how many times ([`Settings`]), one measured cell ([`Measurement`]) and a variant's
//! origins ([`Site`]).

use crate::server::Origin;
use crate::variants::Variant;

/// What is measured, one row of the results table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A query answered from the cache, 1 KB.
    Hit1k,
    /// A query answered from the cache, 100 KB.
    Hit100k,
    /// A new query each time (1 KB): the server answers, the worker stores.
    Miss,
    /// A new query each time whose text is about 1 KB, sent whole (`/graphql`).
    MissText,
    /// The same, to `/graphql-apq`, where cachet sends it as its persisted-query hash (cachet only).
    MissHashed,
    /// The same with 1 000 entries stored.
    Miss1k,
    /// The same with 10 000 entries stored.
    Miss10k,
    /// A mutation that invalidates one stored query.
    Mutation,
    /// A mutation's fetch until the `cache-invalidated` broadcast reaches the page.
    InvalidationEvent,
    /// A mutation's fetch until the invalidated query has been read again (fresh, from the server).
    InvalidationFresh,
    /// A mutation's fetch until a `use_cachet_gql` component shows the fresh data (cachet only).
    HookRerender,
    /// A stopped worker until the first answer (a stored 1 KB query).
    ColdStart,
    /// `invalidate-tags` of one tag (100 entries) with 1 000 entries stored, until the ack.
    Invalidate1k,
    /// The same with 10 000 entries stored.
    Invalidate10k,
    /// A navigation with the worker stopped, until the page's first byte (server at once).
    NavFirstByte,
    /// The same, until the page's load event (its script and stylesheet loaded).
    NavLoad,
    /// A navigation with the worker stopped, until the first byte, each file answered 50 ms late.
    NavFirstByteRtt,
    /// The same, until the load event.
    NavLoadRtt,
    /// A stopped worker until the answer of a query it has not stored (1 KB; the server at once).
    ColdMiss,
    /// The same, the server answering 50 ms late.
    ColdMissRtt,
    /// A stopped worker until a script the page fetches has arrived (the app's default strategy,
    /// network-first for cachet and Workbox's route; the server 50 ms late).
    ColdAssetRtt,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 21] = [
        Workload::Hit1k,
        Workload::Hit100k,
        Workload::Miss,
        Workload::MissText,
        Workload::MissHashed,
        Workload::Miss1k,
        Workload::Miss10k,
        Workload::Mutation,
        Workload::Invalidate1k,
        Workload::Invalidate10k,
        Workload::ColdStart,
        Workload::ColdMiss,
        Workload::ColdMissRtt,
        Workload::ColdAssetRtt,
        Workload::InvalidationEvent,
        Workload::InvalidationFresh,
        Workload::HookRerender,
        Workload::NavFirstByte,
        Workload::NavLoad,
        Workload::NavFirstByteRtt,
        Workload::NavLoadRtt,
    ];

    /// The row title.
    pub fn title(self) -> &'static str {
        match self {
            Workload::Hit1k => "GraphQL hit, 1 KB",
            Workload::Hit100k => "GraphQL hit, 100 KB",
            Workload::Miss => "GraphQL miss, 1 KB (network + store)",
            Workload::MissText => "GraphQL miss, 1 KB query text sent whole",
            Workload::MissHashed => "GraphQL miss, 1 KB query text sent as its hash (persisted query, GET)",
            Workload::Miss1k => "GraphQL miss, 1k cached",
            Workload::Miss10k => "GraphQL miss, 10k cached",
            Workload::Mutation => "mutation invalidating 1 entry",
            Workload::InvalidationEvent => "mutation → `cache-invalidated` received in the page",
            Workload::InvalidationFresh => "mutation → event → fresh data read again",
            Workload::HookRerender => "mutation → `use_cachet_gql` re-rendered with fresh data",
            Workload::ColdStart => "cold start: stopped SW → first answer (stored 1 KB)",
            Workload::Invalidate1k => "invalidate 1 tag (100 entries), 1k cached",
            Workload::Invalidate10k => "invalidate 1 tag (100 entries), 10k cached",
            Workload::NavFirstByte => "navigation, stopped SW: first byte",
            Workload::NavLoad => "navigation, stopped SW: load (1 script, 1 stylesheet)",
            Workload::NavFirstByteRtt => "navigation, stopped SW, 50 ms round trip: first byte",
            Workload::NavLoadRtt => "navigation, stopped SW, 50 ms round trip: load",
            Workload::ColdMiss => "cold miss: stopped SW → answer of a new 1 KB query",
            Workload::ColdMissRtt => "cold miss, 50 ms round trip",
            Workload::ColdAssetRtt => "first asset after a stop, 50 ms round trip (a script, network-first)",
        }
    }

    /// Whether the workload means anything for `variant` (tags and workers need a worker).
    pub fn applies_to(self, variant: Variant) -> bool {
        match self {
            Workload::HookRerender | Workload::MissHashed => variant == Variant::Cachet,
            Workload::InvalidationEvent
            | Workload::InvalidationFresh
            | Workload::Invalidate1k
            | Workload::Invalidate10k
            | Workload::Miss1k
            | Workload::Miss10k => variant != Variant::NoSw,
            _ => true,
        }
    }
}

/// Iteration counts: `(timed, warm-up)` per workload.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Each hit workload.
    pub hit: (u64, u64),
    /// The miss workload.
    pub miss: (u64, u64),
    /// The mutation workload.
    pub mutation: (u64, u64),
    /// The invalidation → event workload.
    pub event: (u64, u64),
    /// The mutation → hook re-rendered workload.
    pub hook: (u64, u64),
    /// Each invalidate-tags workload (each round seeds its 100 entries again first).
    pub invalidate: (u64, u64),
    /// The misses timed at each of the two cache sizes.
    pub miss_at_size: (u64, u64),
    /// Cold starts (no warm-up: each one is a first answer).
    pub cold: u64,
    /// Navigations with a stopped worker, at each round trip (after one untimed).
    pub nav: u64,
    /// Cold starts traced step by step (`crate::cold_trace`).
    pub cold_traced: u64,
    /// Entries stored for the small and the large invalidation case.
    pub cached: (u64, u64),
}

impl Settings {
    /// The figures of BENCHMARKS.md.
    pub const FULL: Settings = Settings {
        hit: (200, 20),
        miss: (200, 10),
        mutation: (100, 10),
        event: (50, 5),
        hook: (50, 5),
        invalidate: (20, 2),
        miss_at_size: (20, 2),
        cold: 20,
        nav: 20,
        cold_traced: 15,
        cached: (1_000, 10_000),
    };

    /// A smoke run: every workload and check, few iterations, small caches.
    pub const QUICK: Settings = Settings {
        hit: (20, 3),
        miss: (20, 2),
        mutation: (10, 2),
        event: (5, 1),
        hook: (5, 1),
        invalidate: (3, 1),
        miss_at_size: (5, 1),
        cold: 3,
        nav: 3,
        cold_traced: 3,
        cached: (300, 600),
    };
}

/// One measured row cell.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// What.
    pub workload: Workload,
    /// Who.
    pub variant: Variant,
    /// Milliseconds, one per timed iteration.
    pub samples: Vec<f64>,
}

/// A variant's two origins: `main` for most workloads, `fresh` (empty storage) for the invalidation runs.
pub struct Site {
    /// The variant.
    pub variant: Variant,
    /// Its main origin.
    pub main: Origin,
    /// Its origin for the invalidation runs, which start from an empty cache.
    pub fresh: Origin,
    /// Its origin for the spans of the profile phase (a traced copy of its worker).
    pub traced: Origin,
    /// Its origin for the CPU profiles (the worker itself; cachet's wasm with function names).
    pub profiled: Origin,
    /// Its origin for the cold starts traced step by step (a traced copy of its worker, its real wasm).
    pub cold: Origin,
    /// cachet's origin for the persisted-query row: its worker built with `persisted-queries`, the bench's
    /// config with an endpoint `/graphql-apq` whose queries go as hashes (`None` for the other variants).
    pub apq: Option<Origin>,
}

/// Which rows a run measures (`--rows`): those whose title contains one of the filters, or all.
pub struct Rows(Vec<String>);

impl Rows {
    /// Every row when `filters` is empty.
    pub fn new(filters: &[String]) -> Rows {
        Rows(filters.iter().map(|filter| filter.to_lowercase()).collect())
    }

    /// Whether the row titled `title` runs.
    pub fn wants(&self, title: &str) -> bool {
        let title = title.to_lowercase();
        self.0.is_empty() || self.0.iter().any(|filter| title.contains(filter.as_str()))
    }
}
