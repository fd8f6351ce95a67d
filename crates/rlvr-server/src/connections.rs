//! The open connections and their cap (`--max-connections`).
//!
//! A connection is admitted while fewer than the cap are open. At the cap, the connection that
//! has been waiting longest for a request (idle kept-alive ones and clients trickling headers,
//! as a slowloris attack does) is closed to make room, as nginx reuses idle keep-alive
//! connections when it runs out; only when every connection is busy with a request is the new
//! one refused with 503. So idle and slow sockets can never lock `/health` and `/metrics` out,
//! and the file descriptors in use stay near the cap.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::connection::ConnectionState;
use crate::metrics::Metrics;

/// Every open connection, oldest first.
#[derive(Debug)]
pub(crate) struct Connections {
    capacity: usize,
    next_id: AtomicU64,
    open: Mutex<BTreeMap<u64, Arc<ConnectionState>>>,
    metrics: Arc<Metrics>,
}

/// One admitted connection; dropping it leaves the registry.
#[derive(Debug)]
pub(crate) struct Registration {
    id: u64,
    pub(crate) state: Arc<ConnectionState>,
    connections: Arc<Connections>,
}

impl Connections {
    pub(crate) fn new(capacity: usize, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Self {
            capacity: capacity.max(1),
            next_id: AtomicU64::new(0),
            open: Mutex::new(BTreeMap::new()),
            metrics,
        })
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<ConnectionState>>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Admits a new connection, closing the longest-waiting one at the cap; `None` when every
    /// open connection is handling a request.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Registration> {
        let mut open = self.lock();
        if open.len() >= self.capacity {
            let evicted = open
                .iter()
                .find(|(_, state)| state.evict_if_waiting())
                .map(|(id, _)| *id);
            let Some(id) = evicted else {
                self.metrics.connections_refused.inc();
                return None;
            };
            open.remove(&id);
            self.metrics.connections_evicted.inc();
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnectionState::new());
        open.insert(id, Arc::clone(&state));
        self.metrics
            .connections_open
            .set(i64::try_from(open.len()).unwrap_or(i64::MAX));
        Some(Registration {
            id,
            state,
            connections: Arc::clone(self),
        })
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut open = self.connections.lock();
        open.remove(&self.id);
        self.connections
            .metrics
            .connections_open
            .set(i64::try_from(open.len()).unwrap_or(i64::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::Phase;

    #[test]
    fn at_the_cap_the_oldest_waiting_connection_makes_room() {
        let connections = Connections::new(2, Arc::new(Metrics::default()));
        let first = connections.admit().expect("room");
        let second = connections.admit().expect("room");
        first.state.begin_request();
        let third = connections
            .admit()
            .expect("the waiting second one makes room");
        assert_eq!(connections.open(), 2);
        assert_eq!(
            second.state.phase(),
            Phase::Evicted,
            "the second was told to close"
        );
        third.state.begin_request();
        assert!(connections.admit().is_none(), "every connection is busy");
        drop(first);
        assert!(connections.admit().is_some());
    }
}
