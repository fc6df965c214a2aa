//! Devtools calls: what the Service Worker holds ([`Client::devtools_snapshot`], one page of entries at a
//! time), dead letters you can act on ([`Client::dead_letters`], [`Client::retry_dead_letters`],
//! [`Client::discard_dead_letters`]), and the panel's other actions ([`Client::drop_entries`],
//! [`Client::replay_queue`], [`Client::clear_caches`]; invalidating a tag is
//! [`Client::invalidate_by_tag`]).
//!
//! Each goes to the worker that controls the page (or the active worker of its registration) and awaits
//! its answer; without a Service Worker it fails with [`Error::NoServiceWorker`], and a refusal (an id
//! that is not a dead letter, say) is [`Error::ServiceWorkerRefused`] with the worker's reason.
//!
//! ```no_run
//! # async fn run(client: cachet_client::Client) -> Result<(), cachet_client::Error> {
//! use cachet_core::protocol::SnapshotQuery;
//! let snapshot = client.devtools_snapshot(SnapshotQuery { tag: Some("todos".into()), ..Default::default() }).await?;
//! for entry in &snapshot.entries.items {
//!     println!("{} {:?} {} bytes", entry.request, entry.tags, entry.size);
//! }
//! let dead: Vec<u64> = client.dead_letters().await?.iter().map(|letter| letter.id).collect();
//! client.retry_dead_letters(&dead).await?; // back in the queue, replayed in order
//! # Ok(()) }
//! ```

use cachet_core::protocol::{DeadLetterView, PageToSw, SnapshotQuery, StateSnapshot, SwToPage};

use crate::link::Answered;
use crate::{Client, Error};

impl Client {
    async fn devtools_call(&self, make: impl FnOnce(u64) -> PageToSw) -> Result<Answered, Error> {
        self.inner.ready().await;
        let link = &self.inner.transport.link;
        let Some(worker) = link.service_worker().await else {
            return Err(Error::NoServiceWorker);
        };
        link.exchange(&worker, make, None).await
    }

    /// One page of what the Service Worker holds, as `query` filters it: entries (request, tags, size,
    /// times, strategy), the tag index, the queue and its dead letters, the identity (never a token), the
    /// config in force. Ask again with `after: snapshot.entries.next` for the next page.
    #[inline(never)]
    pub fn devtools_snapshot<'a>(
        &'a self,
        query: SnapshotQuery,
    ) -> futures::future::LocalBoxFuture<'a, Result<StateSnapshot, Error>> {
        Box::pin(async move {
            StateSnapshot::from_value(self.devtools_snapshot_tree(query).await?).map_err(|error| {
                Error::Decode { what: "the service worker's snapshot".to_owned(), message: error.to_string() }
            })
        })
    }

    /// [`Client::devtools_snapshot`] as the worker wrote it, a JSON tree, not decoded: for a page that
    /// only shows it (the bundler-free API's `getSnapshot`, whose wasm then links neither the snapshot's
    /// decoder nor its writer). The worker's answer is a snapshot all the same: any other is an error.
    #[inline(never)]
    pub fn devtools_snapshot_tree<'a>(
        &'a self,
        query: SnapshotQuery,
    ) -> futures::future::LocalBoxFuture<'a, Result<cachet_core::json::Value, Error>> {
        Box::pin(async move {
            let answered =
                self.devtools_call(|request_id| PageToSw::SnapshotRequest { request_id, query }).await?;
            match answered.answer {
                SwToPage::Snapshot { snapshot, .. } => Ok(snapshot),
                _ => Err(answered.unexpected()),
            }
        })
    }

    /// The mutations the queue gave up, oldest first, with why.
    #[inline(never)]
    pub fn dead_letters<'a>(
        &'a self,
    ) -> futures::future::LocalBoxFuture<'a, Result<Vec<DeadLetterView>, Error>> {
        Box::pin(async move {
            let query = SnapshotQuery { limit: 1, ..SnapshotQuery::default() };
            Ok(self.devtools_snapshot(query).await?.queue.dead_letters)
        })
    }

    /// Puts the dead letters `ids` back at the end of the queue, in the order they were given up, and
    /// replays it. Refused whole, changing nothing, when one of `ids` is not a dead letter.
    #[inline(never)]
    pub fn retry_dead_letters<'a>(
        &'a self,
        ids: &'a [u64],
    ) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let ids = ids.to_vec();
            self.devtools_call(|request_id| PageToSw::RetryDeadLetters { request_id, ids }).await.map(drop)
        })
    }

    /// Deletes the dead letters `ids`. Refused whole, changing nothing, when one is not a dead letter.
    #[inline(never)]
    pub fn discard_dead_letters<'a>(
        &'a self,
        ids: &'a [u64],
    ) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let ids = ids.to_vec();
            self.devtools_call(|request_id| PageToSw::DiscardDeadLetters { request_id, ids }).await.map(drop)
        })
    }

    /// Removes the entries at these cache URLs ([`cachet_core::protocol::EntryView::url`]).
    #[inline(never)]
    pub fn drop_entries<'a>(
        &'a self,
        urls: &'a [String],
    ) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let urls = urls.to_vec();
            self.devtools_call(|request_id| PageToSw::DropEntries { request_id, urls }).await.map(drop)
        })
    }

    /// Asks the Service Worker to replay the mutation queue now (`replay-queue`); no answer.
    pub fn replay_queue(&self) {
        self.inner.transport.link.notify(&PageToSw::ReplayQueue);
    }

    /// Empties every cachet cache, the entry index and the queue (`clear-all`), keeping the signed-in
    /// user: the worker is told who is signed in again at once, so their requests stay in their partition.
    #[inline(never)]
    pub fn clear_caches<'a>(&'a self) -> futures::future::LocalBoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            self.inner.transport.cache.borrow_mut().clear();
            self.devtools_call(|request_id| PageToSw::ClearAll { request_id }).await?;
            self.inner.session.sync_identity().await
        })
    }
}
