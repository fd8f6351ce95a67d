//! A [`CheckerJudge`] bound to a sandbox and limits: how [`rlvr_verify::checker::judge`], the
//! one entry point of checkers, reaches the sandboxed ones, each checker's verdict on a test's
//! expected output remembered for the job.

use rlvr_sandbox::Sandbox;
use rlvr_verify::checker::{CheckedTest, SandboxedCheckers};
use rlvr_verify::{Checker, CheckerOutcome};

use super::{CheckerJudge, CheckerLimits};

/// A [`CheckerJudge`] bound to a sandbox and limits ([`CheckerJudge::sandboxed`]).
pub struct CheckersInSandbox<'a> {
    pub(super) judge: &'a mut CheckerJudge,
    pub(super) sandbox: &'a Sandbox,
    pub(super) limits: CheckerLimits,
}

impl std::fmt::Debug for CheckersInSandbox<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CheckersInSandbox")
            .field("judge", &self.judge)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SandboxedCheckers for CheckersInSandbox<'_> {
    fn run(
        &mut self,
        checker: &Checker,
        test: CheckedTest<'_>,
        output: &[u8],
    ) -> Result<CheckerOutcome, String> {
        let outcome = self.judge.run_checker(
            self.sandbox,
            checker,
            test.input,
            output,
            test.expected,
            self.limits,
        )?;
        if output == test.expected.as_bytes() {
            let key = self
                .judge
                .expected_key(checker, test.input, test.expected, self.limits);
            self.judge.remember_expected_verdict(key, outcome.clone());
        }
        Ok(outcome)
    }

    fn on_expected(&mut self, checker: &Checker, test: CheckedTest<'_>) -> CheckerOutcome {
        let key = self
            .judge
            .expected_key(checker, test.input, test.expected, self.limits);
        if let Some(known) = self.judge.expected_verdicts.get(&key) {
            return known.clone();
        }
        // Not kept when the checker never read it: the next test asks again.
        self.run(checker, test, test.expected.as_bytes())
            .unwrap_or_else(CheckerOutcome::Error)
    }
}
