//! The invalidations an instance of the engine (one worker, one page) has begun, so that a store can tell
//! whether the answer it is about to keep may predate one of them. Answers are stored after they are given
//! (`engine::commit`), so a request that began before an invalidation of its tags can land after it: such
//! an answer is not kept. Both edges' stores ask this one log.

use std::collections::VecDeque;

/// How many recent invalidations are remembered; a store that began before all of them counts as missed.
pub const REMEMBERED: usize = 256;

/// The number of the last invalidation begun, and the most recent ones as `(number, tags)`, `None` for a
/// clear-all (every entry).
#[derive(Debug, Default, Clone)]
pub struct Invalidations {
    last: u64,
    recent: VecDeque<(u64, Option<Vec<String>>)>,
}

impl Invalidations {
    /// The number of the last invalidation begun: a job notes it before it asks the network.
    pub fn begun(&self) -> u64 {
        self.last
    }

    /// Notes that an invalidation of `tags` (`None`: everything, a clear-all) begins.
    pub fn note(&mut self, tags: Option<&[String]>) {
        // A request asked from now on sends its own network call (`flights`).
        super::flights::invalidated();
        self.last += 1;
        self.recent.push_back((self.last, tags.map(<[String]>::to_vec)));
        if self.recent.len() > REMEMBERED {
            self.recent.pop_front();
        }
    }

    /// Whether an invalidation begun after number `since` covers an entry tagged `tags` (when it is no
    /// longer remembered, it might have: yes).
    pub fn since(&self, since: u64, tags: &[String]) -> bool {
        if self.last == since {
            return false;
        }
        if self.recent.front().is_none_or(|(oldest, _)| *oldest > since + 1) {
            return true;
        }
        let covers = |invalidated: &Option<Vec<String>>| {
            invalidated.as_ref().is_none_or(|invalidated| invalidated.iter().any(|tag| tags.contains(tag)))
        };
        self.recent.iter().filter(|(number, _)| *number > since).any(|(_, invalidated)| covers(invalidated))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|tag| (*tag).to_owned()).collect()
    }

    #[test]
    fn an_answer_predates_only_the_invalidations_of_its_tags_and_every_clear_begun_after_it() {
        let mut log = Invalidations::default();
        let begun = log.begun();
        assert!(!log.since(begun, &tags(&["todos"])), "nothing began since");
        log.note(Some(&tags(&["users"])));
        assert!(!log.since(begun, &tags(&["todos"])), "another tag");
        assert!(log.since(begun, &tags(&["todos", "users"])), "one of its tags");
        let later = log.begun();
        assert!(!log.since(later, &tags(&["users"])), "begun after the invalidation");
        log.note(None);
        assert!(log.since(later, &tags(&[])), "a clear covers every entry, even one without tags");
    }

    #[test]
    fn an_answer_older_than_every_remembered_invalidation_counts_as_missed() {
        let mut log = Invalidations::default();
        let begun = log.begun();
        for _ in 0..=REMEMBERED {
            log.note(Some(&tags(&["other"])));
        }
        assert!(log.since(begun, &tags(&["todos"])), "forgotten: it might have covered it");
        assert!(!log.since(log.begun() - 1, &tags(&["todos"])), "the last one is remembered");
    }
}
