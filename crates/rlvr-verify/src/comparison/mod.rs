//! Output comparison: whether what a program printed counts as the expected output. One file
//! per reference comparator, each reproducing the matrix measured on its reference
//! (`tests/verify/comparison_matrix.rs`).

mod judge;
mod live_code_bench;
mod prime;
mod strip;
mod taco;

pub use judge::{judge_bytes_equal, judge_output_equal, judge_tokens_equal, tokens_equal};
pub use live_code_bench::live_code_bench_equal;
pub use prime::prime_equal;
pub use strip::{rstrip_newline_equal, strip_equal};
pub use taco::taco_cascade_equal;

/// Which comparator a profile applies to `(actual stdout, expected output)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputComparison {
    /// Code-R1 / Klear: `actual.strip() == expected.strip()` (Python's Unicode strip).
    StripEqual,
    /// verl SandboxFusion: `actual.rstrip("\n") == expected.rstrip("\n")`.
    RstripNewlineEqual,
    /// LiveCodeBench (current rllm): stripped lines, equal counts, each line equal as text
    /// or as a list of `Decimal`s.
    LiveCodeBenchLines,
    /// rllm DeepCoder-era taco `compare_std_results`, false positives included.
    RllmTacoCascade,
    /// verl prime_code: its cascade of list comparisons and per-line `np.allclose`.
    PrimeCascade,
    /// Ours: lines and tokens, numeric tokens with `.` or an exponent within 1e-6.
    JudgeTokens,
}

impl OutputComparison {
    /// Every comparator, in the column order of the matrix.
    pub const ALL: [Self; 6] = [
        Self::StripEqual,
        Self::RstripNewlineEqual,
        Self::LiveCodeBenchLines,
        Self::RllmTacoCascade,
        Self::PrimeCascade,
        Self::JudgeTokens,
    ];

    /// Whether `actual` is accepted as `expected`.
    pub fn matches(self, actual: &str, expected: &str) -> bool {
        match self {
            Self::StripEqual => strip_equal(actual, expected),
            Self::RstripNewlineEqual => rstrip_newline_equal(actual, expected),
            Self::LiveCodeBenchLines => live_code_bench_equal(actual, expected),
            Self::RllmTacoCascade => taco_cascade_equal(actual, expected),
            Self::PrimeCascade => prime_equal(actual, expected),
            Self::JudgeTokens => judge_tokens_equal(actual, expected),
        }
    }

    /// Whether the bytes a program printed are accepted as `expected`. The judge compares
    /// output that is not valid UTF-8 as bytes; the reference comparators see it decoded
    /// lossily (the references decode strictly and fail or crash; U+FFFD never equals the
    /// invalid byte it replaced there either, except where the expected text holds U+FFFD).
    pub fn matches_bytes(self, actual: &[u8], expected: &str) -> bool {
        match self {
            Self::JudgeTokens => judge_output_equal(actual, expected),
            other => other.matches(&String::from_utf8_lossy(actual), expected),
        }
    }

    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::StripEqual => "stdout.strip() == expected.strip()",
            Self::RstripNewlineEqual => "stdout.rstrip(\"\\n\") == expected.rstrip(\"\\n\")",
            Self::LiveCodeBenchLines => {
                "stripped lines; equal text or equal Decimal tokens; no tolerance"
            }
            Self::RllmTacoCascade => "taco cascade (ignores non-numeric token mismatches)",
            Self::PrimeCascade => {
                "prime cascade: joined/stripped lines, then per-line allclose(rtol 1e-5, atol 1e-8)"
            }
            Self::JudgeTokens => {
                "lines of tokens; expected decimals within 1e-6 abs or rel; expected integers and \
                 words exact; invalid UTF-8 compared as bytes"
            }
        }
    }
}

/// Same number of lines, and in each pair of lines the same number of whitespace-separated
/// tokens (Python's `str.split()`), every pair accepted by `token_matches`.
pub(crate) fn lines_of_tokens_match(
    actual_lines: &[&str],
    expected_lines: &[&str],
    token_matches: fn(&str, &str) -> bool,
) -> bool {
    use rlvr_python_compat::text::python_split_whitespace;
    actual_lines.len() == expected_lines.len()
        && actual_lines
            .iter()
            .zip(expected_lines)
            .all(|(left, right)| {
                let left_tokens: Vec<&str> = python_split_whitespace(left).collect();
                let right_tokens: Vec<&str> = python_split_whitespace(right).collect();
                left_tokens.len() == right_tokens.len()
                    && left_tokens
                        .iter()
                        .zip(&right_tokens)
                        .all(|(left_token, right_token)| token_matches(left_token, right_token))
            })
}
