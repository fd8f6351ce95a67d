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
    let bytes = text.as_bytes();
    let has_controls = has_control_bytes(bytes);
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
    let mut blocks = bytes.chunks_exact(64);
    for block in &mut blocks {
        if block
            .iter()
            .fold(false, |found, &byte| found | (byte < 0x20))
        {
            return true;
        }
    }
    blocks.remainder().iter().any(|&byte| byte < 0x20)
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
            } else {
                memchr::memchr2(b'"', b'\\', &self.bytes[position..])
            };
            let Some(found) = found else {
                return Err(self.error_at(JsonErrorKind::UnterminatedString, quote));
            };
            position += found;
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
