//! Turning released values into Arrow-safe text: the one rule for list-valued test values, and
//! lone surrogates.
//!
//! # List-valued test values
//!
//! Three released records hold test values such as `["123"]` where every other value is a
//! string. A `list<string>` column cannot hold both, so each list-valued entry becomes one string
//! by the rule
//!
//! ```python
//! "\n".join(item if isinstance(item, str) else json.dumps(item) for item in value)
//! ```
//!
//! Why this rule: in the APPS/TACO lineage these records come from, a list-valued input is the
//! program's standard input given line by line, and the harnesses of that lineage (verl's
//! `prime_code`, rllm's TACO runner) feed it as `"\n".join(lines)`; for the single-item lists in
//! this file it yields the item itself, which is what every other record holds. The row is
//! flagged in `normalized_values`, and `ground_truth` keeps the original list, so a verifier that
//! wants the released value still has it.
//!
//! # Lone surrogates
//!
//! The source may hold a lone surrogate escape such as `"\ud800"`, which Python accepts but
//! Arrow's UTF-8 columns cannot hold. String columns get U+FFFD in its place and the row is
//! flagged in `lossy_text`; `ground_truth` is JSON text that keeps the `\ud800` escape, so the
//! tests lose nothing.

use std::borrow::Cow;

use rlvr_python_compat::json::{JsonStr, ValueRef};

use rlvr_python_compat::dumps::push_value;

/// Decodes a JSON string to UTF-8; the flag is true when a lone surrogate was replaced.
pub fn decode_lossy<'a>(string: &JsonStr<'a>) -> (Cow<'a, str>, bool) {
    if !string.has_escapes() {
        // The line was validated as UTF-8 and the literal has no escape: its bytes are the text.
        let text = std::str::from_utf8(string.raw())
            .map_or_else(|_| string.to_string_lossy(), Cow::Borrowed);
        return (text, false);
    }
    match string.to_str() {
        Some(text) => (text, false),
        None => (string.to_string_lossy(), true),
    }
}

/// The string a test value becomes: itself for a string; for a list, its items joined by the
/// documented rule. Returns the text, whether it was a list, and whether text was lossy.
pub fn test_value_text(value: &ValueRef<'_>) -> (String, bool, bool) {
    match value {
        ValueRef::String(string) => {
            let (text, lossy) = decode_lossy(string);
            (text.into_owned(), false, lossy)
        }
        ValueRef::Array(array) => {
            let mut lossy = false;
            let mut out = String::new();
            for (position, item) in array.items().iter().enumerate() {
                if position > 0 {
                    out.push('\n');
                }
                match item {
                    ValueRef::String(string) => {
                        let (text, item_lossy) = decode_lossy(string);
                        lossy |= item_lossy;
                        out.push_str(&text);
                    }
                    other => {
                        let mut json = Vec::new();
                        push_value(&mut json, other, false);
                        let text = String::from_utf8_lossy(&json);
                        lossy |= matches!(text, Cow::Owned(_));
                        out.push_str(&text);
                    }
                }
            }
            (out, true, lossy)
        }
        other => {
            let mut json = Vec::new();
            push_value(&mut json, other, false);
            (String::from_utf8_lossy(&json).into_owned(), true, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(json: &str) -> (String, bool, bool) {
        let value = rlvr_python_compat::json::parse(json).unwrap_or(ValueRef::Null);
        test_value_text(&value)
    }

    #[test]
    fn single_item_lists_become_their_item() {
        assert_eq!(text_of(r#"["123"]"#), ("123".to_owned(), true, false));
        assert_eq!(
            text_of(r#"["1 2", "3"]"#),
            ("1 2\n3".to_owned(), true, false)
        );
        assert_eq!(
            text_of(r#"[1, [2, "x"]]"#),
            ("1\n[2, \"x\"]".to_owned(), true, false)
        );
        assert_eq!(
            text_of(r#""plain\n""#),
            ("plain\n".to_owned(), false, false)
        );
    }

    #[test]
    fn lone_surrogates_are_replaced_and_flagged() {
        assert_eq!(
            text_of(r#""a\ud800""#),
            ("a\u{fffd}".to_owned(), false, true)
        );
        assert_eq!(
            text_of(r#""\ud83d\ude00""#),
            ("😀".to_owned(), false, false)
        );
    }
}
