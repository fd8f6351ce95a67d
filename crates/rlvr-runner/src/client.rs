//! The Rust end of the runner protocol: requests on the runner's stdin, reports on its stdout
//! (crate::transport), never blocking past a deadline (a stuck or dead runner is an error, not
//! a hang).

use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::protocol::{
    BatchNextHeader, BatchStartHeader, ChildReport, Harness, JudgeOptions, LoadHeader, LoadReport,
    RunHeader, TestLimits,
};
use crate::transport::{FramedPipe, PipeError, later};

/// Extra time the runner gets beyond a test's wall limit to kill, reap and report.
const REPORT_GRACE: Duration = Duration::from_secs(5);
/// How long `load` may take beyond its compile budget (importing pandas on a loaded machine
/// takes seconds).
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest header the runner may send; anything bigger means the stream is corrupt.
const MAX_HEADER: usize = 1 << 20;

/// A connection to one running runner (`runner/*.py`).
#[derive(Debug)]
pub struct Runner {
    pipe: FramedPipe,
}

impl Runner {
    /// Wraps the runner process's stdin (`requests`) and stdout (`responses`).
    pub fn new(requests: OwnedFd, responses: OwnedFd) -> Self {
        Self {
            pipe: FramedPipe::new(requests, responses, MAX_HEADER),
        }
    }

    /// Compiles the program's units once (in a child of the runner's, given 10 s) and imports
    /// `preload` modules once. With a `harness`, units are first rewritten the way that
    /// reference runs code in-process.
    pub fn load(
        &mut self,
        units: &[&str],
        filename: &str,
        preload: &[&str],
        harness: Option<Harness>,
    ) -> Result<LoadReport, PipeError> {
        self.load_bounded(units, filename, preload, harness, None)
    }

    /// [`Runner::load`] where the compile may take at most `compile_budget` (the test's time
    /// limit): the runner compiles every program in a child of its own and, past the budget,
    /// reports `compile_error` and answers every test with a `timeout`, as a fresh `python
    /// FILE` per test would time out while still compiling. CPython 3.11 parses some forms in
    /// quadratic or exponential time (long f-strings, nested `try` blocks), so a response could
    /// otherwise hold the runner for minutes.
    pub fn load_bounded(
        &mut self,
        units: &[&str],
        filename: &str,
        preload: &[&str],
        harness: Option<Harness>,
        compile_budget: Option<Duration>,
    ) -> Result<LoadReport, PipeError> {
        let deadline = later(
            Instant::now() + LOAD_TIMEOUT,
            compile_budget.unwrap_or(Duration::ZERO),
        );
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
        self.pipe.send_frame(&header, &payloads, deadline)?;
        self.pipe.receive_json(deadline)
    }

    /// Runs one test: the loaded units, then `extra` (e.g. an assert), with `stdin`.
    pub fn run_test(
        &mut self,
        stdin: &[u8],
        extra: Option<&str>,
        limits: TestLimits,
    ) -> Result<ChildReport, PipeError> {
        self.run_judge_test(stdin, extra, JudgeOptions::default(), limits)
    }

    /// Runs one test with the judge's additions (the tamper sensor, a fresh work directory).
    /// A live test needs [`Runner::start_test`], since someone must answer its child.
    pub fn run_judge_test(
        &mut self,
        stdin: &[u8],
        extra: Option<&str>,
        judge: JudgeOptions<'_>,
        limits: TestLimits,
    ) -> Result<ChildReport, PipeError> {
        let deadline = self.start_test(stdin, extra, judge, limits)?;
        self.finish_test(deadline)
    }

