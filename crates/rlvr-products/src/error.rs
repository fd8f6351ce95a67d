//! Errors that stop a data-product command. Problems with single rows are not errors: they are
//! counted and reported (see each command's report) so that one bad line never hides the rest.

use std::path::PathBuf;

use rlvr_dataset::ReadError;
use rlvr_output::OutputError;

/// A problem that stops a command.
#[derive(Debug, thiserror::Error)]
pub enum ProductsError {
    /// The input could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An output could not be written, or is refused because it is an input.
    // Not `transparent`: that would hide the `OutputError` from the error chain, where the
    // binary looks for it to choose the exit status.
    #[error("{0}")]
    Output(#[from] OutputError),
    /// The input holds no record at all (empty, or only blank lines).
    #[error("`{}` contains no records (the file is empty or blank)", path.display())]
    NoRecords {
        /// The input.
        path: PathBuf,
    },
    /// A file could not be read (the message names the path).
    #[error("{source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Arrow refused to build a column.
    #[error("building the arrow column `{column}`")]
    Arrow {
        /// The column.
        column: String,
        /// What arrow said.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// The Parquet library failed to write or read a file.
    #[error("parquet `{path}`")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What the library said.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A file given as Parquet is not one: it does not end with Parquet's magic bytes.
    #[error("`{path}` is not a Parquet file (it does not end with Parquet's magic bytes `PAR1`)")]
    NotParquet {
        /// The file.
        path: PathBuf,
    },
    /// A Parquet file does not have the columns of a known layout.
    #[error("`{path}`: {reason}")]
    UnknownLayout {
        /// The file.
        path: PathBuf,
        /// What is missing or unexpected.
        reason: String,
    },
    /// A row of a Parquet file cannot be turned back into a record.
    #[error("`{path}` row {row}: {reason}")]
    BadParquetRow {
        /// The file.
        path: PathBuf,
        /// Zero-based row within the file.
        row: u64,
        /// What is wrong.
        reason: String,
    },
    /// An option has a value the command cannot honour.
    #[error("{option}: {reason}")]
    InvalidOption {
        /// The option, as spelled on the command line.
        option: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// The output directory already holds an export.
    #[error("`{path}` already holds parquet shards; pass --overwrite to replace them")]
    OutputExists {
        /// The shard directory.
        path: PathBuf,
    },
    /// Rendering a chart failed.
    #[error("chart `{path}`: {reason}")]
    Chart {
        /// The chart file.
        path: PathBuf,
        /// What the plotting library said.
        reason: String,
    },
}

impl ProductsError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// Wraps a Parquet error with the file it concerns.
    pub fn parquet(path: impl Into<PathBuf>, source: parquet::errors::ParquetError) -> Self {
        Self::Parquet {
            path: path.into(),
            source,
        }
    }
}
