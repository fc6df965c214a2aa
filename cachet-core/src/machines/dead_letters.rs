//! Acting on dead letters: the rules behind [`QueueEvent::RetryDeadLetters`] and
//! [`QueueEvent::DiscardDeadLetters`] of the queue reducer ([`QueueState::reduce`]).
//!
//! | Action | Then |
//! |---|---|
//! | retry `ids` | each goes back to the **end** of the queue, in the order they were given up (not the order of `ids`), keeping its id, with no attempts counted and due now; `mutation-queued` is announced for each; nothing is sent until the edge's following `Online` event. Behind the items that waited meanwhile: they were sent while it sat in the dead letters, so order among the living is kept |
//! | discard `ids` | deleted |
//! | an id that is not a dead letter | the whole action is refused ([`Refusal::NoSuchDeadLetter`] naming it); nothing changes |
//! | retrying more than the queue has room for (`maxItems`) | refused ([`Refusal::Full`]); nothing changes |
//!
//! **Its `Idempotency-Key` on a retry.** A letter given up as [`DeadLetterReason::Rejected`] or
//! [`DeadLetterReason::Unauthorized`] was refused by the server, which applied nothing: it gets a fresh
//! key, since a server that kept its refusal under the old key would answer the retry with that refusal
//! again, whatever was fixed since. One given up as [`DeadLetterReason::TooManyAttempts`] may have been
//! applied by a send whose answer was lost: it keeps its key, so that a server honouring keys applies it
//! at most once.
//!
//! [`QueueEvent::RetryDeadLetters`]: super::queue::QueueEvent::RetryDeadLetters
//! [`QueueEvent::DiscardDeadLetters`]: super::queue::QueueEvent::DiscardDeadLetters

use super::queue_model::{
    idempotency_key, DeadLetterReason, QueueEffect, QueueState, Refusal, IDEMPOTENCY_KEY_HEADER,
};
use crate::protocol::SwEvent;

/// Mixes an item's id into the caller's random bits, so that every retried item gets its own key.
fn key_bits(random: u128, id: u64) -> u128 {
    random ^ u128::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
}

impl QueueState {
    /// The first of `ids` that is not a dead letter, refused as such.
    fn unknown_dead_letter(&self, ids: &[u64], effects: &mut Vec<QueueEffect>) -> bool {
        let unknown = ids.iter().find(|id| !self.dead_letters.iter().any(|letter| letter.item.id == **id));
        if let Some(&id) = unknown {
            effects.push(QueueEffect::Refused(Refusal::NoSuchDeadLetter { id }));
        }
        unknown.is_some()
    }

    /// [`super::queue::QueueEvent::RetryDeadLetters`]. Nothing is sent here: the edge follows a retry
    /// with [`super::queue::QueueEvent::Online`] (a person asked for it now), which sends the head when due.
    pub(super) fn retry_dead_letters(
        &mut self,
        ids: &[u64],
        now: u64,
        random: u128,
        effects: &mut Vec<QueueEffect>,
    ) {
        if ids.is_empty() || self.unknown_dead_letter(ids, effects) {
            return;
        }
        let retried = self.dead_letters.iter().filter(|letter| ids.contains(&letter.item.id)).count();
        if self.items.len() + retried > self.bounds.max_items as usize {
            effects.push(QueueEffect::Refused(Refusal::Full));
            return;
        }
        let (back, kept) = std::mem::take(&mut self.dead_letters)
            .into_iter()
            .partition::<Vec<_>, _>(|letter| ids.contains(&letter.item.id));
        self.dead_letters = kept;
        effects.push(QueueEffect::Persist);
        for letter in back {
            let mut item = letter.item;
            if letter.reason != DeadLetterReason::TooManyAttempts {
                let fresh = idempotency_key(key_bits(random, item.id));
                item.request.headers.retain(|(name, _)| !name.eq_ignore_ascii_case(IDEMPOTENCY_KEY_HEADER));
                item.request.headers.push((IDEMPOTENCY_KEY_HEADER.to_owned(), fresh));
            }
            item.attempts = 0;
            item.auth_retried = false;
            item.next_attempt_at = now;
            let event =
                SwEvent::MutationQueued { id: item.id, operation_name: item.request.operation_name.clone() };
            effects.push(QueueEffect::Announce(event));
            self.items.push_back(item);
        }
    }

    /// [`super::queue::QueueEvent::DiscardDeadLetters`].
    pub(super) fn discard_dead_letters(&mut self, ids: &[u64], effects: &mut Vec<QueueEffect>) {
        if ids.is_empty() || self.unknown_dead_letter(ids, effects) {
            return;
        }
        self.dead_letters.retain(|letter| !ids.contains(&letter.item.id));
        effects.push(QueueEffect::Persist);
    }
}
