//! Errors of reading a file: the file-level ones that stop reading ([`ReadError`]) and the
//! line-level ones that are reported while reading goes on ([`LineError`], [`BadLine`]).

use std::fmt;
use std::path::PathBuf;

use crate::reader::LinePosition;
use crate::record::RecordError;
use rlvr_python_compat::json::JsonError;

/// A problem that stops reading the whole file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be opened or read.
    #[error("cannot read `{}`", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The path is a directory.
    #[error("`{path}` is a directory, not a JSON Lines file")]
    Directory {
        /// The path given.
        path: PathBuf,
    },
    /// A single line exceeds the size this reader will buffer.
    #[error(
        "`{path}`: the line starting at byte offset {byte_offset} is longer than {limit} bytes"
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// Byte offset of the line start.
        byte_offset: u64,
        /// The limit in bytes.
        limit: usize,
    },
}

/// Why one line is not a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The bytes are not UTF-8.
    #[error("invalid utf-8 at byte {offset} of the line")]
    InvalidUtf8 {
        /// Byte offset into the line of the first invalid byte.
        offset: usize,
    },
    /// A carriage return that is not part of the line end: Python's universal-newline reading
    /// would split the line there.
    #[error("carriage return inside the line at byte {offset} (python would split the line here)")]
    CarriageReturn {
        /// Byte offset into the line.
        offset: usize,
    },
    /// The text is not JSON.
    #[error("invalid json: {error}")]
    InvalidJson {
        /// The syntax error, with its offset into the line (in the message, not the chain).
        error: JsonError,
    },
    /// The JSON is not a record of this dataset.
    #[error("invalid record: {error}")]
    InvalidRecord {
        /// The field and reason (in the message, not the chain).
        error: RecordError,
    },
}

impl LineError {
    /// Byte offset into the line where the problem is, when there is one.
    pub fn offset_in_line(&self) -> Option<usize> {
        match self {
            Self::InvalidUtf8 { offset } | Self::CarriageReturn { offset } => Some(*offset),
            Self::InvalidJson { error } => Some(error.offset),
            Self::InvalidRecord { .. } => None,
        }
    }

    /// The record field concerned, when the line is JSON but not a record.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::InvalidRecord { error } => Some(&error.field),
            _ => None,
        }
    }
}

/// A line that could not be read as a record, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// The file.
    pub path: PathBuf,
    /// Row index, 1-based line number and byte offset of the line start.
    pub position: LinePosition,
    /// What is wrong.
    pub error: LineError,
}

impl fmt::Display for BadLine {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}:{}: row {}, byte offset {}",
            self.path.display(),
            self.position.line,
            self.position.row,
            self.position.byte_offset
        )?;
        if let Some(offset) = self.error.offset_in_line() {
            write!(
                formatter,
                " (+{offset} in line, file byte {})",
                self.position.byte_offset + offset as u64
            )?;
        }
        write!(formatter, ": {}", self.error)
    }
}

impl std::error::Error for BadLine {}
