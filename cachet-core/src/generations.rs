//! Invalidation by generations: whether a stored entry is still current, decided in one place.
//!
//! The worker keeps one logical clock and, per tag, the clock value of its last invalidation. An
//! invalidation ([`Generations::bump`]) advances the clock and sets each of its tags to the new value: one
//! small write, whatever the number of entries the tags carry. Every entry records the clock value read
//! when its request *began* (before it asked the network) and its tags, in its stored response's
//! [`GENERATION_HEADER`] ([`stamp_header`]) and in its index record. An entry is current
//! ([`Generations::is_current`]) when it was begun at or after the [`floor`](Generations::floor) and no
//! tag of it was invalidated after it began; anything else is absent to the reader: a miss that goes to
//! the network, whose fresh answer replaces it. Stale entries are deleted later, in the background.
//!
//! Reading the clock when the request begins, not when its answer is stored, is what keeps an answer
//! that was on its way during an invalidation from coming back as fresh: its generation predates the
//! invalidation of any of its tags, including tags only its answer names (`X-SW-Cache-Tags`).
//!
//! The safe side everywhere: an entry without a readable stamp, a tag record that does not decode (it
//! counts as invalidated now), a lost clock (everything stored before is invalidated) all make entries
//! absent, never stale. Tags whose stale entries are all swept are forgotten ([`Generations::prune`]);
//! beyond [`MAX_PENDING_TAGS`] pending tags the oldest are folded into the floor (every entry begun before
//! it is invalidated: spurious misses, bounded memory).
//!
//! ```
//! use cachet_core::generations::{stamp_header, Generations};
//!
//! let mut generations = Generations::default();
//! let begun = generations.clock(); // a query begins
//! let header = stamp_header(begun, &["notes".to_owned()]);
//! assert!(generations.is_current_stamp(Some(&header)));
//! generations.bump(&["notes".to_owned()]); // a mutation invalidates `notes`
//! assert!(!generations.is_current_stamp(Some(&header)));
//! let again = stamp_header(generations.clock(), &["notes".to_owned()]); // the query again
//! assert!(generations.is_current_stamp(Some(&again)));
//! ```

pub use crate::protocol::headers::GENERATION_HEADER;
/// The key of the stored record holding the clock and the floor (no tag is empty).
pub const CLOCK_KEY: &str = "";
/// How many invalidated tags are remembered before the oldest are folded into the floor.
pub const MAX_PENDING_TAGS: usize = 1024;
/// The largest generation (JavaScript's largest safe integer: stored as a number in IndexedDB).
pub const MAX_GENERATION: u64 = 9_007_199_254_740_991;

/// A stored generation record that does not decode: the record is named, treated as invalidated now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("generation record {} is unreadable ({problem}); treated as invalidated", crate::json::quoted(.key))]
pub struct GenerationError {
    /// The record's key: the tag, or `""` for the clock.
    pub key: String,
    /// What is wrong with it.
    pub problem: String,
}

/// One stored record as the edge read it: its key and its number fields (`None`: missing or not a number).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredRecord {
    /// The record's key: a tag, or [`CLOCK_KEY`].
    pub key: String,
    /// A tag record's `at`: the clock value of the tag's last invalidation.
    pub at: Option<f64>,
    /// The clock record's `clock`.
    pub clock: Option<f64>,
    /// The clock record's `floor`.
    pub floor: Option<f64>,
}

impl StoredRecord {
    /// The clock record's `(clock, floor)` when it is readable: both generations, the floor not past
    /// the clock. `None` for a tag record, or an unreadable clock (a lost clock: [`Generations::load`]
    /// then needs the newest generation the entries carry).
    pub fn readable_clock(&self) -> Option<(u64, u64)> {
        let clock = self.clock.and_then(generation_of)?;
        let floor = self.floor.and_then(generation_of)?;
        (self.key == CLOCK_KEY && floor <= clock).then_some((clock, floor))
    }
}

