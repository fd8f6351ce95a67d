//! Parquet shards written from row groups encoded in parallel.
//!
//! The `parquet` crate's `ArrowWriter` encodes and compresses on the calling thread, which would
//! make zstd the bottleneck. Instead each row group is encoded into finished column chunks by
//! [`RowGroupEncoder::encode_row_group`] on any thread, and [`ShardWriter::append`] (one thread, in row order)
//! only copies the finished bytes into the current file. A shard is closed once it reaches the
//! requested size. Shards are written to temporaries ([`rlvr_output::AtomicFile`]) that get
//! the Hub's names `train-0000i-of-0000N.parquet` once `N` is known; the caller commits them
//! together with the README, so nothing appears until the whole export is done.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::add_encoded_arrow_schema_to_metadata;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use rlvr_output::AtomicFile;

use crate::error::ProductsError;
use crate::layout::Layout;
use crate::source_lines::{self, SOURCE_LINES_KEY};

/// A source line an export keeps: its row's position in the row group, its source row, the
/// line.
pub type KeptLine = (usize, u64, Vec<u8>);

/// How shards are written.
#[derive(Debug, Clone)]
pub struct ShardOptions {
    /// Close a shard once it holds at least this many bytes.
    pub shard_bytes: u64,
    /// zstd level of every column.
    pub zstd_level: i32,
    /// Name of the split in file names (`train` gives `train-00000-of-00001.parquet`).
    pub split: String,
    /// Most bytes of source lines one shard keeps ([`crate::source_lines::SOURCE_LINES_BUDGET`] by default).
    pub source_lines_budget: usize,
}

/// One finished shard.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShardInfo {
    /// Final path.
    pub path: PathBuf,
    /// Rows in the shard.
    pub rows: u64,
    /// Row groups in the shard.
    pub row_groups: u64,
    /// File size in bytes.
    pub bytes: u64,
}

/// The writer properties of a layout: zstd everywhere; no dictionary and no statistics for
/// long text columns; the Arrow schema embedded so readers restore the exact types.
pub fn writer_properties(
    layout: Layout,
    zstd_level: i32,
) -> Result<WriterProperties, ProductsError> {
    let schema = layout.schema();
    let level = ZstdLevel::try_new(zstd_level).map_err(|error| ProductsError::InvalidOption {
        option: "--zstd-level",
        reason: error.to_string(),
    })?;
    let parquet_schema = ArrowSchemaConverter::new()
        .convert(&schema)
        .map_err(|source| ProductsError::parquet("(schema)", source))?;
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(level))
        .set_created_by(format!("rlvr {}", env!("CARGO_PKG_VERSION")))
        .set_write_row_group_number_distinct_values(false);
    for column in parquet_schema.columns() {
        let path = column.path().parts().to_vec();
        if layout.is_long_text(&path) {
            let path = ColumnPath::new(path);
            builder = builder
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_statistics_enabled(path, EnabledStatistics::None);
        }
    }
    let mut properties = builder.build();
    add_encoded_arrow_schema_to_metadata(&schema, &mut properties);
    Ok(properties)
}

/// Builds column writers for row groups; shareable between encoding threads.
pub struct RowGroupEncoder {
    factory: ArrowRowGroupWriterFactory,
    properties: Arc<WriterProperties>,
}

impl std::fmt::Debug for RowGroupEncoder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("RowGroupEncoder")
            .finish_non_exhaustive()
    }
}

impl RowGroupEncoder {
    /// An encoder for `layout` with `properties`.
    pub fn new(layout: Layout, properties: WriterProperties) -> Result<Self, ProductsError> {
        let properties = Arc::new(properties);
        let schema = layout.schema();
        let parquet_schema = ArrowSchemaConverter::new()
            .convert(&schema)
            .map_err(|source| ProductsError::parquet("(schema)", source))?;
        // The factory only reads the schema and properties from a writer; a writer to nowhere
        // serves, so the factory does not depend on which shard a row group ends up in.
        let template = SerializedFileWriter::new(
            std::io::sink(),
            parquet_schema.root_schema_ptr(),
            properties.clone(),
        )
        .map_err(|source| ProductsError::parquet("(schema)", source))?;
        let factory = ArrowRowGroupWriterFactory::new(&template, schema);
        Ok(Self {
            factory,
            properties,
        })
    }

