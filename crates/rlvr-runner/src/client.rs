//! The Rust end of the protocol: write requests to the runner's stdin, read reports from its
//! stdout, never blocking past a deadline (a stuck or dead runner is an error, not a hang).

use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::protocol::{
    BatchNextHeader, BatchStartHeader, Harness, JudgeOptions, LoadHeader, LoadReport, RunHeader,
    TestLimits, TestReport, encode,
};

/// Extra time the runner gets beyond a test's wall limit to kill, reap and report.
const REPORT_GRACE: Duration = Duration::from_secs(5);
/// How long `load` may take (importing pandas on a loaded machine takes seconds).
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest header the runner may send; anything bigger means the stream is corrupt.
const MAX_HEADER: usize = 1 << 20;

/// Why talking to the runner failed. Each one means the runner can no longer be trusted and
/// should be killed; the tests it had not finished get a `sandbox_error` verdict.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("the runner did not answer before its deadline")]
    Deadline,
    #[error("the runner closed its pipe (it died or was killed)")]
    Closed,
    #[error("the runner's pipe failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the runner sent a malformed frame: {0}")]
    Protocol(String),
}

/// A connection to one running runner (`runner/*.py`).
#[derive(Debug)]
pub struct Runner {
    requests: OwnedFd,
    responses: OwnedFd,
    /// Bytes received past the end of the last frame.
    pending: Vec<u8>,
}

impl Runner {
    /// Wraps the runner process's stdin (`requests`) and stdout (`responses`).
    pub fn new(requests: OwnedFd, responses: OwnedFd) -> Self {
        Self {
            requests,
            responses,
            pending: Vec::new(),
        }
    }

    /// Compiles the program's units once and imports `preload` modules once. With a
    /// `harness`, units are first rewritten the way that reference runs code in-process.
    pub fn load(
        &mut self,
        units: &[&str],
        filename: &str,
        preload: &[&str],
        harness: Option<Harness>,
    ) -> Result<LoadReport, RunnerError> {
        self.load_bounded(units, filename, preload, harness, None)
    }

    /// [`Runner::load`] where a long program (over 64 Ki characters) may take at most
    /// `compile_budget` to compile: the runner compiles it in a child of its own and, past the
    /// budget, reports `compile_error` and answers every test with a `timeout`, as a fresh
    /// `python FILE` per test would time out while still compiling. CPython 3.11 parses some
    /// forms in quadratic time, so a response could otherwise hold the runner for a minute.
    pub fn load_bounded(
        &mut self,
        units: &[&str],
        filename: &str,
        preload: &[&str],
        harness: Option<Harness>,
        compile_budget: Option<Duration>,
    ) -> Result<LoadReport, RunnerError> {
        let deadline = Instant::now() + LOAD_TIMEOUT;
        let header = LoadHeader {
            op: "load",
            units: units.iter().map(|unit| unit.len()).collect(),
            filename,
            preload,
            harness,
            compile_ms: compile_budget.map_or(0, |budget| {
                u64::try_from(budget.as_millis()).unwrap_or(u64::MAX).max(1)
            }),
        };
        let payloads: Vec<&[u8]> = units.iter().map(|unit| unit.as_bytes()).collect();
        self.send(&encode(&header, &payloads), deadline)?;
        let header = self.receive_header(deadline)?;
        serde_json::from_slice(&header).map_err(|error| RunnerError::Protocol(error.to_string()))
    }

    /// Runs one test: the loaded units, then `extra` (e.g. an assert), with `stdin`.
    pub fn run_test(
        &mut self,
        stdin: &[u8],
        extra: Option<&str>,
        limits: TestLimits,
    ) -> Result<TestReport, RunnerError> {
        self.run_judge_test(stdin, extra, JudgeOptions::default(), limits)
    }

    /// Runs one test with the judge's additions: the tamper sensor, and for a split
    /// functional test the probes (evaluated instead of `extra`).
    pub fn run_judge_test(
        &mut self,
        stdin: &[u8],
        extra: Option<&str>,
        judge: JudgeOptions<'_>,
        limits: TestLimits,
    ) -> Result<TestReport, RunnerError> {
        let deadline = Instant::now() + Duration::from_millis(limits.wall_ms) + REPORT_GRACE;
        let extra = judge.probes.or(extra);
        let extra_bytes = extra.map_or(&[][..], str::as_bytes);
        let header = RunHeader {
            op: "run",
            stdin: stdin.len(),
            extra: extra_bytes.len(),
            has_extra: extra.is_some(),
            wall_ms: limits.wall_ms,
            cpu_s: limits.cpu_seconds,
            output_bytes: limits.output_bytes,
            memory_bytes: limits.address_space_bytes,
            sensor: judge.sensor,
            probes: judge.probes.is_some(),
            work_directory: judge.fresh_work_directory,
        };
        self.send(&encode(&header, &[stdin, extra_bytes]), deadline)?;
        self.receive_report(deadline)
    }

    fn receive_report(&mut self, deadline: Instant) -> Result<TestReport, RunnerError> {
        let header = self.receive_header(deadline)?;
        let mut report: TestReport = serde_json::from_slice(&header)
            .map_err(|error| RunnerError::Protocol(error.to_string()))?;
        report.stdout = self.receive_exact(report.stdout_length, deadline)?;
        report.stderr = self.receive_exact(report.stderr_length, deadline)?;
        report.results = self.receive_exact(report.results_length, deadline)?;
        Ok(report)
    }

