//! `rlvr import parquet`: an export (or upstream-style Parquet) back into released JSON Lines.
//!
//! Each row is written as the release writes it ([`crate::release::ReleaseParts::push_release_line`]): the
//! card's key order, `json.dumps` separators, escaping chosen per row by the `ensure_ascii`
//! flag, and `ground_truth` (also written as `label`) copied as the exact source text. That is
//! byte-identical for a source written that way (the release, `rlvr synth`); the lines it would
//! not reproduce were kept by the export ([`crate::source_lines`]) and are written as they are,
//! so every exported line comes back byte for byte (rows past a shard's kept-line budget, which
//! the export reported, come back equal record by record).

use std::io::Write;
use std::path::{Path, PathBuf};

use rlvr_output::{AtomicFile, refuse_overwriting_inputs};

use crate::error::ProductsError;
use crate::parquet_rows::{ParquetLayout, for_each_parquet_row, parquet_files};

/// What an import did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ImportReport {
    /// Files read, in order.
    pub files: Vec<PathBuf>,
    /// Layout of each file (`hf` or `verl`).
    pub layouts: Vec<&'static str>,
    /// Rows written.
    pub rows: u64,
}

/// Writes every row of `input` (a file or an export directory) to `output` as JSON Lines
/// (replaced only once complete).
pub fn import_parquet(input: &Path, output: &Path) -> Result<ImportReport, ProductsError> {
    let files = parquet_files(input)?;
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    refuse_overwriting_inputs(&inputs, &[output])?;
    let mut destination = AtomicFile::create(output)?;
    let mut report = ImportReport::default();
    let mut line = Vec::new();
    for path in &files {
        let (layout, rows) = for_each_parquet_row(path, |parts| {
            line.clear();
            parts.push_release_line(&mut line);
            line.push(b'\n');
            destination
                .write_all(&line)
                .map_err(|source| destination.error(source).into())
        })?;
        report.layouts.push(match layout {
            ParquetLayout::Hf => "hf",
            ParquetLayout::Verl => "verl",
        });
        report.rows += rows;
    }
    destination.commit()?;
    report.files = files;
    Ok(report)
}
