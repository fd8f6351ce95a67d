//! Waiting on descriptors until a deadline: the one poll loop of the workspace (the sandbox's
//! start and exit, the run loop, the exec supervisor's pipe, the runner and referee
//! transports). A signal interrupting the wait is retried; the timeout is recomputed from the
//! deadline each time, so no wait outlives it.

use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fd::BorrowedFd;
use rustix::io::Errno;

/// `duration` as a poll timeout (saturating: a duration beyond `i64` seconds waits "forever").
pub fn timespec(duration: Duration) -> Timespec {
    Timespec {
        tv_sec: i64::try_from(duration.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(duration.subsec_nanos()),
    }
}

/// The time left until `deadline` as a poll timeout; `None` once it has passed.
pub fn timeout_until(deadline: Instant) -> Option<Timespec> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    (!remaining.is_zero()).then(|| timespec(remaining))
}

/// Polls `fds` until at least one is ready (`Ok(true)`) or `deadline` passes (`Ok(false)`).
/// A hang-up or error condition counts as ready: the following read or write reports it.
pub fn poll_until(fds: &mut [PollFd<'_>], deadline: Instant) -> Result<bool, Errno> {
    loop {
        let Some(timeout) = timeout_until(deadline) else {
            return Ok(false);
        };
        match poll(fds, Some(&timeout)) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return Ok(true),
            Err(errno) => return Err(errno),
        }
    }
}

/// [`poll_until`] on one descriptor for `flags`.
pub fn ready_until(fd: BorrowedFd<'_>, flags: PollFlags, deadline: Instant) -> Result<bool, Errno> {
    poll_until(&mut [PollFd::from_borrowed_fd(fd, flags)], deadline)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn a_pipe_is_ready_once_written_and_not_before_the_deadline() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let started = Instant::now();
        let deadline = started + Duration::from_millis(30);
        assert_eq!(
            ready_until(read.as_fd(), PollFlags::IN, deadline),
            Ok(false)
        );
        assert!(started.elapsed() >= Duration::from_millis(30));
        rustix::io::write(&write, b"x").expect("write");
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(ready_until(read.as_fd(), PollFlags::IN, later), Ok(true));
        drop(write);
        assert_eq!(
            timeout_until(Instant::now() - Duration::from_millis(1)),
            None
        );
        assert_eq!(timespec(Duration::MAX).tv_sec, i64::MAX);
    }
}
