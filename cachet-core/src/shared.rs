//! [`Shared`]: one piece of work (a store the engine runs in the background) that several tasks can
//! await, driven by whichever of them polls it.
//!
//! Hand-written for size: `futures::future::Shared` (an `Arc`'d inner state, a mutex, a slab of wakers and
//! a cloned output per awaiter) cost the Service Worker 2.7 KB of its gzipped wasm for the one use the
//! engine has (BENCHMARKS.md, issue 16). Single-threaded, output `()`. The tests below hold it to
//! `futures::future::Shared` as an oracle: the work runs once, every awaiter finishes when it does,
//! whichever of them drives it, and a waiting awaiter is woken even when another one drove it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Work that any clone may drive; every clone finishes when the work has.
#[derive(Clone)]
pub struct Shared(Rc<Inner>);

struct Inner {
    /// The work, while it is not finished and not being polled.
    work: RefCell<Option<Pin<Box<dyn Future<Output = ()>>>>>,
    done: Cell<bool>,
    /// The awaiters waiting; the work is polled with a waker that wakes them all, so it makes progress
    /// whichever awaiter is left.
    waiting: Arc<Waiting>,
}

/// The wakers of the awaiters that last found the work unfinished. `Arc` and `Mutex` only because
/// [`Waker::from`] asks for `Send + Sync`; the engine runs on one thread.
#[derive(Default)]
struct Waiting(Mutex<Vec<Waker>>);

impl Wake for Waiting {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        let wakers = std::mem::take(&mut *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Shared {
    /// `work`, not yet started: it runs when a clone is first polled.
    pub fn new(work: Pin<Box<dyn Future<Output = ()>>>) -> Self {
        Shared(Rc::new(Inner {
            work: RefCell::new(Some(work)),
            done: Cell::new(false),
            waiting: Arc::default(),
        }))
    }
}

impl Shared {
    /// Whether `self` and `other` are clones of the same work.
    pub fn same(&self, other: &Shared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Future for Shared {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let inner = &self.0;
        if inner.done.get() {
            return Poll::Ready(());
        }
        {
            let mut waiting = inner.waiting.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if !waiting.iter().any(|waker| waker.will_wake(context.waker())) {
                waiting.push(context.waker().clone());
            }
        }
        // `None`: being polled further up this stack (the work awaiting itself); it wakes us when done.
        let Some(mut work) = inner.work.borrow_mut().take() else { return Poll::Pending };
        let all = Waker::from(inner.waiting.clone());
        match work.as_mut().poll(&mut Context::from_waker(&all)) {
            Poll::Ready(()) => {
                inner.done.set(true);
                all.wake();
                Poll::Ready(())
            }
            Poll::Pending => {
                *inner.work.borrow_mut() = Some(work);
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;
    use futures::channel::oneshot;
    use futures::executor::LocalPool;
    use futures::future::FutureExt;
    use futures::task::LocalSpawnExt;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    /// Work that waits for `steps` signals, counting its runs, awaited by `awaiters` tasks spawned in
    /// the order given, of which those marked `false` are dropped after their first poll; returns
    /// (times the work started, tasks finished, the finishing order).
    fn run<S, F>(steps: usize, awaiters: &[bool], share: S) -> (usize, usize, Vec<usize>)
    where
        S: FnOnce(std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) -> F,
        F: std::future::Future<Output = ()> + Clone + 'static,
    {
        let started = Rc::new(Cell::new(0));
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..steps).map(|_| oneshot::channel::<()>()).unzip();
        let counted = started.clone();
        let work = async move {
            counted.set(counted.get() + 1);
            for receiver in receivers {
                let _ = receiver.await;
            }
        };
        let shared = share(Box::pin(work));
        let mut pool = LocalPool::new();
        let finished = Rc::new(RefCell::new(Vec::new()));
        for (number, &keep) in awaiters.iter().enumerate() {
            let (shared, finished) = (shared.clone(), finished.clone());
            let task = async move {
                shared.await;
                finished.borrow_mut().push(number);
            };
            if keep {
                pool.spawner().spawn_local(task).expect("spawn");
            } else {
                // Polled once, then dropped: the others must still be woken.
                let mut task = Box::pin(task);
                let _ = (&mut task).now_or_never();
            }
        }
        pool.run_until_stalled();
        for sender in senders {
            let _ = sender.send(());
            pool.run_until_stalled();
        }
        let done = finished.borrow().len();
        let order = finished.borrow().clone();
        (started.get(), done, order)
    }

    #[test]
    fn agrees_with_futures_shared() {
        let patterns: [&[bool]; 6] =
            [&[true], &[true, true], &[false, true], &[true, false, true], &[false, false, true], &[true; 4]];
        for steps in 0..4 {
            for awaiters in patterns {
                let ours = run(steps, awaiters, Shared::new);
                let oracle = run(steps, awaiters, |work| work.shared());
                assert_eq!(ours, oracle, "{steps} steps, awaiters {awaiters:?}");
                assert_eq!(ours.0, 1, "the work runs once");
            }
        }
    }
}
