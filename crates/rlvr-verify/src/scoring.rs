//! Scoring: how test verdicts and early outcomes become the reward, per profile.

use crate::format_gate::FormatFailure;

/// Klear's reward for a response without `</think>`.
pub const KLEAR_MISSING_THINK_CLOSE: f64 = -0.5;
/// Klear's reward for a response with `</think>` but without `<think>`.
pub const KLEAR_MISSING_THINK_OPEN: f64 = -2.0;
/// Klear's reward when no code is extracted, and its reward manager's timeout/error reward.
pub const KLEAR_NO_CODE: f64 = -1.0;
/// Code-R1's reward for a bad format or no code.
pub const CODE_R1_FORMAT_ERROR: f64 = -1.1;
/// Code-R1's reward when any test fails.
pub const CODE_R1_FAILURE: f64 = 0.1;
/// Code-R1's reward when every test passes.
pub const CODE_R1_SUCCESS: f64 = 1.1;
/// How many leading tests prime_code's second pass scores.
pub const PRIME_SCORED_TESTS: usize = 10;

/// How a profile turns outcomes into a reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// Klear: `2p - 1` over the sampled tests; no code −1.0; format −0.5 / −2.0; a job past
    /// the reward manager's deadline −1.0.
    KlearAffine,
    /// Code-R1: −1.1 bad format or no code, 0.1 any failure, 1.1 all pass.
    CodeR1,
    /// 1 when every test passes, else 0 (rllm; judge with `--reward binary`).
    Binary,
    /// prime_code: 1.0 when pass 1 passes every test, else passes among the first 10 tests
    /// (each run alone) divided by how many of them there are.
    PrimeFirstTen,
    /// Judge: the pass rate in [0, 1].
    PassRate,
}

impl Scoring {
    /// The reward for a response that failed its format gate.
    pub fn format_error(self, failure: FormatFailure) -> f64 {
        match (self, failure) {
            (Self::KlearAffine, FormatFailure::MissingThinkClose) => KLEAR_MISSING_THINK_CLOSE,
            (Self::KlearAffine, FormatFailure::MissingThinkOpen) => KLEAR_MISSING_THINK_OPEN,
            (Self::KlearAffine, FormatFailure::NotThinkThenAnswer) => KLEAR_NO_CODE,
            (Self::CodeR1, _) => CODE_R1_FORMAT_ERROR,
            _ => 0.0,
        }
    }

    /// The reward when no code was extracted.
    pub fn no_code(self) -> f64 {
        match self {
            Self::KlearAffine => KLEAR_NO_CODE,
            Self::CodeR1 => CODE_R1_FORMAT_ERROR,
            Self::Binary | Self::PrimeFirstTen | Self::PassRate => 0.0,
        }
    }

    /// The reward for `passed` of `total` scored tests (`total > 0`).
    pub fn from_counts(self, passed: usize, total: usize) -> f64 {
        self.from_credit(passed as f64, passed, total)
    }

    /// The score from `credit` (the sum of the tests' scores in [0, 1]: a pass is 1, a
    /// sandboxed checker's partial score its value) over `total` tests, of which `passed`
    /// passed whole. Rates use the credit; all-or-nothing rules need every test passed.
    pub fn from_credit(self, credit: f64, passed: usize, total: usize) -> f64 {
        let all_passed = total > 0 && passed == total;
        let rate = if total == 0 {
            0.0
        } else {
            (credit / total as f64).clamp(0.0, 1.0)
        };
        match self {
            Self::KlearAffine => 2.0 * rate - 1.0,
            Self::CodeR1 if all_passed => CODE_R1_SUCCESS,
            Self::CodeR1 => CODE_R1_FAILURE,
            Self::Binary if all_passed => 1.0,
            Self::Binary => 0.0,
            Self::PrimeFirstTen | Self::PassRate => rate,
        }
    }

    /// Whether the score can only be decided by every test passing, so an executor may stop
    /// at the first failure without changing it.
    pub fn is_all_or_nothing(self) -> bool {
        matches!(self, Self::CodeR1 | Self::Binary)
    }

    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::KlearAffine => "2p-1 over sampled tests; no code -1.0; manager timeout -1.0",
            Self::CodeR1 => "-1.1 format/no code, 0.1 any failure, 1.1 all pass",
            Self::Binary => "1 all pass, else 0",
            Self::PrimeFirstTen => {
                "1.0 if pass 1 all pass, else passed/len among first 10 (each alone)"
            }
            Self::PassRate => "pass rate in [0, 1] (--reward binary: 1/0, may stop early)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn klear_constants_and_affine_score() {
        let scoring = Scoring::KlearAffine;
        assert_eq!(scoring.format_error(FormatFailure::MissingThinkClose), -0.5);
        assert_eq!(scoring.format_error(FormatFailure::MissingThinkOpen), -2.0);
        assert_eq!(scoring.no_code(), -1.0);
        assert_eq!(scoring.from_counts(16, 16), 1.0);
        assert_eq!(scoring.from_counts(0, 16), -1.0);
        assert_eq!(scoring.from_counts(4, 16), -0.5);
        assert_eq!(scoring.from_counts(8, 16), 0.0);
    }

    #[test]
    fn code_r1_constants() {
        let scoring = Scoring::CodeR1;
        assert_eq!(
            scoring.format_error(FormatFailure::NotThinkThenAnswer),
            -1.1
        );
        assert_eq!(scoring.no_code(), -1.1);
        assert_eq!(scoring.from_counts(7, 8), 0.1);
        assert_eq!(scoring.from_counts(0, 8), 0.1);
        assert_eq!(scoring.from_counts(8, 8), 1.1);
    }

    #[test]
    fn binary_and_rates() {
        assert_eq!(Scoring::Binary.from_counts(3, 3), 1.0);
        assert_eq!(Scoring::Binary.from_counts(2, 3), 0.0);
        assert_eq!(Scoring::PassRate.from_counts(1, 4), 0.25);
        assert_eq!(Scoring::PrimeFirstTen.from_counts(7, 10), 0.7);
    }
}
