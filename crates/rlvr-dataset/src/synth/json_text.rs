//! JSON text written the way Python's `json.dumps` writes it (the released file was made with
//! it): `", "` and `": "` separators, `\n`-style short escapes, `\u00XX` for other control
//! characters, and either raw UTF-8 (`ensure_ascii=False`) or `\uXXXX` escapes for every
//! non-ASCII character, astral ones as surrogate pairs (`ensure_ascii=True`).

use serde_json::Value;

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends `text` as a quoted JSON string.
pub(crate) fn push_string(out: &mut Vec<u8>, text: &str, ascii_only: bool) {
    out.push(b'"');
    push_string_body(out, text, ascii_only);
    out.push(b'"');
}

/// Appends the escaped contents of `text`, without quotes.
pub(crate) fn push_string_body(out: &mut Vec<u8>, text: &str, ascii_only: bool) {
    let bytes = text.as_bytes();
    let mut run_start = 0;
    for (position, &byte) in bytes.iter().enumerate() {
        let needs_escape =
            byte < 0x20 || byte == b'"' || byte == b'\\' || (ascii_only && byte >= 0x7f);
        if !needs_escape {
            continue;
        }
        out.extend_from_slice(&bytes[run_start..position]);
        run_start = position + 1;
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x7f => push_unicode_escape(out, 0x7f),
            byte if byte < 0x20 => push_unicode_escape(out, u16::from(byte)),
            _ => {
                // The first byte of a multi-byte character (ascii_only): escape the whole
                // character, then skip its continuation bytes.
                if byte & 0xC0 == 0x80 {
                    continue;
                }
                let character = text[position..].chars().next().unwrap_or('\u{fffd}');
                let mut units = [0u16; 2];
                for unit in character.encode_utf16(&mut units) {
                    push_unicode_escape(out, *unit);
                }
            }
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
}

fn push_unicode_escape(out: &mut Vec<u8>, unit: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX_DIGITS[usize::from((unit >> shift) & 0xf)]);
    }
}

/// Appends a whole JSON value with Python's default separators, keeping object key order.
pub(crate) fn push_value(out: &mut Vec<u8>, value: &Value, ascii_only: bool) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        Value::String(text) => push_string(out, text, ascii_only),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.extend_from_slice(b", ");
                }
                push_value(out, item, ascii_only);
            }
            out.push(b']');
        }
        Value::Object(fields) => {
            out.push(b'{');
            for (index, (key, item)) in fields.iter().enumerate() {
                if index > 0 {
                    out.extend_from_slice(b", ");
                }
                push_string(out, key, ascii_only);
                out.extend_from_slice(b": ");
                push_value(out, item, ascii_only);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str, ascii_only: bool) -> String {
        let mut out = Vec::new();
        push_string(&mut out, text, ascii_only);
        String::from_utf8(out).expect("escaped text is UTF-8")
    }

    #[test]
    fn escapes_like_python_json_dumps() {
        assert_eq!(
            quoted("a\"b\\c\nd\te\r\u{8}\u{c}\u{1f}", false),
            r#""a\"b\\c\nd\te\r\b\f\u001f""#
        );
        assert_eq!(quoted("1 ≤ n × 2 😀 中", false), "\"1 ≤ n × 2 😀 中\"");
        assert_eq!(
            quoted("1 ≤ n 😀\u{7f}", true),
            r#""1 \u2264 n \ud83d\ude00\u007f""#
        );
    }

    #[test]
    fn escaped_strings_round_trip_through_serde_json() {
        for text in ["plain", "tab\tquote\"slash\\", "≤×中😀\u{1}\u{7f}", ""] {
            for ascii_only in [false, true] {
                let decoded: String =
                    serde_json::from_str(&quoted(text, ascii_only)).expect("valid JSON");
                assert_eq!(decoded, text);
            }
        }
    }

    #[test]
    fn values_use_python_separators() {
        let value = serde_json::json!({"inputs": ["1\n", ["2"]], "n": 3, "ok": true});
        let mut out = Vec::new();
        push_value(&mut out, &value, false);
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            r#"{"inputs": ["1\n", ["2"]], "n": 3, "ok": true}"#
        );
    }
}
