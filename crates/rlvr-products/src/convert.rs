//! `rlvr convert`: the card's field mapping between the upstream KlearReasoner-CodeSub-15K rows
//! and the released layout, both ways (see [`crate::release`] for the two line layouts).
//!
//! JSON Lines input is read in parallel and written in order; upstream Parquet input (verl-style
//! columns) is read through [`crate::parquet_rows`]. The tests travel as their exact JSON text,
//! so release -> upstream -> release reproduces every line written the way the release writes
//! lines, byte for byte (property-tested).

use std::io::Write;
use std::path::{Path, PathBuf};

use rlvr_dataset::record::RecordRef;
use rlvr_dataset::{LineError, ReadOptions, parse_line, try_for_each_line};
use rlvr_output::{AtomicFile, refuse_overwriting_inputs};

use crate::bad_lines::note_bad_line;
use crate::error::ProductsError;
use crate::parquet_rows::{for_each_parquet_row, parquet_files};
use crate::release::{PartsError, ReleaseParts};

/// A line layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineLayout {
    /// KlearReasoner-CodeSub-15K: `reward_model.ground_truth` is a JSON string.
    Upstream,
    /// code-rlvr-15k: parsed tests in `label` and `metadata.ground_truth`.
    Release,
}

/// What a conversion did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ConvertReport {
    /// Rows written.
    pub rows: u64,
    /// Lines that could not be converted (not written).
    pub bad_line_count: u64,
    /// The first of them.
    pub bad_lines: Vec<String>,
}

/// Why one line cannot be converted.
#[derive(Debug, thiserror::Error)]
enum ConvertLineError {
    #[error(transparent)]
    Line(#[from] LineError),
    #[error(transparent)]
    Parts(#[from] PartsError),
}

/// Converts one line (without its newline) from `from` to `to`, appending to `out`.
pub fn convert_line(
    line: &[u8],
    from: LineLayout,
    to: LineLayout,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let parts = parts_of_line(line, from).map_err(|error| error.to_string())?;
    push_line(&parts, to, out);
    Ok(())
}

fn parts_of_line(line: &[u8], from: LineLayout) -> Result<ReleaseParts, ConvertLineError> {
    let value = parse_line(line)?;
    Ok(match from {
        LineLayout::Release => {
            let record = RecordRef::from_value(&value)
                .map_err(|error| LineError::InvalidRecord { error })?;
            ReleaseParts::from_release(&record, line)?
        }
        LineLayout::Upstream => ReleaseParts::from_upstream(&value, line)?,
    })
}

fn push_line(parts: &ReleaseParts, to: LineLayout, out: &mut Vec<u8>) {
    match to {
        LineLayout::Release => parts.push_release_line(out),
        LineLayout::Upstream => parts.push_upstream_line(out),
    }
    out.push(b'\n');
}

/// Converts `input` (JSON Lines, or Parquet when it ends in `.parquet` or is a directory) to
/// `output` (JSON Lines, replaced only once complete).
pub fn convert_file(
    input: &Path,
    output: &Path,
    from: LineLayout,
    to: LineLayout,
    read: &ReadOptions,
) -> Result<ConvertReport, ProductsError> {
    let is_parquet = input.is_dir()
        || input
            .extension()
            .is_some_and(|extension| extension == "parquet");
    let inputs = if is_parquet {
        parquet_files(input)?
    } else {
        vec![input.to_path_buf()]
    };
    let input_paths: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    refuse_overwriting_inputs(&input_paths, &[output])?;
    let mut destination = AtomicFile::create(output)?;
    let mut report = ConvertReport::default();
    if is_parquet {
        let mut line = Vec::new();
        for path in &inputs {
            let mut file_row = 0u64;
            for_each_parquet_row(path, |mut parts| {
                file_row += 1;
                // A line the export kept is the exact source: read the parts from it.
                if to == LineLayout::Upstream
                    && let Some(source) = parts.source_line.take()
                {
                    parts = parts_of_line(&source, LineLayout::Release).map_err(|error| {
                        ProductsError::BadParquetRow {
                            path: path.clone(),
                            row: file_row - 1,
                            reason: error.to_string(),
                        }
                    })?;
                }
                line.clear();
                push_line(&parts, to, &mut line);
                report.rows += 1;
                destination
                    .write_all(&line)
                    .map_err(|source| destination.error(source).into())
            })?;
        }
    } else {
        // A write error (a full disk) stops the read at once.
        let summary = try_for_each_line(
            input,
            read,
            |line| {
                let mut out = Vec::with_capacity(line.bytes.len() + 64);
                parts_of_line(line.bytes, from).map(|parts| {
                    push_line(&parts, to, &mut out);
                    out
                })
            },
            |position, converted| -> Result<(), ProductsError> {
                match converted {
                    Ok(line) => {
                        report.rows += 1;
                        destination
                            .write_all(&line)
                            .map_err(|source| destination.error(source))?;
                    }
                    Err(error) => {
                        let error = match error {
                            ConvertLineError::Line(error) => error,
                            ConvertLineError::Parts(error) => LineError::InvalidRecord {
                                error: rlvr_dataset::RecordError {
                                    field: error.field,
                                    reason: error.reason,
                                },
                            },
                        };
                        note_bad_line(
                            &mut report.bad_line_count,
                            &mut report.bad_lines,
                            input,
                            position,
                            error,
                        );
                    }
                }
                Ok(())
            },
        )?;
        if summary.rows == 0 {
            return Err(ProductsError::NoRecords {
                path: input.to_path_buf(),
            });
        }
    }
    destination.commit()?;
    Ok(report)
}
