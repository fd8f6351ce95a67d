//! Reading Parquet files back into [`ReleaseParts`]: this crate's `hf` and `verl` exports, and
//! upstream-style files (verl columns whose `reward_model.ground_truth` is JSON text, `hash` at
//! the top level or in `extra_info`). The layout is recognised from the column names.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, StructArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rlvr_dataset::record::ROUTING_DATA_TYPE;

use crate::error::ProductsError;
use crate::release::{MessageParts, ReleaseParts, RoutingParts};
use crate::source_lines::{SOURCE_LINES_KEY, decode};

/// Rows per batch read.
const BATCH_ROWS: usize = 64;

/// Which columns a file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetLayout {
    /// This crate's `hf` layout.
    Hf,
    /// verl columns (this crate's `verl` export, or upstream files).
    Verl,
}

struct Columns<'a> {
    path: &'a Path,
    first_row: u64,
}

impl Columns<'_> {
    fn bad(&self, row: usize, reason: impl Into<String>) -> ProductsError {
        ProductsError::BadParquetRow {
            path: self.path.to_path_buf(),
            row: self.first_row + row as u64,
            reason: reason.into(),
        }
    }

    fn layout_error(&self, reason: impl Into<String>) -> ProductsError {
        ProductsError::UnknownLayout {
            path: self.path.to_path_buf(),
            reason: reason.into(),
        }
    }

    fn column<'b>(
        &self,
        batch: &'b RecordBatch,
        name: &str,
    ) -> Result<&'b ArrayRef, ProductsError> {
        batch
            .column_by_name(name)
            .ok_or_else(|| self.layout_error(format!("no column `{name}`")))
    }

    fn child<'b>(
        &self,
        parent: &'b StructArray,
        name: &str,
    ) -> Result<&'b ArrayRef, ProductsError> {
        parent
            .column_by_name(name)
            .ok_or_else(|| self.layout_error(format!("no struct field `{name}`")))
    }

    fn structure<'b>(
        &self,
        array: &'b ArrayRef,
        name: &str,
    ) -> Result<&'b StructArray, ProductsError> {
        array
            .as_struct_opt()
            .ok_or_else(|| self.layout_error(format!("`{name}` is not a struct")))
    }

    fn text(&self, array: &ArrayRef, row: usize, name: &str) -> Result<String, ProductsError> {
        if array.is_null(row) {
            return Err(self.bad(row, format!("`{name}` is null")));
        }
        if let Some(strings) = array.as_string_opt::<i32>() {
            return Ok(strings.value(row).to_owned());
        }
        if let Some(strings) = array.as_string_opt::<i64>() {
            return Ok(strings.value(row).to_owned());
        }
        if let Some(strings) = array.as_string_view_opt() {
            return Ok(strings.value(row).to_owned());
        }
        Err(self.layout_error(format!("`{name}` is not a string column")))
    }

    fn flag(&self, array: Option<&ArrayRef>, row: usize) -> bool {
        array
            .and_then(|array| array.as_boolean_opt())
            .is_some_and(|flags| !flags.is_null(row) && flags.value(row))
    }

    fn prompt(&self, array: &ArrayRef, row: usize) -> Result<Vec<MessageParts>, ProductsError> {
        let messages = if let Some(list) = array.as_list_opt::<i32>() {
            list.value(row)
        } else if let Some(list) = array.as_list_opt::<i64>() {
            list.value(row)
        } else {
            return Err(self.layout_error("`prompt` is not a list"));
        };
        let messages = self.structure(&messages, "prompt")?;
        let (roles, contents) = (
            self.child(messages, "role")?,
            self.child(messages, "content")?,
        );
        (0..messages.len())
            .map(|index| {
                Ok((
                    self.text(roles, index, "prompt.role")?.into_bytes(),
                    self.text(contents, index, "prompt.content")?.into_bytes(),
                ))
            })
            .collect()
    }
}

/// Recognises the layout from the column names.
pub fn detect_layout(
    batch_schema: &arrow_schema::Schema,
    path: &Path,
) -> Result<ParquetLayout, ProductsError> {
    let has = |name: &str| batch_schema.field_with_name(name).is_ok();
    if has("reward_model") && has("prompt") {
        Ok(ParquetLayout::Verl)
    } else if has("ground_truth") && has("prompt") {
        Ok(ParquetLayout::Hf)
    } else {
        Err(ProductsError::UnknownLayout {
            path: path.to_path_buf(),
            reason: "neither the hf columns (prompt, ground_truth) nor the verl ones (prompt, reward_model)".to_owned(),
        })
    }
}

/// Whether the file at `path` ends with `PAR1`, as every Parquet file does (a file that does
/// is Parquet, however damaged: the library's own error then says what is wrong).
fn ends_with_parquet_magic(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut file| {
            file.seek(SeekFrom::End(-4))?;
            file.read_exact(&mut magic)
        })
        .is_ok_and(|()| &magic == b"PAR1")
}

