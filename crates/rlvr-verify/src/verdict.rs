//! Test verdicts: what the executor reports for one test program and how a profile judges it.
//! A failing program is a verdict, never an error; only infrastructure failure is
//! `sandbox_error`.

use std::time::Duration;

use crate::checker::{Checker, CheckerOutcome};
use crate::plan::TestProgram;
use crate::profile::Profile;
use crate::tampering::Tampering;

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The test passed.
    Pass,
    /// The program finished but printed the wrong output (a functional test: an assertion
    /// failed, or the solution left before the test's end).
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
    /// The ground truth's sandboxed checker failed on this test's output (it crashed, ran
    /// past its limits, printed no verdict, or scored outside [0, 1]) and fails on, or rejects,
    /// the test's expected output too: the checker is broken, and the job's score is `null`,
    /// never a pass (issues 25 and 32). A failure on the output alone is a `wrong_answer`
    /// flagged `checker_rejected`.
    CheckerError,
    /// The test was not run (early stop).
    Skipped,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Self; 10] = [
        Self::Pass,
        Self::WrongAnswer,
        Self::RuntimeError,
        Self::Timeout,
        Self::MemoryLimit,
        Self::OutputLimit,
        Self::CompileError,
        Self::SandboxError,
        Self::CheckerError,
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
            Self::CheckerError => "checker_error",
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
    /// For a judge functional test: the referee's verdict (the test's code ran there while
    /// the solution answered its calls); `None` for every other test.
    pub referee: Option<RefereeVerdict>,
    /// For a judge functional test: comparisons between two of the solution's own objects,
    /// whose result is the solution's word.
    pub untrusted_comparisons: u64,
    /// What the solution tried (telemetry; never changes the verdict).
    pub tampering: Tampering,
    /// A compiled language's program did not compile; nothing ran.
    pub compile_failed: bool,
    /// What the ground truth's sandboxed checker made of the output, when it ran (see
    /// [`crate::checker_needed`]).
    pub checker: Option<CheckerOutcome>,
}

/// The referee's verdict on a judge functional test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefereeVerdict {
    /// The test's code ran to its end.
    Pass,
    /// An assertion failed, or the test needed plain data where the solution gave an object
    /// of its own (its truth value, arithmetic or comparison with data).
    Fail,
    /// An exception: raised by the solution in a call, or by the test.
    Error,
    /// The solution raised MemoryError and the test did not catch it.
    Memory,
    /// The solution's process ended while the test needed it (`exit()` in a call, a crash).
    Ended,
    /// The referee failed on what the solution sent (it is replaced): the solution's failure.
    Broken,
}

/// Judges one executed test program under a profile's rules.
///
/// Order: infrastructure failure, then limits, then, for judge functional tests, the
/// referee's verdict (and a clean exit of the solution's process after a pass); for the rest
/// the exit status (per the profile's policy; `SystemExitIgnored` programs run under a harness
/// that already turned `SystemExit` into a normal end), then the output, compared with the
/// expected text by the checker the ground truth names, else the profile's comparator.
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
    if let Some(verdict) = result.referee {
        return match verdict {
            RefereeVerdict::Pass if result.signal.is_none() && result.exit_code == Some(0) => {
                Verdict::Pass
            }
            RefereeVerdict::Pass | RefereeVerdict::Error => Verdict::RuntimeError,
            RefereeVerdict::Fail | RefereeVerdict::Broken => Verdict::WrongAnswer,
            RefereeVerdict::Memory => Verdict::MemoryLimit,
            // `exit()` (or `os._exit(0)`) in the middle of the test skipped the rest of it.
            RefereeVerdict::Ended if result.exit_code == Some(0) => Verdict::WrongAnswer,
            RefereeVerdict::Ended => Verdict::RuntimeError,
        };
    }
    if result.signal.is_some() || result.exit_code != Some(0) {
        return Verdict::RuntimeError;
    }
    let Some(expected) = &program.expected else {
        return Verdict::Pass;
    };
    // A checker the ground truth names replaces the profile's comparison (issue 25). The judge
    // compares output that is not valid UTF-8 as bytes (an invalid byte never equals the
    // U+FFFD a lossy decode would make of it); see `OutputComparison::matches_bytes`; the
    // checkers read bytes too.
    // A sandboxed checker ran in the executor: its outcome decides; none (it was never run)
    // is as much a checker failure as a crash, never a pass.
    let accepted = match &program.checker {
        Some(Checker::BuiltIn(rule)) => rule.accepts(&result.stdout, expected),
        Some(Checker::Python(_) | Checker::Cpp(_)) => match &result.checker {
            Some(CheckerOutcome::Score(score)) => score.value() >= 1.0,
            Some(CheckerOutcome::Rejected(_)) => false,
            Some(CheckerOutcome::Error(_)) | None => return Verdict::CheckerError,
        },
        None => profile.comparison.matches_bytes(&result.stdout, expected),
    };
    if accepted {
        Verdict::Pass
    } else {
        Verdict::WrongAnswer
    }
}
