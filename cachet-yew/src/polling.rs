//! The polling timer of `refetch_interval`: gloo's `Interval`, or, with the `test-support` feature once
//! a test called [`testing::manual_polling`], a tick the test fires itself. Time injected so that a test
//! proves "no poll while hidden or offline" with a barrier, not by sleeping through ten intervals.

#[cfg(feature = "test-support")]
use std::rc::Rc;

/// A running polling timer; dropping it stops the ticks.
pub(crate) struct PollTimer {
    _real: Option<gloo::timers::callback::Interval>,
    #[cfg(feature = "test-support")]
    _manual: Option<Rc<dyn Fn()>>,
}

/// Calls `tick` every `millis` (or on [`testing::tick`], in a test that took the clock).
pub(crate) fn poll_timer(millis: u32, tick: impl Fn() + Clone + 'static) -> PollTimer {
    #[cfg(feature = "test-support")]
    if let Some(tick) = testing::register(&tick) {
        return PollTimer { _real: None, _manual: Some(tick) };
    }
    PollTimer {
        _real: Some(gloo::timers::callback::Interval::new(millis, tick)),
        #[cfg(feature = "test-support")]
        _manual: None,
    }
}

/// Time injected into the polling of `refetch_interval`, for this crate's own tests (the `test-support`
/// feature, which only its dev-dependency on itself turns on).
#[cfg(feature = "test-support")]
pub mod testing {
    use std::cell::RefCell;
    use std::rc::{Rc, Weak};

    /// The live polling timers' ticks, while a test holds the clock.
    type Timers = Vec<Weak<dyn Fn()>>;

    thread_local! {
        static MANUAL: RefCell<Option<Timers>> = const { RefCell::new(None) };
    }

    /// Polling timers made while the returned guard lives tick only when [`tick`] is called; dropping
    /// it gives later timers the browser's clock again (so no other test sees this one's clock).
    #[must_use = "the clock is the test's only while the guard lives"]
    pub fn manual_polling() -> ManualPolling {
        MANUAL.with(|manual| *manual.borrow_mut() = Some(Vec::new()));
        ManualPolling(())
    }

    /// The guard of [`manual_polling`].
    pub struct ManualPolling(());

    impl Drop for ManualPolling {
        fn drop(&mut self) {
            MANUAL.with(|manual| *manual.borrow_mut() = None);
        }
    }

    /// One tick of every live polling timer, at once.
    pub fn tick() {
        let live: Vec<Rc<dyn Fn()>> =
            MANUAL.with(|manual| manual.borrow().iter().flatten().filter_map(Weak::upgrade).collect());
        for tick in live {
            tick();
        }
    }

    pub(super) fn register(tick: &(impl Fn() + Clone + 'static)) -> Option<Rc<dyn Fn()>> {
        MANUAL.with(|manual| {
            let mut manual = manual.borrow_mut();
            let timers = manual.as_mut()?;
            let tick: Rc<dyn Fn()> = Rc::new(tick.clone());
            timers.push(Rc::downgrade(&tick));
            Some(tick)
        })
    }
}
