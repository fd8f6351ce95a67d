//! Python's and numpy's number semantics that reference rewards rely on: `float()`,
//! `str.isdigit()` and `numpy.isclose`/`allclose`, written from their references so that
//! comparisons agree with the reference implementations byte for byte (the `str` methods,
//! `isspace`, `strip`, `split` and `splitlines`, are `rlvr_python_compat::text`'s).

use rlvr_python_compat::text::python_strip;

/// Python's `text.isdigit()`, restricted to ASCII digits.
///
/// Python also accepts other Unicode digits (for example superscripts); outputs of the
/// dataset's problems are ASCII, and the approximation is documented in docs/profiles.md.
pub(crate) fn python_isdigit(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

/// Removes the underscores Python allows between two digits of a numeric literal; `None`
/// when an underscore is misplaced.
pub(crate) fn remove_digit_underscores(text: &str) -> Option<String> {
    if !text.contains('_') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut cleaned = String::with_capacity(text.len());
    for (position, &byte) in bytes.iter().enumerate() {
        if byte == b'_' {
            let before = position.checked_sub(1).map(|index| bytes[index]);
            let after = bytes.get(position + 1).copied();
            let between_digits = before.is_some_and(|value| value.is_ascii_digit())
                && after.is_some_and(|value| value.is_ascii_digit());
            if !between_digits {
                return None;
            }
        } else {
            cleaned.push(char::from(byte));
        }
    }
    Some(cleaned)
}

/// Whether `text` (ASCII, no underscores) follows Python's float literal grammar:
/// `[sign] (digits [. [digits]] | . digits) [(e|E) [sign] digits]`, or a signed
/// `inf`/`infinity`/`nan` in any case.
fn is_python_float_syntax(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let lowered = unsigned.to_ascii_lowercase();
    if matches!(lowered.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(position) => (&unsigned[..position], Some(&unsigned[position + 1..])),
        None => (unsigned, None),
    };
    let (integer_part, fraction_part) = match mantissa.split_once('.') {
        Some((integer, fraction)) => (integer, Some(fraction)),
        None => (mantissa, None),
    };
    let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    let mantissa_valid = all_digits(integer_part)
        && fraction_part.is_none_or(all_digits)
        && (!integer_part.is_empty() || fraction_part.is_some_and(|part| !part.is_empty()));
    let exponent_valid = exponent.is_none_or(|part| {
        let digits = part.strip_prefix(['+', '-']).unwrap_or(part);
        !digits.is_empty() && all_digits(digits)
    });
    mantissa_valid && exponent_valid
}

/// Python's `float(text)`: surrounding whitespace ignored, underscores between digits
/// allowed, `inf`/`nan` spellings accepted; `None` where Python raises `ValueError`.
pub(crate) fn python_float(text: &str) -> Option<f64> {
    let stripped = python_strip(text);
    if !stripped.is_ascii() {
        return None;
    }
    let cleaned = remove_digit_underscores(stripped)?;
    if !is_python_float_syntax(&cleaned) {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

/// numpy's `isclose(actual, desired)` with the default tolerances (`rtol=1e-5`,
/// `atol=1e-8`): `|actual - desired| <= atol + rtol * |desired|`, asymmetric in `desired`,
/// NaN never close, infinities close only to the same infinity.
pub(crate) fn numpy_isclose(actual: f64, desired: f64) -> bool {
    const RELATIVE: f64 = 1e-5;
    const ABSOLUTE: f64 = 1e-8;
    if actual.is_nan() || desired.is_nan() {
        return false;
    }
    if actual.is_infinite() || desired.is_infinite() {
        return actual == desired;
    }
    (actual - desired).abs() <= ABSOLUTE + RELATIVE * desired.abs()
}

/// numpy's `allclose(actual, desired)` for two equally long sequences.
pub(crate) fn numpy_allclose(actual: &[f64], desired: &[f64]) -> bool {
    actual.len() == desired.len()
        && actual
            .iter()
            .zip(desired)
            .all(|(&left, &right)| numpy_isclose(left, right))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_follows_python_grammar() {
        for (text, value) in [
            ("1", 1.0),
            (" 1.5\n", 1.5),
            ("1_000.5", 1000.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("1.e3", 1000.0),
            ("-1E-2", -0.01),
            ("+inf", f64::INFINITY),
            ("Infinity", f64::INFINITY),
        ] {
            assert_eq!(python_float(text), Some(value), "{text:?}");
        }
        assert!(python_float("nan").is_some_and(f64::is_nan));
        for text in [
            "", ".", "1 2", "1__0", "_1", "1e", "0x10", "1.5.2", "e5", "abc",
        ] {
            assert_eq!(python_float(text), None, "{text:?}");
        }
    }

    #[test]
    fn isclose_uses_numpy_defaults() {
        assert!(numpy_isclose(0.3333334, 0.3333333));
        assert!(!numpy_isclose(0.334, 0.333));
        assert!(numpy_isclose(50000000000000001.0, 50000000000000000.0));
        assert!(!numpy_isclose(f64::NAN, f64::NAN));
        assert!(numpy_isclose(f64::INFINITY, f64::INFINITY));
    }
}