    /// Encodes and compresses one row group, given as consecutive batches, into finished column
    /// chunks.
    pub fn encode_row_group(
        &self,
        batches: impl IntoIterator<Item = Result<RecordBatch, ProductsError>>,
    ) -> Result<Vec<ArrowColumnChunk>, ProductsError> {
        let error = |source| ProductsError::parquet("(row group)", source);
        let mut writers = self.factory.create_column_writers(0).map_err(error)?;
        for batch in batches {
            let batch = batch?;
            let mut next_writer = writers.iter_mut();
            for (array, field) in batch.columns().iter().zip(batch.schema().fields()) {
                for leaf in compute_leaves(field, array).map_err(error)? {
                    let Some(writer) = next_writer.next() else {
                        return Err(ProductsError::InvalidOption {
                            option: "(schema)",
                            reason: "more leaf columns than column writers".to_owned(),
                        });
                    };
                    writer.write(&leaf).map_err(error)?;
                }
            }
        }
        writers
            .into_iter()
            .map(|writer| writer.close().map_err(error))
            .collect()
    }
}

struct OpenShard {
    writer: SerializedFileWriter<AtomicFile>,
    rows: u64,
    row_groups: u64,
    /// Kept source lines by row in the shard, and their bytes.
    kept: Vec<(u64, Vec<u8>)>,
    kept_bytes: usize,
}

/// A closed shard, not yet in place.
struct ClosedShard {
    file: AtomicFile,
    rows: u64,
    row_groups: u64,
}

/// Appends encoded row groups to shards in order and names them at the end.
pub struct ShardWriter {
    directory: PathBuf,
    layout: Layout,
    options: ShardOptions,
    properties: Arc<WriterProperties>,
    current: Option<OpenShard>,
    finished: Vec<ClosedShard>,
    inexact_rows: Vec<u64>,
}

impl std::fmt::Debug for ShardWriter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ShardWriter")
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}

/// Shards written but not yet in place: commit `files` (with anything else that belongs to the
/// export) to make them appear under the names in `shards`.
#[derive(Debug)]
pub struct FinishedShards {
    /// Final names, sizes and row counts.
    pub shards: Vec<ShardInfo>,
    /// The uncommitted files, in shard order.
    pub files: Vec<AtomicFile>,
    /// Source rows that will not come back byte for byte: their line did not fit in its
    /// shard's budget ([`ShardOptions::source_lines_budget`]).
    pub inexact_rows: Vec<u64>,
}

impl ShardWriter {
    /// Writes shards into `directory` (which must exist).
    pub fn new(
        directory: &Path,
        layout: Layout,
        options: ShardOptions,
        encoder: &RowGroupEncoder,
    ) -> Self {
        Self {
            directory: directory.to_path_buf(),
            layout,
            options,
            properties: encoder.properties.clone(),
            current: None,
            finished: Vec::new(),
            inexact_rows: Vec::new(),
        }
    }

    fn open(&self) -> Result<OpenShard, ProductsError> {
        // A provisional name, for messages only: nothing appears under it.
        let path = self.directory.join(format!(
            "{}-{:05}.parquet",
            self.options.split,
            self.finished.len()
        ));
        let file = AtomicFile::create(&path)?;
        let parquet_schema = ArrowSchemaConverter::new()
            .convert(&self.layout.schema())
            .map_err(|source| ProductsError::parquet(&path, source))?;
        let writer = SerializedFileWriter::new(
            file,
            parquet_schema.root_schema_ptr(),
            self.properties.clone(),
        )
        .map_err(|source| ProductsError::parquet(&path, source))?;
        Ok(OpenShard {
            writer,
            rows: 0,
            row_groups: 0,
            kept: Vec::new(),
            kept_bytes: 0,
        })
    }

