//! The code-rlvr-15k dataset: the record model, a streaming parallel reader that keeps line
//! numbers and byte offsets, validation and statistics. Lines are parsed as Python's `json`
//! reads them by `rlvr-python-compat`; synthetic files come from `rlvr-synth`.
//!
//! Entry points: [`reader::for_each_line`] (stream every row in order, parsing in parallel;
//! [`reader::try_for_each_line`] when the consumer can fail and must stop the read),
//! [`reader::read_row`] (one row by index), [`row_index::DatasetRows`] (a file indexed for
//! random access by row and `metadata.hash`), [`reader::parse_line`] then
//! [`RecordRef::from_value`] (one line as a record), [`validation`] and [`stats`] (the card's
//! checks and figures). A record's tests are [`Tests`], the one type the verifier holds them in;
//! [`ground_truth_of_row`] finds them in a row; [`answer_variety`] reads a statement for the
//! phrases that accept more than one answer.

#![forbid(unsafe_code)]

pub mod answer_variety;
pub mod error;
pub mod ground_truth;
pub mod label_equality;
pub mod reader;
pub mod record;
pub mod row_index;
pub mod stats;
pub mod validation;

pub use error::{BadLine, LineError, ReadError};
pub use ground_truth::{FunctionalTests, InputOutputTest, TestValue, Tests, ground_truth_of_row};
pub use label_equality::label_equals_ground_truth;
pub use reader::{
    Line, LinePosition, ReadOptions, ReadSummary, RowLookup, for_each_line, parse_line, read_row,
    try_for_each_line,
};
pub use record::{MessageRef, RecordError, RecordRef, TestKind, TestsRef};
pub use row_index::{DatasetRows, HashLookup, RowError, RowGroundTruth};
pub use stats::{DatasetStats, RowFigures, StatsAccumulator};
pub use validation::{Check, ValidationAccumulator, ValidationReport};

/// Whether one line is a record, every prompt message included (`Ok`), or why not.
pub fn check_record(line: &[u8]) -> Result<(), LineError> {
    let value = parse_line(line)?;
    RecordRef::from_value(&value)
        .and_then(|record| record.messages())
        .map(drop)
        .map_err(|error| LineError::InvalidRecord { error })
}
