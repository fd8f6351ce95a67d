//! The built-in checkers' rules (issue 25): pure comparisons of what a program printed (bytes,
//! never decoded, so invalid UTF-8 is compared as it is) with the expected output.
//!
//! Tokens are the maximal runs of bytes other than ASCII white space (space, `\t`, `\n`,
//! `\r`, `\x0b`, `\x0c`), as testlib reads them; other white space (NBSP, U+2028) is part of a
//! token. Every rule streams the program's output: memory grows with the expected output only,
//! so an output made of millions of tiny tokens or lines costs no more than reading it.

use std::collections::HashMap;

use rlvr_python_compat::text::is_python_byte_space;

fn tokens(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|byte| is_python_byte_space(*byte))
        .filter(|token| !token.is_empty())
}

/// Whether two token sequences have the same length and every pair is accepted.
fn token_pairs_match(
    actual: &[u8],
    expected: &[u8],
    mut accepts: impl FnMut(&[u8], &[u8]) -> bool,
) -> bool {
    let mut actual = tokens(actual);
    let mut expected = tokens(expected);
    loop {
        match (actual.next(), expected.next()) {
            (None, None) => return true,
            (Some(left), Some(right)) if accepts(left, right) => {}
            _ => return false,
        }
    }
}

/// `tokens`: the same tokens in the same order; line breaks and runs of white space are
/// separators like any other.
pub fn tokens_checker(actual: &[u8], expected: &[u8]) -> bool {
    token_pairs_match(actual, expected, |left, right| left == right)
}

/// A decimal number as `float:EPS` reads one: optional sign, digits with an optional
/// fraction (or a fraction alone), an optional exponent. `nan`, `inf`, hexadecimal and
/// anything that overflows to infinity are not numbers.
pub fn finite_number(token: &[u8]) -> Option<f64> {
    let mut rest = token;
    if let [b'+' | b'-', tail @ ..] = rest {
        rest = tail;
    }
    let integer_digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    rest = &rest[integer_digits..];
    let mut fraction_digits = 0;
    if let [b'.', tail @ ..] = rest {
        fraction_digits = tail.iter().take_while(|byte| byte.is_ascii_digit()).count();
        rest = &tail[fraction_digits..];
    }
    if integer_digits + fraction_digits == 0 {
        return None;
    }
    if let [b'e' | b'E', tail @ ..] = rest {
        let tail = tail
            .strip_prefix(b"+")
            .or_else(|| tail.strip_prefix(b"-"))
            .unwrap_or(tail);
        let exponent_digits = tail.iter().take_while(|byte| byte.is_ascii_digit()).count();
        if exponent_digits == 0 {
            return None;
        }
        rest = &tail[exponent_digits..];
    }
    if !rest.is_empty() {
        return None;
    }
    // The bytes are ASCII digits, signs, `.` and `e`: valid UTF-8 and a syntax Rust parses.
    let value: f64 = std::str::from_utf8(token).ok()?.parse().ok()?;
    value.is_finite().then_some(value)
}

/// Whether the number `actual` is within `epsilon` of `expected`, absolutely or relatively:
/// `|actual - expected| <= epsilon * max(1, |expected|)` (Codeforces' "absolute or relative
/// error": relative to the jury's answer). The two decimal texts are rounded to binary on
/// reading; four units in the last place of the larger magnitude are forgiven so that a
/// difference of exactly `epsilon` in decimal passes.
pub fn within_tolerance(actual: f64, expected: f64, epsilon: f64) -> bool {
    let difference = (actual - expected).abs();
    let bound = epsilon * expected.abs().max(1.0);
    let rounding = 4.0 * f64::EPSILON * actual.abs().max(expected.abs()).max(1.0);
    difference <= bound + rounding
}

/// `float:EPS`: the same number of tokens; where the expected token is a finite number the
/// printed one must be a finite number within `epsilon` of it ([`within_tolerance`]); other
/// tokens must be the same bytes.
pub fn float_checker(actual: &[u8], expected: &[u8], epsilon: f64) -> bool {
    token_pairs_match(actual, expected, |left, right| match finite_number(right) {
        Some(expected_value) => finite_number(left)
            .is_some_and(|value| within_tolerance(value, expected_value, epsilon)),
        None => left == right,
    })
}

/// White space a line may end with and still be the same line.
fn trim_line_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., last] = line
        && is_python_byte_space(*last)
    {
        line = rest;
    }
    line
}

/// `lines-any-order`: the same multiset of lines. Each line (split at `\n`) loses its trailing
/// white space (spaces, tabs, `\r`, `\x0b`, `\x0c`: CRLF is LF); the blank lines after the last
/// non-blank one are dropped (a final newline, or several); every other line, a blank one
/// included, counts once, and its leading white space is kept.
pub fn lines_any_order_checker(actual: &[u8], expected: &[u8]) -> bool {
    let mut wanted: HashMap<&[u8], usize> = HashMap::new();
    let mut expected_blank_run = 0usize;
    for line in expected.split(|byte| *byte == b'\n').map(trim_line_end) {
        if line.is_empty() {
            expected_blank_run += 1;
        } else {
            if expected_blank_run > 0 {
                *wanted.entry(b"").or_default() += expected_blank_run;
                expected_blank_run = 0;
            }
            *wanted.entry(line).or_default() += 1;
        }
    }
    let mut remaining: usize = wanted.values().sum();
    let mut take = |line: &[u8]| -> bool {
        match wanted.get_mut(line) {
            Some(count) if *count > 0 => {
                *count -= 1;
                remaining -= 1;
                true
            }
            _ => false,
        }
    };
    let mut blank_run = 0usize;
    for line in actual.split(|byte| *byte == b'\n').map(trim_line_end) {
        if line.is_empty() {
            blank_run += 1;
            continue;
        }
        for _ in 0..blank_run {
            if !take(b"") {
                return false;
            }
        }
        blank_run = 0;
        if !take(line) {
            return false;
        }
    }
    remaining == 0
}

/// `set`: the same set of tokens; order and repetitions do not matter.
pub fn set_checker(actual: &[u8], expected: &[u8]) -> bool {
    let mut seen: HashMap<&[u8], bool> = tokens(expected).map(|token| (token, false)).collect();
    let mut unseen = seen.len();
    for token in tokens(actual) {
        match seen.get_mut(token) {
            Some(flag) => {
                if !*flag {
                    *flag = true;
                    unseen -= 1;
                }
            }
            None => return false,
        }
    }
    unseen == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_decimal_and_finite() {
        for (text, value) in [
            ("1", Some(1.0)),
            ("-2.5", Some(-2.5)),
            ("+.5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1e-6", Some(1e-6)),
            ("1E+3", Some(1000.0)),
            ("0.33333333", Some(0.33333333)),
        ] {
            assert_eq!(finite_number(text.as_bytes()), value, "{text}");
        }
        for text in [
            "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400", "0x10", "1e", "e5", ".",
            "-", "1.2.3", "1_000", "１", "1e+-3", "",
        ] {
            assert_eq!(finite_number(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn tolerance_is_absolute_below_one_and_relative_above() {
        assert!(within_tolerance(0.3333334, 0.33333333, 1e-6));
        assert!(!within_tolerance(0.334, 0.333, 1e-6));
        assert!(within_tolerance(1_000_000.5, 1_000_000.0, 1e-6));
        assert!(!within_tolerance(1_000_002.0, 1_000_000.0, 1e-6));
        // Exactly epsilon apart in decimal passes despite binary rounding.
        assert!(within_tolerance(0.500001, 0.5, 1e-6));
        assert!(!within_tolerance(0.5000011, 0.5, 1e-6));
    }
}
