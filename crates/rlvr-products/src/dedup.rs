//! Deduplication by prompt: the first record of each group is kept, every later one dropped and
//! reported with the row it repeats; kept lines are copied byte for byte in source order.
//!
//! A line that is not a record is copied too (dedup only drops repeats; two identical bad lines
//! are one group), and reported: the command's exit status says the input had bad lines.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use rlvr_dataset::{ReadOptions, try_for_each_line};
use rlvr_output::{AtomicFile, refuse_overwriting_inputs};

use crate::bad_lines::note_bad_line;
use crate::error::ProductsError;
use crate::group_key::{GroupBy, GroupKey, line_key};

/// One dropped row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DroppedRow {
    /// Zero-based source row dropped.
    pub row: u64,
    /// The earlier source row it repeats (which was kept).
    pub kept_row: u64,
}

/// What a dedup did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DedupReport {
    /// The grouping used.
    pub by: GroupBy,
    /// Rows read.
    pub rows: u64,
    /// Rows written.
    pub kept: u64,
    /// Rows dropped, in source order.
    pub dropped: Vec<DroppedRow>,
    /// Lines that are not records (kept, each compared as raw bytes).
    pub unreadable_lines: u64,
    /// The first of them, as messages (file, line, row, byte offset, reason).
    pub bad_lines: Vec<String>,
}

/// Writes `input` without repeats to `output` (replaced only once complete).
pub fn dedup_file(
    input: &Path,
    output: &Path,
    by: GroupBy,
    read: &ReadOptions,
) -> Result<DedupReport, ProductsError> {
    refuse_overwriting_inputs(&[input], &[output])?;
    let mut destination = AtomicFile::create(output)?;
    let mut first_rows: HashMap<GroupKey, u64> = HashMap::new();
    let mut report = DedupReport {
        by,
        ..DedupReport::default()
    };
    // A write error (a full disk) stops the read at once.
    let summary = try_for_each_line(
        input,
        read,
        |line| (line_key(line, by), line.bytes.to_vec()),
        |position, ((key, bad), line)| -> Result<(), ProductsError> {
            report.rows += 1;
            if let Some(error) = bad {
                note_bad_line(
                    &mut report.unreadable_lines,
                    &mut report.bad_lines,
                    input,
                    position,
                    error,
                );
            }
            if let Some(&kept_row) = first_rows.get(&key) {
                report.dropped.push(DroppedRow {
                    row: position.row,
                    kept_row,
                });
                return Ok(());
            }
            first_rows.insert(key, position.row);
            report.kept += 1;
            destination
                .write_all(&line)
                .and_then(|()| destination.write_all(b"\n"))
                .map_err(|source| destination.error(source))?;
            Ok(())
        },
    )?;
    if summary.rows == 0 {
        return Err(ProductsError::NoRecords {
            path: input.to_path_buf(),
        });
    }
    destination.commit()?;
    Ok(report)
}
