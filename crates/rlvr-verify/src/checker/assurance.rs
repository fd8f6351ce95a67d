//! Checker assurance (issue 25, `rlvr check-checker`): a checker must accept the expected
//! output and reject garbage. Public judges have shipped checkers that accept anything (an
//! early "accepted" exit); such a checker hands the policy a reward for nothing.
//!
//! Each test's expected output is run through the checker with four outputs:
//!
//! | probe | the checker must |
//! |---|---|
//! | the expected output itself | accept |
//! | the empty output (skipped when the expected output is blank: then it is the answer) | reject |
//! | the last token replaced by a token the expected output does not hold | reject |
//! | a line with such a token appended | reject |
//!
//! The garbage token is `rlvr-garbage`, or `rlvr-garbage-N` for the first `N` the expected
//! output does not hold, so it can never be one of the expected tokens or a number.
//!
//! A sandboxed checker that fails on a probe (`checker_error`: it crashed, ran out of time,
//! printed no verdict) fails that probe too, whatever the probe expected: in a real run the
//! job would be unscored.

use super::{CheckedTest, Checker, CheckerOutcome, SandboxedCheckers, judge};
use rlvr_python_compat::text::is_python_byte_space;

/// One probe of a checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    /// The expected output itself.
    Expected,
    /// Nothing at all.
    Empty,
    /// The expected output with its last token replaced by a foreign one.
    LastTokenReplaced,
    /// The expected output with a line holding a foreign token appended.
    TokenAppended,
}

impl Probe {
    /// Every probe, in the order they run.
    pub const ALL: [Self; 4] = [
        Self::Expected,
        Self::Empty,
        Self::LastTokenReplaced,
        Self::TokenAppended,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Expected => "expected",
            Self::Empty => "empty",
            Self::LastTokenReplaced => "last_token_replaced",
            Self::TokenAppended => "token_appended",
        }
    }

    /// What the checker did wrong when this probe fails.
    pub fn failure(self) -> &'static str {
        match self {
            Self::Expected => "rejects the expected output",
            Self::Empty => "accepts the empty output",
            Self::LastTokenReplaced => "accepts the expected output with its last token replaced",
            Self::TokenAppended => "accepts the expected output with a garbage line appended",
        }
    }
}

/// A probe the checker got wrong.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProbeFailure {
    /// Which probe.
    pub probe: Probe,
    /// What the checker did (`Probe::failure`, or "fails (checker_error)").
    pub failure: &'static str,
    /// A sandboxed checker's failure on this probe (`checker_error`), when that is what went
    /// wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checker_error: Option<String>,
}

/// What a probe's failure says when the checker failed on it rather than judging it.
pub const CHECKER_ERROR: &str = "fails (checker_error)";

/// A token that `expected` does not hold.
fn garbage_token(expected: &str) -> String {
    let held = |candidate: &str| {
        expected
            .as_bytes()
            .split(|byte| is_python_byte_space(*byte))
            .any(|token| token == candidate.as_bytes())
    };
    let mut candidate = "rlvr-garbage".to_owned();
    let mut number = 1u64;
    while held(&candidate) {
        candidate = format!("rlvr-garbage-{number}");
        number += 1;
    }
    candidate
}

/// `expected` with its last token replaced by `token` (just `token` when it has none).
fn last_token_replaced(expected: &str, token: &str) -> String {
    let bytes = expected.as_bytes();
    let Some(end) = bytes
        .iter()
        .rposition(|byte| !is_python_byte_space(*byte))
        .map(|at| at + 1)
    else {
        return token.to_owned();
    };
    let start = bytes[..end]
        .iter()
        .rposition(|byte| is_python_byte_space(*byte))
        .map_or(0, |at| at + 1);
    // Token boundaries are ASCII bytes, so both cuts are character boundaries.
    format!("{}{token}{}", &expected[..start], &expected[end..])
}

/// Whether the empty-output probe applies: it does not when the expected output is blank (a
/// program that prints nothing is then right, which `rlvr audit` flags as
/// `empty_expected_output`).
pub fn expected_is_blank(expected: &str) -> bool {
    expected.bytes().all(is_python_byte_space)
}

/// What the probe prints; `None` when the probe says nothing about this expected output (the
/// empty output is the right answer when the expected output is blank).
fn probe_output(probe: Probe, expected: &str) -> Option<String> {
    let blank = expected_is_blank(expected);
    match probe {
        Probe::Expected => Some(expected.to_owned()),
        Probe::Empty => (!blank).then(String::new),
        Probe::LastTokenReplaced => Some(last_token_replaced(expected, &garbage_token(expected))),
        Probe::TokenAppended => {
            let separator = if expected.ends_with('\n') || expected.is_empty() {
                ""
            } else {
                "\n"
            };
            Some(format!(
                "{expected}{separator}{}\n",
                garbage_token(expected)
            ))
        }
    }
}

