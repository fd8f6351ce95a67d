//! Python's string semantics that reference rewards rely on: `str.isspace`, `str.strip`,
//! `str.split()`, `str.splitlines()`, `float()` and `str.isdigit()`, written from the
//! language reference so that comparisons agree with the reference implementations byte for byte.

/// Whether Python's `str.isspace()` is true for this character.
///
/// Python counts the Unicode `White_Space` characters plus the four ASCII information
/// separators U+001C..U+001F (bidirectional class B or S), which Rust's `char::is_whitespace`
/// leaves out.
pub(crate) fn is_python_space(character: char) -> bool {
    character.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&character)
}

/// Python's `text.strip()`: removes whitespace from both ends.
pub(crate) fn python_strip(text: &str) -> &str {
    text.trim_matches(is_python_space)
}

/// Python's `text.split()` with no separator: runs of whitespace separate tokens, empty
/// tokens are dropped.
pub(crate) fn python_split_whitespace(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_python_space)
        .filter(|token| !token.is_empty())
}

/// Whether Python's `str.splitlines()` treats this character as a line boundary.
fn is_line_boundary(character: char) -> bool {
    matches!(
        character,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `text.splitlines()`: splits on every line boundary (`\r\n` counts once) and
/// produces no empty trailing element for a final terminator.
pub(crate) fn python_splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut characters = text.char_indices().peekable();
    while let Some((position, character)) = characters.next() {
        if is_line_boundary(character) {
            lines.push(&text[start..position]);
            let mut end = position + character.len_utf8();
            if character == '\r'
                && let Some(&(_, '\n')) = characters.peek()
            {
                characters.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

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

    /// Every character below U+3001 for which CPython 3.11's `str.isspace()` is true.
    const PYTHON_SPACES: &[u32] = &[
        0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
        0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
        0x2029, 0x202f, 0x205f, 0x3000,
    ];

    #[test]
    fn isspace_matches_cpython_below_u3001() {
        for code in 0..=0x3000u32 {
            let Some(character) = char::from_u32(code) else {
                continue;
            };
            assert_eq!(
                is_python_space(character),
                PYTHON_SPACES.contains(&code),
                "U+{code:04X}"
            );
        }
    }

    #[test]
    fn strip_removes_unicode_and_separator_whitespace() {
        assert_eq!(python_strip("\u{a0}\u{1c} 4\u{3000}\n"), "4");
        assert_eq!(
            python_strip("\u{200b}4"),
            "\u{200b}4",
            "zero width space is no space"
        );
    }

    #[test]
    fn splitlines_follows_python() {
        assert_eq!(python_splitlines("1\r\n2\r3\n"), vec!["1", "2", "3"]);
        assert_eq!(python_splitlines("1\n\n2"), vec!["1", "", "2"]);
        assert_eq!(python_splitlines(""), Vec::<&str>::new());
        assert_eq!(python_splitlines("a\u{2028}b\u{0c}"), vec!["a", "b"]);
    }

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
