//! `rlvr export parquet`: JSON Lines in, Parquet shards plus a Hub README out.
//!
//! Three stages run at once with bounded queues: the dataset reader parses lines on its worker
//! threads into [`ExportRow`]s; the calling thread cuts them, in order, into row groups (at most
//! `row_group_rows` rows and about `row_group_bytes` of text); encoder threads build each row
//! group's Arrow batch and encode and compress it; one writer thread appends finished row groups
//! to the shards in order. Memory stays at a few row groups whatever the file size.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use parquet::arrow::arrow_writer::ArrowColumnChunk;
use rlvr_dataset::{LineError, ReadError, ReadOptions, try_for_each_line};
use rlvr_output::{
    AtomicFile, CreatedDirectories, commit_all_replacing, refuse_overwriting_inputs,
};

use crate::bad_lines::note_bad_line;
use crate::error::ProductsError;
use crate::hub_readme::hub_readme;
use crate::layout::Layout;
use crate::row::ExportRow;
use crate::shards::{
    KeptLine, RowGroupEncoder, ShardInfo, ShardOptions, ShardWriter, is_shard_name,
    writer_properties,
};

/// What to export and how.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Which columns.
    pub layout: Layout,
    /// Split name in file names, the README and verl's `extra_info.split`.
    pub split: String,
    /// Close a shard once it holds at least this many bytes.
    pub shard_bytes: u64,
    /// At most this many rows per row group.
    pub row_group_rows: usize,
    /// Start a new row group once this much text is buffered.
    pub row_group_bytes: usize,
    /// zstd level.
    pub zstd_level: i32,
    /// Threads encoding row groups.
    pub encoders: usize,
    /// Replace shards left by an earlier export.
    pub overwrite: bool,
    /// Most bytes of source lines a shard keeps for an exact import
    /// ([`crate::source_lines::SOURCE_LINES_BUDGET`]).
    pub source_lines_budget: usize,
    /// How the input is read.
    pub read: ReadOptions,
    /// verl layout: the `data_source` column for every row (None keeps each record's
    /// `metadata.data_source`); see `layout`.
    pub data_source: Option<String>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        let read = ReadOptions::default();
        Self {
            layout: Layout::Hf,
            split: "train".to_owned(),
            shard_bytes: 500_000_000,
            row_group_rows: 100,
            row_group_bytes: 256 << 20,
            zstd_level: 1,
            encoders: read.workers,
            overwrite: false,
            source_lines_budget: crate::source_lines::SOURCE_LINES_BUDGET,
            read,
            data_source: None,
        }
    }
}

/// What an export did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ExportReport {
    /// The layout written.
    pub layout: &'static str,
    /// Rows written.
    pub rows: u64,
    /// Bytes of JSONL read.
    pub input_bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The shards, in order.
    pub shards: Vec<ShardInfo>,
    /// Source rows where a list-valued test value was normalised.
    pub normalized_rows: Vec<u64>,
    /// Source rows where a lone surrogate became U+FFFD in a string column.
    pub lossy_rows: Vec<u64>,
    /// Source rows whose `label` is not equal to `metadata.ground_truth` as Python compares
    /// them (the columns hold the latter; the import restores the label from the kept line).
    pub label_differs_rows: Vec<u64>,
    /// Source lines kept verbatim so that the import gives them back byte for byte.
    pub source_lines_kept: u64,
    /// Source rows that will come back equal record by record but not byte for byte (their
    /// shard's budget for kept lines was spent).
    pub inexact_rows: Vec<u64>,
    /// Lines that are not records (not exported).
    pub bad_line_count: u64,
    /// The first [`crate::bad_lines::MAX_LISTED`] of them, as messages.
    pub bad_lines: Vec<String>,
}

impl ExportReport {
    /// True when some line could not be exported, some label differs from its ground truth,
    /// or some row will not come back byte for byte.
    pub fn has_problems(&self) -> bool {
        self.bad_line_count > 0
            || !self.label_differs_rows.is_empty()
            || !self.inexact_rows.is_empty()
    }

    /// Input gigabytes (10^9 bytes) per second.
    pub fn gigabytes_per_second(&self) -> f64 {
        self.input_bytes as f64 / 1e9 / self.seconds.max(1e-9)
    }
}

/// A row group on its way to an encoder: its sequence number, its rows, the source lines kept.
type RowGroup = (u64, Vec<ExportRow>, Vec<KeptLine>);

type Encoded = (
    u64,
    u64,
    Vec<KeptLine>,
    Result<Vec<ArrowColumnChunk>, ProductsError>,
);

