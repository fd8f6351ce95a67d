//! A JSON parser that accepts exactly what Python's `json.loads` accepts.
//!
//! The dataset card's figures were computed with Python's `json` module, so this parser follows
//! it rather than RFC 8259 where they differ:
//!
//! - `NaN`, `Infinity` and `-Infinity` are numbers; numbers are kept as written (big integers
//!   and floats lose nothing), except that integer literals over 4,300 digits are rejected as
//!   Python 3.11+ rejects them;
//! - duplicate keys are kept in order and a lookup returns the last one, like a `dict`;
//! - `\uXXXX` escapes combine surrogate pairs, and a **lone surrogate** such as `\ud800` is
//!   accepted and kept as one code point;
//! - raw control characters (U+0000..U+001F) inside strings are rejected (Python's strict mode);
//!   whitespace between tokens is space, tab, line feed and carriage return only.
//!
//! # Why not serde_json or simd-json
//!
//! Both reject lone surrogates, and the released data must be read as Python reads it. A Rust
//! `String` cannot hold a lone surrogate either, so decoded strings are stored as WTF-8
//! ([`JsonString`]): valid UTF-8 for every ordinary string, with a lone surrogate encoded as the
//! three bytes UTF-8 would give it. [`JsonString::as_str`] gives the text when there is no lone
//! surrogate, [`JsonString::to_string_lossy`] replaces each one with U+FFFD,
//! [`JsonString::code_point_count`] counts it as one code point (Python's `len`), and
//! [`JsonString::to_json`] writes it back as a `\udXXX` escape, so nothing is lost.
//!
//! # Speed
//!
//! Parsing produces borrowed values ([`ValueRef`]) whose strings are slices of the line, still
//! escaped ([`JsonStr`]); they are decoded only when asked. Arrays and objects keep their raw text,
//! so `label == metadata.ground_truth` is first tried as a byte comparison and only falls back to
//! [`ValueRef::python_eq`] (order-independent for objects) when the bytes differ.

mod error;
mod parser;
mod string;
mod value;

pub use error::{JsonError, JsonErrorKind};
pub use parser::{MAX_DEPTH, MAX_INTEGER_DIGITS, parse, parse_noting_carriage_return};
pub use string::{JsonStr, JsonString, code_point_count, code_points, write_json_string};
pub use value::{ArrayRef, Number, NumberRef, ObjectRef, Value, ValueRef};

/// Parses one JSON document into an owned [`Value`].
pub fn parse_owned(text: &str) -> Result<Value, JsonError> {
    parse(text).map(|value| value.to_owned_value())
}