/// The current generations: the clock, the floor and each invalidated tag's generation.
///
/// The tags are a vector, not a map: a handful wait at a time (until a sweep forgets them), and a map's
/// code costs the worker's wasm kilobytes (issue 16); lookups stay linear in the waiting tags only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generations {
    clock: u64,
    floor: u64,
    /// `(tag, generation)`, each tag once, in no particular order.
    tags: Vec<(String, u64)>,
}

/// What [`Generations::load`] found: the generations, and each unreadable record (already accounted
/// for on the safe side). `repair`: the stored records must be written again from
/// [`Generations::records`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The generations to run with.
    pub generations: Generations,
    /// Every record that did not decode.
    pub problems: Vec<GenerationError>,
    /// Whether the stored records differ from [`Generations::records`] and must be rewritten.
    pub repair: bool,
}

/// What one [`Generations::bump`] changed: the stored records to write and to delete, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bump {
    /// The new clock, which is each bumped tag's generation.
    pub clock: u64,
    /// The floor after it (raised only by folding).
    pub floor: u64,
    /// Tags folded into the floor: their records are deleted.
    pub folded: Vec<String>,
}

/// A stored number as a generation: a finite, non-negative integer no larger than [`MAX_GENERATION`].
pub fn generation_of(value: f64) -> Option<u64> {
    let whole = value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_GENERATION as f64;
    whole.then_some(value as u64)
}

/// The [`GENERATION_HEADER`] value of an entry begun at `generation` carrying `tags`.
pub fn stamp_header(generation: u64, tags: &[String]) -> String {
    let mut header = generation.to_string();
    for (index, tag) in tags.iter().enumerate() {
        header.push(if index == 0 { ' ' } else { ',' });
        header.push_str(tag);
    }
    header
}

impl Generations {
    /// The clock: what a request beginning now records as its generation.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Entries begun before the floor are invalidated, whatever their tags.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// The generation of `tag`'s last remembered invalidation.
    pub fn tag(&self, tag: &str) -> Option<u64> {
        self.tags.iter().find(|(known, _)| known == tag).map(|(_, at)| *at)
    }

    /// The remembered invalidated tags with their generations.
    pub fn pending(&self) -> impl Iterator<Item = (&str, u64)> {
        self.tags.iter().map(|(tag, at)| (tag.as_str(), *at))
    }

    /// Sets `tag`'s generation to `at`.
    fn set(&mut self, tag: &str, at: u64) {
        match self.tags.iter_mut().find(|(known, _)| known == tag) {
            Some((_, known)) => *known = at,
            None => self.tags.push((tag.to_owned(), at)),
        }
    }

