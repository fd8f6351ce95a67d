//! The two Parquet layouts: `hf` (tests as columns, for browsing and `datasets`) and `verl`
//! (verl's RL data file columns). Both keep `metadata.ground_truth` as the exact JSON text of
//! the source, so either one turns back into the source JSONL (`rlvr import parquet`).
//!
//! hf: `prompt` list<struct{role, content}>, `test_kind` ("io"/"functional"), `inputs`,
//! `outputs`, `functional` (list<string>; empty when the record has the other kind),
//! `ground_truth` (JSON text), `hash`, `row` (source index), `normalized_values`, `lossy_text`,
//! `ensure_ascii` (flags), `routing` struct{data_type, data_source, ability, style}.
//!
//! verl: `data_source`, `prompt`, `ability`, `reward_model` struct{style, ground_truth (JSON
//! text)}, `extra_info` struct{index, hash, split, data_type, ensure_ascii, normalized_values,
//! lossy_text}.
//!
//! No `huggingface` schema metadata is written: `datasets` 4 spells list features `List` and 3.x
//! `Sequence`, and each fails on the other's spelling, while both infer these Arrow types
//! identically when the metadata is absent.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

use crate::arrow_build::{
    booleans, integers, prompt_type, prompts, string_item, string_lists_taking, strings,
    strings_taking, structure,
};
use crate::error::ProductsError;
use crate::row::ExportRow;

/// Which columns to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Tests as columns; for the Hub viewer and `datasets`.
    #[default]
    Hf,
    /// verl's data file: `data_source`, `prompt`, `ability`, `reward_model`, `extra_info`.
    Verl,
}

impl Layout {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Hf => "hf",
            Self::Verl => "verl",
        }
    }

    /// The Arrow schema.
    pub fn schema(self) -> SchemaRef {
        let text = |name: &str| Field::new(name, DataType::Utf8, false);
        let list = |name: &str| Field::new(name, DataType::List(string_item()), false);
        let flag = |name: &str| Field::new(name, DataType::Boolean, false);
        let fields = match self {
            Self::Hf => vec![
                Field::new("prompt", prompt_type(), false),
                text("test_kind"),
                list("inputs"),
                list("outputs"),
                list("functional"),
                text("ground_truth"),
                text("hash"),
                Field::new("row", DataType::Int64, false),
                flag("normalized_values"),
                flag("lossy_text"),
                flag("ensure_ascii"),
                Field::new("routing", DataType::Struct(routing_fields()), false),
            ],
            Self::Verl => vec![
                text("data_source"),
                Field::new("prompt", prompt_type(), false),
                text("ability"),
                Field::new(
                    "reward_model",
                    DataType::Struct(reward_model_fields()),
                    false,
                ),
                Field::new("extra_info", DataType::Struct(extra_info_fields()), false),
            ],
        };
        Arc::new(Schema::new(fields))
    }

    /// The record batch for `rows`; `split` fills verl's `extra_info.split`. The text of a single
    /// row is moved into the batch rather than copied (its text fields are left empty).
    pub fn batch(self, rows: &mut [ExportRow], split: &str) -> Result<RecordBatch, ProductsError> {
        let prompt = prompts(
            rows,
            |row| &mut row.prompt_roles,
            |row| &mut row.prompt_contents,
        )?;
        let ground_truth = strings_taking(rows, |row| &mut row.ground_truth, "ground_truth")?;
        let hash = strings(rows.iter().map(|row| row.hash.as_str()), "hash")?;
        let columns = match self {
            Self::Hf => vec![
                prompt,
                strings(rows.iter().map(ExportRow::test_kind), "test_kind")?,
                string_lists_taking(rows, |row| &mut row.inputs, "inputs")?,
                string_lists_taking(rows, |row| &mut row.outputs, "outputs")?,
                string_lists_taking(rows, |row| &mut row.functional_tests, "functional")?,
                ground_truth,
                hash,
                integers(rows.iter().map(|row| row.row as i64)),
                booleans(rows.iter().map(|row| row.normalized_values)),
                booleans(rows.iter().map(|row| row.lossy_text)),
                booleans(rows.iter().map(|row| row.ensure_ascii)),
                structure(
                    routing_fields(),
                    vec![
                        strings(
                            rows.iter().map(|row| row.routing.data_type.as_str()),
                            "routing.data_type",
                        )?,
                        strings(
                            rows.iter().map(|row| row.routing.data_source.as_str()),
                            "routing.data_source",
                        )?,
                        strings(
                            rows.iter().map(|row| row.routing.ability.as_str()),
                            "routing.ability",
                        )?,
                        strings(
                            rows.iter().map(|row| row.routing.style.as_str()),
                            "routing.style",
                        )?,
                    ],
                    "routing",
                )?,
            ],
            Self::Verl => vec![
                strings(
                    rows.iter().map(|row| row.routing.data_source.as_str()),
                    "data_source",
                )?,
                prompt,
                strings(
                    rows.iter().map(|row| row.routing.ability.as_str()),
                    "ability",
                )?,
                structure(
                    reward_model_fields(),
                    vec![
                        strings(
                            rows.iter().map(|row| row.routing.style.as_str()),
                            "reward_model.style",
                        )?,
                        ground_truth,
                    ],
                    "reward_model",
                )?,
                structure(
                    extra_info_fields(),
                    vec![
                        integers(rows.iter().map(|row| row.row as i64)),
                        hash,
                        strings(rows.iter().map(|_| split), "extra_info.split")?,
                        strings(
                            rows.iter().map(|row| row.routing.data_type.as_str()),
                            "extra_info.data_type",
                        )?,
                        booleans(rows.iter().map(|row| row.ensure_ascii)),
                        booleans(rows.iter().map(|row| row.normalized_values)),
                        booleans(rows.iter().map(|row| row.lossy_text)),
                    ],
                    "extra_info",
                )?,
            ],
        };
        RecordBatch::try_new(self.schema(), columns).map_err(|source| ProductsError::Arrow {
            column: "(record batch)".to_owned(),
            source,
        })
    }

    /// Whether a Parquet leaf column (by path) holds long text: no dictionary and no statistics
    /// for those (they only cost time there).
    pub fn is_long_text(self, path: &[String]) -> bool {
        let (Some(first), Some(last)) = (path.first(), path.last()) else {
            return false;
        };
        match (first.as_str(), last.as_str()) {
            ("prompt", "content") | ("ground_truth", _) | ("reward_model", "ground_truth") => true,
            ("inputs" | "outputs" | "functional", _) => self == Self::Hf,
            _ => false,
        }
    }
}

fn routing_fields() -> Fields {
    Fields::from(
        ["data_type", "data_source", "ability", "style"]
            .map(|name| Field::new(name, DataType::Utf8, false))
            .to_vec(),
    )
}

fn reward_model_fields() -> Fields {
    Fields::from(vec![
        Field::new("style", DataType::Utf8, false),
        Field::new("ground_truth", DataType::Utf8, false),
    ])
}

fn extra_info_fields() -> Fields {
    Fields::from(vec![
        Field::new("index", DataType::Int64, false),
        Field::new("hash", DataType::Utf8, false),
        Field::new("split", DataType::Utf8, false),
        Field::new("data_type", DataType::Utf8, false),
        Field::new("ensure_ascii", DataType::Boolean, false),
        Field::new("normalized_values", DataType::Boolean, false),
        Field::new("lossy_text", DataType::Boolean, false),
    ])
}
