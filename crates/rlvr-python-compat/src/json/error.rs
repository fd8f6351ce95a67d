//! Why a text is not JSON, and where (a byte offset into the parsed text).

/// A JSON syntax error at a byte offset of the parsed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct JsonError {
    /// What went wrong (wording follows Python's messages).
    pub kind: JsonErrorKind,
    /// Byte offset into the parsed text where the problem starts.
    pub offset: usize,
}

/// The kinds of syntax error, worded like Python's `json.JSONDecodeError` messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JsonErrorKind {
    #[error("expecting value")]
    ExpectingValue,
    #[error("expecting property name enclosed in double quotes")]
    ExpectingPropertyName,
    #[error("expecting ':' delimiter")]
    ExpectingColon,
    #[error("expecting ',' delimiter")]
    ExpectingComma,
    #[error("unterminated string")]
    UnterminatedString,
    #[error("invalid control character in string")]
    ControlCharacter,
    #[error("invalid \\escape")]
    InvalidEscape,
    #[error("invalid \\uXXXX escape")]
    InvalidUnicodeEscape,
    #[error("extra data after the value")]
    ExtraData,
    #[error("integer literal longer than python's 4300-digit limit")]
    IntegerTooLong,
    #[error(
        "nesting deeper than {max} levels (python's json raises RecursionError)",
        max = super::parser::MAX_DEPTH
    )]
    TooDeep,
}
