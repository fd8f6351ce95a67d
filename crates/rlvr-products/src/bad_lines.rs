//! Lines that are not records, as every data-product command reports them: all are counted,
//! the first [`MAX_LISTED`] kept as one message each naming the file, line, row, byte offset
//! and, for a line that is JSON but not a record, the field.

use std::path::Path;

use rlvr_dataset::{BadLine, LineError, LinePosition};

/// Most bad lines a report lists (all are counted).
pub const MAX_LISTED: usize = 20;

/// Counts a bad line and keeps its message while fewer than [`MAX_LISTED`] are kept.
pub fn note_bad_line(
    count: &mut u64,
    listed: &mut Vec<String>,
    path: &Path,
    position: LinePosition,
    error: LineError,
) {
    *count += 1;
    if listed.len() < MAX_LISTED {
        listed.push(
            BadLine {
                path: path.to_path_buf(),
                position,
                error,
            }
            .to_string(),
        );
    }
}