    /// Appends one encoded row group of `rows` rows, with the source lines its rows keep.
    pub fn append(
        &mut self,
        chunks: Vec<ArrowColumnChunk>,
        rows: u64,
        kept: Vec<KeptLine>,
    ) -> Result<(), ProductsError> {
        let mut shard = match self.current.take() {
            Some(shard) => shard,
            None => self.open()?,
        };
        let path = shard.writer.inner().path().to_path_buf();
        let error = |source| ProductsError::parquet(&path, source);
        let mut row_group = shard.writer.next_row_group().map_err(error)?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut row_group).map_err(error)?;
        }
        row_group.close().map_err(error)?;
        for (index, source_row, line) in kept {
            if shard.kept_bytes + line.len() > self.options.source_lines_budget {
                self.inexact_rows.push(source_row);
                continue;
            }
            shard.kept_bytes += line.len();
            shard.kept.push((shard.rows + index as u64, line));
        }
        shard.rows += rows;
        shard.row_groups += 1;
        if shard.writer.bytes_written() as u64 >= self.options.shard_bytes {
            self.close(shard)?;
        } else {
            self.current = Some(shard);
        }
        Ok(())
    }

    fn close(&mut self, shard: OpenShard) -> Result<(), ProductsError> {
        let OpenShard {
            mut writer,
            rows,
            row_groups,
            kept,
            ..
        } = shard;
        let path = writer.inner().path().to_path_buf();
        if !kept.is_empty() {
            writer.append_key_value_metadata(KeyValue::new(
                SOURCE_LINES_KEY.to_owned(),
                source_lines::encode(&kept),
            ));
        }
        let mut file = writer
            .into_inner()
            .map_err(|source| ProductsError::parquet(&path, source))?;
        std::io::Write::flush(&mut file).map_err(|source| file.error(source))?;
        self.finished.push(ClosedShard {
            file,
            rows,
            row_groups,
        });
        Ok(())
    }

    /// Closes the last shard (writing an empty one if there were no rows at all) and names
    /// every shard `SPLIT-0000i-of-0000N.parquet`; nothing is in place until the caller commits
    /// the returned files.
    pub fn finish(mut self) -> Result<FinishedShards, ProductsError> {
        if let Some(shard) = self.current.take() {
            self.close(shard)?;
        }
        if self.finished.is_empty() {
            let shard = self.open()?;
            self.close(shard)?;
        }
        let count = self.finished.len();
        let mut finished = FinishedShards {
            shards: Vec::with_capacity(count),
            files: Vec::with_capacity(count),
            inexact_rows: std::mem::take(&mut self.inexact_rows),
        };
        for (index, shard) in self.finished.into_iter().enumerate() {
            let ClosedShard {
                mut file,
                rows,
                row_groups,
            } = shard;
            let path = self
                .directory
                .join(shard_name(&self.options.split, index, count));
            file.set_path(&path)?;
            finished.shards.push(ShardInfo {
                path,
                rows,
                row_groups,
                bytes: file.bytes_written(),
            });
            finished.files.push(file);
        }
        Ok(finished)
    }
}

/// `train-00000-of-00003.parquet`, the name `push_to_hub` gives shards.
pub fn shard_name(split: &str, index: usize, count: usize) -> String {
    format!("{split}-{index:05}-of-{count:05}.parquet")
}

/// Whether a file name is a shard of `split` as written by this module (or `push_to_hub`).
pub fn is_shard_name(name: &str, split: &str) -> bool {
    name.strip_prefix(split)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".parquet"))
        .is_some_and(|rest| {
            let bytes = rest.as_bytes();
            bytes.len() == 14
                && &bytes[5..9] == b"-of-"
                && bytes[..5].iter().chain(&bytes[9..]).all(u8::is_ascii_digit)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_follow_the_hub() {
        assert_eq!(shard_name("train", 1, 12), "train-00001-of-00012.parquet");
        assert!(is_shard_name("train-00001-of-00012.parquet", "train"));
        assert!(!is_shard_name("train-1-of-2.parquet", "train"));
        assert!(!is_shard_name("test-00001-of-00012.parquet", "train"));
    }
}
