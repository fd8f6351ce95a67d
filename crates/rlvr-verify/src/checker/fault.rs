//! Whose fault a checker's failure is (issue 32). A checker that crashes, loops or answers
//! garbage on a program's output has not said whether the output is right; before issue 32 the
//! test was `checker_error` and the job unscored (`null`), and since trainers mask unscored
//! samples, a policy that printed garbage whenever it was unsure escaped every negative reward.
//!
//! The rule: the checker is asked about the test's expected output too (the same input, the
//! expected output in the program's place). When it accepts that, it works on this test, so its
//! failure came from what the program printed: the output is wrong
//! ([`CheckerOutcome::Rejected`], a `wrong_answer` flagged `checker_rejected`). Only a checker
//! that also fails on the expected output, or rejects it, is broken on this test: that is the
//! checker author's bug, and the test stays `checker_error`. The built-in checkers never fail
//! (they are total comparisons), so the rule only ever decides for sandboxed ones; the engine
//! asks the expected output at most once per checker and test in a job.

use super::CheckerOutcome;

/// Decides a checker's `on_output` outcome on a program's output. A score stands as it is; a
/// failure is the output's fault ([`CheckerOutcome::Rejected`], with the failure as the
/// reason) when the checker accepts the expected output (`on_expected`: what the checker made
/// of the test's expected output in the program's place, asked only when the output made it
/// fail), and the checker's own ([`CheckerOutcome::Error`]) otherwise.
pub(crate) fn attribute_checker_failure(
    on_output: CheckerOutcome,
    on_expected: impl FnOnce() -> CheckerOutcome,
) -> CheckerOutcome {
    let reason = match on_output {
        CheckerOutcome::Error(reason) => reason,
        decided @ (CheckerOutcome::Score(_) | CheckerOutcome::Rejected(_)) => return decided,
    };
    match on_expected() {
        CheckerOutcome::Score(score) if score.value() >= 1.0 => CheckerOutcome::Rejected(reason),
        CheckerOutcome::Score(score) => CheckerOutcome::Error(format!(
            "{reason}; and it rejects the expected output (score {})",
            score.value()
        )),
        CheckerOutcome::Error(expected_reason) | CheckerOutcome::Rejected(expected_reason) => {
            CheckerOutcome::Error(if expected_reason == reason {
                format!("{reason} (on the expected output too)")
            } else {
                format!("{reason}; on the expected output: {expected_reason}")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::CheckerScore;

    fn score(value: f64) -> CheckerOutcome {
        CheckerOutcome::Score(CheckerScore::new(value).expect("a score in [0, 1]"))
    }

    fn error(reason: &str) -> CheckerOutcome {
        CheckerOutcome::Error(reason.to_owned())
    }

    #[test]
    fn a_score_stands_and_the_expected_output_is_not_asked() {
        for value in [0.0, 0.5, 1.0] {
            let decided = attribute_checker_failure(score(value), || {
                panic!("the expected output is asked only after a failure")
            });
            assert_eq!(decided, score(value));
        }
    }

    #[test]
    fn a_failure_on_the_output_is_the_outputs_fault_when_the_expected_output_is_accepted() {
        let decided = attribute_checker_failure(error("ValueError: garbage"), || score(1.0));
        assert_eq!(
            decided,
            CheckerOutcome::Rejected("ValueError: garbage".to_owned())
        );
    }

    #[test]
    fn a_checker_broken_on_the_expected_output_is_a_checker_error() {
        // It fails there too: the author's bug.
        assert_eq!(
            attribute_checker_failure(error("RuntimeError: boom"), || error("RuntimeError: boom")),
            error("RuntimeError: boom (on the expected output too)")
        );
        assert_eq!(
            attribute_checker_failure(
                error("the checker ran past its time limit (2000 ms)"),
                || { error("IndexError: list index out of range") }
            ),
            error(
                "the checker ran past its time limit (2000 ms); on the expected output: IndexError: list index out of range"
            )
        );
        // It rejects the right answer, wholly or in part: it cannot vouch for any failure.
        for value in [0.0, 0.5] {
            let CheckerOutcome::Error(reason) =
                attribute_checker_failure(error("exit status 3"), || score(value))
            else {
                panic!("a checker that rejects the expected output is broken");
            };
            assert!(
                reason.starts_with("exit status 3; and it rejects the expected output"),
                "{reason}"
            );
        }
    }
}
