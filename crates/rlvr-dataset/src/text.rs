//! Python's notion of whitespace and the card's prompt normalization, `" ".join(s.split())`.
//!
//! `str.isspace()` is true for every character Rust's `char::is_whitespace` accepts plus the four
//! information separators U+001C..U+001F, which Rust (following Unicode's White_Space property)
//! does not count. Using Rust's definition would merge fewer prompts than the card did.

use crate::json::code_points;

/// Python's `str.isspace()` for one code point (surrogates are not whitespace).
pub fn is_python_whitespace(code_point: u32) -> bool {
    matches!(code_point, 0x09..=0x0D | 0x1C..=0x20 | 0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000)
}

/// Feeds `" ".join(text.split())` of WTF-8 `text` to `sink` piece by piece, without building it.
pub fn for_each_normalized_piece(text: &[u8], mut sink: impl FnMut(&[u8])) {
    if text.is_ascii() {
        let mut first = true;
        for word in text
            .split(|&byte| is_python_whitespace(u32::from(byte)))
            .filter(|word| !word.is_empty())
        {
            if !first {
                sink(b" ");
            }
            sink(word);
            first = false;
        }
        return;
    }
    let (mut word_start, mut position, mut first) = (None, 0usize, true);
    for code_point in code_points(text) {
        let width = match code_point {
            0..0x80 => 1,
            0x80..0x800 => 2,
            0x800..0x10000 => 3,
            _ => 4,
        };
        if is_python_whitespace(code_point) {
            if let Some(start) = word_start.take() {
                if !first {
                    sink(b" ");
                }
                sink(&text[start..position]);
                first = false;
            }
        } else if word_start.is_none() {
            word_start = Some(position);
        }
        position += width;
    }
    if let Some(start) = word_start {
        if !first {
            sink(b" ");
        }
        sink(&text[start..]);
    }
}

/// `" ".join(text.split())` as WTF-8 bytes.
pub fn normalize_whitespace(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for_each_normalized_piece(text, |piece| out.extend_from_slice(piece));
    out
}
