//! JSON text written exactly as Python's `json.dumps` writes it, from WTF-8 strings.
//!
//! The released file was written by `json.dumps` with its default `", "` and `": "` separators,
//! rows escaped either with `ensure_ascii=True` (every non-ASCII character as `\uXXXX`, astral
//! ones as surrogate pairs, lowercase hex) or `ensure_ascii=False` (raw UTF-8). Writing the same
//! escapes back is what lets `rlvr import parquet` and `rlvr convert` reproduce source lines byte
//! for byte. A lone surrogate (legal in the source) has no UTF-8 form, so it is always written as
//! its `\udXXX` escape, which is what Python writes with `ensure_ascii=True`.
//!
//! [`push_value`] writes a parsed [`ValueRef`] (numbers as written), [`push_serde_value`] a serde
//! value (numbers as serde_json writes them), both with `json.dumps`'s default separators.

use crate::json::{ValueRef, code_points};

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends `\uXXXX` (lowercase hex, as Python writes it).
fn push_unicode_escape(out: &mut Vec<u8>, unit: u32) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX_DIGITS[((unit >> shift) & 0xF) as usize]);
    }
}

/// True when a byte can be copied as is in `ensure_ascii=False` mode. Bytes 0xED may start a
/// lone surrogate and are checked by the slow path.
fn is_plain_byte(byte: u8) -> bool {
    byte >= 0x20 && byte != b'"' && byte != b'\\' && byte != 0xED
}

/// Appends the WTF-8 string `text` as a quoted JSON string literal, escaped like `json.dumps`.
pub fn push_string(out: &mut Vec<u8>, text: &[u8], ensure_ascii: bool) {
    out.push(b'"');
    push_string_body(out, text, ensure_ascii);
    out.push(b'"');
}

/// Appends the escaped contents of the WTF-8 string `text`, without the quotes.
pub fn push_string_body(out: &mut Vec<u8>, text: &[u8], ensure_ascii: bool) {
    if ensure_ascii {
        push_ascii_body(out, text);
    } else {
        push_unicode_body(out, text);
    }
}

fn push_short_escape(out: &mut Vec<u8>, code_point: u32) -> bool {
    let escape: &[u8] = match code_point {
        0x22 => b"\\\"",
        0x5C => b"\\\\",
        0x0A => b"\\n",
        0x0D => b"\\r",
        0x09 => b"\\t",
        0x08 => b"\\b",
        0x0C => b"\\f",
        _ => return false,
    };
    out.extend_from_slice(escape);
    true
}

fn push_unicode_body(out: &mut Vec<u8>, text: &[u8]) {
    let mut run_start = 0;
    let mut position = 0;
    while position < text.len() {
        let byte = text[position];
        if is_plain_byte(byte) {
            position += 1;
            continue;
        }
        if byte == 0xED && text.get(position + 1).is_none_or(|&next| next < 0xA0) {
            // An ordinary character U+D000..U+D7FF, not a surrogate.
            position += 1;
            continue;
        }
        out.extend_from_slice(&text[run_start..position]);
        if byte == 0xED {
            // A lone surrogate: three WTF-8 bytes.
            let surrogate = code_points(&text[position..(position + 3).min(text.len())])
                .next()
                .unwrap_or(0xFFFD);
            push_unicode_escape(out, surrogate);
            position += 3;
        } else {
            if !push_short_escape(out, u32::from(byte)) {
                push_unicode_escape(out, u32::from(byte));
            }
            position += 1;
        }
        run_start = position.min(text.len());
    }
    out.extend_from_slice(&text[run_start.min(text.len())..]);
}

fn push_ascii_body(out: &mut Vec<u8>, text: &[u8]) {
    if text
        .iter()
        .all(|&byte| (0x20..0x7F).contains(&byte) && byte != b'"' && byte != b'\\')
    {
        out.extend_from_slice(text);
        return;
    }
    for code_point in code_points(text) {
        if (0x20..0x7F).contains(&code_point) && code_point != 0x22 && code_point != 0x5C {
            out.push(code_point as u8);
        } else if push_short_escape(out, code_point) {
        } else if code_point >= 0x10000 {
            let offset = code_point - 0x10000;
            push_unicode_escape(out, 0xD800 + (offset >> 10));
            push_unicode_escape(out, 0xDC00 + (offset & 0x3FF));
        } else {
            push_unicode_escape(out, code_point);
        }
    }
}

