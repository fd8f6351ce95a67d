//! What a checker made of one output ([`CheckerOutcome`], its [`CheckerScore`]), and when
//! the executor must run a sandboxed checker at all ([`checker_needed`]).

use super::Checker;
use crate::plan::TestProgram;
use crate::verdict::ExecutionResult;

/// A sandboxed checker's score of one test: finite, in [0, 1] (compared by its bits, so
/// results stay `Eq`).
#[derive(Debug, Clone, Copy)]
pub struct CheckerScore(f64);

impl CheckerScore {
    /// 1: the output is accepted.
    pub const ACCEPTED: Self = Self(1.0);
    /// 0: the output is rejected.
    pub const REJECTED: Self = Self(0.0);

    /// `score` when it is a number in [0, 1] (NaN and infinities are not).
    pub fn new(score: f64) -> Option<Self> {
        (0.0..=1.0).contains(&score).then_some(Self(score))
    }

    /// The value.
    pub fn value(self) -> f64 {
        self.0
    }
}

impl PartialEq for CheckerScore {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for CheckerScore {}

/// What a sandboxed checker made of one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckerOutcome {
    /// It scored the output (1 accepts it; below 1 is a `wrong_answer` with partial credit).
    Score(CheckerScore),
    /// It failed on the output (why, as for [`CheckerOutcome::Error`]) but accepts the test's
    /// expected output: the output is at fault, a `wrong_answer` with no credit, flagged
    /// `checker_rejected` (issue 32, [`super::judge`]).
    Rejected(String),
    /// It failed (crashed, ran out of time or memory, printed no verdict, scored outside
    /// [0, 1]); why, for the job's reason. Once the engine has attributed the failure, it
    /// failed on, or rejected, the expected output as well: the checker is broken.
    Error(String),
}

/// Whether the program ran to a normal end within its limits, so its output is judged (by the
/// comparison or a checker) rather than its failure.
fn reaches_output(result: &ExecutionResult) -> bool {
    result.sandbox_error.is_none()
        && !result.compile_failed
        && !result.timed_out
        && !result.memory_exceeded
        && !result.output_exceeded
        && result.referee.is_none()
        && result.signal.is_none()
        && result.exit_code == Some(0)
}

/// Whether the executor must run `program`'s sandboxed checker on this result before
/// [`crate::judge_test`] (and put its outcome in [`ExecutionResult::checker`]): the ground truth names
/// one, and the program ran to a normal end.
pub fn checker_needed(program: &TestProgram, result: &ExecutionResult) -> bool {
    program.checker.as_ref().is_some_and(Checker::is_sandboxed)
        && program.expected.is_some()
        && reaches_output(result)
}
