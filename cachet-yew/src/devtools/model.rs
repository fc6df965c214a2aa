//! What the panel and its view share: a log line and the actions the view calls back with.

use cachet_core::protocol::SnapshotQuery;

/// One line of the event log.
#[derive(Clone, PartialEq)]
pub(crate) struct LogLine {
    pub(crate) at: String,
    pub(crate) text: String,
}

/// What the view calls back with.
pub(crate) enum Action {
    Toggle,
    Filter(SnapshotQuery),
    InvalidateTag(String),
    DropEntry(String),
    ReplayQueue,
    Retry(u64),
    Discard(u64),
    ClearAll,
    Refresh,
}
