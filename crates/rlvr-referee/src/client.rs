//! The Rust end of the referee protocol (see `referee/header.py`): requests on the referee's
//! stdin, answers on its stdout, never blocking past a deadline. Any error means the referee
//! can no longer be trusted to be in step: the caller kills it and starts another.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use serde::{Deserialize, Serialize};

/// How long starting (running the prelude) may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long preparing one job's tests may take, on top of a second per test.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long closing a job may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest header the referee may send.
const MAX_HEADER: usize = 16 << 20;

/// Why talking to the referee failed.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    #[error("the referee did not answer before its deadline")]
    Deadline,
    #[error("the referee closed its pipe (it died or was killed)")]
    Closed,
    #[error("the referee's pipe failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the referee sent a malformed frame: {0}")]
    Protocol(String),
    #[error("the referee refused: {0}")]
    Refused(String),
}

/// How the referee cut one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestSplit {
    /// Split: run the child with this probe spec, then ask for a judgement.
    Split {
        /// The probe spec (JSON) for the runner: solution calls and inputs only.
        probes: String,
    },
    /// Not split: the test runs whole next to the solution, as the sentinel program.
    Unsplit {
        /// Why (for the verdict detail).
        reason: String,
    },
}

/// The referee's verdict on a split test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every assertion held.
    Pass,
    /// An assertion failed, or the solution returned a value that is not plain data.
    Fail,
    /// An exception: the solution raised in a probe, or the test raised.
    Error,
}

/// The referee's answer for one split test.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Judgement {
    /// Pass, fail or error.
    pub outcome: Outcome,
    /// Why it did not pass ("" when it passed).
    pub detail: String,
    /// The child's report was not what the codec writes: the solution tampered with it.
    pub forged: bool,
}

#[derive(Debug, Serialize)]
struct OpenHeader<'a> {
    op: &'a str,
    solution: usize,
    tests: Vec<usize>,
}

#[derive(Debug, Deserialize)]
struct OpenAnswer {
    tests: Vec<SplitAnswer>,
}

#[derive(Debug, Deserialize)]
struct SplitAnswer {
    split: bool,
    #[serde(default)]
    probes: usize,
    #[serde(default)]
    reason: String,
}

/// A connection to one referee process.
#[derive(Debug)]
pub struct Referee {
    requests: OwnedFd,
    responses: OwnedFd,
    pending: Vec<u8>,
    /// A job is open (its forked process is waiting for requests).
    job_open: bool,
}

impl Referee {
    /// Wraps the referee process's stdin (`requests`) and stdout (`responses`).
    pub fn new(requests: OwnedFd, responses: OwnedFd) -> Self {
        Self {
            requests,
            responses,
            pending: Vec::new(),
            job_open: false,
        }
    }

