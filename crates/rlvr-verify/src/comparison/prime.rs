//! verl prime_code's stdio comparison (`testing_util.run_test`), step by step. The program's
//! captured stdout becomes `stdout.splitlines()` (Python's line boundaries); the expected
//! output is a string (lists were joined with `"\n"` before):
//! 1. the lines joined with `"\n"`, stripped, equal the stripped expected text; or the same
//!    with every line stripped first;
//! 2. the lines equal the expected text split on `"\n"`, empty pieces dropped, each stripped;
//! 3. the same after dropping empty lines from the output;
//! 4. unless every pair is a digit string, every output line and expected line converts with
//!    `float()` (so a line with two tokens fails) and `np.allclose` holds;
//! 5. the later set-based checks never succeed on string lines and are left out.

use rlvr_python_compat::text::{python_splitlines, python_strip};

use crate::python_text::{numpy_allclose, python_float, python_isdigit};

/// Whether prime_code accepts `actual` for `expected`.
pub fn prime_equal(actual: &str, expected: &str) -> bool {
    let output = python_splitlines(actual);
    let stripped_expected = python_strip(expected);
    if python_strip(&output.join("\n")) == stripped_expected {
        return true;
    }
    let stripped_lines: Vec<&str> = output.iter().map(|line| python_strip(line)).collect();
    if python_strip(&stripped_lines.join("\n")) == stripped_expected {
        return true;
    }
    // `output == [expected]`: a single line equal to the whole expected text.
    if output.len() == 1 && output[0] == expected {
        return true;
    }
    let expected_lines: Vec<&str> = expected
        .split('\n')
        .filter(|piece| !piece.is_empty())
        .map(python_strip)
        .collect();
    if output == expected_lines {
        return true;
    }
    let output: Vec<&str> = output.into_iter().filter(|line| !line.is_empty()).collect();
    if output == expected_lines {
        return true;
    }
    if output.len() != expected_lines.len() {
        // `zip(strict=True)` raises; the float step is skipped.
        return false;
    }
    let all_digit_pairs = output
        .iter()
        .zip(&expected_lines)
        .all(|(left, right)| python_isdigit(left) && python_isdigit(right));
    if all_digit_pairs {
        return false;
    }
    let actual_numbers: Option<Vec<f64>> = output.iter().map(|line| python_float(line)).collect();
    let expected_numbers: Option<Vec<f64>> = expected_lines
        .iter()
        .map(|line| python_float(line))
        .collect();
    match (actual_numbers, expected_numbers) {
        (Some(actual_numbers), Some(expected_numbers)) => {
            numpy_allclose(&actual_numbers, &expected_numbers)
        }
        _ => false,
    }
}