/// Exports `input` into `out_dir` (`README.md` and `data/SPLIT-0000i-of-0000N.parquet`).
///
/// Every option is checked and the outputs are compared with the input before anything is
/// written; the shards and the README appear together only when the export is complete (shards
/// of an earlier export that the new ones do not replace are removed at that moment, with
/// `overwrite`), and directories this call created are removed again if it fails.
pub fn export_parquet(
    input: &Path,
    out_dir: &Path,
    options: &ExportOptions,
) -> Result<ExportReport, ProductsError> {
    check_options(options)?;
    let encoder = RowGroupEncoder::new(
        options.layout,
        writer_properties(options.layout, options.zstd_level)?,
    )?;
    let started = Instant::now();
    let data_dir = out_dir.join("data");
    let readme = out_dir.join("README.md");
    let existing = existing_shards(&data_dir, &options.split)?;
    if !existing.is_empty() && !options.overwrite {
        return Err(ProductsError::OutputExists { path: data_dir });
    }
    let mut outputs: Vec<&Path> = existing.iter().map(PathBuf::as_path).collect();
    outputs.push(&readme);
    refuse_overwriting_inputs(&[input], &outputs)?;
    let directories = CreatedDirectories::create(&data_dir)?;
    let shard_options = ShardOptions {
        shard_bytes: options.shard_bytes,
        zstd_level: options.zstd_level,
        split: options.split.clone(),
        source_lines_budget: options.source_lines_budget,
    };
    let writer = ShardWriter::new(&data_dir, options.layout, shard_options, &encoder);
    let mut report = ExportReport {
        layout: options.layout.name(),
        ..ExportReport::default()
    };
    let encoders = options.encoders.max(1);

    let (group_sender, group_receiver) = mpsc::sync_channel::<RowGroup>(encoders);
    let (chunk_sender, chunk_receiver) = mpsc::sync_channel::<Encoded>(encoders * 2);
    // Owned by the encoders only: once they all stopped (the writer failed), sending a row group
    // fails instead of blocking forever on a full channel nobody reads.
    let group_receiver = Arc::new(Mutex::new(group_receiver));
    let (summary, write_result) = std::thread::scope(|scope| {
        for _ in 0..encoders {
            let (group_receiver, chunk_sender) =
                (Arc::clone(&group_receiver), chunk_sender.clone());
            let (encoder, layout, split) = (&encoder, options.layout, options.split.as_str());
            let data_source = options.data_source.as_deref();
            scope.spawn(move || {
                encode_row_groups(
                    &group_receiver,
                    &chunk_sender,
                    encoder,
                    layout,
                    split,
                    data_source,
                );
            });
        }
        drop((chunk_sender, group_receiver));
        let writer_thread = scope.spawn(move || write_in_order(chunk_receiver, writer));

        let mut group = Vec::new();
        let (mut group_bytes, mut sequence) = (0usize, 0u64);
        // False once the writer stopped on an error (reported below): the read stops too.
        let send = |mut group: Vec<ExportRow>, sequence: &mut u64| -> bool {
            let kept: Vec<KeptLine> = group
                .iter_mut()
                .enumerate()
                .filter_map(|(index, row)| {
                    row.source_line.take().map(|line| (index, row.row, line))
                })
                .collect();
            let sent = group_sender.send((*sequence, group, kept)).is_ok();
            *sequence += 1;
            sent
        };
        let summary = try_for_each_line(
            input,
            &options.read,
            ExportRow::from_line,
            |position, result| {
                match result {
                    Ok(mut row) => {
                        row.row = position.row;
                        note_flags(&mut report, &row);
                        group_bytes += row.text_bytes();
                        group.push(row);
                        if group.len() >= options.row_group_rows
                            || group_bytes >= options.row_group_bytes
                        {
                            group_bytes = 0;
                            if !send(std::mem::take(&mut group), &mut sequence) {
                                return Err(ExportReadStop::WriterStopped);
                            }
                        }
                    }
                    Err(error) => note_export_bad_line(&mut report, input, position, error),
                }
                Ok(())
            },
        );
        if !group.is_empty() && summary.is_ok() {
            send(group, &mut sequence);
        }
        drop(group_sender);
        let write_result = match writer_thread.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (summary, write_result)
    });
    let summary = match summary {
        Ok(summary) => summary,
        Err(ExportReadStop::Read(error)) => return Err(error.into()),
        // The encoders stop taking row groups only when the writer failed (a full disk): its
        // error is the one to report.
        Err(ExportReadStop::WriterStopped) => {
            return Err(match write_result {
                Err(error) => error,
                Ok(_) => ProductsError::Io {
                    path: data_dir,
                    source: std::io::Error::other("the parquet writer stopped without an error"),
                },
            });
        }
    };
    let finished = write_result?.finish()?;
    if summary.rows == 0 {
        return Err(ProductsError::NoRecords {
            path: input.to_path_buf(),
        });
    }
    report.shards = finished.shards;
    report.inexact_rows = finished.inexact_rows;
    report.source_lines_kept -= report.inexact_rows.len() as u64;
    report.rows = report.shards.iter().map(|shard| shard.rows).sum();
    report.input_bytes = summary.bytes;
    let mut files = finished.files;
    let mut readme_file = AtomicFile::create(&readme)?;
    std::io::Write::write_all(
        &mut readme_file,
        hub_readme(options.layout, &options.split, report.rows).as_bytes(),
    )
    .map_err(|source| readme_file.error(source))?;
    files.push(readme_file);
    commit_all_replacing(files, &existing)?;
    directories.keep();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// An encoder thread: encodes the row groups it takes until none is left or the writer
/// stopped taking chunks.
fn encode_row_groups(
    group_receiver: &Mutex<mpsc::Receiver<RowGroup>>,
    chunk_sender: &mpsc::SyncSender<Encoded>,
    encoder: &RowGroupEncoder,
    layout: Layout,
    split: &str,
    data_source: Option<&str>,
) {
    loop {
        let next = match group_receiver.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok((sequence, mut rows, kept)) = next else {
            return;
        };
        let count = rows.len() as u64;
        let encoded = encoder.encode_row_group(
            runs(&mut rows)
                .into_iter()
                .map(|run| layout.batch(run, split, data_source)),
        );
        drop(rows);
        if chunk_sender.send((sequence, count, kept, encoded)).is_err() {
            return;
        }
    }
}

/// The writer thread: appends the encoded row groups to the shards in the order they were
/// read, whatever order the encoders finish them in.
fn write_in_order(
    chunk_receiver: mpsc::Receiver<Encoded>,
    mut writer: ShardWriter,
) -> Result<ShardWriter, ProductsError> {
    type Pending = (
        u64,
        Vec<KeptLine>,
        Result<Vec<ArrowColumnChunk>, ProductsError>,
    );
    let mut pending: BTreeMap<u64, Pending> = BTreeMap::new();
    let mut next = 0;
    for (sequence, rows, kept, encoded) in chunk_receiver {
        pending.insert(sequence, (rows, kept, encoded));
        while let Some((rows, kept, encoded)) = pending.remove(&next) {
            writer.append(encoded?, rows, kept)?;
            next += 1;
        }
    }
    Ok(writer)
}

/// Why the export's read ended before the end of the file.
enum ExportReadStop {
    /// The input could not be read.
    Read(ReadError),
    /// The Parquet writer stopped on an error, so nothing more can be written.
    WriterStopped,
}

impl From<ReadError> for ExportReadStop {
    fn from(error: ReadError) -> Self {
        Self::Read(error)
    }
}

/// A row with at least this much text is encoded on its own, its text moved into Arrow rather
/// than copied; smaller rows are batched (copied) until a batch holds this much.
const RUN_BYTES: usize = 128 << 10;

/// Cuts a row group into the batches it is encoded from (see [`RUN_BYTES`]).
fn runs(mut rows: &mut [ExportRow]) -> Vec<&mut [ExportRow]> {
    let mut runs = Vec::new();
    while !rows.is_empty() {
        let (mut end, mut bytes) = (0, 0);
        while end < rows.len() && bytes < RUN_BYTES {
            let row_bytes = rows[end].text_bytes();
            if end > 0 && row_bytes >= RUN_BYTES {
                break;
            }
            bytes += row_bytes;
            end += 1;
        }
        let (run, rest) = std::mem::take(&mut rows).split_at_mut(end);
        runs.push(run);
        rows = rest;
    }
    runs
}

fn check_options(options: &ExportOptions) -> Result<(), ProductsError> {
    if options.row_group_rows == 0 {
        return Err(ProductsError::InvalidOption {
            option: "--row-group-rows",
            reason: "must be at least 1".into(),
        });
    }
    if options.split.is_empty()
        || !options
            .split
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
    {
        return Err(ProductsError::InvalidOption {
            option: "--split",
            reason: format!(
                "`{}` is not a split name (letters, digits, `_`)",
                options.split
            ),
        });
    }
    if let Some(data_source) = &options.data_source {
        if options.layout != Layout::Verl {
            return Err(ProductsError::InvalidOption {
                option: "--data-source",
                reason: "sets verl's `data_source` column: use it with --layout verl".into(),
            });
        }
        if data_source.is_empty() {
            return Err(ProductsError::InvalidOption {
                option: "--data-source",
                reason: "must not be empty".into(),
            });
        }
    }
    Ok(())
}

fn note_flags(report: &mut ExportReport, row: &ExportRow) {
    report.source_lines_kept += u64::from(row.source_line.is_some());
    if row.normalized_values {
        report.normalized_rows.push(row.row);
    }
    if row.lossy_text {
        report.lossy_rows.push(row.row);
    }
    if row.label_differs {
        report.label_differs_rows.push(row.row);
    }
}

fn note_export_bad_line(
    report: &mut ExportReport,
    input: &Path,
    position: rlvr_dataset::LinePosition,
    error: LineError,
) {
    note_bad_line(
        &mut report.bad_line_count,
        &mut report.bad_lines,
        input,
        position,
        error,
    );
}

/// Shards of `split` an earlier export left in `data_dir` (none when it does not exist).
fn existing_shards(data_dir: &Path, split: &str) -> Result<Vec<PathBuf>, ProductsError> {
    let entries = match fs_err::read_dir(data_dir) {
        Ok(entries) => entries,
        // Not a directory: the output directory is a file, which creating it reports by name.
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Vec::new());
        }
        Err(source) => return Err(ProductsError::io(data_dir, source)),
    };
    let mut shards: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| is_shard_name(name, split))
        })
        .collect();
    shards.sort();
    Ok(shards)
}
