//! The parser: one pass over a UTF-8 line, producing [`ValueRef`]s that borrow from it.
//!
//! Strings are most of the bytes in this dataset (test strings with an escape every ~20 bytes),
//! so the string scanner is the hot loop. It looks at 64 bytes at a time: one branch-free pass
//! (which the compiler turns into SIMD compares) marks every `"`, `\` and byte below 0x20 in a
//! 64-bit mask, and the scanner then walks the set bits: a backslash is checked as an escape and
//! skipped over, a quote ends the string, a raw control byte is an error (Python's strict mode).
//! Nothing is copied or decoded here; that is left to [`JsonStr`], on demand.

use super::error::{JsonError, JsonErrorKind};
use super::string::{JsonStr, read_hex4};
use super::value::{ArrayRef, NumberRef, ObjectRef, ValueRef};

/// Python refuses to convert integer literals longer than this (`sys.get_int_max_str_digits`).
pub const MAX_INTEGER_DIGITS: usize = 4300;
/// The deepest nesting accepted: what the card's reader (`iter_examples`, a generator doing
/// `json.loads(line)`, driven at module level by `next(examples)` as the card shows) reads under
/// CPython 3.10 and 3.11, whose decoder recurses on the interpreter's stack and raises
/// `RecursionError` one level deeper (a `for` loop instead of `next()` reads one level more;
/// each enclosing Python function call, one less). CPython 3.12 and later read deeper. So a
/// file this reader accepts is one the card's code reads on every CPython from 3.10 (tested
/// against the real interpreter in `tests/python_parity.rs`).
pub const MAX_DEPTH: usize = 993;

/// Parses one JSON document the way Python's `json.loads` does.
pub fn parse(text: &str) -> Result<ValueRef<'_>, JsonError> {
    parse_noting_carriage_return(text).map(|(value, _)| value)
}

/// [`parse`], also telling whether a carriage return occurred between tokens (JSON whitespace
/// to `json.loads`, but a line break to Python's universal-newline file reading).
pub fn parse_noting_carriage_return(text: &str) -> Result<(ValueRef<'_>, bool), JsonError> {
    let bytes = text.as_bytes();
    let mut parser = Parser {
        bytes,
        position: 0,
        carriage_return_seen: false,
    };
    parser.skip_whitespace();
    let value = parser.parse_value(0)?;
    parser.skip_whitespace();
    if parser.position != bytes.len() {
        return Err(parser.error(JsonErrorKind::ExtraData));
    }
    Ok((value, parser.carriage_return_seen))
}

/// Bytes the string scanner classifies at once.
const BLOCK: usize = 64;

/// Bit `i` is set when `block[i]` is `"`, `\` or below 0x20.
///
/// Written so that it compiles to SIMD without `unsafe` or target-specific code: a byte-wise map
/// (vector compares), then each group of eight flag bytes (0x80 or 0) is gathered into eight bits
/// with one multiplication (the bits of `0x0002_0408_1020_4081` move flag byte `k` to bit
/// `56 + k`, and no two partial products collide).
#[inline(always)]
fn special_byte_mask(block: &[u8; BLOCK]) -> u64 {
    let mut flags = [0u8; BLOCK];
    for (flag, &byte) in flags.iter_mut().zip(block) {
        *flag = (u8::from(byte == b'"') | u8::from(byte == b'\\') | u8::from(byte < 0x20)) << 7;
    }
    let mut mask = 0u64;
    for (index, group) in flags.chunks_exact(8).enumerate() {
        let group = u64::from_le_bytes(group.try_into().unwrap_or_default());
        mask |= (group.wrapping_mul(0x0002_0408_1020_4081) >> 56) << (index * 8);
    }
    mask
}

/// Length of the escape introduced by `\` followed by this byte: 2, or 6 for `\uXXXX` (its hex
/// digits still to check); 0 when Python rejects the escape.
const ESCAPE_LENGTH: [u8; 256] = {
    let mut table = [0u8; 256];
    let simple = *b"\"\\/bfnrt";
    let mut index = 0;
    while index < simple.len() {
        table[simple[index] as usize] = 2;
        index += 1;
    }
    table[b'u' as usize] = 6;
    table
};

