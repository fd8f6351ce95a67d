//! Format gates: checks on the whole response that run before extraction and end the job
//! with a penalty when they fail.

use std::sync::LazyLock;

use regex::Regex;

use rlvr_python_compat::text::python_strip;

/// Which format check a profile applies to the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatGate {
    /// No check.
    None,
    /// Klear: `</think>` must occur (else −0.5), then `<think>` must occur (else −2.0);
    /// plain substring tests, in that order.
    ThinkTags,
    /// Code-R1: the stripped response must match `^<think>.*</think>.*<answer>.*</answer>$`.
    ThinkThenAnswer,
}

/// Why a response failed its format gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatFailure {
    /// `</think>` does not occur in the response.
    MissingThinkClose,
    /// `</think>` occurs but `<think>` does not.
    MissingThinkOpen,
    /// The response is not `<think>…</think>…<answer>…</answer>`.
    NotThinkThenAnswer,
}

static THINK_THEN_ANSWER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)\A<think>.*</think>.*<answer>.*</answer>\z")
        .unwrap_or_else(|error| panic!("the think/answer pattern is valid: {error}"))
});

impl FormatFailure {
    /// The name used in result reasons.
    pub fn name(self) -> &'static str {
        match self {
            Self::MissingThinkClose => "missing_think_close",
            Self::MissingThinkOpen => "missing_think_open",
            Self::NotThinkThenAnswer => "not_think_then_answer",
        }
    }
}

impl FormatGate {
    /// Checks the response; `Err` names the failure that decides the penalty.
    pub fn check(self, response: &str) -> Result<(), FormatFailure> {
        match self {
            Self::None => Ok(()),
            Self::ThinkTags => {
                if !response.contains("</think>") {
                    Err(FormatFailure::MissingThinkClose)
                } else if !response.contains("<think>") {
                    Err(FormatFailure::MissingThinkOpen)
                } else {
                    Ok(())
                }
            }
            Self::ThinkThenAnswer => {
                // Python's `$` also matches before a final newline, but the text is stripped
                // first, so `\z` is equivalent.
                if THINK_THEN_ANSWER.is_match(python_strip(response)) {
                    Ok(())
                } else {
                    Err(FormatFailure::NotThinkThenAnswer)
                }
            }
        }
    }

    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ThinkTags => "`</think>` missing -0.5, then `<think>` missing -2.0 (substrings)",
            Self::ThinkThenAnswer => {
                "stripped response matches `<think>.*</think>.*<answer>.*</answer>`"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn klear_checks_closing_tag_first() {
        let gate = FormatGate::ThinkTags;
        assert_eq!(gate.check("no tags"), Err(FormatFailure::MissingThinkClose));
        assert_eq!(
            gate.check("<think> open only"),
            Err(FormatFailure::MissingThinkClose)
        );
        assert_eq!(
            gate.check("closed</think> only"),
            Err(FormatFailure::MissingThinkOpen)
        );
        assert_eq!(gate.check("</think> reversed <think>"), Ok(()));
        assert_eq!(gate.check("<think>a</think>b"), Ok(()));
    }

    #[test]
    fn code_r1_needs_think_then_answer_on_the_stripped_response() {
        let gate = FormatGate::ThinkThenAnswer;
        assert_eq!(
            gate.check("  <think>a\n</think>\n<answer>x</answer>\n\n"),
            Ok(())
        );
        assert_eq!(
            gate.check("hi <think>a</think><answer>x</answer>"),
            Err(FormatFailure::NotThinkThenAnswer)
        );
        assert_eq!(
            gate.check("<think>a</think><answer>x</answer> trailing"),
            Err(FormatFailure::NotThinkThenAnswer)
        );
        assert_eq!(gate.check("<think></think><answer></answer>"), Ok(()));
    }

    #[test]
    fn none_accepts_everything() {
        assert_eq!(FormatGate::None.check(""), Ok(()));
    }
}