/// Appends a parsed value as `json.dumps` would write it (`", "` and `": "` separators, members
/// in written order, numbers as written).
pub fn push_value(out: &mut Vec<u8>, value: &ValueRef<'_>, ensure_ascii: bool) {
    match value {
        ValueRef::String(string) => push_string(out, &string.decode(), ensure_ascii),
        ValueRef::Array(array) => {
            out.push(b'[');
            for (position, item) in array.items().iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                push_value(out, item, ensure_ascii);
            }
            out.push(b']');
        }
        ValueRef::Object(object) => {
            out.push(b'{');
            for (position, (key, item)) in object.members().iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                push_string(out, &key.decode(), ensure_ascii);
                out.extend_from_slice(b": ");
                push_value(out, item, ensure_ascii);
            }
            out.push(b'}');
        }
        other => out.extend_from_slice(other.raw()),
    }
}

/// Appends a serde value as `json.dumps` would write it (`", "` and `": "` separators, members
/// in map order, numbers as serde_json writes them).
pub fn push_serde_value(out: &mut Vec<u8>, value: &serde_json::Value, ensure_ascii: bool) {
    use serde_json::Value;
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        Value::String(text) => push_string(out, text.as_bytes(), ensure_ascii),
        Value::Array(items) => {
            out.push(b'[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                push_serde_value(out, item, ensure_ascii);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (position, (key, item)) in members.iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                push_string(out, key.as_bytes(), ensure_ascii);
                out.extend_from_slice(b": ");
                push_serde_value(out, item, ensure_ascii);
            }
            out.push(b'}');
        }
    }
}

/// Whether a source line was written with `ensure_ascii=True`: a line with only ASCII bytes.
/// (A line without non-ASCII characters reads the same either way, so the guess cannot be wrong
/// for it.)
pub fn looks_ascii_escaped(line: &[u8]) -> bool {
    line.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str, ensure_ascii: bool) -> String {
        let mut out = Vec::new();
        push_string(&mut out, text.as_bytes(), ensure_ascii);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn escapes_like_json_dumps() {
        assert_eq!(
            quoted("a\"b\\c\nd\te\u{1}", false),
            r#""a\"b\\c\nd\te\u0001""#
        );
        assert_eq!(quoted("é≤😀\u{7f}", false), "\"é≤😀\u{7f}\"");
        assert_eq!(
            quoted("é≤😀\u{7f}", true),
            r#""\u00e9\u2264\ud83d\ude00\u007f""#
        );
        assert_eq!(quoted("\u{d7ff}x", false), "\"\u{d7ff}x\"");
    }

    #[test]
    fn lone_surrogates_become_escapes() {
        let value = crate::json::parse_owned(r#""a\ud800b""#).unwrap_or(crate::json::Value::Null);
        let string = value.as_json_string().cloned().unwrap_or_default();
        for ensure_ascii in [false, true] {
            let mut out = Vec::new();
            push_string(&mut out, string.as_wtf8(), ensure_ascii);
            assert_eq!(out, br#""a\ud800b""#);
        }
    }

    #[test]
    fn short_escapes_and_control_characters_like_json_dumps() {
        assert_eq!(
            quoted("a\"b\\c\nd\te\r\u{8}\u{c}\u{1f}", false),
            r#""a\"b\\c\nd\te\r\b\f\u001f""#
        );
        assert_eq!(quoted("1 ≤ n × 2 😀 中", false), "\"1 ≤ n × 2 😀 中\"");
    }

    #[test]
    fn escaped_strings_round_trip_through_serde_json() {
        for text in ["plain", "tab\tquote\"slash\\", "≤×中😀\u{1}\u{7f}", ""] {
            for ensure_ascii in [false, true] {
                let decoded: String =
                    serde_json::from_str(&quoted(text, ensure_ascii)).unwrap_or_default();
                assert_eq!(decoded, text);
            }
        }
    }

    #[test]
    fn serde_values_use_python_separators() {
        let value = serde_json::json!({"inputs": ["1\n", ["2"]], "n": 3, "ok": true, "none": null});
        let mut out = Vec::new();
        push_serde_value(&mut out, &value, false);
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            r#"{"inputs": ["1\n", ["2"]], "n": 3, "ok": true, "none": null}"#
        );
    }

    #[test]
    fn parsed_values_keep_numbers_as_written() {
        let value =
            crate::json::parse(r#"{"a":[1.50,NaN,"\u00e9"],"b":{}}"#).unwrap_or(ValueRef::Null);
        for (ensure_ascii, expected) in [
            (false, "{\"a\": [1.50, NaN, \"é\"], \"b\": {}}"),
            (true, r#"{"a": [1.50, NaN, "\u00e9"], "b": {}}"#),
        ] {
            let mut out = Vec::new();
            push_value(&mut out, &value, ensure_ascii);
            assert_eq!(String::from_utf8(out).unwrap_or_default(), expected);
        }
    }
}
