//! Serving one client connection: hyper's HTTP/1.1 connection with the router as its service,
//! the client's bytes seen through tokio-util's `InspectReader`, and beside it a watchdog that
//! enforces the header and idle timeouts, closes the connection when the registry needs the
//! room, and starts a graceful close (the request in flight finishes) on shutdown.
//!
//! Why a watchdog of our own rather than hyper's `header_read_timeout`: hyper's timer answers
//! nothing when it fires (no 408, the connection just closes), and it starts as soon as the
//! previous response is written, so on a kept-alive connection it is the idle timeout too. We
//! keep two clocks: `--idle-timeout` while nothing of the next request has arrived (then a
//! silent close), `--header-timeout` from its first byte (then 408). hyper's is switched off.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::StatusCode;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_util::io::InspectReader;
use tower::ServiceExt;

use crate::connections::Registration;
use crate::error::raw_error_response;
use crate::metrics::Metrics;

/// How long the 408 may take to write before the connection is dropped anyway.
const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// The whole 408 response; the connection closes after it.
static REQUEST_TIMEOUT_RESPONSE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    raw_error_response(
        StatusCode::REQUEST_TIMEOUT,
        &[],
        "the request did not arrive in time (--header-timeout seconds)",
    )
});

/// The time limits on a connection (see [`crate::ServerConfig`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) header: Duration,
    pub(crate) idle: Duration,
}

/// What to do when a wait for a request runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    /// Part of a request arrived but not all its headers in time: answer 408 and close.
    RequestTimeout,
    /// Nothing arrived in time (a fresh connection that sent nothing, or an idle kept-alive
    /// one): close without a word.
    Idle,
}

/// What a connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for a request.
    Waiting(Wait),
    /// Handling a request: its headers were read, its response is not yet written.
    Handling,
    /// Closed by the registry to make room.
    Evicted,
}

/// A wait for a request: since when, and when its first byte arrived. `first` marks the
/// connection's first request, whose wait began when the connection opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    since: Instant,
    first_byte: Option<Instant>,
    first: bool,
}

impl Wait {
    fn new(first: bool) -> Self {
        Self {
            since: Instant::now(),
            first_byte: None,
            first,
        }
    }

    /// When it ends, and what happens then.
    fn deadline(self, timeouts: Timeouts) -> (Instant, Expiry) {
        let expiry = match self.first_byte {
            Some(_) => Expiry::RequestTimeout,
            None => Expiry::Idle,
        };
        match self.first_byte {
            // The first request: its headers are due a header timeout after the connection
            // opened, however slowly its bytes trickle in.
            _ if self.first => (self.since + timeouts.header, expiry),
            Some(byte) => (byte + timeouts.header, expiry),
            None => (self.since + timeouts.idle, expiry),
        }
    }
}

/// The phase of one connection, shared by hyper's service (a request begins and ends), the
/// inspected stream (a byte of the next request arrived), the registry (eviction) and the
/// watchdog (which waits for its changes).
#[derive(Debug)]
pub(crate) struct ConnectionState(watch::Sender<Phase>);

impl ConnectionState {
    pub(crate) fn new() -> Self {
        Self(watch::Sender::new(Phase::Waiting(Wait::new(true))))
    }

    /// Moves to the phase `change` returns, if any; whether it moved.
    fn change(&self, change: impl FnOnce(Phase) -> Option<Phase>) -> bool {
        self.0.send_if_modified(|phase| {
            let next = change(*phase);
            *phase = next.unwrap_or(*phase);
            next.is_some()
        })
    }

    /// `bytes` were read from the client.
    fn note_read(&self, bytes: &[u8]) {
        self.change(|phase| match phase {
            Phase::Waiting(wait) if wait.first_byte.is_none() && !bytes.is_empty() => {
                Some(Phase::Waiting(Wait {
                    first_byte: Some(Instant::now()),
                    ..wait
                }))
            }
            _ => None,
        });
    }

    /// The headers of a request arrived; its handling starts (unless it was evicted).
    pub(crate) fn begin_request(&self) {
        self.change(|phase| matches!(phase, Phase::Waiting(_)).then_some(Phase::Handling));
    }

    /// The response was written (or abandoned): wait for the next request.
    fn end_request(&self) {
        self.change(|phase| (phase == Phase::Handling).then(|| Phase::Waiting(Wait::new(false))));
    }

    /// Closes the connection if it is waiting for a request; whether it was.
    pub(crate) fn evict_if_waiting(&self) -> bool {
        self.change(|phase| matches!(phase, Phase::Waiting(_)).then_some(Phase::Evicted))
    }

    #[cfg(test)]
    pub(crate) fn phase(&self) -> Phase {
        *self.0.borrow()
    }
}

/// Moves its connection back to waiting when dropped: it rides in the response body, which
/// hyper drops once the body is written or abandoned.
struct EndOfRequest(Arc<ConnectionState>);

impl Drop for EndOfRequest {
    fn drop(&mut self) {
        self.0.end_request();
    }
}

