//! Exact numeric equality of Python `decimal.Decimal` values parsed from text, as
//! LiveCodeBench compares output lines: `1.0 == 1`, `1.50 == 1.5`, `1e3 == 1000`, no tolerance.

use crate::python_text::remove_digit_underscores;

/// A parsed decimal number, normalised so that equal numbers compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecimalNumber {
    /// A finite number `(-1)^negative * digits * 10^exponent` with no leading or trailing
    /// zero digits; zero has empty digits and is unsigned.
    Finite {
        negative: bool,
        digits: String,
        exponent: i128,
    },
    /// Positive or negative infinity.
    Infinite { negative: bool },
    /// Quiet or signalling NaN: never equal to anything, itself included.
    NotANumber,
}

impl DecimalNumber {
    /// Parses text with Python's `Decimal(text)` grammar (ASCII digits; underscores between
    /// digits allowed; `inf`, `infinity`, `nan`, `snan` in any case); `None` where Python
    /// raises `InvalidOperation`.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        if !text.is_ascii() {
            return None;
        }
        let cleaned = remove_digit_underscores(text)?;
        let (negative, unsigned) = match cleaned.as_bytes().first() {
            Some(b'-') => (true, &cleaned[1..]),
            Some(b'+') => (false, &cleaned[1..]),
            _ => (false, cleaned.as_str()),
        };
        let lowered = unsigned.to_ascii_lowercase();
        if lowered == "inf" || lowered == "infinity" {
            return Some(Self::Infinite { negative });
        }
        for prefix in ["snan", "nan"] {
            if let Some(payload) = lowered.strip_prefix(prefix) {
                return payload
                    .bytes()
                    .all(|byte| byte.is_ascii_digit())
                    .then_some(Self::NotANumber);
            }
        }
        let (mantissa, exponent_text) = match unsigned.find(['e', 'E']) {
            Some(position) => (&unsigned[..position], Some(&unsigned[position + 1..])),
            None => (unsigned, None),
        };
        let (integer_part, fraction_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if !all_digits(integer_part)
            || !all_digits(fraction_part)
            || (integer_part.is_empty() && fraction_part.is_empty())
        {
            return None;
        }
        let mut exponent = match exponent_text {
            Some(text) => parse_exponent(text)?,
            None => 0,
        };
        exponent -= i128::try_from(fraction_part.len()).ok()?;
        let mut digits: String = integer_part.chars().chain(fraction_part.chars()).collect();
        let leading_zeros = digits.len() - digits.trim_start_matches('0').len();
        digits.drain(..leading_zeros);
        if digits.is_empty() {
            return Some(Self::Finite {
                negative: false,
                digits,
                exponent: 0,
            });
        }
        let trailing_zeros = digits.len() - digits.trim_end_matches('0').len();
        digits.truncate(digits.len() - trailing_zeros);
        exponent += i128::try_from(trailing_zeros).ok()?;
        Some(Self::Finite {
            negative,
            digits,
            exponent,
        })
    }

    /// Python's `==` between two decimals: numeric equality, NaN unequal to everything.
    pub(crate) fn numerically_equal(&self, other: &Self) -> bool {
        !matches!(self, Self::NotANumber) && self == other
    }
}

/// Parses a signed exponent, saturating absurdly long ones (they can only equal each other).
fn parse_exponent(text: &str) -> Option<i128> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits
        .parse::<i128>()
        .unwrap_or(i128::MAX / 4)
        .min(i128::MAX / 4);
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::DecimalNumber;

    fn equal(left: &str, right: &str) -> bool {
        match (DecimalNumber::parse(left), DecimalNumber::parse(right)) {
            (Some(left), Some(right)) => left.numerically_equal(&right),
            _ => false,
        }
    }

    #[test]
    fn equal_values_with_different_spellings() {
        assert!(equal("1.0", "1"));
        assert!(equal("1.50", "1.5"));
        assert!(equal("1e3", "1000"));
        assert!(equal("-0", "0.000"));
        assert!(equal("1_000", "1000"));
        assert!(equal("+.5", "0.5"));
        assert!(equal("-Infinity", "-inf"));
    }

    #[test]
    fn no_tolerance_and_no_nan_equality() {
        assert!(!equal("0.3333334", "0.3333333"));
        assert!(!equal("50000000000000001", "50000000000000000"));
        assert!(!equal("nan", "nan"));
        assert!(!equal("inf", "-inf"));
    }

    #[test]
    fn rejects_what_python_rejects() {
        for text in ["", ".", "1e", "abc", "1.2.3", "0x1", "1__0", "_1", "1 2"] {
            assert_eq!(DecimalNumber::parse(text), None, "{text:?}");
        }
    }
}
