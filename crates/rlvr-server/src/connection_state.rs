//! What one connection is doing, shared by the task serving it, the stream it reads from and
//! the registry that may close it: waiting for a request (since when, how many bytes of it
//! have arrived) or handling one. The time limits on reading requests are decided from this.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Waker;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The time limits on a connection (see [`crate::ServerConfig`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) header: Duration,
    pub(crate) idle: Duration,
}

/// What to do when the deadline [`ConnectionState::deadline`] returns passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// Part of a request arrived but not all its headers in time: answer 408 and close.
    RequestTimeout,
    /// Nothing arrived in time (a fresh connection that sent nothing, or an idle kept-alive
    /// one): close without a word.
    Idle,
}

/// Nanoseconds since the connection started; `u64::MAX` for "not yet".
const NOT_YET: u64 = u64::MAX;

/// The state of one connection.
#[derive(Debug)]
pub(crate) struct ConnectionState {
    started: Instant,
    /// Requests whose handling began.
    requests: AtomicU64,
    /// A request is being handled (headers read, response not yet fully written).
    in_request: AtomicBool,
    /// When the connection began waiting for its current request.
    waiting_since: AtomicU64,
    /// Bytes of the next request read so far while waiting.
    waiting_bytes: AtomicU64,
    /// When the first of them arrived.
    first_byte_at: AtomicU64,
    /// The stream should answer 408 and end.
    answer_request_timeout: AtomicBool,
    /// The reader to wake when the stream must act (parked in a read).
    reader: Mutex<Option<Waker>>,
    /// Something that changes the deadline happened.
    pub(crate) changed: Notify,
    /// The registry wants this connection closed to make room.
    pub(crate) evict: Notify,
}

impl ConnectionState {
    pub(crate) fn new() -> Self {
        Self {
            started: Instant::now(),
            requests: AtomicU64::new(0),
            in_request: AtomicBool::new(false),
            waiting_since: AtomicU64::new(0),
            waiting_bytes: AtomicU64::new(0),
            first_byte_at: AtomicU64::new(NOT_YET),
            answer_request_timeout: AtomicBool::new(false),
            reader: Mutex::new(None),
            changed: Notify::new(),
            evict: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(NOT_YET - 1)
    }

    fn at(&self, nanoseconds: u64) -> Instant {
        self.started + Duration::from_nanos(nanoseconds)
    }

    /// The headers of a request arrived; its handling starts.
    pub(crate) fn begin_request(&self) {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.in_request.store(true, Ordering::Release);
        self.changed.notify_one();
    }

    /// The response was written (or abandoned): wait for the next request.
    pub(crate) fn end_request(&self) {
        self.waiting_bytes.store(0, Ordering::Release);
        self.first_byte_at.store(NOT_YET, Ordering::Release);
        self.waiting_since.store(self.now(), Ordering::Release);
        self.in_request.store(false, Ordering::Release);
        self.changed.notify_one();
    }

    /// Whether the connection waits for a request (and so may be closed to make room).
    pub(crate) fn is_waiting(&self) -> bool {
        !self.in_request.load(Ordering::Acquire)
    }

    /// `bytes` were read from the client.
    pub(crate) fn note_read(&self, bytes: usize) {
        if !self.is_waiting() || bytes == 0 {
            return;
        }
        if self.waiting_bytes.fetch_add(bytes as u64, Ordering::AcqRel) == 0 {
            self.first_byte_at.store(self.now(), Ordering::Release);
            self.changed.notify_one();
        }
    }

    /// When the current wait for a request ends, and what happens then; `None` while a
    /// request is being handled (its body has its own limit, its work the request deadline).
    pub(crate) fn deadline(&self, timeouts: Timeouts) -> Option<(Instant, Expiry)> {
        if !self.is_waiting() {
            return None;
        }
        let partial = self.waiting_bytes.load(Ordering::Acquire) > 0;
        let expiry = if partial {
            Expiry::RequestTimeout
        } else {
            Expiry::Idle
        };
        if self.requests.load(Ordering::Acquire) == 0 {
            // The first request: its headers are due a header timeout after the connection
            // opened, however slowly its bytes trickle in.
            return Some((self.started + timeouts.header, expiry));
        }
        let first_byte = self.first_byte_at.load(Ordering::Acquire);
        if partial && first_byte != NOT_YET {
            Some((self.at(first_byte) + timeouts.header, expiry))
        } else {
            let since = self.waiting_since.load(Ordering::Acquire);
            Some((self.at(since) + timeouts.idle, Expiry::Idle))
        }
    }

    /// Makes the stream answer 408 and end at its next read.
    pub(crate) fn answer_request_timeout(&self) {
        self.answer_request_timeout.store(true, Ordering::Release);
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(reader) = reader {
            reader.wake();
        }
    }

    /// Whether the stream must answer 408 and end.
    pub(crate) fn must_answer_request_timeout(&self) -> bool {
        self.answer_request_timeout.load(Ordering::Acquire)
    }

    /// Remembers who waits for bytes.
    pub(crate) fn park_reader(&self, waker: &Waker) {
        let mut reader = self
            .reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !reader
            .as_ref()
            .is_some_and(|parked| parked.will_wake(waker))
        {
            *reader = Some(waker.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(60),
    };

    #[test]
    fn the_first_request_is_due_a_header_timeout_after_the_connection_opened() {
        let state = ConnectionState::new();
        let (deadline, expiry) = state.deadline(TIMEOUTS).expect("waiting");
        assert_eq!(expiry, Expiry::Idle);
        assert_eq!(deadline, state.started + TIMEOUTS.header);
        state.note_read(5);
        let (later, expiry) = state.deadline(TIMEOUTS).expect("waiting");
        assert_eq!(expiry, Expiry::RequestTimeout);
        assert_eq!(later, deadline, "trickling bytes do not move the deadline");
    }

    #[test]
    fn no_deadline_while_a_request_is_handled_then_the_idle_timeout() {
        let state = ConnectionState::new();
        state.begin_request();
        assert!(state.deadline(TIMEOUTS).is_none());
        assert!(!state.is_waiting());
        state.end_request();
        let (deadline, expiry) = state.deadline(TIMEOUTS).expect("waiting");
        assert_eq!(expiry, Expiry::Idle);
        assert!(deadline >= state.started + TIMEOUTS.idle);
        state.note_read(1);
        let (deadline, expiry) = state.deadline(TIMEOUTS).expect("waiting");
        assert_eq!(expiry, Expiry::RequestTimeout);
        assert!(deadline < state.started + TIMEOUTS.idle);
    }
}
