//! The first error a reader found, for readers that read every field in turn: each read notes its error
//! here and goes on with a default, so that reading a field is one call with no early return (and no drop
//! of everything read so far) behind it; the caller takes the value or the first error at the end. The
//! shape of the config's readers and of the stored queue's (BENCHMARKS.md, session 24: a third of the
//! code of a `?` per field).

use std::cell::RefCell;

/// The first error noted, if any.
pub struct Noted<E>(RefCell<Option<E>>);

impl<E> Default for Noted<E> {
    fn default() -> Self {
        Noted(RefCell::new(None))
    }
}

impl<E> Noted<E> {
    /// Keeps `error` unless an earlier one was noted.
    pub fn note(&self, error: E) {
        let mut first = self.0.borrow_mut();
        if first.is_none() {
            *first = Some(error);
        }
    }

    /// `value`, or the first error noted.
    pub fn result<T>(self, value: T) -> Result<T, E> {
        match self.0.into_inner() {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}
