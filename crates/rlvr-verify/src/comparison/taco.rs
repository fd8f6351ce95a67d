//! rllm's DeepCoder-era taco `compare_std_results`, reproduced from its documented cascade and
//! the measured matrix (`tests/verify/comparison_matrix.rs`), false positives included:
//! 1. whole strings equal after stripping (the program's stdout first loses trailing `\n`);
//! 2. both whole strings are single floats and `np.isclose`;
//! 3. non-empty stripped lines pairwise, tokens pairwise: equal text, or both floats and
//!    `np.isclose`; a pair where either token is not a number is silently accepted;
//! 4. the sets of non-empty stripped lines are equal (reordered lines pass).
//!
//! Not used by any profile (the `rllm` profile follows current rllm, which grades with
//! LiveCodeBench); kept to document and test what the data's earlier pipeline accepted.

use std::collections::BTreeSet;

use super::lines_of_tokens_match;
use rlvr_python_compat::text::python_strip;

use crate::python_text::{numpy_isclose, python_float};

fn non_empty_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(python_strip)
        .filter(|line| !line.is_empty())
        .collect()
}

fn tokens_accepted(actual: &str, expected: &str) -> bool {
    if actual == expected {
        return true;
    }
    match (python_float(actual), python_float(expected)) {
        (Some(left), Some(right)) => numpy_isclose(left, right),
        // The reference swallows the conversion error and moves on: a false positive.
        _ => true,
    }
}

/// Whether the taco cascade accepts `actual` for `expected`.
pub fn taco_cascade_equal(actual: &str, expected: &str) -> bool {
    let actual = actual.trim_end_matches('\n');
    if python_strip(actual) == python_strip(expected) {
        return true;
    }
    if let (Some(left), Some(right)) = (python_float(actual), python_float(expected))
        && numpy_isclose(left, right)
    {
        return true;
    }
    let actual_lines = non_empty_lines(actual);
    let expected_lines = non_empty_lines(expected);
    if lines_of_tokens_match(&actual_lines, &expected_lines, tokens_accepted) {
        return true;
    }
    let actual_set: BTreeSet<&str> = actual_lines.into_iter().collect();
    let expected_set: BTreeSet<&str> = expected_lines.into_iter().collect();
    actual_set == expected_set
}