/// What probing a checker on one test found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Probed {
    /// The probes it got wrong (empty: it is sound here).
    pub failures: Vec<ProbeFailure>,
    /// Probe outputs that made it fail while it accepts the expected output: rejected, as
    /// [`judge`] decides in a real run (`checker_rejected`, issue 32).
    pub rejected: u64,
}

/// Probes `checker` on `test`, each probe output judged by [`judge`], the one entry point of
/// checkers, as in a real run (a sandboxed checker through `sandboxed`).
pub fn probe(
    checker: &Checker,
    test: CheckedTest<'_>,
    sandboxed: &mut dyn SandboxedCheckers,
) -> Probed {
    let mut rejected = 0;
    let failures = probe_with(
        |output| match judge(checker, test, output, sandboxed) {
            CheckerOutcome::Score(score) => Ok(score.value() >= 1.0),
            CheckerOutcome::Rejected(_) => {
                rejected += 1;
                Ok(false)
            }
            CheckerOutcome::Error(reason) => Err(reason),
        },
        test.expected,
    );
    Probed { failures, rejected }
}

/// The probes a checker gets wrong, the checker given as whether it accepts an output for
/// `expected`, or why it failed on it ([`probe`] asks [`judge`]).
pub(crate) fn probe_with(
    mut accepts: impl FnMut(&[u8]) -> Result<bool, String>,
    expected: &str,
) -> Vec<ProbeFailure> {
    Probe::ALL
        .into_iter()
        .filter_map(|probe| {
            let output = probe_output(probe, expected)?;
            match accepts(output.as_bytes()) {
                Ok(accepted) => {
                    let right = accepted == (probe == Probe::Expected);
                    (!right).then_some(ProbeFailure {
                        probe,
                        failure: probe.failure(),
                        checker_error: None,
                    })
                }
                Err(error) => Some(ProbeFailure {
                    probe,
                    failure: CHECKER_ERROR,
                    checker_error: Some(error),
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::{BuiltInChecker, NoSandbox, Tolerance};

    #[test]
    fn garbage_is_foreign_to_the_expected_output() {
        assert_eq!(garbage_token("1 2\n"), "rlvr-garbage");
        assert_eq!(
            garbage_token("rlvr-garbage rlvr-garbage-1\n"),
            "rlvr-garbage-2"
        );
        assert_eq!(last_token_replaced("1 2 3\n", "x"), "1 2 x\n");
        assert_eq!(last_token_replaced("é\n", "x"), "x\n");
        assert_eq!(last_token_replaced("  \n", "x"), "x");
        assert_eq!(
            probe_output(Probe::TokenAppended, "1"),
            Some("1\nrlvr-garbage\n".to_owned())
        );
        assert_eq!(probe_output(Probe::Empty, " \n"), None);
    }

    #[test]
    fn a_checker_that_accepts_anything_or_nothing_is_caught() {
        let names = |failures: Vec<ProbeFailure>| -> Vec<&str> {
            failures
                .iter()
                .map(|failure| failure.probe.name())
                .collect()
        };
        assert_eq!(
            names(probe_with(|_| Ok(true), "1 2\n")),
            ["empty", "last_token_replaced", "token_appended"]
        );
        assert_eq!(names(probe_with(|_| Ok(false), "1 2\n")), ["expected"]);
        // An early "accepted": anything that starts like the answer.
        let prefix = |output: &[u8]| Ok(output.starts_with(b"1"));
        assert_eq!(
            names(probe_with(prefix, "1 2\n")),
            ["last_token_replaced", "token_appended"]
        );
        // A blank expected output: the empty output is the answer, not garbage.
        assert_eq!(
            names(probe_with(|_| Ok(true), "\n")),
            ["last_token_replaced", "token_appended"]
        );
        // A checker that fails on garbage fails the probe, however the probe was meant to go.
        let failing = probe_with(
            |output: &[u8]| {
                if output.is_empty() {
                    Err("crashed".to_owned())
                } else {
                    Ok(output == b"1 2\n")
                }
            },
            "1 2\n",
        );
        assert_eq!(names(failing.clone()), ["empty"]);
        assert_eq!(failing[0].failure, CHECKER_ERROR);
        assert_eq!(failing[0].checker_error.as_deref(), Some("crashed"));
    }

    #[test]
    fn every_built_in_checker_is_sound_on_ordinary_outputs() {
        let float = BuiltInChecker::Float {
            epsilon: Tolerance::new(1e-6).unwrap_or_else(|| unreachable!()),
        };
        for rule in [
            float,
            BuiltInChecker::Tokens,
            BuiltInChecker::LinesAnyOrder,
            BuiltInChecker::Set,
        ] {
            for expected in [
                "3\n",
                "1 2 3\n",
                "a\nb\nb\n",
                "0.5 1.5\n",
                "",
                " \n",
                "x x x",
            ] {
                let test = CheckedTest {
                    input: "",
                    expected,
                };
                let probed = probe(&Checker::BuiltIn(rule), test, &mut NoSandbox);
                assert_eq!(probed, Probed::default(), "{rule} on {expected:?}");
            }
        }
    }
}
