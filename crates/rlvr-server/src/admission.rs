//! Admission control: jobs admitted and not yet finished, over all requests, never exceed
//! `--max-queue`. A request is admitted whole or refused (429), so a batch never half-runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The shared count of admitted jobs.
#[derive(Debug)]
pub(crate) struct Admission {
    capacity: usize,
    admitted: AtomicUsize,
}

/// Jobs of one request held in the count until it is dropped (request finished, failed or
/// cancelled by a disconnect).
#[derive(Debug)]
pub(crate) struct Reservation {
    admission: Arc<Admission>,
    jobs: usize,
}

impl Admission {
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            capacity: capacity.max(1),
            admitted: AtomicUsize::new(0),
        })
    }

    /// Admits `jobs` more, or `None` when that would exceed the capacity.
    pub(crate) fn try_reserve(self: &Arc<Self>, jobs: usize) -> Option<Reservation> {
        self.admitted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |admitted| {
                let total = admitted.checked_add(jobs)?;
                (total <= self.capacity).then_some(total)
            })
            .ok()?;
        Some(Reservation {
            admission: Arc::clone(self),
            jobs,
        })
    }

    /// Jobs admitted and not yet finished.
    pub(crate) fn admitted(&self) -> usize {
        self.admitted.load(Ordering::Acquire)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.admission
            .admitted
            .fetch_sub(self.jobs, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_capacity_and_releases_on_drop() {
        let admission = Admission::new(10);
        let first = admission.try_reserve(6).unwrap();
        assert!(admission.try_reserve(5).is_none());
        let second = admission.try_reserve(4).unwrap();
        assert_eq!(admission.admitted(), 10);
        drop(first);
        drop(second);
        assert_eq!(admission.admitted(), 0);
        assert!(admission.try_reserve(11).is_none());
    }
}
