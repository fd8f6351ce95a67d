//! Python's `str` methods that the dataset's and the references' code rely on: `str.isspace`,
//! `str.strip()`, `str.split()`, `str.splitlines()`, and the card's prompt normalization
//! `" ".join(s.split())` over WTF-8 text.
//!
//! `str.isspace()` is true for every character Rust's `char::is_whitespace` accepts plus the four
//! information separators U+001C..U+001F (bidirectional class B or S), which Rust (following
//! Unicode's White_Space property) does not count. Using Rust's definition would merge fewer
//! prompts than the card did and strip less than the reference rewards do.

use crate::json::code_points;

/// Python's `str.isspace()` for one code point (surrogates are not whitespace).
pub fn is_python_whitespace(code_point: u32) -> bool {
    matches!(code_point, 0x09..=0x0D | 0x1C..=0x20 | 0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000)
}

/// Python's `str.isspace()` for one character.
pub fn is_python_space(character: char) -> bool {
    is_python_whitespace(u32::from(character))
}

/// Python's `bytes.isspace()` for one byte: space, `\t`, `\n`, `\r`, `\x0b`, `\x0c` (Rust's
/// `u8::is_ascii_whitespace` leaves out `\x0b`). Also the token separator of testlib-style
/// checkers.
pub fn is_python_byte_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// Python's `text.strip()`: removes whitespace from both ends.
pub fn python_strip(text: &str) -> &str {
    text.trim_matches(is_python_space)
}

/// Python's `text.split()` with no separator: runs of whitespace separate tokens, empty
/// tokens are dropped.
pub fn python_split_whitespace(text: &str) -> impl Iterator<Item = &str> {
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
pub fn python_splitlines(text: &str) -> Vec<&str> {
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
            assert_eq!(
                is_python_whitespace(code),
                PYTHON_SPACES.contains(&code),
                "U+{code:04X}"
            );
            if let Some(character) = char::from_u32(code) {
                assert_eq!(is_python_space(character), PYTHON_SPACES.contains(&code));
            }
        }
        assert!(!is_python_whitespace(0xD800), "a surrogate is no space");
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
    fn split_drops_empty_tokens_and_splits_on_separators() {
        let tokens: Vec<&str> = python_split_whitespace("  a\u{1f}b\u{3000}\u{85}c \t").collect();
        assert_eq!(tokens, ["a", "b", "c"]);
        assert_eq!(python_split_whitespace(" \u{1c} ").count(), 0);
    }

    #[test]
    fn splitlines_follows_python() {
        assert_eq!(python_splitlines("1\r\n2\r3\n"), vec!["1", "2", "3"]);
        assert_eq!(python_splitlines("1\n\n2"), vec!["1", "", "2"]);
        assert_eq!(python_splitlines(""), Vec::<&str>::new());
        assert_eq!(python_splitlines("a\u{2028}b\u{0c}"), vec!["a", "b"]);
    }

    #[test]
    fn normalization_joins_python_split_with_single_spaces() {
        assert_eq!(normalize_whitespace(b"  a \t\x1f b\n"), b"a b");
        assert_eq!(
            normalize_whitespace("x\u{3000}\u{a0}y\u{200b}".as_bytes()),
            "x y\u{200b}".as_bytes()
        );
        // A lone surrogate (WTF-8 ED A0 80) is a word character, as in Python.
        assert_eq!(normalize_whitespace(b" \xed\xa0\x80 z "), b"\xed\xa0\x80 z");
    }
}
