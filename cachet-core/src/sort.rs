//! One sort for every caller in cachet's wasm. The standard library's sorts are generic: every item type
//! sorted links its own copy of the sorting routine (pattern-defeating quicksort with its small sorts and
//! pivot selection, 2–3 KB of code each before gzip), and the bundler-free API linked five of them. Here
//! the routine is written once, over indices with a `dyn` comparison ([`order`]), and each item type
//! only applies the resulting permutation in place ([`sort_by`]: a few swaps). It is a stable bottom-up
//! merge sort, `O(n log n)` comparisons, tested against `slice::sort_by` (stable too: the same output,
//! ties included) as its oracle.

use std::cmp::Ordering;

/// The positions `0..len` in the order `compare` gives them (stable: equal items keep their order):
/// `order[k]` is the position of the item that goes `k`-th.
pub fn order(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut merged = vec![0; len];
    let mut width = 1;
    while width < len {
        let mut start = 0;
        while start < len {
            let middle = (start + width).min(len);
            let end = middle.saturating_add(width).min(len);
            let (mut left, mut right) = (start, middle);
            for slot in &mut merged[start..end] {
                // The left run's item on a tie: stable.
                let from_left = right >= end
                    || (left < middle && compare(order[left], order[right]) != Ordering::Greater);
                let taken = if from_left { &mut left } else { &mut right };
                *slot = order[*taken];
                *taken += 1;
            }
            start = end;
        }
        std::mem::swap(&mut order, &mut merged);
        width = width.saturating_mul(2);
    }
    order
}

/// Sorts `items` by `compare`, stably, as `slice::sort_by` does, through the one routine of [`order`].
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let mut order = order(items.len(), &|left, right| compare(&items[left], &items[right]));
    // The permutation applied in place, one cycle at a time: position `k` receives `order[k]`'s item.
    for start in 0..items.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The same output as the standard library's stable sort, ties included (the items carry their
        /// first position, and only the key is compared).
        #[test]
        fn sorts_as_the_standard_library_does(keys in proptest::collection::vec(0_u8..12, 0..80)) {
            let mut ours: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut oracle = ours.clone();
            sort_by(&mut ours, |left, right| left.0.cmp(&right.0));
            oracle.sort_by_key(|item| item.0);
            prop_assert_eq!(ours, oracle);
        }

        #[test]
        fn sorts_strings_descending_as_the_standard_library_does(
            words in proptest::collection::vec("[a-c]{0,3}", 0..40),
        ) {
            let mut ours = words.clone();
            let mut oracle = words;
            sort_by(&mut ours, |left, right| right.cmp(left));
            oracle.sort_by(|left, right| right.cmp(left));
            prop_assert_eq!(ours, oracle);
        }
    }

    #[test]
    fn the_order_of_nothing_and_of_one() {
        assert!(order(0, &|_, _| Ordering::Equal).is_empty());
        assert_eq!(order(1, &|_, _| Ordering::Equal), vec![0]);
        let mut items = [3, 1, 2];
        sort_by(&mut items, |left, right| left.cmp(right));
        assert_eq!(items, [1, 2, 3]);
    }
}
