//! Test verdicts: what the executor reports for one test program and how a profile judges it.
//! A failing program is a verdict, never an error; only infrastructure failure is
//! `sandbox_error`.

use std::time::Duration;

use crate::plan::TestProgram;
use crate::profile::Profile;
use crate::python_text::python_strip;
use crate::tampering::Tampering;

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The test passed.
    Pass,
    /// The program finished but printed the wrong output (or exited before the sentinel).
    WrongAnswer,
    /// The program failed: non-zero exit status or killed by a signal.
    RuntimeError,
    /// The program exceeded its wall-clock limit (or the job's deadline).
    Timeout,
    /// The program exceeded its memory limit.
    MemoryLimit,
    /// The program printed more than the output limit.
    OutputLimit,
    /// The program (C++, C, Java, Go, Rust) did not compile: the compiler failed, or ran past
    /// its own time, memory or output limits (issue 24).
    CompileError,
    /// The sandbox could not run the program; never counted as a wrong answer.
    SandboxError,
    /// The test was not run (early stop).
    Skipped,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Self; 9] = [
        Self::Pass,
        Self::WrongAnswer,
        Self::RuntimeError,
        Self::Timeout,
        Self::MemoryLimit,
        Self::OutputLimit,
        Self::CompileError,
        Self::SandboxError,
        Self::Skipped,
    ];

    /// The name used in JSON and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::WrongAnswer => "wrong_answer",
            Self::RuntimeError => "runtime_error",
            Self::Timeout => "timeout",
            Self::MemoryLimit => "memory_limit",
            Self::OutputLimit => "output_limit",
            Self::CompileError => "compile_error",
            Self::SandboxError => "sandbox_error",
            Self::Skipped => "skipped",
        }
    }
}

/// What running one test program produced; the sandbox's outcome is mapped into this.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutionResult {
    /// Exit status when the program exited normally.
    pub exit_code: Option<i32>,
    /// Signal number when the program was killed by a signal.
    pub signal: Option<i32>,
    /// Captured standard output (possibly truncated at the output limit).
    pub stdout: Vec<u8>,
    /// The wall-clock limit was hit.
    pub timed_out: bool,
    /// The memory limit was hit.
    pub memory_exceeded: bool,
    /// The output limit was hit.
    pub output_exceeded: bool,
    /// The sandbox failed to set up or run the program.
    pub sandbox_error: Option<String>,
    /// Wall time of the run, for reports.
    pub wall_time: Option<Duration>,
    /// Whether the program ran to its last statement, when the executor can tell (the warm
    /// runner writes a per-test nonce after the last statement; `exit()` and `os._exit` skip it).
    pub completed: Option<bool>,
    /// For a judge functional test: whether the referee split it (`Some(false)`: it ran whole
    /// as the sentinel program).
    pub split: Option<bool>,
    /// For a split test whose child ran to its end: the referee's verdict.
    pub referee: Option<RefereeVerdict>,
    /// What the solution tried (telemetry; never changes the verdict).
    pub tampering: Tampering,
    /// The program ended with an uncaught `AssertionError` (the last line of its stderr): for a
    /// functional test, the test's assertion failed, which is a wrong answer.
    pub assertion_failed: bool,
    /// A compiled language's program did not compile; nothing ran.
    pub compile_failed: bool,
}

/// The referee's verdict on a split functional test, from the values the child reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefereeVerdict {
    /// Every assertion held.
    Pass,
    /// An assertion failed, or a value the solution returned is not plain data.
    Fail,
    /// An exception: raised by the solution in a probe, or by the test.
    Error,
}

/// Judges one executed test program under a profile's rules.
///
/// Order: infrastructure failure, then limits, then the exit status (per the profile's
/// policy; `SystemExitIgnored` programs run under a harness that already turned `SystemExit`
/// into a normal end), then the output: compared with the expected text by the profile's
/// comparator, or, for judge functional tests, decided by the referee (split tests) or
/// required to end with the sentinel line (unsplit ones).
pub fn judge_test(profile: &Profile, program: &TestProgram, result: &ExecutionResult) -> Verdict {
    if result.sandbox_error.is_some() {
        return Verdict::SandboxError;
    }
    if result.compile_failed {
        return Verdict::CompileError;
    }
    if result.timed_out {
        return Verdict::Timeout;
    }
    if result.memory_exceeded {
        return Verdict::MemoryLimit;
    }
    if result.output_exceeded {
        return Verdict::OutputLimit;
    }
    if program.check.is_some() && result.assertion_failed && result.exit_code == Some(1) {
        return Verdict::WrongAnswer;
    }
    if result.signal.is_some() || result.exit_code != Some(0) {
        return Verdict::RuntimeError;
    }
    if result.split == Some(true) {
        // The child only evaluated the solution's calls; the referee judged the rest. A child
        // that did not reach the end wrote no complete report: nothing was judged.
        return match (result.completed, result.referee) {
            (Some(true), Some(RefereeVerdict::Pass)) => Verdict::Pass,
            (Some(true), Some(RefereeVerdict::Error)) => Verdict::RuntimeError,
            _ => Verdict::WrongAnswer,
        };
    }
    if let Some(sentinel) = &program.sentinel {
        // The sentinel is ASCII: a lossy decode cannot forge it.
        let stdout = String::from_utf8_lossy(&result.stdout);
        // A program that printed the sentinel itself but never reached the end of the appended
        // assert (it exited first) does not pass.
        if result.completed == Some(false) {
            return Verdict::WrongAnswer;
        }
        let last_line = stdout
            .lines()
            .map(python_strip)
            .rfind(|line| !line.is_empty());
        return if last_line == Some(sentinel.as_str()) {
            Verdict::Pass
        } else {
            Verdict::WrongAnswer
        };
    }
    // The judge compares output that is not valid UTF-8 as bytes (an invalid byte never equals
    // the U+FFFD a lossy decode would make of it); see `OutputComparison::matches_bytes`.
    match &program.expected {
        Some(expected) if !profile.comparison.matches_bytes(&result.stdout, expected) => {
            Verdict::WrongAnswer
        }
        _ => Verdict::Pass,
    }
}
