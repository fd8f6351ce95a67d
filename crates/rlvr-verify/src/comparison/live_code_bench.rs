//! LiveCodeBench's stdio grader, which current rllm uses: both texts stripped and split on
//! `"\n"`, each line stripped; the line counts must agree; a line matches when equal as text
//! or when both parse as equal lists of `Decimal` tokens (no tolerance).

use crate::decimal::DecimalNumber;
use rlvr_python_compat::text::{python_split_whitespace, python_strip};

fn stripped_lines(text: &str) -> Vec<&str> {
    python_strip(text).split('\n').map(python_strip).collect()
}

fn decimal_tokens(line: &str) -> Option<Vec<DecimalNumber>> {
    python_split_whitespace(line)
        .map(DecimalNumber::parse)
        .collect()
}

/// Whether LiveCodeBench accepts `actual` for `expected`.
pub fn live_code_bench_equal(actual: &str, expected: &str) -> bool {
    let actual_lines = stripped_lines(actual);
    let expected_lines = stripped_lines(expected);
    if actual_lines.len() != expected_lines.len() {
        return false;
    }
    actual_lines
        .iter()
        .zip(&expected_lines)
        .all(|(actual_line, expected_line)| {
            if actual_line == expected_line {
                return true;
            }
            match (decimal_tokens(actual_line), decimal_tokens(expected_line)) {
                (Some(actual_numbers), Some(expected_numbers)) => {
                    actual_numbers.len() == expected_numbers.len()
                        && actual_numbers
                            .iter()
                            .zip(&expected_numbers)
                            .all(|(left, right)| left.numerically_equal(right))
                }
                _ => false,
            }
        })
}
