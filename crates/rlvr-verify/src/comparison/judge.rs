//! The judge's comparator. Line endings are normalised (`\r\n` → `\n`), each line is
//! stripped, leading and trailing blank lines are dropped; then the line counts must agree and
//! each line must have as many whitespace-separated tokens, compared pairwise: equal text
//! passes; when both tokens are numbers and at least one has a `.` or an exponent they must
//! agree within 1e-6 absolutely or relatively; integers and words must be identical.
//! Symmetric by construction.

use super::lines_of_tokens_match;
use crate::python_text::python_strip;

const TOLERANCE: f64 = 1e-6;

/// A token that looks like an integer: optional sign, ASCII digits.
fn is_integer(token: &str) -> bool {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit())
}

/// A finite decimal number written with a `.` or an exponent (`0.5`, `1e-3`, `2.`).
fn decimal_value(token: &str) -> Option<f64> {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    let well_formed = digits
        .starts_with(|character: char| character.is_ascii_digit() || character == '.')
        && digits
            .bytes()
            .all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'e' | b'E' | b'+' | b'-'))
        && digits.contains(['.', 'e', 'E']);
    if !well_formed {
        return None;
    }
    token.parse::<f64>().ok().filter(|value| value.is_finite())
}

fn numeric_value(token: &str) -> Option<f64> {
    if is_integer(token) {
        token.parse::<f64>().ok()
    } else {
        decimal_value(token)
    }
}

/// Whether two tokens are equal under the judge's rules.
pub fn tokens_equal(actual: &str, expected: &str) -> bool {
    if actual == expected {
        return true;
    }
    if is_integer(actual) && is_integer(expected) {
        return false;
    }
    match (numeric_value(actual), numeric_value(expected)) {
        (Some(left), Some(right)) => {
            let difference = (left - right).abs();
            difference <= TOLERANCE || difference <= TOLERANCE * left.abs().max(right.abs())
        }
        _ => false,
    }
}

fn normalised_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.split('\n').map(python_strip).collect();
    let first = lines.iter().position(|line| !line.is_empty());
    let last = lines.iter().rposition(|line| !line.is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].to_vec(),
        _ => Vec::new(),
    }
}

/// Whether the judge accepts `actual` for `expected`.
pub fn judge_tokens_equal(actual: &str, expected: &str) -> bool {
    // Stripping each line removes the `\r` of a `\r\n`, which normalises line endings.
    let actual_lines = normalised_lines(actual);
    let expected_lines = normalised_lines(expected);
    lines_of_tokens_match(&actual_lines, &expected_lines, tokens_equal)
}
