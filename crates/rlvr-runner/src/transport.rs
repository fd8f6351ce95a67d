//! The framed pipe both Python helpers speak (the runner and the referee), in the one frame
//! format of `rlvr-frame` (a length, a JSON header, the payloads it names; docs/runner.md, "The
//! frame format"). One transport for both clients: requests on the process's stdin, answers on
//! its stdout, never blocking past a deadline (a stuck or dead helper is an error, not a hang).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rlvr_frame::{FrameBuffer, FrameError};
use rlvr_sandbox::wait::ready_until;
use rustix::event::PollFlags;
use serde::Serialize;

/// Why talking to a helper process failed. Each one means the helper can no longer be trusted
/// to be in step with us: the caller kills it and starts another.
#[derive(Debug, thiserror::Error)]
pub enum PipeError {
    #[error("it did not answer before its deadline")]
    Deadline,
    #[error("it closed its pipe (it died or was killed)")]
    Closed,
    #[error("its pipe failed: {0}")]
    Io(std::io::Error),
    #[error("it sent a malformed frame: {0}")]
    Protocol(String),
    #[error("it refused: {0}")]
    Refused(String),
}

// The cause is in the message (which reaches results as a reason), so not in the chain.
impl From<std::io::Error> for PipeError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

/// The two pipes to a helper process and the bytes read past the last frame.
#[derive(Debug)]
pub struct FramedPipe {
    requests: OwnedFd,
    responses: OwnedFd,
    pending: FrameBuffer,
    max_header: usize,
}

impl FramedPipe {
    /// Wraps the helper's stdin (`requests`) and stdout (`responses`); a header longer than
    /// `max_header` bytes means the stream is corrupt. Both ends are made non-blocking: every
    /// read and write waits with a deadline instead, and a caller relaying between several
    /// pipes can write what fits without being held.
    pub fn new(requests: OwnedFd, responses: OwnedFd, max_header: usize) -> Self {
        set_nonblocking(requests.as_fd());
        set_nonblocking(responses.as_fd());
        Self {
            requests,
            responses,
            pending: FrameBuffer::default(),
            max_header,
        }
    }

    /// The pipe answers arrive on, for a caller that waits on several descriptors at once.
    pub fn responses(&self) -> BorrowedFd<'_> {
        self.responses.as_fd()
    }

    /// The pipe requests go to.
    pub fn requests(&self) -> BorrowedFd<'_> {
        self.requests.as_fd()
    }

    /// Whether bytes of an answer were already read (a caller polling [`Self::responses`]
    /// must look here first).
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes all of `bytes` before `deadline`.
    pub fn send(&mut self, mut bytes: &[u8], deadline: Instant) -> Result<(), PipeError> {
        while !bytes.is_empty() {
            wait_ready(self.requests.as_fd(), PollFlags::OUT, deadline)?;
            match rustix::io::write(&self.requests, bytes) {
                Ok(written) => bytes = &bytes[written..],
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(rustix::io::Errno::PIPE) => return Err(PipeError::Closed),
                Err(error) => return Err(PipeError::Io(error.into())),
            }
        }
        Ok(())
    }

    /// Sends one frame.
    pub fn send_frame<T: Serialize>(
        &mut self,
        header: &T,
        payloads: &[&[u8]],
        deadline: Instant,
    ) -> Result<(), PipeError> {
        self.send(&rlvr_frame::encode(header, payloads), deadline)
    }

    /// The next header, as raw JSON bytes.
    pub fn receive_header(&mut self, deadline: Instant) -> Result<Vec<u8>, PipeError> {
        loop {
            match self.pending.take_header(self.max_header) {
                Ok(Some(header)) => return Ok(header),
                Ok(None) => self.read_more(deadline)?,
                Err(error) => return Err(PipeError::Protocol(error.to_string())),
            }
        }
    }

    /// The next header, parsed.
    pub fn receive_json<T: serde::de::DeserializeOwned>(
        &mut self,
        deadline: Instant,
    ) -> Result<T, PipeError> {
        let header = self.receive_header(deadline)?;
        rlvr_frame::parse(&header)
            .map_err(|error: FrameError| PipeError::Protocol(error.to_string()))
    }

    /// Exactly `length` bytes (a payload).
    pub fn receive_exact(
        &mut self,
        length: usize,
        deadline: Instant,
    ) -> Result<Vec<u8>, PipeError> {
        loop {
            if let Some(payload) = self.pending.take_exact(length) {
                return Ok(payload);
            }
            self.read_more(deadline)?;
        }
    }

    /// Waits for what the helper sends next and keeps it.
    fn read_more(&mut self, deadline: Instant) -> Result<(), PipeError> {
        let mut buffer = vec![0; 1 << 16];
        loop {
            wait_ready(self.responses.as_fd(), PollFlags::IN, deadline)?;
            match rustix::io::read(&self.responses, &mut buffer) {
                Ok(0) => return Err(PipeError::Closed),
                Ok(read) => {
                    self.pending.extend(&buffer[..read]);
                    return Ok(());
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(error) => return Err(PipeError::Io(error.into())),
            }
        }
    }
}

/// Makes our end of a pipe non-blocking (the other process's end is its own open file and
/// keeps its mode). A descriptor that refuses stays blocking; the deadlines still hold, since
/// every transfer waits for readiness first.
pub fn set_nonblocking(fd: BorrowedFd<'_>) {
    let _ = rustix::io::ioctl_fionbio(fd, true);
}

/// Waits until `fd` is ready for `flags` or the deadline passes. Hang-up counts as ready: the
/// following read or write reports it.
pub fn wait_ready(
    fd: BorrowedFd<'_>,
    flags: PollFlags,
    deadline: Instant,
) -> Result<(), PipeError> {
    match ready_until(fd, flags, deadline) {
        Ok(true) => Ok(()),
        Ok(false) => Err(PipeError::Deadline),
        Err(errno) => Err(PipeError::Io(errno.into())),
    }
}

/// `deadline` pushed `by` later, saturating (an `Instant` cannot be pushed arbitrarily far).
pub fn later(deadline: Instant, by: Duration) -> Instant {
    deadline.checked_add(by).unwrap_or(deadline)
}
