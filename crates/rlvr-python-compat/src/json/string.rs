//! JSON strings stored losslessly as WTF-8: a borrowed, still-escaped view over the line buffer
//! ([`JsonStr`]) and an owned, decoded form ([`JsonString`]).
//!
//! Python's `json` module accepts lone surrogate escapes such as `"\ud800"` and keeps them as code
//! points in `str`. Rust's `str` cannot hold them, so decoded strings are WTF-8: UTF-8 extended so
//! that a lone surrogate is encoded as the three bytes UTF-8 would use for it. A surrogate pair
//! escape is always combined into one supplementary code point, exactly like Python's scanner, so
//! the encoding of a given code-point sequence is unique and byte equality is string equality.

use std::borrow::Cow;
use std::fmt;

/// A decoded JSON string: WTF-8 bytes (valid UTF-8 unless it holds a lone surrogate).
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonString {
    bytes: Vec<u8>,
}

impl JsonString {
    /// Wraps bytes that are known to be WTF-8 (as produced by the decoder).
    pub(crate) fn from_wtf8_unchecked(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }

    /// The WTF-8 bytes.
    pub fn as_wtf8(&self) -> &[u8] {
        &self.bytes
    }

    /// The text, unless the string holds a lone surrogate (then `None`).
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The text with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        wtf8_to_string_lossy(&self.bytes)
    }

    /// The number of code points, counting a lone surrogate as one (Python's `len`).
    pub fn code_point_count(&self) -> usize {
        code_point_count(&self.bytes)
    }

    /// True when the string has no code points.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The string as JSON text, quotes included (see [`write_json_string`]).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.bytes.len() + 2);
        write_json_string(&self.bytes, &mut out);
        out
    }
}

impl From<&str> for JsonString {
    fn from(text: &str) -> Self {
        Self {
            bytes: text.as_bytes().to_vec(),
        }
    }
}

impl From<String> for JsonString {
    fn from(text: String) -> Self {
        Self {
            bytes: text.into_bytes(),
        }
    }
}

impl PartialEq<str> for JsonString {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for JsonString {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl fmt::Debug for JsonString {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.to_json())
    }
}

impl fmt::Display for JsonString {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.to_string_lossy())
    }
}

/// A string as it appears in the line, between its quotes, escapes not yet decoded.
///
/// Decoding is lazy: statistics never look at most test strings, so they are only scanned
/// (validated) once and never copied. A string without escapes decodes without allocating.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JsonStr<'a> {
    raw: &'a [u8],
    has_escapes: bool,
}

impl<'a> JsonStr<'a> {
    /// `raw` must be the validated inside of a JSON string literal from a UTF-8 line.
    pub(crate) fn new(raw: &'a [u8], has_escapes: bool) -> Self {
        Self { raw, has_escapes }
    }

    /// The bytes between the quotes, escapes as written.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// True when the literal contains at least one backslash escape.
    pub fn has_escapes(&self) -> bool {
        self.has_escapes
    }

    /// The decoded WTF-8 bytes, borrowed when there are no escapes.
    pub fn decode(&self) -> Cow<'a, [u8]> {
        if self.has_escapes {
            Cow::Owned(decode_escapes(self.raw))
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// The decoded string as text, unless it holds a lone surrogate.
    pub fn to_str(&self) -> Option<Cow<'a, str>> {
        match self.decode() {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
            Cow::Owned(bytes) => String::from_utf8(bytes).ok().map(Cow::Owned),
        }
    }

    /// The decoded string with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        match self.decode() {
            Cow::Borrowed(bytes) => wtf8_to_string_lossy(bytes),
            Cow::Owned(bytes) => Cow::Owned(wtf8_to_string_lossy(&bytes).into_owned()),
        }
    }

    /// The decoded, owned string.
    pub fn to_json_string(&self) -> JsonString {
        JsonString::from_wtf8_unchecked(self.decode().into_owned())
    }

    /// Whether the decoded string equals `text`, without allocating when there are no escapes.
    pub fn eq_str(&self, text: &str) -> bool {
        if self.has_escapes {
            self.decode().as_ref() == text.as_bytes()
        } else {
            self.raw == text.as_bytes()
        }
    }

    /// Python string equality: same code points.
    pub fn python_eq(&self, other: &JsonStr<'_>) -> bool {
        if !self.has_escapes && !other.has_escapes {
            return self.raw == other.raw;
        }
        self.decode() == other.decode()
    }

    /// The number of code points after decoding, a lone surrogate counting as one.
    pub fn code_point_count(&self) -> usize {
        code_point_count(&self.decode())
    }

    /// True when the decoded string is empty.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}