/// Serves `stream` until the client leaves, a timeout or the registry closes it, or shutdown
/// ends it after its request in flight.
pub(crate) async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    registration: Registration,
    router: Router,
    timeouts: Timeouts,
    metrics: Arc<Metrics>,
    mut shutdown: watch::Receiver<bool>,
) {
    let state = Arc::clone(&registration.state);
    let service_state = Arc::clone(&state);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        service_state.begin_request();
        let end = EndOfRequest(Arc::clone(&service_state));
        let router = router.clone();
        async move {
            let response = router.oneshot(request.map(Body::new)).await?;
            Ok::<_, Infallible>(response.map(|body| {
                body.map_frame(move |frame| {
                    let _kept_until_the_body_is_dropped = &end;
                    frame
                })
            }))
        }
    });
    let reader_state = Arc::clone(&state);
    let inspected = InspectReader::new(stream, move |bytes: &[u8]| reader_state.note_read(bytes));
    let mut connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .header_read_timeout(None)
        .serve_connection(TokioIo::new(inspected), service);
    let mut phase = state.0.subscribe();
    let mut draining = *shutdown.borrow();
    if draining {
        std::pin::Pin::new(&mut connection).graceful_shutdown();
    }
    loop {
        let current = *phase.borrow_and_update();
        if current == Phase::Evicted {
            tracing::info!(
                "closed the connection from {peer}, waiting for a request, to make room (--max-connections)"
            );
            return;
        }
        let expired = async {
            match current {
                Phase::Waiting(wait) => {
                    let (at, expiry) = wait.deadline(timeouts);
                    tokio::time::sleep_until(at.into()).await;
                    expiry
                }
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            result = &mut connection => {
                if let Err(error) = result {
                    tracing::debug!("connection from {peer}: {error}");
                }
                return;
            }
            _ = phase.changed() => {}
            changed = shutdown.changed(), if !draining => {
                if changed.is_err() || *shutdown.borrow() {
                    draining = true;
                    std::pin::Pin::new(&mut connection).graceful_shutdown();
                }
            }
            expiry = expired => {
                // The phase may have changed as the timer fired: then the deadline is recomputed.
                if phase.has_changed().unwrap_or(false) {
                    continue;
                }
                if expiry == Expiry::Idle {
                    tracing::debug!("closed the idle connection from {peer}");
                    metrics.connections_idle_closed.inc();
                    return;
                }
                tracing::warn!("408 to {peer}: its request headers did not arrive within {:?} (--header-timeout)", timeouts.header);
                metrics.request_timeouts_header.inc();
                // hyper has no response for late headers: take the socket back and answer.
                let mut stream = connection.into_parts().io.into_inner().into_inner();
                let _ = tokio::time::timeout(ANSWER_GRACE, stream.write_all(&REQUEST_TIMEOUT_RESPONSE)).await;
                return;
            }
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

    fn wait(state: &ConnectionState) -> Wait {
        match state.phase() {
            Phase::Waiting(wait) => wait,
            other => panic!("not waiting: {other:?}"),
        }
    }

    #[test]
    fn the_first_request_is_due_a_header_timeout_after_the_connection_opened() {
        let state = ConnectionState::new();
        let opened = wait(&state).since;
        let (due, expiry) = wait(&state).deadline(TIMEOUTS);
        assert_eq!(expiry, Expiry::Idle);
        assert_eq!(due, opened + TIMEOUTS.header);
        state.note_read(b"GET /");
        let (later, expiry) = wait(&state).deadline(TIMEOUTS);
        assert_eq!(expiry, Expiry::RequestTimeout);
        assert_eq!(later, due, "trickling bytes do not move the deadline");
    }

    #[test]
    fn no_deadline_while_a_request_is_handled_then_the_idle_timeout() {
        let state = ConnectionState::new();
        let opened = wait(&state).since;
        state.begin_request();
        assert_eq!(state.phase(), Phase::Handling);
        assert!(
            !state.evict_if_waiting(),
            "a busy connection is not evicted"
        );
        state.end_request();
        let (due, expiry) = wait(&state).deadline(TIMEOUTS);
        assert_eq!(expiry, Expiry::Idle);
        assert!(due >= opened + TIMEOUTS.idle);
        state.note_read(b"");
        assert_eq!(wait(&state).deadline(TIMEOUTS).1, Expiry::Idle);
        state.note_read(b"G");
        let (due, expiry) = wait(&state).deadline(TIMEOUTS);
        assert_eq!(expiry, Expiry::RequestTimeout);
        assert!(due < opened + TIMEOUTS.idle);
    }

    #[test]
    fn an_evicted_connection_stays_evicted() {
        let state = ConnectionState::new();
        assert!(state.evict_if_waiting());
        state.begin_request();
        state.note_read(b"GET /");
        state.end_request();
        assert_eq!(state.phase(), Phase::Evicted);
    }

    #[test]
    fn the_408_response_declares_its_body_length() {
        crate::error::assert_well_formed(&REQUEST_TIMEOUT_RESPONSE);
    }
}
