//! `cachet_core::generations`: the staleness rule, the stamp header, bumping, folding, pruning, and
//! loading stored records (unreadable ones on the safe side).

use cachet_core::generations::{
    generation_of, stamp_header, Generations, StoredRecord, CLOCK_KEY, MAX_GENERATION, MAX_PENDING_TAGS,
};

fn tags(list: &[&str]) -> Vec<String> {
    list.iter().map(|tag| (*tag).to_owned()).collect()
}

fn record(key: &str, at: f64) -> StoredRecord {
    StoredRecord { key: key.to_owned(), at: Some(at), ..StoredRecord::default() }
}

fn clock_record(clock: Option<f64>, floor: Option<f64>) -> StoredRecord {
    StoredRecord { key: CLOCK_KEY.to_owned(), clock, floor, ..StoredRecord::default() }
}

/// Generations after bumping each list in turn, from a fresh store.
fn after(bumps: &[&[&str]]) -> Generations {
    let mut generations = Generations::default();
    for bump in bumps {
        generations.bump(&tags(bump));
    }
    generations
}

/// (bumps before, entry generation, entry tags, current?)
type Row = (&'static [&'static [&'static str]], Option<u64>, &'static [&'static str], bool);

#[test]
fn an_entry_is_current_until_one_of_its_tags_is_invalidated_after_it_began() {
    let table: &[Row] = &[
        (&[], Some(0), &["a"], true),
        (&[], Some(0), &[], true),
        (&[], None, &["a"], false),
        (&[&["a"]], Some(0), &["a"], false),
        (&[&["a"]], Some(0), &["b"], true),
        (&[&["a"]], Some(0), &["b", "a"], false),
        (&[&["a"]], Some(1), &["a"], true),
        (&[&["a"], &["b"]], Some(1), &["a", "b"], false),
        (&[&["a"], &["b"]], Some(1), &["a"], true),
        (&[&["a"], &["b"]], Some(2), &["a", "b"], true),
        (&[&["a", "b"]], Some(0), &["b"], false),
    ];
    for (bumps, generation, entry_tags, want) in table {
        let generations = after(bumps);
        assert_eq!(
            generations.is_current(*generation, entry_tags.iter().copied()),
            *want,
            "bumps {bumps:?}, entry {generation:?} {entry_tags:?}"
        );
        let header = generation.map(|generation| stamp_header(generation, &tags(entry_tags)));
        assert_eq!(generations.is_current_stamp(header.as_deref()), *want, "header {header:?}");
    }
}

#[test]
fn the_stamp_header_is_the_generation_then_the_tags() {
    assert_eq!(stamp_header(7, &tags(&[])), "7");
    assert_eq!(stamp_header(7, &tags(&["a"])), "7 a");
    assert_eq!(stamp_header(12, &tags(&["notes", "note:4"])), "12 notes,note:4");
}

#[test]
fn an_unreadable_stamp_is_never_current() {
    let generations = Generations::default();
    for header in
        [None, Some(""), Some("x"), Some("-1 a"), Some("1.5"), Some(" a"), Some("99999999999999999999")]
    {
        assert!(!generations.is_current_stamp(header), "{header:?}");
    }
    assert!(generations.is_current_stamp(Some("0")));
}

#[test]
fn a_request_begun_during_an_invalidation_is_stale_even_for_tags_only_its_answer_names() {
    let mut generations = Generations::default();
    let begun = generations.clock();
    generations.bump(&tags(&["server-tag"]));
    // The answer arrives with `X-SW-Cache-Tags: server-tag`, stored with the generation of its beginning.
    assert!(!generations.is_current_stamp(Some(&stamp_header(begun, &tags(&["client", "server-tag"])))));
    assert!(generations.is_current_stamp(Some(&stamp_header(begun, &tags(&["client"])))));
}

#[test]
fn beyond_the_pending_limit_the_oldest_tags_fold_into_the_floor() {
    let mut generations = Generations::default();
    for index in 0..MAX_PENDING_TAGS {
        let bump = generations.bump(&[format!("t{index}")]);
        assert!(bump.folded.is_empty());
    }
    let entry = generations.clock();
    let bump = generations.bump(&tags(&["one-more"]));
    assert_eq!(bump.folded, tags(&["t0"]));
    assert_eq!(bump.floor, 1);
    assert_eq!(generations.pending().count(), MAX_PENDING_TAGS);
    // Folding only ever invalidates more: what was stale stays stale.
    assert!(!generations.is_current(Some(0), ["unrelated"]));
    assert!(generations.is_current(Some(entry), ["t0"]));
    assert!(!generations.is_current(Some(entry), ["one-more"]));
}

#[test]
fn clear_invalidates_everything_begun_before_and_forgets_the_tags() {
    let mut generations = after(&[&["a"], &["b"]]);
    let before = generations.clock();
    let cleared = generations.clear();
    assert_eq!(cleared, before + 1);
    assert_eq!(generations.pending().count(), 0);
    assert!(!generations.is_current(Some(before), ["c"]));
    assert!(generations.is_current(Some(cleared), ["a"]));
}

#[test]
fn prune_forgets_only_tags_invalidated_up_to_the_sweep() {
    let mut generations = after(&[&["a"], &["b"]]);
    assert_eq!(generations.prune(1), tags(&["a"]));
    assert_eq!(generations.tag("b"), Some(2));
    assert_eq!(generations.clock(), 2, "the clock never goes back");
}

#[test]
fn generations_are_safe_integers() {
    for (value, want) in [
        (0.0, Some(0)),
        (3.0, Some(3)),
        (MAX_GENERATION as f64, Some(MAX_GENERATION)),
        (-1.0, None),
        (1.5, None),
        (f64::NAN, None),
        (f64::INFINITY, None),
        (1e300, None),
    ] {
        assert_eq!(generation_of(value), want, "{value}");
    }
}

#[test]
fn loading_round_trips_what_was_stored() {
    let generations = after(&[&["a"], &["b", "c"], &["a"]]);
    let ((clock, floor), stored_tags) = generations.records();
    let mut records = vec![clock_record(Some(clock as f64), Some(floor as f64))];
    records.extend(stored_tags.iter().map(|(tag, at)| record(tag, *at as f64)));
    let loaded = Generations::load(&records, 0);
    assert_eq!(loaded.generations, generations);
    assert!(loaded.problems.is_empty());
    assert!(!loaded.repair);
}

#[test]
fn a_new_store_starts_its_clock_at_the_newest_entry() {
    let loaded = Generations::load(&[], 41);
    assert_eq!((loaded.generations.clock(), loaded.generations.floor()), (41, 0));
    assert!(loaded.problems.is_empty());
    assert!(loaded.repair, "the clock record is written once");
}

#[test]
fn an_unreadable_tag_record_is_named_and_counts_as_invalidated_now() {
    let records = [
        clock_record(Some(5.0), Some(0.0)),
        record("a", 3.0),
        StoredRecord { key: "broken".to_owned(), at: None, ..StoredRecord::default() },
        StoredRecord { key: "negative".to_owned(), at: Some(-4.0), ..StoredRecord::default() },
    ];
    let loaded = Generations::load(&records, 5);
    let named: Vec<&str> = loaded.problems.iter().map(|problem| problem.key.as_str()).collect();
    assert_eq!(named, ["broken", "negative"]);
    assert!(loaded.problems[0].to_string().contains("\"broken\""));
    assert!(loaded.repair);
    let generations = &loaded.generations;
    assert_eq!(generations.clock(), 6);
    assert!(!generations.is_current(Some(5), ["broken"]), "entries begun before are invalidated");
    assert!(generations.is_current(Some(6), ["broken"]), "entries begun after are current");
    assert!(generations.is_current(Some(5), ["other"]), "nothing else is lost");
    assert!(!generations.is_current(Some(2), ["a"]), "the readable tags are kept");
}

#[test]
fn a_lost_clock_invalidates_every_entry_stored_before() {
    for records in [
        vec![clock_record(None, Some(0.0)), record("a", 3.0)],
        vec![clock_record(Some(2.0), Some(5.0))],
        vec![clock_record(Some(f64::NAN), None)],
        vec![record("a", 3.0)],
    ] {
        let loaded = Generations::load(&records, 9);
        assert!(loaded.problems.iter().any(|problem| problem.key == CLOCK_KEY), "{records:?}");
        assert!(loaded.repair);
        let generations = &loaded.generations;
        assert_eq!(generations.clock(), 10, "past every known generation: {records:?}");
        assert!(!generations.is_current(Some(9), ["z"]), "{records:?}");
        assert!(generations.is_current(Some(10), ["a"]), "{records:?}");
    }
}

#[test]
fn a_clock_behind_its_tags_catches_up() {
    let loaded = Generations::load(&[clock_record(Some(1.0), Some(0.0)), record("a", 4.0)], 0);
    assert_eq!(loaded.generations.clock(), 4);
    assert!(loaded.problems.is_empty());
}

#[test]
fn only_a_readable_clock_record_spares_reading_the_entries() {
    assert_eq!(clock_record(Some(4.0), Some(2.0)).readable_clock(), Some((4, 2)));
    for unreadable in [
        clock_record(None, Some(0.0)),
        clock_record(Some(f64::NAN), Some(0.0)),
        clock_record(Some(1.0), Some(2.0)),
        record("a", 3.0),
        StoredRecord { key: "a".to_owned(), clock: Some(3.0), floor: Some(0.0), ..StoredRecord::default() },
    ] {
        assert_eq!(unreadable.readable_clock(), None, "{unreadable:?}");
    }
}
