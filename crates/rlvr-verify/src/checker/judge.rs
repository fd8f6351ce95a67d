//! The one entry point of checkers: [`judge`] one output, whatever the checker.

use super::fault::attribute_checker_failure;
use super::{Checker, CheckerOutcome, CheckerScore};

/// One test as a checker reads it besides the output: the program's input and the expected
/// output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedTest<'a> {
    /// What the program read on standard input.
    pub input: &'a str,
    /// The test's expected output.
    pub expected: &'a str,
}

/// Runs sandboxed checkers (a ground truth's Python `checker` or `checker_cpp`), each in a
/// sandbox of its own: `rlvr_engine::CheckerJudge` does, for one worker.
pub trait SandboxedCheckers {
    /// What the sandboxed `checker` made of `output`, a failure as it is (not attributed);
    /// `Err` with the reason when it never read the output (its sandbox could not start, it
    /// does not compile): a failure of the machine or of the checker, never of the output.
    fn run(
        &mut self,
        checker: &Checker,
        test: CheckedTest<'_>,
        output: &[u8],
    ) -> Result<CheckerOutcome, String>;

    /// What `checker` makes of `test`'s expected output in the program's place. This runs it;
    /// an implementation may remember the answer for the job instead of asking again.
    fn on_expected(&mut self, checker: &Checker, test: CheckedTest<'_>) -> CheckerOutcome {
        self.run(checker, test, test.expected.as_bytes())
            .unwrap_or_else(CheckerOutcome::Error)
    }
}

/// No sandboxed checkers: for callers whose checker is a built-in one, which [`judge`] decides
/// without running anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSandbox;

impl SandboxedCheckers for NoSandbox {
    fn run(
        &mut self,
        _checker: &Checker,
        _test: CheckedTest<'_>,
        _output: &[u8],
    ) -> Result<CheckerOutcome, String> {
        Err("a sandboxed checker cannot run here (no sandbox)".to_owned())
    }
}

/// What `checker` makes of `output` on `test`: a built-in rule decides here (a pure
/// comparison, which never fails: a score of 1 or 0); a sandboxed checker runs through
/// `sandboxed`, and when it fails on the output, the failure is attributed (issue 32): the
/// output's ([`CheckerOutcome::Rejected`]) when the checker accepts the expected output in
/// its place, the checker's ([`CheckerOutcome::Error`]) when not, or when the output is the
/// expected output, or when the checker never read it.
pub fn judge(
    checker: &Checker,
    test: CheckedTest<'_>,
    output: &[u8],
    sandboxed: &mut dyn SandboxedCheckers,
) -> CheckerOutcome {
    if let Checker::BuiltIn(rule) = checker {
        return CheckerOutcome::Score(if rule.accepts(output, test.expected) {
            CheckerScore::ACCEPTED
        } else {
            CheckerScore::REJECTED
        });
    }
    let on_output = match sandboxed.run(checker, test, output) {
        Ok(outcome) => outcome,
        Err(unstarted) => return CheckerOutcome::Error(unstarted),
    };
    if !matches!(on_output, CheckerOutcome::Error(_)) || output == test.expected.as_bytes() {
        // A verdict stands; a failure on the expected output itself is the checker's.
        return on_output;
    }
    attribute_checker_failure(on_output, || sandboxed.on_expected(checker, test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::BuiltInChecker;
    use std::sync::Arc;

    /// A scripted sandboxed checker: what it answers per output, and every output it was asked.
    struct Scripted {
        answers: fn(&[u8]) -> Result<CheckerOutcome, String>,
        asked: Vec<Vec<u8>>,
    }

    impl SandboxedCheckers for Scripted {
        fn run(
            &mut self,
            _checker: &Checker,
            _test: CheckedTest<'_>,
            output: &[u8],
        ) -> Result<CheckerOutcome, String> {
            self.asked.push(output.to_vec());
            (self.answers)(output)
        }
    }

    const TEST: CheckedTest<'static> = CheckedTest {
        input: "1\n",
        expected: "2\n",
    };

    fn python() -> Checker {
        Checker::Python(Arc::from("def check(input, output, expected): return 1"))
    }

    fn score(value: f64) -> CheckerOutcome {
        CheckerOutcome::Score(CheckerScore::new(value).unwrap())
    }

    #[test]
    fn a_built_in_rule_decides_without_the_sandbox() {
        let mut never = Scripted {
            answers: |_| panic!("a built-in checker ran in the sandbox"),
            asked: Vec::new(),
        };
        let tokens = Checker::BuiltIn(BuiltInChecker::Tokens);
        assert_eq!(judge(&tokens, TEST, b" 2 ", &mut never), score(1.0));
        assert_eq!(judge(&tokens, TEST, b"3", &mut never), score(0.0));
    }

    #[test]
    fn a_failure_on_the_output_is_the_outputs_when_the_expected_output_passes() {
        let mut checker = Scripted {
            answers: |output| match output {
                b"2\n" => Ok(score(1.0)),
                _ => Ok(CheckerOutcome::Error("ValueError: garbage".into())),
            },
            asked: Vec::new(),
        };
        assert_eq!(
            judge(&python(), TEST, b"garbage", &mut checker),
            CheckerOutcome::Rejected("ValueError: garbage".into())
        );
        assert_eq!(checker.asked, [b"garbage".to_vec(), b"2\n".to_vec()]);
    }

    #[test]
    fn a_failure_is_the_checkers_when_it_fails_on_the_expected_output_or_never_started() {
        let mut broken = Scripted {
            answers: |_| Ok(CheckerOutcome::Error("boom".into())),
            asked: Vec::new(),
        };
        assert_eq!(
            judge(&python(), TEST, b"2\n", &mut broken),
            CheckerOutcome::Error("boom".into())
        );
        assert_eq!(
            broken.asked.len(),
            1,
            "the expected output is not asked twice"
        );
        assert_eq!(
            judge(&python(), TEST, b"x", &mut broken),
            CheckerOutcome::Error("boom (on the expected output too)".into())
        );
        let mut unstarted = Scripted {
            answers: |_| Err("the checker does not compile".into()),
            asked: Vec::new(),
        };
        assert_eq!(
            judge(&python(), TEST, b"x", &mut unstarted),
            CheckerOutcome::Error("the checker does not compile".into())
        );
        assert_eq!(unstarted.asked.len(), 1);
    }
}
