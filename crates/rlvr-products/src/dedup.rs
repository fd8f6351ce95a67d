//! Deduplication by prompt: the first record of each group is kept, every later one dropped and
//! reported with the row it repeats; kept lines are copied byte for byte in source order.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use rlvr_dataset::{ReadOptions, for_each_line};

use crate::atomic_output::AtomicOutput;
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
}

/// Writes `input` without repeats to `output`.
pub fn dedup_file(
    input: &Path,
    output: &Path,
    by: GroupBy,
    read: &ReadOptions,
) -> Result<DedupReport, ProductsError> {
    let mut destination = AtomicOutput::create(output)?;
    let temporary = destination.temporary().to_path_buf();
    let writer = &mut destination.writer;
    let mut first_rows: HashMap<GroupKey, u64> = HashMap::new();
    let mut report = DedupReport {
        by,
        ..DedupReport::default()
    };
    let mut write_error = None;
    for_each_line(
        input,
        read,
        |line| (line_key(line, by), line.bytes.to_vec()),
        |position, ((key, readable), line)| {
            report.rows += 1;
            report.unreadable_lines += u64::from(!readable);
            if let Some(&kept_row) = first_rows.get(&key) {
                report.dropped.push(DroppedRow {
                    row: position.row,
                    kept_row,
                });
                return;
            }
            first_rows.insert(key, position.row);
            report.kept += 1;
            if write_error.is_none()
                && let Err(source) = writer
                    .write_all(&line)
                    .and_then(|()| writer.write_all(b"\n"))
            {
                write_error = Some(source);
            }
        },
    )?;
    if let Some(source) = write_error {
        return Err(ProductsError::io(&temporary, source));
    }
    destination.commit()?;
    Ok(report)
}
