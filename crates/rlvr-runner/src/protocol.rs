//! The headers exchanged with the runner (`runner/*.py`), in the one frame format of
//! `rlvr-frame`: a 4-byte little-endian length, a JSON header, then raw payloads whose lengths
//! the header names.

use serde::{Deserialize, Serialize};

/// Limits the runner applies to one test's child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestLimits {
    /// Wall clock, measured by the runner on a monotonic clock; the child tree is killed after.
    pub wall_ms: u64,
    /// `RLIMIT_CPU` in whole seconds (0: none).
    pub cpu_seconds: u64,
    /// Largest stdout (and any file) the child may write: `RLIMIT_FSIZE` (0: none).
    pub output_bytes: u64,
    /// `RLIMIT_AS` for the child (0: none); the sandbox's cgroup is the real memory limit.
    pub address_space_bytes: u64,
}

/// The header of a `run` request.
#[derive(Debug, Serialize)]
pub(crate) struct RunHeader<'a> {
    pub(crate) op: &'static str,
    pub(crate) stdin: usize,
    pub(crate) extra: usize,
    pub(crate) has_extra: bool,
    pub(crate) wall_ms: u64,
    pub(crate) cpu_s: u64,
    pub(crate) output_bytes: u64,
    pub(crate) memory_bytes: u64,
    /// Install the tamper sensor (runner/sensor.py) in the test child.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) sensor: bool,
    /// A judge functional test: after the units, the child answers the referee's calls on the
    /// live pipes (runner/live.py).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) live: bool,
    /// Emptied after the test (see [`JudgeOptions::fresh_work_directory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) work_directory: Option<&'a str>,
}

/// What a judge test adds to a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeOptions<'a> {
    /// Install the tamper sensor: the report then lists what the solution tried.
    pub sensor: bool,
    /// A judge functional test: after the units (the prelude, then the solution) the child
    /// answers the referee's calls on the live pipes (runner/live.py) until told to end.
    pub live: bool,
    /// The sandbox's work directory, emptied after the test (entries, mode, extended
    /// attributes) as between jobs, so that no test sees what an earlier one of its job left.
    pub fresh_work_directory: Option<&'a str>,
}

/// The header of a `batch_start` request: one payload per test input follows.
#[derive(Debug, Serialize)]
pub(crate) struct BatchStartHeader {
    pub(crate) op: &'static str,
    pub(crate) inputs: Vec<usize>,
    pub(crate) cpu_s: u64,
    pub(crate) output_bytes: u64,
    pub(crate) memory_bytes: u64,
}

/// The header of a `batch_next` request.
#[derive(Debug, Serialize)]
pub(crate) struct BatchNextHeader {
    pub(crate) op: &'static str,
    pub(crate) wall_ms: u64,
}

/// The header of a `load` request.
#[derive(Debug, Serialize)]
pub(crate) struct LoadHeader<'a> {
    pub(crate) op: &'static str,
    pub(crate) units: Vec<usize>,
    pub(crate) filename: &'a str,
    pub(crate) preload: &'a [&'a str],
    pub(crate) harness: Option<Harness>,
    /// Wall clock a long program's compile may take (0: unbounded); see `Runner::load_bounded`.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) compile_ms: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// An in-process reference harness to reproduce instead of a plain `python FILE` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Harness {
    /// verl `prime_code`: star-import header, code wrapped into `def code():`, `exit`/`quit`
    /// set to `None`, stdin mocked by a string, stdout captured, `SystemExit` swallowed.
    Prime,
    /// LiveCodeBench (rllm's copy): imports hoisted, statements wrapped into a function,
    /// stdin mocked by a plain `StringIO`, stdout captured, `SystemExit` swallowed.
    LiveCodeBench,
}

/// What `load` found.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LoadReport {
    /// Every preload module imported.
    pub ok: bool,
    /// `module: ErrorType: message` for each preload module that failed to import.
    pub preload_errors: Vec<String>,
    /// The `SyntaxError` text when a unit does not compile; every test then fails with it.
    pub compile_error: Option<String>,
}

/// How a test's child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildEnding {
    /// It exited by itself (see `exit_code`).
    Exited,
    /// A signal ended it (see `signal`): a crash, the CPU limit, the output limit, the OOM killer.
    Signaled,
    /// The wall clock ran out and the runner killed it.
    Timeout,
}

/// What one test did. The payloads follow the header on the wire.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChildReport {
    pub outcome: ChildEnding,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The engine ended the test early (`abort`, a live test it had decided).
    #[serde(default)]
    pub aborted: bool,
    pub wall_ms: f64,
    pub cpu_ms: f64,
    pub maxrss_kib: u64,
    #[serde(rename = "stdout_len")]
    pub(crate) stdout_length: usize,
    pub stdout_truncated: bool,
    #[serde(rename = "stderr_len")]
    pub(crate) stderr_length: usize,
    pub stderr_truncated: bool,
    /// Tamper kinds the sensor saw the solution try (judge tests; empty otherwise).
    #[serde(default)]
    pub tampering: Vec<String>,
    #[serde(skip)]
    pub stdout: Vec<u8>,
    #[serde(skip)]
    pub stderr: Vec<u8>,
}
