//! `retry-dead-letters {ids}` and `discard-dead-letters {ids}`: the core's queue reducer decides
//! ([`QueueEvent::RetryDeadLetters`], [`QueueEvent::DiscardDeadLetters`], see
//! `cachet_core::machines::dead_letters`); this module stores the new state in one transaction
//! ([`queue_store::update`]), announces what the reducer announces, and after a retry the `messages` handler
//! answers, then replays the queue (the `Online` trigger: a person asked for it now). An id that is not a dead letter,
//! or a retry the queue has no room for, is refused with an error naming it, and nothing changes.

use cachet_core::config::Config;
use cachet_core::machines::queue::{QueueEffect, QueueEvent, Refusal};

use super::broadcast::broadcast;
use super::clock;
use super::queue_store;
use crate::Error;

/// Puts the dead letters `ids` back in the queue; the caller then replays it ([`Trigger::Online`]).
pub(crate) async fn retry(ids: Vec<u64>, config: &Config) -> Result<(), Error> {
    let event = QueueEvent::RetryDeadLetters { ids, now: clock::now_ms(), random: clock::random_u128() };
    apply(event, config).await
}

/// Deletes the dead letters `ids`.
pub(crate) async fn discard(ids: Vec<u64>, config: &Config) -> Result<(), Error> {
    apply(QueueEvent::DiscardDeadLetters { ids }, config).await
}

async fn apply(event: QueueEvent, config: &Config) -> Result<(), Error> {
    let effects = queue_store::update(config.queue, &|state| state.reduce(event.clone())).await?;
    for effect in effects {
        match effect {
            QueueEffect::Refused(Refusal::NoSuchDeadLetter { id }) => {
                return Err(Error::NotADeadLetter { id });
            }
            QueueEffect::Refused(_) => {
                return Err(Error::QueueFull);
            }
            QueueEffect::Announce(event) => {
                if let Err(error) = broadcast(&event) {
                    web_sys::console::error_1(&format!("cachet: {error}").into());
                }
            }
            _ => {}
        }
    }
    Ok(())
}