struct Parser<'a> {
    bytes: &'a [u8],
    position: usize,
    carriage_return_seen: bool,
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
                b' ' | b'\t' | b'\n' => self.position += 1,
                b'\r' => {
                    self.carriage_return_seen = true;
                    self.position += 1;
                }
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
        let start = self.position + 1;
        let (end, has_escapes) = self.scan_string(start)?;
        self.position = end + 1;
        Ok(JsonStr::new(&self.bytes[start..end], has_escapes))
    }

    /// Finds the closing quote of the string whose body starts at `start`, checking every escape
    /// and rejecting raw control bytes; returns its position and whether there was an escape.
    #[inline]
    fn scan_string(&self, start: usize) -> Result<(usize, bool), JsonError> {
        let bytes = self.bytes;
        let mut has_escapes = false;
        let mut block_start = start;
        while let Some(block) = bytes.get(block_start..block_start + BLOCK) {
            let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
                break;
            };
            let mut mask = special_byte_mask(block);
            let mut next_block_start = block_start + BLOCK;
            // The loop-carried chain is kept to `trailing_zeros` and two bit operations: an
            // escape is skipped as two bytes whatever it is (the four hex digits of `\uXXXX` are
            // never special), and checking the escaped byte is a predictable branch off that
            // chain, taken only for `\u`, an invalid escape or the end of the line.
            while mask != 0 {
                let offset = mask.trailing_zeros() as usize;
                let position = block_start + offset;
                if block[offset] != b'\\' {
                    if block[offset] == b'"' {
                        return Ok((position, has_escapes));
                    }
                    return Err(self.error_at(JsonErrorKind::ControlCharacter, position));
                }
                has_escapes = true;
                let escaped = bytes.get(position + 1).copied().unwrap_or(0);
                if ESCAPE_LENGTH[usize::from(escaped)] != 2 {
                    self.check_escape(position)?;
                }
                // Drop the backslash and the escaped byte (which may be `"` or `\`); when the
                // backslash is the block's last byte, the next block starts after its escape.
                mask &= !(3u64 << offset);
                next_block_start = next_block_start.max(position + 2);
            }
            block_start = next_block_start;
        }
        // Fewer than BLOCK bytes left in the line: byte by byte.
        let mut position = block_start;
        loop {
            match bytes.get(position) {
                Some(b'"') => return Ok((position, has_escapes)),
                Some(b'\\') => {
                    has_escapes = true;
                    position = self.check_escape(position)?;
                }
                Some(&byte) if byte < 0x20 => {
                    return Err(self.error_at(JsonErrorKind::ControlCharacter, position));
                }
                Some(_) => position += 1,
                None => {
                    return Err(self.error_at(JsonErrorKind::UnterminatedString, start - 1));
                }
            }
        }
    }

    /// Validates the escape at `backslash` and returns the position after it.
    #[inline(always)]
    fn check_escape(&self, backslash: usize) -> Result<usize, JsonError> {
        let Some(&escaped) = self.bytes.get(backslash + 1) else {
            return Err(self.error_at(JsonErrorKind::UnterminatedString, backslash));
        };
        match ESCAPE_LENGTH[usize::from(escaped)] {
            2 => Ok(backslash + 2),
            6 => match read_hex4(self.bytes, backslash + 2) {
                Some(_) => Ok(backslash + 6),
                None => Err(self.error_at(JsonErrorKind::InvalidUnicodeEscape, backslash)),
            },
            _ => Err(self.error_at(JsonErrorKind::InvalidEscape, backslash)),
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The string scanner spelled out byte by byte: the reference for the block scanner.
    fn scan_string_reference(bytes: &[u8], start: usize) -> Result<(usize, bool), JsonError> {
        let parser = Parser {
            bytes,
            position: 0,
            carriage_return_seen: false,
        };
        let mut has_escapes = false;
        let mut position = start;
        loop {
            match bytes.get(position) {
                Some(b'"') => return Ok((position, has_escapes)),
                Some(b'\\') => {
                    has_escapes = true;
                    position = parser.check_escape(position)?;
                }
                Some(&byte) if byte < 0x20 => {
                    return Err(parser.error_at(JsonErrorKind::ControlCharacter, position));
                }
                Some(_) => position += 1,
                None => {
                    return Err(parser.error_at(JsonErrorKind::UnterminatedString, start - 1));
                }
            }
        }
    }

    /// Pieces that exercise every branch of the scanner, including escapes straddling the
    /// 64-byte blocks.
    fn piece() -> impl Strategy<Value = &'static [u8]> {
        prop::sample::select(vec![
            &b"a"[..],
            b"0123456789abcdef0123456789",
            b"\\n",
            b"\\\\",
            b"\\\"",
            b"\\/",
            b"\\u00e9",
            b"\\ud800",
            b"\\u12",
            b"\\x",
            b"\\",
            b"\"",
            b"\t",
            b"\x01",
            "é€".as_bytes(),
        ])
    }

    proptest! {
        #[test]
        fn block_scanner_matches_the_byte_by_byte_reference(
            padding in 0usize..70,
            pieces in prop::collection::vec(piece(), 0..60),
        ) {
            let mut bytes = vec![b' '; padding];
            bytes.push(b'"');
            for piece in pieces {
                bytes.extend_from_slice(piece);
            }
            let parser = Parser {
                bytes: &bytes,
                position: 0,
                carriage_return_seen: false,
            };
            prop_assert_eq!(
                parser.scan_string(padding + 1),
                scan_string_reference(&bytes, padding + 1)
            );
        }
    }

    #[test]
    fn special_byte_mask_marks_exactly_quotes_backslashes_and_control_bytes() {
        let mut block = [0u8; BLOCK];
        for (index, byte) in block.iter_mut().enumerate() {
            *byte = (index as u8).wrapping_mul(37);
        }
        let expected = block.iter().enumerate().fold(0u64, |mask, (index, &byte)| {
            mask | (u64::from(byte == b'"' || byte == b'\\' || byte < 0x20) << index)
        });
        assert_eq!(special_byte_mask(&block), expected);
    }
}
