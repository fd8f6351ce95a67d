//! The judge's comparator. Line endings are normalised (`\r\n` → `\n`), each line is
//! stripped, leading and trailing blank lines are dropped; then the line counts must agree and
//! each line must have as many whitespace-separated tokens, compared pairwise: equal text
//! passes; an expected integer must be matched exactly (`1.0` and `1e3` are the integers 1 and
//! 1000, `1000000.0` is not `1000001`); an expected decimal (a `.` or an exponent) accepts a
//! number within 1e-6 absolutely or relatively; integers against integers and words compare
//! as text.
//!
//! Output that is not valid UTF-8 is compared as bytes (ASCII whitespace separates lines and
//! tokens): an invalid byte is never equal to anything the expected text holds, U+FFFD
//! included, which a lossy decode would have made it.

use super::lines_of_tokens_match;
use crate::decimal::DecimalNumber;
use rlvr_python_compat::text::{is_python_byte_space, python_strip};

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

/// Whether `actual` is the same number as the integer `expected`, exactly: `1.0`, `1e3` and
/// `1000.000` name integers, and a float that only rounds to it does not.
fn exactly_the_integer(actual: &str, expected: &str) -> bool {
    if decimal_value(actual).is_none() {
        return false;
    }
    match (DecimalNumber::parse(actual), DecimalNumber::parse(expected)) {
        (Some(actual), Some(expected)) => actual.numerically_equal(&expected),
        _ => false,
    }
}

/// Whether the judge accepts the token `actual` where `expected` was printed.
pub fn tokens_equal(actual: &str, expected: &str) -> bool {
    if actual == expected {
        return true;
    }
    if is_integer(expected) {
        // Integers are exact: an integer must be the same text, a decimal the same value.
        return !is_integer(actual) && exactly_the_integer(actual, expected);
    }
    let Some(expected_value) = decimal_value(expected) else {
        return false;
    };
    match numeric_value(actual) {
        Some(actual_value) => {
            let difference = (actual_value - expected_value).abs();
            difference <= TOLERANCE
                || difference <= TOLERANCE * actual_value.abs().max(expected_value.abs())
        }
        None => false,
    }
}

fn normalised_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.split('\n').map(python_strip).collect();
    without_blank_ends(lines, str::is_empty)
}

fn without_blank_ends<T: Copy>(lines: Vec<T>, is_blank: impl Fn(T) -> bool) -> Vec<T> {
    let first = lines.iter().position(|line| !is_blank(*line));
    let last = lines.iter().rposition(|line| !is_blank(*line));
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

/// Whether the judge accepts the bytes a program printed for `expected`: as text when they
/// are valid UTF-8, as bytes otherwise.
pub fn judge_output_equal(actual: &[u8], expected: &str) -> bool {
    match std::str::from_utf8(actual) {
        Ok(text) => judge_tokens_equal(text, expected),
        Err(_) => judge_bytes_equal(actual, expected.as_bytes()),
    }
}

/// The judge's rules on bytes: lines split at `\n`, ASCII whitespace stripped and separating
/// tokens; a token pair that is not valid UTF-8 on both sides must be the same bytes.
pub fn judge_bytes_equal(actual: &[u8], expected: &[u8]) -> bool {
    let actual_lines = byte_lines(actual);
    let expected_lines = byte_lines(expected);
    actual_lines.len() == expected_lines.len()
        && actual_lines
            .iter()
            .zip(&expected_lines)
            .all(|(left, right)| {
                let left_tokens: Vec<&[u8]> = byte_tokens(left).collect();
                let right_tokens: Vec<&[u8]> = byte_tokens(right).collect();
                left_tokens.len() == right_tokens.len()
                    && left_tokens.iter().zip(&right_tokens).all(|(left, right)| {
                        match (std::str::from_utf8(left), std::str::from_utf8(right)) {
                            (Ok(left), Ok(right)) => tokens_equal(left, right),
                            _ => left == right,
                        }
                    })
            })
}

fn strip_bytes(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes
        && is_python_byte_space(*first)
    {
        bytes = rest;
    }
    while let [rest @ .., last] = bytes
        && is_python_byte_space(*last)
    {
        bytes = rest;
    }
    bytes
}

fn byte_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let lines: Vec<&[u8]> = bytes
        .split(|byte| *byte == b'\n')
        .map(strip_bytes)
        .collect();
    without_blank_ends(lines, <[u8]>::is_empty)
}

fn byte_tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|byte| is_python_byte_space(*byte))
        .filter(|token| !token.is_empty())
}