    /// Starts a batch: ONE child process that runs the loaded harness program's tests one after
    /// another, as the in-process references run a stage (prime_code's first pass, rllm's
    /// LiveCodeBench grader). Module-level code runs once in that child, before the first test;
    /// state a test leaves in it is seen by the next. Needs a `load` with a harness. `limits`
    /// gives the per-test CPU seconds, the output cap and the address-space limit of the child
    /// (its `wall_ms` is not used: each [`Runner::batch_next`] names its own).
    pub fn batch_start(&mut self, inputs: &[&[u8]], limits: TestLimits) -> Result<(), RunnerError> {
        let payload: usize = inputs.iter().map(|input| input.len()).sum();
        let deadline =
            Instant::now() + REPORT_GRACE + Duration::from_millis((payload >> 20) as u64 * 10);
        let header = BatchStartHeader {
            op: "batch_start",
            inputs: inputs.iter().map(|input| input.len()).collect(),
            cpu_s: limits.cpu_seconds,
            output_bytes: limits.output_bytes,
            memory_bytes: limits.address_space_bytes,
        };
        self.send(&encode(&header, inputs), deadline)?;
        let reply = self.receive_header(deadline)?;
        let reply: serde_json::Value = serde_json::from_slice(&reply)
            .map_err(|error| RunnerError::Protocol(error.to_string()))?;
        if reply.get("ok") != Some(&serde_json::Value::Bool(true)) {
            return Err(RunnerError::Protocol(format!(
                "batch_start refused: {reply}"
            )));
        }
        Ok(())
    }

    /// Runs the batch's next test (in input order) within `wall_ms`. A test that runs out of
    /// time or kills the child ends the batch: later calls report a failed test.
    pub fn batch_next(&mut self, wall_ms: u64) -> Result<TestReport, RunnerError> {
        let deadline = Instant::now() + Duration::from_millis(wall_ms) + REPORT_GRACE;
        let header = BatchNextHeader {
            op: "batch_next",
            wall_ms,
        };
        self.send(&encode(&header, &[]), deadline)?;
        self.receive_report(deadline)
    }

    /// Ends the batch: its child is stopped and everything it started is killed.
    pub fn batch_end(&mut self) -> Result<(), RunnerError> {
        let deadline = Instant::now() + REPORT_GRACE;
        self.send(
            &encode(&serde_json::json!({"op": "batch_end"}), &[]),
            deadline,
        )?;
        self.receive_header(deadline)?;
        Ok(())
    }

    /// Prepares the runner for another job: kills every process it left, empties
    /// `work_directory`; `Ok(false)` when it cannot vouch that no state carries over (the
    /// caller must then start a new sandbox).
    pub fn reset(&mut self, work_directory: &str) -> Result<bool, RunnerError> {
        let deadline = Instant::now() + REPORT_GRACE;
        let request = serde_json::json!({"op": "reset", "work_directory": work_directory});
        self.send(&encode(&request, &[]), deadline)?;
        let header = self.receive_header(deadline)?;
        let report: serde_json::Value = serde_json::from_slice(&header)
            .map_err(|error| RunnerError::Protocol(error.to_string()))?;
        Ok(report.get("ok") == Some(&serde_json::Value::Bool(true)))
    }

    /// Asks the runner to exit; the sandbox then reaps it.
    pub fn exit(mut self) -> Result<(), RunnerError> {
        let deadline = Instant::now() + REPORT_GRACE;
        self.send(&encode(&serde_json::json!({"op": "exit"}), &[]), deadline)
    }

    fn send(&mut self, mut bytes: &[u8], deadline: Instant) -> Result<(), RunnerError> {
        while !bytes.is_empty() {
            wait_ready(self.requests.as_fd(), PollFlags::OUT, deadline)?;
            match rustix::io::write(&self.requests, bytes) {
                Ok(written) => bytes = &bytes[written..],
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(rustix::io::Errno::PIPE) => return Err(RunnerError::Closed),
                Err(error) => return Err(RunnerError::Io(error.into())),
            }
        }
        Ok(())
    }

    fn receive_header(&mut self, deadline: Instant) -> Result<Vec<u8>, RunnerError> {
        let length = self.receive_exact(4, deadline)?;
        let length = u32::from_le_bytes(length.try_into().expect("four bytes")) as usize;
        if length > MAX_HEADER {
            return Err(RunnerError::Protocol(format!("header of {length} bytes")));
        }
        self.receive_exact(length, deadline)
    }

    fn receive_exact(&mut self, length: usize, deadline: Instant) -> Result<Vec<u8>, RunnerError> {
        let mut buffer = vec![0; 1 << 16];
        while self.pending.len() < length {
            wait_ready(self.responses.as_fd(), PollFlags::IN, deadline)?;
            match rustix::io::read(&self.responses, &mut buffer) {
                Ok(0) => return Err(RunnerError::Closed),
                Ok(read) => self.pending.extend_from_slice(&buffer[..read]),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(error) => return Err(RunnerError::Io(error.into())),
            }
        }
        let rest = self.pending.split_off(length);
        Ok(std::mem::replace(&mut self.pending, rest))
    }
}

/// Waits until `fd` is ready for `flags` or the deadline passes. Hang-up counts as ready: the
/// following read or write reports it.
fn wait_ready(
    fd: std::os::fd::BorrowedFd<'_>,
    flags: PollFlags,
    deadline: Instant,
) -> Result<(), RunnerError> {
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(RunnerError::Deadline);
        }
        let timeout = Timespec {
            tv_sec: remaining.as_secs() as i64,
            tv_nsec: i64::from(remaining.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => continue,
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(RunnerError::Io(error.into())),
        }
    }
}
