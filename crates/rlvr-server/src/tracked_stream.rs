//! The client's TCP stream as hyper reads it, counting the bytes of a request that is still
//! arriving (for the header timeout) and able to answer 408 itself: hyper owns the stream
//! while it waits for headers and has no response for a timeout, so the stream writes one and
//! then reports the end of input, which ends the connection.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use axum::http::StatusCode;

use crate::connection_state::ConnectionState;
use crate::error::raw_error_response;

/// The whole 408 response; the connection closes after it.
pub(crate) static REQUEST_TIMEOUT_RESPONSE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    raw_error_response(
        StatusCode::REQUEST_TIMEOUT,
        &[],
        "the request did not arrive in time (--header-timeout seconds)",
    )
});

/// A client stream tracked by its [`ConnectionState`].
#[derive(Debug)]
pub(crate) struct TrackedStream {
    inner: TcpStream,
    state: Arc<ConnectionState>,
    answered: bool,
}

impl TrackedStream {
    pub(crate) fn new(inner: TcpStream, state: Arc<ConnectionState>) -> Self {
        Self {
            inner,
            state,
            answered: false,
        }
    }
}

impl AsyncRead for TrackedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.state.must_answer_request_timeout() {
            if !this.answered {
                this.answered = true;
                // Best effort: a socket that cannot take 170 bytes now is not waited for.
                let _ = this.inner.try_write(&REQUEST_TIMEOUT_RESPONSE);
            }
            return Poll::Ready(Ok(()));
        }
        let before = buffer.filled().len();
        match Pin::new(&mut this.inner).poll_read(context, buffer) {
            Poll::Ready(Ok(())) => {
                this.state.note_read(buffer.filled().len() - before);
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                this.state.park_reader(context.waker());
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for TrackedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(context, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_408_response_declares_its_body_length() {
        crate::error::assert_well_formed(&REQUEST_TIMEOUT_RESPONSE);
    }
}