    /// Runs the prelude (the names every test sees) once.
    pub fn start(&mut self, prelude: &str) -> Result<(), RefereeError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let header = serde_json::json!({"op": "start", "prelude": prelude.len()});
        self.send(&frame(&header, &[prelude.as_bytes()]), deadline)?;
        let answer = self.receive_json(deadline)?;
        if answer.get("ok") == Some(&serde_json::Value::Bool(true)) {
            Ok(())
        } else {
            Err(RefereeError::Refused(answer.to_string()))
        }
    }

    /// Opens a job: splits each test against the solution's source and runs the tests' setup.
    /// The job stays open (one process in the referee) until [`Referee::close`].
    pub fn open(&mut self, solution: &str, tests: &[&str]) -> Result<Vec<TestSplit>, RefereeError> {
        if self.job_open {
            self.close()?;
        }
        let deadline = Instant::now()
            + OPEN_TIMEOUT
            + Duration::from_secs(u64::try_from(tests.len()).unwrap_or(u64::MAX));
        let header = OpenHeader {
            op: "open",
            solution: solution.len(),
            tests: tests.iter().map(|test| test.len()).collect(),
        };
        let mut payloads: Vec<&[u8]> = vec![solution.as_bytes()];
        payloads.extend(tests.iter().map(|test| test.as_bytes()));
        self.send(&frame(&header, &payloads), deadline)?;
        let header = self.receive_header(deadline)?;
        let answer: OpenAnswer = serde_json::from_slice(&header)
            .map_err(|_| RefereeError::Protocol(String::from_utf8_lossy(&header).into_owned()))?;
        if answer.tests.len() != tests.len() {
            return Err(RefereeError::Protocol(format!(
                "{} answers for {} tests",
                answer.tests.len(),
                tests.len()
            )));
        }
        self.job_open = true;
        let mut splits = Vec::with_capacity(tests.len());
        for test in answer.tests {
            splits.push(if test.split {
                let spec = self.receive_exact(test.probes, deadline)?;
                TestSplit::Split {
                    probes: String::from_utf8(spec)
                        .map_err(|error| RefereeError::Protocol(error.to_string()))?,
                }
            } else {
                TestSplit::Unsplit {
                    reason: test.reason,
                }
            });
        }
        Ok(splits)
    }

    /// Judges split test `test` of the open job from the child's results file.
    pub fn judge(
        &mut self,
        test: usize,
        results: &[u8],
        timeout: Duration,
    ) -> Result<Judgement, RefereeError> {
        let deadline = Instant::now() + timeout;
        let header = serde_json::json!({"op": "judge", "test": test, "results": results.len()});
        self.send(&frame(&header, &[results]), deadline)?;
        let header = self.receive_header(deadline)?;
        serde_json::from_slice(&header)
            .map_err(|_| RefereeError::Protocol(String::from_utf8_lossy(&header).into_owned()))
    }

    /// Closes the open job: its process in the referee exits, with everything its tests did.
    pub fn close(&mut self) -> Result<(), RefereeError> {
        if !self.job_open {
            return Ok(());
        }
        self.job_open = false;
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        self.send(&frame(&serde_json::json!({"op": "close"}), &[]), deadline)?;
        let answer = self.receive_json(deadline)?;
        if answer.get("ok") == Some(&serde_json::Value::Bool(true)) {
            Ok(())
        } else {
            Err(RefereeError::Refused(answer.to_string()))
        }
    }

    /// Asks the referee to exit (closing the open job first).
    pub fn exit(mut self) -> Result<(), RefereeError> {
        self.close()?;
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        self.send(&frame(&serde_json::json!({"op": "exit"}), &[]), deadline)
    }

    fn receive_json(&mut self, deadline: Instant) -> Result<serde_json::Value, RefereeError> {
        let header = self.receive_header(deadline)?;
        serde_json::from_slice(&header).map_err(|error| RefereeError::Protocol(error.to_string()))
    }

    fn send(&mut self, mut bytes: &[u8], deadline: Instant) -> Result<(), RefereeError> {
        while !bytes.is_empty() {
            wait_ready(self.requests.as_fd(), PollFlags::OUT, deadline)?;
            match rustix::io::write(&self.requests, bytes) {
                Ok(written) => bytes = &bytes[written..],
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(rustix::io::Errno::PIPE) => return Err(RefereeError::Closed),
                Err(error) => return Err(RefereeError::Io(error.into())),
            }
        }
        Ok(())
    }

    fn receive_header(&mut self, deadline: Instant) -> Result<Vec<u8>, RefereeError> {
        let length = self.receive_exact(4, deadline)?;
        let length = u32::from_le_bytes(length.try_into().expect("four bytes")) as usize;
        if length > MAX_HEADER {
            return Err(RefereeError::Protocol(format!("header of {length} bytes")));
        }
        let header = self.receive_exact(length, deadline)?;
        // The referee answers `{"error": ...}` when a job process died mid-request.
        if header.starts_with(b"{\"error\"") {
            return Err(RefereeError::Refused(
                String::from_utf8_lossy(&header).into_owned(),
            ));
        }
        Ok(header)
    }

    fn receive_exact(&mut self, length: usize, deadline: Instant) -> Result<Vec<u8>, RefereeError> {
        let mut buffer = vec![0; 1 << 16];
        while self.pending.len() < length {
            wait_ready(self.responses.as_fd(), PollFlags::IN, deadline)?;
            match rustix::io::read(&self.responses, &mut buffer) {
                Ok(0) => return Err(RefereeError::Closed),
                Ok(read) => self.pending.extend_from_slice(&buffer[..read]),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(error) => return Err(RefereeError::Io(error.into())),
            }
        }
        let rest = self.pending.split_off(length);
        Ok(std::mem::replace(&mut self.pending, rest))
    }
}

/// A frame: 4-byte little-endian length, JSON header, payloads.
fn frame<T: Serialize>(header: &T, payloads: &[&[u8]]) -> Vec<u8> {
    let json = serde_json::to_vec(header).expect("request headers always serialize");
    let payload_length: usize = payloads.iter().map(|payload| payload.len()).sum();
    let mut bytes = Vec::with_capacity(4 + json.len() + payload_length);
    bytes.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_le_bytes());
    bytes.extend_from_slice(&json);
    for payload in payloads {
        bytes.extend_from_slice(payload);
    }
    bytes
}

/// Waits until `fd` is ready for `flags` or the deadline passes (hang-up counts as ready).
fn wait_ready(fd: BorrowedFd<'_>, flags: PollFlags, deadline: Instant) -> Result<(), RefereeError> {
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(RefereeError::Deadline);
        }
        let timeout = Timespec {
            tv_sec: i64::try_from(remaining.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(remaining.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => continue,
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(RefereeError::Io(error.into())),
        }
    }
}
