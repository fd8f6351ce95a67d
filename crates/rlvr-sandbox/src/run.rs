//! [`Sandbox::run`]: one complete run with captured, capped output and a verdict.
//!
//! stdin is a sealed memory file (a program that never reads it cannot block us); stdout and
//! stderr are non-blocking pipes read in one poll loop together with the pidfd, so a program
//! that fills either pipe never deadlocks. The deadline is on the monotonic clock.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::error::SandboxError;
use crate::outcome::{RunOutcome, RunVerdict};
use crate::request::{Program, RunRequest, SpawnRequest, Stdin, StdioSpec};
use crate::sandbox::{Sandbox, sealed_memory_file};

/// How often CPU time of the whole tree is checked against the CPU limit.
const CPU_CHECK_INTERVAL: Duration = Duration::from_millis(100);

struct Capture {
    file: Option<File>,
    bytes: Vec<u8>,
    truncated: bool,
}

impl Capture {
    fn new(file: Option<File>) -> Capture {
        if let Some(file) = &file {
            let _ = rustix::io::ioctl_fionbio(file, true);
        }
        Capture {
            file,
            bytes: Vec::new(),
            truncated: false,
        }
    }

    /// Reads what is available; returns true when the cap was exceeded.
    fn read_available(&mut self, cap: u64) -> bool {
        let Some(file) = &mut self.file else {
            return false;
        };
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match file.read(&mut buffer) {
                Ok(0) => {
                    self.file = None;
                    return false;
                }
                Ok(count) => {
                    let room = (cap as usize).saturating_sub(self.bytes.len());
                    self.bytes.extend_from_slice(&buffer[..count.min(room)]);
                    if count > room {
                        self.truncated = true;
                        return true;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
                Err(_) => {
                    self.file = None; // a read error: nothing more will come
                    return false;
                }
            }
        }
    }
}

fn stdin_descriptor(stdin: &Stdin) -> Result<OwnedFd, SandboxError> {
    match stdin {
        Stdin::Empty => sealed_memory_file("stdin", b""),
        Stdin::Bytes(bytes) => sealed_memory_file("stdin", bytes),
        Stdin::File(path) => {
            let bytes = fs_err::read(path).map_err(SandboxError::path("read stdin file", path))?;
            sealed_memory_file("stdin", &bytes)
        }
    }
}

/// Python's own report of the address-space backstop: the last stderr line names `MemoryError`.
fn python_memory_error(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .is_some_and(names_a_memory_error)
}

/// Whether a traceback's last line reports a `MemoryError` or a subclass named as such (numpy's
/// `numpy.core._exceptions._ArrayMemoryError: Unable to allocate ...`, issue 32's differential
/// test): the exception's name, before any `: message`, is a dotted name whose last part ends
/// in `MemoryError`.
pub fn names_a_memory_error(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or_default().trim_end();
    let last = name.rsplit('.').next().unwrap_or_default();
    last.ends_with("MemoryError")
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|character| character.is_alphanumeric() || character == '_')
        })
}