    /// Whether an entry begun at `generation` carrying `tags` is current: begun at or after the floor,
    /// and after the last invalidation of each of its tags. `None` (no readable generation) is never current.
    pub fn is_current<'t>(&self, generation: Option<u64>, tags: impl IntoIterator<Item = &'t str>) -> bool {
        let Some(generation) = generation else { return false };
        generation >= self.floor
            && (self.tags.is_empty()
                || tags.into_iter().all(|tag| self.tag(tag).is_none_or(|at| at <= generation)))
    }

    /// [`Generations::is_current`] of a stored response's [`GENERATION_HEADER`] value: the hit path's
    /// check. A missing or unreadable header (an entry stored by an earlier version) is not current.
    pub fn is_current_stamp(&self, header: Option<&str>) -> bool {
        let Some(header) = header else { return false };
        let (generation, tags) = header.split_once(' ').unwrap_or((header, ""));
        let generation = generation.parse::<u64>().ok();
        self.is_current(generation, tags.split(',').filter(|tag| !tag.is_empty()))
    }

    /// Invalidates `tags`: the clock advances and each tag takes its value. Beyond [`MAX_PENDING_TAGS`]
    /// remembered tags the oldest are folded into the floor.
    pub fn bump(&mut self, tags: &[String]) -> Bump {
        self.clock = (self.clock + 1).min(MAX_GENERATION);
        for tag in tags {
            self.set(tag, self.clock);
        }
        let mut folded = Vec::new();
        while self.tags.len() > MAX_PENDING_TAGS {
            // The oldest: one more than the limit after a bump of a few tags, so a scan, not a sort.
            let Some(oldest) = (0..self.tags.len()).min_by_key(|&index| self.tags[index].1) else { break };
            let (tag, at) = self.tags.swap_remove(oldest);
            self.floor = self.floor.max(at);
            folded.push(tag);
        }
        Bump { clock: self.clock, floor: self.floor, folded }
    }

    /// A clear-all: every entry begun until now is invalidated (the floor passes the clock), and no tag
    /// needs remembering. Returns the new clock.
    pub fn clear(&mut self) -> u64 {
        self.clock = (self.clock + 1).min(MAX_GENERATION);
        self.floor = self.clock;
        self.tags.clear();
        self.clock
    }

    /// Forgets the tags invalidated at or before `up_to`, once no stale entry of theirs is left (a
    /// complete sweep begun when the clock was `up_to`). Returns the forgotten tags.
    pub fn prune(&mut self, up_to: u64) -> Vec<String> {
        let forgotten: Vec<String> =
            self.tags.iter().filter(|(_, at)| *at <= up_to).map(|(tag, _)| tag.clone()).collect();
        self.tags.retain(|(_, at)| *at > up_to);
        forgotten
    }

    /// The records that store these generations: the clock record `(clock, floor)` and each tag's.
    pub fn records(&self) -> ((u64, u64), Vec<(String, u64)>) {
        ((self.clock, self.floor), self.tags.clone())
    }

    /// The generations stored as `records` (the clock record under [`CLOCK_KEY`], one per tag), with
    /// `newest_entry` the largest generation an entry index record carries (used when the clock is lost).
    ///
    /// - No records at all: a new store, the clock starts at `newest_entry` (and is written: `repair`).
    /// - The clock record missing or unreadable while tags are stored (or unreadable on its own): the
    ///   clock is lost. It restarts past every generation known (tags, entries), and the floor with it:
    ///   every entry stored before is invalidated.
    /// - A tag record that does not decode: that tag is invalidated now (past the clock).
    pub fn load(records: &[StoredRecord], newest_entry: u64) -> Loaded {
        let mut problems = Vec::new();
        let mut generations = Generations::default();
        let mut unreadable_tags = Vec::new();
        let mut clock_record = None;
        for record in records {
            if record.key == CLOCK_KEY {
                // No number in the message: formatting floats costs the worker's wasm kilobytes.
                clock_record = Some(record.readable_clock().ok_or_else(|| GenerationError {
                    key: record.key.clone(),
                    problem: "its clock and floor are not generations".to_owned(),
                }));
                continue;
            }
            match record.at.and_then(generation_of) {
                Some(at) => generations.set(&record.key, at),
                None => {
                    let problem = "its generation is not a whole number".to_owned();
                    problems.push(GenerationError { key: record.key.clone(), problem });
                    unreadable_tags.push(record.key.clone());
                }
            }
        }
        let known = generations.tags.iter().map(|(_, at)| *at).max().unwrap_or(0).max(newest_entry);
        let mut repair = !unreadable_tags.is_empty();
        let (mut clock, mut floor) = match clock_record {
            Some(Ok((clock, floor))) => (clock.max(known), floor),
            Some(Err(problem)) => {
                problems.push(problem);
                repair = true;
                let lost = (known + 1).min(MAX_GENERATION);
                (lost, lost)
            }
            None if generations.tags.is_empty() && unreadable_tags.is_empty() => {
                // A new store: its clock record is written now, so that no later start reads the entries.
                repair = true;
                (newest_entry, 0)
            }
            None => {
                problems.push(GenerationError {
                    key: CLOCK_KEY.to_owned(),
                    problem: "missing while tags are stored".to_owned(),
                });
                repair = true;
                let lost = (known + 1).min(MAX_GENERATION);
                (lost, lost)
            }
        };
        if !unreadable_tags.is_empty() {
            clock = (clock + 1).min(MAX_GENERATION);
            for tag in unreadable_tags {
                generations.set(&tag, clock);
            }
        }
        // Tags at or below the floor add nothing the floor does not already say.
        generations.tags.retain(|(_, at)| *at > floor);
        floor = floor.min(clock);
        (generations.clock, generations.floor) = (clock, floor);
        Loaded { generations, problems, repair }
    }
}
