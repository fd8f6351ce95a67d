//! Errors of the generator: invalid settings and failed writes.

/// Why a synthetic file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// More rows than the generator plans for in memory.
    #[error("--rows {rows} is more than the supported maximum of {maximum}")]
    TooManyRows {
        /// The requested row count.
        rows: u64,
        /// The largest accepted row count.
        maximum: u64,
    },
    /// An average record size of zero or beyond the maximum.
    #[error("average record bytes must be between 1 and {maximum}, got {requested}")]
    AverageRecordBytes {
        /// The requested average.
        requested: u64,
        /// The largest accepted average.
        maximum: u64,
    },
    /// Writing the output or its sidecar failed (the message names the path); nothing was
    /// moved into place.
    // Not `transparent`, which would hide the `OutputError` from the error chain.
    #[error("{0}")]
    Write(#[from] rlvr_output::OutputError),
    /// Writing to a caller's writer failed.
    #[error("writing the synthetic rows")]
    Stream(#[source] std::io::Error),
    /// The faults sidecar could not be encoded.
    #[error("failed to encode the faults sidecar")]
    Encode(#[source] serde_json::Error),
}