impl Sandbox {
    /// Runs one program to completion under `request.limits` and returns its outcome. Program
    /// failures (crash, timeout, limits) are verdicts; `Err` only means the sandbox could not
    /// be set up, and must be reported as such (never as a silent failure of the program).
    pub fn run(&self, request: &RunRequest) -> Result<RunOutcome, SandboxError> {
        let limits = request.limits;
        let spawn = SpawnRequest {
            program: request.program.clone(),
            limits,
            files: request.files.clone(),
            stdin: StdioSpec::Descriptor(stdin_descriptor(&request.stdin)?),
            stdout: StdioSpec::Piped,
            stderr: StdioSpec::Piped,
            extra_descriptors: Vec::new(),
            supervisor: false,
            network: request.network,
        };
        let mut process = self.spawn(spawn)?;
        let deadline = process.started() + limits.wall;
        let mut stdout = Capture::new(process.stdout.take());
        let mut stderr = Capture::new(process.stderr.take());
        let mut timed_out = false;
        let mut output_exceeded = false;
        let mut cpu_exceeded = false;
        let mut next_cpu_check = Instant::now() + CPU_CHECK_INTERVAL;
        let exit = loop {
            if let Some(exit) = process.try_wait().map_err(SandboxError::system("wait"))? {
                break exit;
            }
            let now = Instant::now();
            if now >= deadline {
                timed_out = true;
                process.kill();
                break process.wait().map_err(SandboxError::system("wait"))?;
            }
            if now >= next_cpu_check {
                next_cpu_check = now + CPU_CHECK_INTERVAL;
                if process.usage().cpu > limits.cpu {
                    cpu_exceeded = true;
                    process.kill();
                    break process.wait().map_err(SandboxError::system("wait"))?;
                }
            }
            let ready = {
                let mut fds = Vec::with_capacity(3);
                fds.push(PollFd::from_borrowed_fd(process.pidfd(), PollFlags::IN));
                for capture in [&stdout, &stderr] {
                    if let Some(file) = &capture.file {
                        fds.push(PollFd::from_borrowed_fd(file.as_fd(), PollFlags::IN));
                    }
                }
                crate::wait::poll_until(&mut fds, deadline.min(next_cpu_check))
                    .map_err(|errno| SandboxError::system("poll")(errno.into()))?
            };
            if ready
                && (stdout.read_available(limits.output_bytes)
                    | stderr.read_available(limits.output_bytes))
            {
                output_exceeded = true;
                process.kill();
                break process.wait().map_err(SandboxError::system("wait"))?;
            }
        };
        // The whole tree is dead now (init exited, its PID namespace with it). Drain what is
        // left in the pipes; the write ends close within microseconds (another thread's child
        // may hold a copy only until its own close_range).
        let drain_deadline = Instant::now() + Duration::from_millis(500);
        while (stdout.file.is_some() || stderr.file.is_some()) && Instant::now() < drain_deadline {
            if stdout.read_available(limits.output_bytes)
                | stderr.read_available(limits.output_bytes)
            {
                output_exceeded = true;
                break;
            }
            if stdout.file.is_some() || stderr.file.is_some() {
                let mut fds: Vec<PollFd<'_>> = [&stdout, &stderr]
                    .into_iter()
                    .filter_map(|capture| capture.file.as_ref())
                    .map(|file| PollFd::from_borrowed_fd(file.as_fd(), PollFlags::IN))
                    .collect();
                let _ = crate::wait::poll_until(&mut fds, drain_deadline);
            }
        }
        let usage = process.usage();
        let cpu_exceeded =
            cpu_exceeded || usage.cpu > limits.cpu || exit.signal == Some(libc::SIGXCPU);
        let is_python = matches!(request.program, Program::Python { .. })
            || matches!(&request.program, Program::Command { argv } if argv.first().is_some_and(|first| first == "python"));
        let verdict = if output_exceeded {
            RunVerdict::OutputLimit
        } else if timed_out || cpu_exceeded {
            RunVerdict::Timeout
        } else if usage.out_of_memory_kills > 0
            || (is_python && exit.exit_code != Some(0) && python_memory_error(&stderr.bytes))
        {
            RunVerdict::MemoryLimit
        } else if exit.exit_code == Some(0) {
            RunVerdict::Ok
        } else {
            RunVerdict::RuntimeError
        };
        Ok(RunOutcome {
            verdict,
            exit_code: exit.exit_code,
            signal: exit.signal,
            wall: exit.wall,
            cpu: usage.cpu,
            peak_memory_kib: usage.peak_memory_kib,
            stdout: stdout.bytes,
            stderr: stderr.bytes,
            stdout_truncated: stdout.truncated,
            stderr_truncated: stderr.truncated,
            protections: self.inner().protections.clone(),
        })
    }
}

#[cfg(test)]
mod memory_error_tests {
    use super::names_a_memory_error;

    #[test]
    fn memory_errors_and_their_named_subclasses_are_memory_errors() {
        for line in [
            "MemoryError",
            "MemoryError: out of memory",
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB",
        ] {
            assert!(names_a_memory_error(line), "{line}");
        }
        for line in [
            "ValueError: MemoryError",
            "Memory Error",
            "",
            "x MemoryError",
        ] {
            assert!(!names_a_memory_error(line), "{line}");
        }
    }
}
