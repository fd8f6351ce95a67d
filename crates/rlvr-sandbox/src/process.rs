//! [`SandboxedProcess`]: a running sandboxed process tree and its cgroup, killed and reaped on
//! drop. This is the low-level handle the warm runner (issue 6) talks to over pipes.

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::PollFlags;

use crate::cgroup::Lease;
use crate::request::ResourceLimits;
use crate::sys;

/// How a sandboxed process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code when it exited normally.
    pub exit_code: Option<i32>,
    /// Signal number when a signal killed it.
    pub signal: Option<i32>,
    /// Wall-clock time from spawn to the moment we noticed the exit.
    pub wall: Duration,
}

/// Resource usage of the whole process tree so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceUsage {
    /// CPU time of the tree (cgroup), or of the reaped init process when no cgroup accounts it.
    pub cpu: Duration,
    /// Peak memory of the tree in KiB (cgroup peak, else the init process's max RSS).
    pub peak_memory_kib: u64,
    /// Processes the kernel OOM-killed in the tree's cgroup.
    pub out_of_memory_kills: u64,
}

/// A running (or finished, not yet dropped) sandboxed process tree.
///
/// The program is init of its own PID namespace, so when it exits every descendant dies with
/// it. Dropping the handle kills the tree, reaps the process and releases its cgroup.
#[derive(Debug)]
pub struct SandboxedProcess {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    lease: Lease,
    started: Instant,
    exit: Option<ExitInfo>,
    reaped_cpu: Duration,
    reaped_max_resident_kib: u64,
    limits: ResourceLimits,
    _work_directory: Option<tempfile::TempDir>,
    /// The write end of the program's stdin, when piped.
    pub stdin: Option<File>,
    /// The read end of the program's stdout, when piped.
    pub stdout: Option<File>,
    /// The read end of the program's stderr, when piped.
    pub stderr: Option<File>,
}

impl SandboxedProcess {
    #[expect(
        clippy::too_many_arguments,
        reason = "crate-internal constructor, called once"
    )]
    pub(crate) fn new(
        pid: libc::pid_t,
        pidfd: OwnedFd,
        lease: Lease,
        started: Instant,
        stdin: Option<File>,
        stdout: Option<File>,
        stderr: Option<File>,
        work_directory: Option<tempfile::TempDir>,
        limits: ResourceLimits,
    ) -> Self {
        SandboxedProcess {
            pid,
            pidfd,
            lease,
            started,
            exit: None,
            reaped_cpu: Duration::ZERO,
            reaped_max_resident_kib: 0,
            limits,
            _work_directory: work_directory,
            stdin,
            stdout,
            stderr,
        }
    }

    /// The host pid of the sandbox's init process.
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// A pidfd that becomes readable when the process exits (for the caller's own poll loop).
    pub fn pidfd(&self) -> BorrowedFd<'_> {
        self.pidfd.as_fd()
    }

    /// When the process was started (monotonic).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The limits it was started with.
    pub fn limits(&self) -> &ResourceLimits {
        &self.limits
    }

    /// Reaps the process if it has exited; never blocks.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitInfo>> {
        if self.exit.is_some() {
            return Ok(self.exit);
        }
        let Some(reaped) = sys::wait_child(self.pid, false)? else {
            return Ok(None);
        };
        let status = reaped.status;
        self.reaped_cpu = reaped.user_and_system;
        self.reaped_max_resident_kib = reaped.max_resident_kib;
        self.exit = Some(ExitInfo {
            exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            wall: self.started.elapsed(),
        });
        Ok(self.exit)
    }

    /// Waits until the process exits or `deadline` passes (then returns `None`; it keeps
    /// running: call [`SandboxedProcess::kill`] to end it).
    pub fn wait_until(&mut self, deadline: Instant) -> std::io::Result<Option<ExitInfo>> {
        loop {
            if let Some(exit) = self.try_wait()? {
                return Ok(Some(exit));
            }
            if !crate::wait::ready_until(self.pidfd.as_fd(), PollFlags::IN, deadline)? {
                return self.try_wait();
            }
        }
    }

    /// Waits for the process to exit, however long it takes.
    pub fn wait(&mut self) -> std::io::Result<ExitInfo> {
        loop {
            if let Some(exit) = self.wait_until(Instant::now() + Duration::from_secs(3600))? {
                return Ok(exit);
            }
        }
    }

    /// Kills the whole tree (SIGKILL to init, which takes its PID namespace down, plus the
    /// cgroup kill). Idempotent; the process still has to be waited for.
    pub fn kill(&mut self) {
        if self.exit.is_none() {
            let _ = sys::pidfd_send_signal(self.pidfd.as_fd(), libc::SIGKILL);
        }
        self.lease.kill_all();
    }

    /// Resource usage of the tree so far (complete once the process has been waited for).
    pub fn usage(&self) -> ResourceUsage {
        let cgroup = self.lease.usage();
        ResourceUsage {
            cpu: cgroup.cpu.unwrap_or(self.reaped_cpu).max(self.reaped_cpu),
            peak_memory_kib: cgroup
                .peak_bytes
                .map(|bytes| bytes / 1024)
                .unwrap_or(self.reaped_max_resident_kib)
                .max(self.reaped_max_resident_kib),
            out_of_memory_kills: cgroup.out_of_memory_kills,
        }
    }

    /// Kills the tree and reaps the init process (used on drop and on setup failure).
    pub(crate) fn kill_and_reap(&mut self) {
        if self.exit.is_some() {
            return;
        }
        self.kill();
        if let Err(error) = self.wait() {
            tracing::warn!(pid = self.pid, %error, "cannot reap sandboxed process");
        }
    }
}

impl Drop for SandboxedProcess {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}
