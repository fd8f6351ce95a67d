//! The code-rlvr-15k dataset: the record model, a streaming parallel reader that keeps line
//! numbers and byte offsets, validation and statistics. Lines are parsed as Python's `json`
//! reads them by `rlvr-python-compat`; synthetic files come from `rlvr-synth`.
//!
//! Entry points: [`reader::for_each_line`] (stream every row in order, parsing in parallel;
//! [`reader::try_for_each_line`] when the consumer can fail and must stop the read),
//! [`reader::read_row`] (one row by index), [`reader::parse_line`] then [`Record::from_value`]
//! (one line into the owned record), [`validation`] and [`stats`] (the card's checks and figures).

#![forbid(unsafe_code)]

pub mod error;
pub mod label_equality;
pub mod reader;
pub mod record;
pub mod stats;
pub mod validation;

pub use error::{BadLine, LineError, ReadError};
pub use label_equality::label_equals_ground_truth;
pub use reader::{
    Line, LinePosition, ReadOptions, ReadSummary, RowLookup, for_each_line, parse_line, read_row,
    try_for_each_line,
};
pub use record::{
    Message, Metadata, Record, RecordError, RecordRef, TestKind, TestValue, Tests, TestsRef,
};
pub use stats::{DatasetStats, RowFigures, StatsAccumulator};
pub use validation::{Check, ValidationAccumulator, ValidationReport};

/// Reads one line into the owned record.
pub fn parse_record(line: &[u8]) -> Result<Record, LineError> {
    let value = parse_line(line)?;
    Record::from_value(&value).map_err(|error| LineError::InvalidRecord { error })
}