/// Calls `each` with every row of a Parquet file, in order; rows whose source line the export
/// kept carry it in [`ReleaseParts::source_line`].
pub fn for_each_parquet_row(
    path: &Path,
    mut each: impl FnMut(ReleaseParts) -> Result<(), ProductsError>,
) -> Result<(ParquetLayout, u64), ProductsError> {
    let file = fs_err::File::open(path).map_err(|source| ProductsError::io(path, source))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file.into_parts().0).map_err(|source| {
            if ends_with_parquet_magic(path) {
                ProductsError::parquet(path, source)
            } else {
                ProductsError::NotParquet {
                    path: path.to_path_buf(),
                }
            }
        })?;
    let kept_text = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|pairs| pairs.iter().find(|pair| pair.key == SOURCE_LINES_KEY))
        .and_then(|pair| pair.value.as_deref());
    let mut source_lines = match kept_text {
        None => Default::default(),
        Some(text) => decode(text).ok_or_else(|| ProductsError::UnknownLayout {
            path: path.to_path_buf(),
            reason: format!("the `{SOURCE_LINES_KEY}` metadata is not what rlvr writes"),
        })?,
    };
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|source| ProductsError::parquet(path, source))?;
    let layout = detect_layout(&reader.schema(), path)?;
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|source| ProductsError::Arrow {
            column: path.display().to_string(),
            source,
        })?;
        let columns = Columns {
            path,
            first_row: rows,
        };
        for row in 0..batch.num_rows() {
            let mut parts = match layout {
                ParquetLayout::Hf => hf_row(&columns, &batch, row)?,
                ParquetLayout::Verl => verl_row(&columns, &batch, row)?,
            };
            parts.source_line = source_lines.remove(&(rows + row as u64));
            each(parts)?;
        }
        rows += batch.num_rows() as u64;
    }
    Ok((layout, rows))
}

fn hf_row(
    columns: &Columns<'_>,
    batch: &RecordBatch,
    row: usize,
) -> Result<ReleaseParts, ProductsError> {
    let routing = columns.structure(columns.column(batch, "routing")?, "routing")?;
    let routing_text = |name: &str| columns.text(columns.child(routing, name)?, row, name);
    Ok(ReleaseParts {
        prompt: columns.prompt(columns.column(batch, "prompt")?, row)?,
        ground_truth: columns.text(columns.column(batch, "ground_truth")?, row, "ground_truth")?,
        label: None,
        hash: columns
            .text(columns.column(batch, "hash")?, row, "hash")?
            .into_bytes(),
        routing: RoutingParts {
            data_type: routing_text("data_type")?.into_bytes(),
            data_source: routing_text("data_source")?.into_bytes(),
            ability: routing_text("ability")?.into_bytes(),
            style: routing_text("style")?.into_bytes(),
        },
        ensure_ascii: columns.flag(batch.column_by_name("ensure_ascii"), row),
        source_line: None,
    })
}

fn verl_row(
    columns: &Columns<'_>,
    batch: &RecordBatch,
    row: usize,
) -> Result<ReleaseParts, ProductsError> {
    let reward_model = columns.structure(columns.column(batch, "reward_model")?, "reward_model")?;
    let extra_info = match batch.column_by_name("extra_info") {
        Some(array) => Some(columns.structure(array, "extra_info")?),
        None => None,
    };
    let extra = |name: &str| extra_info.and_then(|extra| extra.column_by_name(name));
    let hash = match (batch.column_by_name("hash"), extra("hash")) {
        (Some(array), _) | (None, Some(array)) => columns.text(array, row, "hash")?,
        (None, None) => return Err(columns.layout_error("no `hash` column nor `extra_info.hash`")),
    };
    let data_type = match extra("data_type") {
        Some(array) => columns.text(array, row, "extra_info.data_type")?,
        None => ROUTING_DATA_TYPE.to_owned(),
    };
    Ok(ReleaseParts {
        prompt: columns.prompt(columns.column(batch, "prompt")?, row)?,
        ground_truth: crate::layout::source_ground_truth(
            columns.text(
                columns.child(reward_model, "ground_truth")?,
                row,
                "reward_model.ground_truth",
            )?,
            columns.flag(extra("assert_case"), row),
        ),
        label: None,
        hash: hash.into_bytes(),
        routing: RoutingParts {
            data_type: data_type.into_bytes(),
            // `--data-source` exports keep the record's own value in `extra_info.data_source`.
            data_source: match extra("data_source") {
                Some(array) => columns.text(array, row, "extra_info.data_source")?,
                None => columns.text(columns.column(batch, "data_source")?, row, "data_source")?,
            }
            .into_bytes(),
            ability: columns
                .text(columns.column(batch, "ability")?, row, "ability")?
                .into_bytes(),
            style: columns
                .text(
                    columns.child(reward_model, "style")?,
                    row,
                    "reward_model.style",
                )?
                .into_bytes(),
        },
        ensure_ascii: columns.flag(extra("ensure_ascii"), row),
        source_line: None,
    })
}

/// The Parquet files an import reads: a file itself, or the shards of a directory (its `data/`
/// subdirectory when there is one), sorted by name so shard order is row order.
pub fn parquet_files(input: &Path) -> Result<Vec<std::path::PathBuf>, ProductsError> {
    if !input.is_dir() {
        return Ok(vec![input.to_path_buf()]);
    }
    let directory = if input.join("data").is_dir() {
        input.join("data")
    } else {
        input.to_path_buf()
    };
    let mut files: Vec<_> = fs_err::read_dir(&directory)
        .map_err(|source| ProductsError::io(&directory, source))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "parquet")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ProductsError::UnknownLayout {
            path: directory,
            reason: "holds no .parquet file".to_owned(),
        });
    }
    Ok(files)
}
