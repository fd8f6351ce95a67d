//! The parser: one pass over a UTF-8 line, producing [`ValueRef`]s that borrow from it.
//!
//! Strings are most of the bytes in this dataset, so the string scanner jumps between `"` and
//! `\` with `memchr2` and never copies. Python's strict mode rejects raw control characters
//! (U+0000..U+001F) inside strings; rather than test every string byte, the parser checks once per
//! line whether any byte below 0x20 occurs at all (a vectorised pass) and only then uses the
//! byte-by-byte scanner. Files written by `json.dumps` never contain such bytes.

use super::error::{JsonError, JsonErrorKind};
use super::string::{JsonStr, read_hex4};
use super::value::{ArrayRef, NumberRef, ObjectRef, ValueRef};

/// Python refuses to convert integer literals longer than this (`sys.get_int_max_str_digits`).
pub const MAX_INTEGER_DIGITS: usize = 4300;
/// Nesting limit, close to where Python's decoder hits its recursion limit.
pub const MAX_DEPTH: usize = 1000;

/// Parses one JSON document the way Python's `json.loads` does.
pub fn parse(text: &str) -> Result<ValueRef<'_>, JsonError> {
    parse_with_control_hint(text, has_control_bytes(text.as_bytes()))
}

/// [`parse`] for a caller that already knows whether `text` has a byte below 0x20.
pub(crate) fn parse_with_control_hint(
    text: &str,
    has_controls: bool,
) -> Result<ValueRef<'_>, JsonError> {
    let bytes = text.as_bytes();
    let mut parser = Parser {
        bytes,
        position: 0,
        checks_controls: has_controls,
    };
    parser.skip_whitespace();
    let value = parser.parse_value(0)?;
    parser.skip_whitespace();
    if parser.position != bytes.len() {
        return Err(parser.error(JsonErrorKind::ExtraData));
    }
    Ok(value)
}

/// True when any byte is below 0x20. Written as a branch-free fold over fixed blocks so that it
/// compiles to SIMD compares.
pub(crate) fn has_control_bytes(bytes: &[u8]) -> bool {
    find_control_byte(bytes, 0).is_some()
}

/// Position of the first byte below 0x20 at or after `from`: block by block with a branch-free
/// test per 64 bytes, then exactly within the block that has one.
pub(crate) fn find_control_byte(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut blocks = rest.chunks_exact(64);
    let mut position = from;
    for block in &mut blocks {
        // A saturating subtraction is non-zero exactly for bytes below 0x20; OR-ing the 64
        // results compiles to a few SIMD instructions.
        let found = block.iter().fold(0u8, |found, &byte| found | 0x20u8.saturating_sub(byte));
        if found != 0 {
            return block.iter().position(|&byte| byte < 0x20).map(|found| position + found);
        }
        position += 64;
    }
    blocks.remainder().iter().position(|&byte| byte < 0x20).map(|found| position + found)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` equal to `"` or `\`. Bits above a true match may be
/// false positives (borrow propagation), so only the lowest set bit is meaningful.
#[inline(always)]
fn quote_or_backslash_bits(word: u64) -> u64 {
    let quotes = word ^ (ONES * u64::from(b'"'));
    let backslashes = word ^ (ONES * u64::from(b'\\'));
    ((quotes.wrapping_sub(ONES) & !quotes) | (backslashes.wrapping_sub(ONES) & !backslashes))
        & HIGH_BITS
}

/// Position of the first `"` or `\` at or after `from`.
///
/// Escapes are dense in this data (one every ~20 bytes of test text, 99.9% of gaps under 128
/// bytes), so the next one is usually close: up to 16 inline 8-byte word steps find it without
/// the cost of calling into `memchr2`, which takes over for long clean stretches.
#[inline]
fn find_quote_or_backslash(bytes: &[u8], from: usize) -> Option<usize> {
    let mut position = from;
    for _ in 0..16 {
        let Some(word) = bytes.get(position..position + 8) else {
            break;
        };
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let bits = quote_or_backslash_bits(u64::from_le_bytes(word));
        if bits != 0 {
            return Some(position + (bits.trailing_zeros() / 8) as usize);
        }
        position += 8;
    }
    memchr::memchr2(b'"', b'\\', bytes.get(position..)?).map(|found| position + found)
}

struct Parser<'a> {
    bytes: &'a [u8],
    position: usize,
    checks_controls: bool,
}