    /// Sends a test and returns at once, with the deadline by which its report is due; the
    /// report is read with [`Runner::finish_test`] once [`Runner::reports`] is readable. A live
    /// test's child meanwhile talks on the live pipes.
    pub fn start_test(
        &mut self,
        stdin: &[u8],
        extra: Option<&str>,
        judge: JudgeOptions<'_>,
        limits: TestLimits,
    ) -> Result<Instant, PipeError> {
        let deadline = later(
            Instant::now() + Duration::from_millis(limits.wall_ms),
            REPORT_GRACE,
        );
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
            live: judge.live,
            work_directory: judge.fresh_work_directory,
        };
        self.pipe
            .send_frame(&header, &[stdin, extra_bytes], deadline)?;
        Ok(deadline)
    }

    /// Ends the running test now: the runner kills its child and reports. No answer of its own
    /// (an abort that arrives after the test ended is dropped by the runner).
    pub fn abort(&mut self) -> Result<(), PipeError> {
        let deadline = Instant::now() + REPORT_GRACE;
        self.pipe
            .send_frame(&serde_json::json!({"op": "abort"}), &[], deadline)
    }

    /// The report of the test [`Runner::start_test`] sent.
    pub fn finish_test(&mut self, deadline: Instant) -> Result<ChildReport, PipeError> {
        self.receive_report(deadline)
    }

    /// The pipe reports arrive on, for a caller that waits on several descriptors at once;
    /// check [`Runner::report_started`] first.
    pub fn reports(&self) -> BorrowedFd<'_> {
        self.pipe.responses()
    }

    /// Whether bytes of the next report were read already.
    pub fn report_started(&self) -> bool {
        self.pipe.has_pending()
    }

    fn receive_report(&mut self, deadline: Instant) -> Result<ChildReport, PipeError> {
        let mut report: ChildReport = self.pipe.receive_json(deadline)?;
        report.stdout = self.pipe.receive_exact(report.stdout_length, deadline)?;
        report.stderr = self.pipe.receive_exact(report.stderr_length, deadline)?;
        Ok(report)
    }

    /// Starts a batch: ONE child process that runs the loaded harness program's tests one after
    /// another, as the in-process references run a stage (prime_code's first pass, rllm's
    /// LiveCodeBench grader). Module-level code runs once in that child, before the first test;
    /// state a test leaves in it is seen by the next. Needs a `load` with a harness. `limits`
    /// gives the per-test CPU seconds, the output cap and the address-space limit of the child
    /// (its `wall_ms` is not used: each [`Runner::batch_next`] names its own).
    pub fn batch_start(&mut self, inputs: &[&[u8]], limits: TestLimits) -> Result<(), PipeError> {
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
        self.pipe.send_frame(&header, inputs, deadline)?;
        let reply: serde_json::Value = self.pipe.receive_json(deadline)?;
        if reply.get("ok") != Some(&serde_json::Value::Bool(true)) {
            return Err(PipeError::Protocol(format!("batch_start refused: {reply}")));
        }
        Ok(())
    }

    /// Runs the batch's next test (in input order) within `wall_ms`. A test that runs out of
    /// time or kills the child ends the batch: later calls report a failed test.
    pub fn batch_next(&mut self, wall_ms: u64) -> Result<ChildReport, PipeError> {
        let deadline = Instant::now() + Duration::from_millis(wall_ms) + REPORT_GRACE;
        let header = BatchNextHeader {
            op: "batch_next",
            wall_ms,
        };
        self.pipe.send_frame(&header, &[], deadline)?;
        self.receive_report(deadline)
    }

    /// Ends the batch: its child is stopped and everything it started is killed.
    pub fn batch_end(&mut self) -> Result<(), PipeError> {
        let deadline = Instant::now() + REPORT_GRACE;
        self.pipe
            .send_frame(&serde_json::json!({"op": "batch_end"}), &[], deadline)?;
        self.pipe.receive_header(deadline)?;
        Ok(())
    }

    /// Prepares the runner for another job: kills every process it left, empties
    /// `work_directory`; `Ok(false)` when it cannot vouch that no state carries over (the
    /// caller must then start a new sandbox).
    pub fn reset(&mut self, work_directory: &str) -> Result<bool, PipeError> {
        let deadline = Instant::now() + REPORT_GRACE;
        let request = serde_json::json!({"op": "reset", "work_directory": work_directory});
        self.pipe.send_frame(&request, &[], deadline)?;
        let report: serde_json::Value = self.pipe.receive_json(deadline)?;
        Ok(report.get("ok") == Some(&serde_json::Value::Bool(true)))
    }

    /// Asks the runner to exit; the sandbox then reaps it.
    pub fn exit(mut self) -> Result<(), PipeError> {
        let deadline = Instant::now() + REPORT_GRACE;
        self.pipe
            .send_frame(&serde_json::json!({"op": "exit"}), &[], deadline)
    }
}