impl fmt::Debug for JsonStr<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "\"{}\"", String::from_utf8_lossy(self.raw))
    }
}

/// Counts code points of WTF-8 bytes: every byte that is not a continuation byte starts one.
pub fn code_point_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&byte| (byte & 0xC0) != 0x80).count()
}

/// Decodes WTF-8 into code points (surrogates included as their values).
pub fn code_points(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut position = 0;
    std::iter::from_fn(move || {
        let lead = *bytes.get(position)?;
        let (length, initial) = match lead {
            0x00..=0x7F => (1, u32::from(lead)),
            0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
            0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
            _ => (4, u32::from(lead & 0x07)),
        };
        let mut value = initial;
        for offset in 1..length {
            let continuation = bytes.get(position + offset).copied().unwrap_or(0x80);
            value = (value << 6) | u32::from(continuation & 0x3F);
        }
        position += length;
        Some(value)
    })
}

/// Appends the WTF-8 encoding of a code point (lone surrogates included).
pub(crate) fn push_code_point(out: &mut Vec<u8>, code_point: u32) {
    // Truncations below are intended: each byte takes the low bits of a shifted value.
    if code_point < 0x80 {
        out.push(code_point as u8);
    } else if code_point < 0x800 {
        out.extend_from_slice(&[
            0xC0 | (code_point >> 6) as u8,
            0x80 | (code_point & 0x3F) as u8,
        ]);
    } else if code_point < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (code_point >> 12) as u8,
            0x80 | ((code_point >> 6) & 0x3F) as u8,
            0x80 | (code_point & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (code_point >> 18) as u8,
            0x80 | ((code_point >> 12) & 0x3F) as u8,
            0x80 | ((code_point >> 6) & 0x3F) as u8,
            0x80 | (code_point & 0x3F) as u8,
        ]);
    }
}

fn wtf8_to_string_lossy(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        code_points(bytes)
            .map(|code_point| char::from_u32(code_point).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
    )
}

fn hex_value(byte: u8) -> Option<u32> {
    match byte {
        b'0'..=b'9' => Some(u32::from(byte - b'0')),
        b'a'..=b'f' => Some(u32::from(byte - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(byte - b'A' + 10)),
        _ => None,
    }
}

/// Reads the four hex digits of a `\uXXXX` escape starting at `digits`.
pub(crate) fn read_hex4(bytes: &[u8], digits: usize) -> Option<u32> {
    let slice = bytes.get(digits..digits + 4)?;
    slice
        .iter()
        .try_fold(0u32, |value, &byte| Some((value << 4) | hex_value(byte)?))
}

/// Decodes the escapes of an already validated string literal body into WTF-8.
fn decode_escapes(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut position = 0;
    while let Some(found) = memchr::memchr(b'\\', &raw[position..]) {
        out.extend_from_slice(&raw[position..position + found]);
        position += found;
        let Some(&escape) = raw.get(position + 1) else {
            break;
        };
        position += 2;
        match escape {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'u' => {
                let unit = read_hex4(raw, position).unwrap_or(0xFFFD);
                position += 4;
                let mut code_point = unit;
                // Python combines a high surrogate with an immediately following low surrogate
                // escape; anything else leaves the surrogate alone.
                if (0xD800..0xDC00).contains(&unit)
                    && raw.get(position..position + 2) == Some(b"\\u")
                    && let Some(low) = read_hex4(raw, position + 2)
                    && (0xDC00..0xE000).contains(&low)
                {
                    code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    position += 6;
                }
                push_code_point(&mut out, code_point);
            }
            other => out.push(other), // `"`, `\\`, `/`
        }
    }
    out.extend_from_slice(&raw[position.min(raw.len())..]);
    out
}

/// Appends `bytes` (WTF-8) as a JSON string literal: `"` and `\` escaped, control characters as
/// `\n`-style or `\u00XX` escapes, lone surrogates as `\uXXXX`, everything else as raw UTF-8
/// (`json.dumps(..., ensure_ascii=False)`, written by [`crate::dumps::push_string`]). The output
/// is valid UTF-8 and parses back to the same string in Python and here.
pub fn write_json_string(bytes: &[u8], out: &mut String) {
    let mut literal = Vec::with_capacity(bytes.len() + 2);
    crate::dumps::push_string(&mut literal, bytes, false);
    match String::from_utf8(literal) {
        Ok(text) => out.push_str(&text),
        // Not reached: every lone surrogate is escaped; kept lossless for the reader anyway.
        Err(error) => out.push_str(&String::from_utf8_lossy(error.as_bytes())),
    }
}
