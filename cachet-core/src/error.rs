//! The crate's one error type, wrapping the error of each concern.

use crate::config::ConfigError;
use crate::generations::GenerationError;
use crate::graphql::GraphqlError;
use crate::protocol::ProtocolError;
use crate::strategy::UnknownStrategy;
use crate::tags::TagError;

/// Any error cachet-core reports. Every variant is `Clone + PartialEq` so it can live in Yew state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `cachet.config.json` is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A GraphQL request body is GraphQL but unusable.
    #[error(transparent)]
    Graphql(#[from] GraphqlError),
    /// A message between contexts could not be decoded.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// An `X-SW-Strategy` value names no strategy.
    #[error(transparent)]
    Strategy(#[from] UnknownStrategy),
    /// A tag header is invalid; `header` names it.
    #[error("{header}: {source}")]
    Tags {
        /// The header, e.g. `x-cachet-tags`.
        header: &'static str,
        /// What was wrong.
        source: TagError,
    },
    /// A stored generation record (invalidation by generations) does not decode.
    #[error(transparent)]
    Generation(#[from] GenerationError),
    /// A stored record (for example the persisted mutation queue) could not be read back.
    #[error("stored {what} is unreadable: {message}")]
    StoredState {
        /// What was stored.
        what: &'static str,
        /// The decoder's message.
        message: String,
    },
}
