//! The two Parquet layouts: `hf` (tests as columns, for browsing and `datasets`) and `verl`
//! (verl's RL data file columns). Both keep `metadata.ground_truth` as the exact JSON text of
//! the source, so either one turns back into the source JSONL (`rlvr import parquet`).
//!
//! hf: `prompt` `list<struct{role, content}>`, `test_kind` ("io"/"functional"), `inputs`,
//! `outputs`, `functional` (`list<string>`; empty when the record has the other kind),
//! `ground_truth` (JSON text), `hash`, `row` (source index), `normalized_values`, `lossy_text`,
//! `ensure_ascii` (flags), `routing` struct{data_type, data_source, ability, style}.
//!
//! verl: `data_source`, `prompt`, `ability`, `reward_model` struct{style, ground_truth (JSON
//! text)}, `extra_info` struct{index, hash, split, data_type, ensure_ascii, normalized_values,
//! lossy_text, data_source, assert_case}.
//!
//! verl routes each row's reward by `data_source`. By default the column keeps the record's
//! `metadata.data_source` (`coder1_longcot`), which only a custom reward such as rlvr's adapter
//! scores: verl's built-in `default_compute_score` raises NotImplementedError on it, so a
//! misconfigured run fails instead of scoring wrongly. `--data-source NAME` writes NAME instead;
//! one of verl's SandboxFusion names ([`SANDBOX_FUSION_DATA_SOURCES`]) makes the stock scorer
//! send the tests to `rlvr serve`'s `/run_code`, and since that scorer knows assert tests only
//! as `assert_case`, a functional row's ground truth is then written `{"assert_case": [...]}`
//! (flag `extra_info.assert_case`). The record's own value stays in `extra_info.data_source`,
//! so `rlvr import parquet` restores the source byte for byte either way.
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

/// The `data_source` values verl's `default_compute_score` sends to SandboxFusion (when
/// `sandbox_fusion.url` is set; to its local `prime_code` otherwise).
pub const SANDBOX_FUSION_DATA_SOURCES: [&str; 4] = ["codecontests", "apps", "codeforces", "taco"];

/// How a functional ground truth starts in the source, and how verl's SandboxFusion scorer
/// wants it to start.
const FUNCTIONAL_PREFIX: &[u8] = b"{\"functional\":";
const ASSERT_CASE_PREFIX: &[u8] = b"{\"assert_case\":";

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

    /// The record batch for `rows`; `split` fills verl's `extra_info.split`, `data_source`
    /// (when given) verl's `data_source` column. The text of a single row is moved into the
    /// batch rather than copied (its text fields are left empty).
    pub fn batch(
        self,
        rows: &mut [ExportRow],
        split: &str,
        data_source: Option<&str>,
    ) -> Result<RecordBatch, ProductsError> {
        let assert_case = if self == Self::Verl {
            rename_functional(rows, data_source)
        } else {
            Vec::new()
        };
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
                    rows.iter()
                        .map(|row| data_source.unwrap_or(row.routing.data_source.as_str())),
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
                        strings(
                            rows.iter().map(|row| row.routing.data_source.as_str()),
                            "extra_info.data_source",
                        )?,
                        booleans(assert_case.iter().copied()),
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

/// With a SandboxFusion data source, functional ground truths become `{"assert_case": ...}`;
/// returns which rows were rewritten.
fn rename_functional(rows: &mut [ExportRow], data_source: Option<&str>) -> Vec<bool> {
    let routed = data_source.is_some_and(|name| SANDBOX_FUSION_DATA_SOURCES.contains(&name));
    rows.iter_mut()
        .map(|row| {
            let rename =
                routed && row.functional && row.ground_truth.starts_with(FUNCTIONAL_PREFIX);
            if rename {
                row.ground_truth.splice(
                    ..FUNCTIONAL_PREFIX.len(),
                    ASSERT_CASE_PREFIX.iter().copied(),
                );
            }
            rename
        })
        .collect()
}

/// The source ground truth of a row written with `extra_info.assert_case` set.
pub fn source_ground_truth(text: String, assert_case: bool) -> String {
    match text.strip_prefix("{\"assert_case\":") {
        Some(rest) if assert_case => format!("{{\"functional\":{rest}"),
        _ => text,
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
        Field::new("data_source", DataType::Utf8, false),
        Field::new("assert_case", DataType::Boolean, false),
    ])
}
