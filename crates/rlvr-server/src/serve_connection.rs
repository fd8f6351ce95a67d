//! Serving one client connection: hyper's HTTP/1.1 connection over a [`TrackedStream`], the
//! router as its service, and beside it a watchdog that enforces the header and idle timeouts
//! ([`ConnectionState::deadline`]), closes the connection when the registry needs the room,
//! and starts a graceful close (the request in flight finishes) on shutdown.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tower::ServiceExt;

use crate::connection_state::{ConnectionState, Expiry, Timeouts};
use crate::connections::Registration;
use crate::metrics::Metrics;
use crate::tracked_stream::TrackedStream;

/// How long the stream gets to write its 408 and end before the connection is dropped anyway.
const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// A response body that tells the connection's state when it was written (or dropped): the
/// connection then waits for its next request.
struct EndOfRequest {
    body: Body,
    state: Arc<ConnectionState>,
}

impl Drop for EndOfRequest {
    fn drop(&mut self) {
        self.state.end_request();
    }
}

impl hyper::body::Body for EndOfRequest {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
        let state = Arc::clone(&service_state);
        state.begin_request();
        let router = router.clone();
        async move {
            let response = router.oneshot(request.map(Body::new)).await?;
            Ok::<_, Infallible>(response.map(|body| EndOfRequest { body, state }))
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .header_read_timeout(None)
        .serve_connection(
            TokioIo::new(TrackedStream::new(stream, Arc::clone(&state))),
            service,
        );
    tokio::pin!(connection);
    let mut draining = *shutdown.borrow();
    if draining {
        connection.as_mut().graceful_shutdown();
    }
    let mut answering_since = None;
    loop {
        let deadline = match answering_since {
            Some(since) => Some((since + ANSWER_GRACE, Expiry::Idle)),
            None => state.deadline(timeouts),
        };
        let sleep = async {
            match deadline {
                Some((at, _)) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!("connection from {peer}: {error}");
                }
                break;
            }
            () = state.changed.notified() => {}
            () = state.evict.notified() => {
                tracing::info!("closed the connection from {peer}, waiting for a request, to make room (--max-connections)");
                break;
            }
            changed = shutdown.changed(), if !draining => {
                if changed.is_err() || *shutdown.borrow() {
                    draining = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
            () = sleep => {
                // Deadlines are recomputed: something may have changed as the timer fired.
                let still_due = match (deadline, answering_since) {
                    (_, Some(_)) => true,
                    (Some((at, _)), None) => state.deadline(timeouts).is_some_and(|(now_at, _)| now_at <= at),
                    (None, None) => false,
                };
                if !still_due {
                    continue;
                }
                if answering_since.is_some() {
                    break;
                }
                match deadline.map(|(_, expiry)| expiry) {
                    Some(Expiry::RequestTimeout) => {
                        tracing::warn!("408 to {peer}: its request headers did not arrive within {:?} (--header-timeout)", timeouts.header);
                        metrics.request_timeouts_header.inc();
                        state.answer_request_timeout();
                        answering_since = Some(tokio::time::Instant::now().into_std());
                    }
                    _ => {
                        tracing::debug!("closed the idle connection from {peer}");
                        metrics.connections_idle_closed.inc();
                        break;
                    }
                }
            }
        }
    }
    drop(registration);
}
