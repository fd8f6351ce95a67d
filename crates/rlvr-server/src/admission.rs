//! Admission control: jobs admitted and not yet finished, over all requests, never exceed
//! `--max-queue`. A request is admitted whole or refused (429), so a batch never half-runs: a
//! weighted `try_acquire_many` on tokio's semaphore, one permit per job, held until the request
//! finishes, fails or is cancelled by a disconnect. (tower's `ConcurrencyLimit` and `LoadShed`
//! count requests, not the jobs in them.)

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The shared count of admitted jobs.
#[derive(Debug)]
pub(crate) struct Admission {
    capacity: usize,
    permits: Arc<Semaphore>,
}

/// Jobs of one request held in the count until it is dropped.
pub(crate) type Reservation = OwnedSemaphorePermit;

impl Admission {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            capacity,
            permits: Arc::new(Semaphore::new(capacity)),
        }
    }

    /// Admits `jobs` more, or `None` when that would exceed the capacity.
    pub(crate) fn try_reserve(&self, jobs: usize) -> Option<Reservation> {
        let jobs = u32::try_from(jobs).ok()?;
        Arc::clone(&self.permits).try_acquire_many_owned(jobs).ok()
    }

    /// Jobs admitted and not yet finished.
    pub(crate) fn admitted(&self) -> usize {
        self.capacity - self.permits.available_permits()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
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