impl<'a> Parser<'a> {
    fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            kind,
            offset: self.position,
        }
    }

    fn error_at(&self, kind: JsonErrorKind, offset: usize) -> JsonError {
        JsonError { kind, offset }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(byte) = self.peek() {
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' => self.position += 1,
                _ => return,
            }
        }
    }

    fn parse_value(&mut self, depth: usize) -> Result<ValueRef<'a>, JsonError> {
        match self.peek() {
            Some(b'"') => Ok(ValueRef::String(self.parse_string()?)),
            Some(b'{') => self.parse_object(depth + 1),
            Some(b'[') => self.parse_array(depth + 1),
            Some(b'n') if self.bytes[self.position..].starts_with(b"null") => {
                self.position += 4;
                Ok(ValueRef::Null)
            }
            Some(b't') if self.bytes[self.position..].starts_with(b"true") => {
                self.position += 4;
                Ok(ValueRef::Bool(true))
            }
            Some(b'f') if self.bytes[self.position..].starts_with(b"false") => {
                self.position += 5;
                Ok(ValueRef::Bool(false))
            }
            Some(b'N') if self.bytes[self.position..].starts_with(b"NaN") => self.special_number(3),
            Some(b'I') if self.bytes[self.position..].starts_with(b"Infinity") => {
                self.special_number(8)
            }
            Some(b'-') if self.bytes[self.position..].starts_with(b"-Infinity") => {
                self.special_number(9)
            }
            Some(b'-' | b'0'..=b'9') => self.parse_number(),
            _ => Err(self.error(JsonErrorKind::ExpectingValue)),
        }
    }

    fn special_number(&mut self, length: usize) -> Result<ValueRef<'a>, JsonError> {
        let start = self.position;
        self.position += length;
        Ok(ValueRef::Number(NumberRef::new(
            self.text(start, self.position),
        )))
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        // Every boundary the parser produces sits next to an ASCII byte of a UTF-8 input.
        std::str::from_utf8(&self.bytes[start..end]).unwrap_or_default()
    }

    fn digits(&mut self) -> usize {
        let start = self.position;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.position += 1;
        }
        self.position - start
    }

    /// Python's NUMBER_RE: `-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`, matched greedily; whatever
    /// follows is left for the caller (so `01` fails later with "expecting ',' delimiter").
    fn parse_number(&mut self) -> Result<ValueRef<'a>, JsonError> {
        let start = self.position;
        if self.peek() == Some(b'-') {
            self.position += 1;
        }
        let integer_digits = match self.peek() {
            Some(b'0') => {
                self.position += 1;
                1
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error_at(JsonErrorKind::ExpectingValue, start)),
        };
        let mut is_integer = true;
        if self.peek() == Some(b'.')
            && matches!(self.bytes.get(self.position + 1), Some(b'0'..=b'9'))
        {
            self.position += 1;
            self.digits();
            is_integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let mark = self.position;
            self.position += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if self.digits() == 0 {
                self.position = mark;
            } else {
                is_integer = false;
            }
        }
        if is_integer && integer_digits > MAX_INTEGER_DIGITS {
            return Err(self.error_at(JsonErrorKind::IntegerTooLong, start));
        }
        Ok(ValueRef::Number(NumberRef::new(
            self.text(start, self.position),
        )))
    }

    fn parse_string(&mut self) -> Result<JsonStr<'a>, JsonError> {
        let quote = self.position;
        let start = quote + 1;
        let mut position = start;
        let mut has_escapes = false;
        loop {
            let found = if self.checks_controls {
                self.bytes[position..]
                    .iter()
                    .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
                    .map(|found| position + found)
            } else {
                find_quote_or_backslash(self.bytes, position)
            };
            let Some(found) = found else {
                return Err(self.error_at(JsonErrorKind::UnterminatedString, quote));
            };
            position = found;
            match self.bytes[position] {
                b'"' => break,
                b'\\' => {
                    has_escapes = true;
                    position = self.check_escape(position)?;
                }
                _ => return Err(self.error_at(JsonErrorKind::ControlCharacter, position)),
            }
        }
        self.position = position + 1;
        Ok(JsonStr::new(&self.bytes[start..position], has_escapes))
    }

    /// Validates the escape at `backslash` and returns the position after it.
    fn check_escape(&self, backslash: usize) -> Result<usize, JsonError> {
        match self.bytes.get(backslash + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(backslash + 2),
            Some(b'u') => match read_hex4(self.bytes, backslash + 2) {
                Some(_) => Ok(backslash + 6),
                None => Err(self.error_at(JsonErrorKind::InvalidUnicodeEscape, backslash)),
            },
            Some(_) => Err(self.error_at(JsonErrorKind::InvalidEscape, backslash)),
            None => Err(self.error_at(JsonErrorKind::UnterminatedString, backslash)),
        }
    }

    fn parse_array(&mut self, depth: usize) -> Result<ValueRef<'a>, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error(JsonErrorKind::TooDeep));
        }
        let start = self.position;
        self.position += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.position += 1;
            return Ok(ValueRef::Array(ArrayRef {
                items,
                raw: &self.bytes[start..self.position],
            }));
        }
        loop {
            items.push(self.parse_value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.position += 1;
                    self.skip_whitespace();
                }
                Some(b']') => {
                    self.position += 1;
                    return Ok(ValueRef::Array(ArrayRef {
                        items,
                        raw: &self.bytes[start..self.position],
                    }));
                }
                _ => return Err(self.error(JsonErrorKind::ExpectingComma)),
            }
        }
    }

    fn parse_object(&mut self, depth: usize) -> Result<ValueRef<'a>, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error(JsonErrorKind::TooDeep));
        }
        let start = self.position;
        self.position += 1;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.position += 1;
            return Ok(ValueRef::Object(ObjectRef {
                members,
                raw: &self.bytes[start..self.position],
            }));
        }
        loop {
            match self.peek() {
                Some(b'"') => {}
                _ => return Err(self.error(JsonErrorKind::ExpectingPropertyName)),
            }
            let key = self.parse_string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.error(JsonErrorKind::ExpectingColon));
            }
            self.position += 1;
            self.skip_whitespace();
            let value = self.parse_value(depth)?;
            members.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.position += 1;
                    self.skip_whitespace();
                }
                Some(b'}') => {
                    self.position += 1;
                    return Ok(ValueRef::Object(ObjectRef {
                        members,
                        raw: &self.bytes[start..self.position],
                    }));
                }
                _ => return Err(self.error(JsonErrorKind::ExpectingComma)),
            }
        }
    }
}
