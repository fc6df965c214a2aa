//! [`all_at_once`]: run several futures at once and collect their results, the first error winning.
//!
//! Hand-written for size: `futures::future::try_join_all` decides at run time between a small path and
//! one built on `FuturesOrdered`, so both are linked into the Service Worker (about 7 KB of its gzipped
//! wasm across its three uses). This one is a single `poll_fn` over a vector. The tests below hold it to
//! `try_join_all` as an oracle: same results, same order, same first error.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Polls every future of `futures` until all are done, all started on the first poll (so that browser
/// requests are all issued before any is awaited), and resolves to their results in the order given.
/// The first error (in completion order) is returned at once; the other futures are dropped then.
pub async fn all_at_once<T, E, F>(futures: impl IntoIterator<Item = F>) -> Result<Vec<T>, E>
where
    F: Future<Output = Result<T, E>>,
{
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(move |context| {
        let mut pending = false;
        for (future, result) in futures.iter_mut().zip(results.iter_mut()) {
            if result.is_some() {
                continue;
            }
            match future.as_mut().poll(context) {
                Poll::Ready(Ok(value)) => *result = Some(value),
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            return Poll::Pending;
        }
        Poll::Ready(Ok(results.iter_mut().filter_map(Option::take).collect()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::all_at_once;
    use futures::channel::oneshot;
    use futures::executor::block_on;
    use futures::future::{try_join_all, FutureExt};

    /// Futures that finish in the order `order` gives (a permutation of their indices), each with
    /// `Ok(index)` or, where `fail` says, `Err(index)`; resolved by a driver that completes them one at a
    /// time, so completion order is really `order`.
    fn run<J, Fut>(order: &[usize], fail: &[bool], join: J) -> Result<Vec<usize>, usize>
    where
        J: FnOnce(Vec<futures::future::BoxFuture<'static, Result<usize, usize>>>) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<usize>, usize>>,
    {
        let mut senders = Vec::new();
        let mut futures = Vec::new();
        for (index, &fails) in fail.iter().enumerate() {
            let (sender, receiver) = oneshot::channel::<()>();
            senders.push(Some(sender));
            futures.push(receiver.map(move |_| if fails { Err(index) } else { Ok(index) }).boxed());
        }
        let joined = join(futures);
        block_on(async move {
            let mut joined = Box::pin(joined.fuse());
            for &index in order {
                // Let the join see everything finished so far before the next one completes.
                if let Some(result) = (&mut joined).now_or_never() {
                    return result;
                }
                if let Some(sender) = senders[index].take() {
                    let _ = sender.send(());
                }
            }
            joined.await
        })
    }

    #[test]
    fn agrees_with_try_join_all() {
        let orders: [&[usize]; 5] = [&[], &[0], &[0, 1, 2], &[2, 0, 1], &[3, 1, 0, 2]];
        for order in orders {
            let count = order.len();
            // Every pattern of failures, for up to 4 futures.
            for mask in 0..(1_u32 << count) {
                let fail: Vec<bool> = (0..count).map(|index| mask & (1 << index) != 0).collect();
                let ours = run(order, &fail, all_at_once);
                let oracle = run(order, &fail, try_join_all);
                assert_eq!(ours, oracle, "order {order:?}, failing {fail:?}");
            }
        }
    }

    #[test]
    fn every_future_is_started_on_the_first_poll() {
        use std::cell::Cell;
        use std::rc::Rc;
        let started = Rc::new(Cell::new(0));
        let futures = (0..5).map(|index| {
            let started = started.clone();
            async move {
                started.set(started.get() + 1);
                futures::future::pending::<()>().await;
                Ok::<usize, ()>(index)
            }
        });
        let joined = all_at_once(futures);
        assert!(joined.now_or_never().is_none());
        assert_eq!(started.get(), 5, "all five started before any was awaited to the end");
    }
}
