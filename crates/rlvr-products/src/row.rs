//! One record in the form both Parquet layouts are built from: decoded UTF-8 columns plus the
//! exact JSON text of the tests, extracted from a parsed line on a reader thread.

use rlvr_dataset::record::{RecordError, RecordRef, TestKind, TestsRef};
use rlvr_dataset::{Line, LineError};
use rlvr_python_compat::json::ValueRef;

use crate::normalize::{decode_lossy, test_value_text};
use crate::release_line::ReleaseLine;
use crate::string_list::StringList;
use rlvr_python_compat::dumps::looks_ascii_escaped;

/// The routing fields of `metadata`, kept so an export loses nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routing {
    /// `metadata.data_type`.
    pub data_type: String,
    /// `metadata.data_source`.
    pub data_source: String,
    /// `metadata.ability`.
    pub ability: String,
    /// `metadata.style`.
    pub style: String,
}

/// One record ready for Arrow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportRow {
    /// Zero-based row index in the source file.
    pub row: u64,
    /// `prompt[i]["role"]`.
    pub prompt_roles: StringList,
    /// `prompt[i]["content"]`.
    pub prompt_contents: StringList,
    /// Which test structure `metadata.ground_truth` uses.
    pub functional: bool,
    /// `inputs`, list values normalised (empty for functional records).
    pub inputs: StringList,
    /// `outputs`, list values normalised (empty for functional records).
    pub outputs: StringList,
    /// `functional` test strings (empty for input/output records).
    pub functional_tests: StringList,
    /// `metadata.ground_truth` exactly as written in the source line (UTF-8 JSON text).
    pub ground_truth: Vec<u8>,
    /// `metadata.hash`.
    pub hash: String,
    /// The other `metadata` fields.
    pub routing: Routing,
    /// Some list-valued test value was joined into a string.
    pub normalized_values: bool,
    /// Some string column got U+FFFD for a lone surrogate.
    pub lossy_text: bool,
    /// The source line escaped every non-ASCII character (`ensure_ascii=True`).
    pub ensure_ascii: bool,
    /// `label` is not equal to `metadata.ground_truth` as Python compares them
    /// ([`rlvr_dataset::label_equals_ground_truth`]); the columns hold the latter.
    pub label_differs: bool,
    /// The source line, kept when importing the columns would not give it back byte for byte
    /// (see [`crate::source_lines`]).
    pub source_line: Option<Vec<u8>>,
}

impl ExportRow {
    /// Parses and extracts one line.
    pub fn from_line(line: Line<'_>) -> Result<Self, LineError> {
        let value = line.parse()?;
        let record =
            RecordRef::from_value(&value).map_err(|error| LineError::InvalidRecord { error })?;
        let mut row =
            Self::from_record(&record).map_err(|error| LineError::InvalidRecord { error })?;
        row.ensure_ascii = looks_ascii_escaped(line.bytes);
        if !row.reimports_exactly(line.bytes, &record) {
            row.source_line = Some(line.bytes.to_vec());
        }
        Ok(row)
    }

    /// Whether `rlvr import parquet` writes exactly `line` back from this row's columns: the
    /// line is compared piece by piece with what the import would write, without building it
    /// (the tests, most of the bytes, are matched by where they sit in the line).
    fn reimports_exactly(&self, line: &[u8], record: &RecordRef<'_, '_>) -> bool {
        let prompt: Vec<(&[u8], &[u8])> = self
            .prompt_roles
            .iter()
            .zip(self.prompt_contents.iter())
            .map(|(role, content)| (role.as_bytes(), content.as_bytes()))
            .collect();
        if prompt.len() != self.prompt_roles.len() {
            return false;
        }
        let ground_truth = record.ground_truth_value.raw();
        ReleaseLine {
            prompt: &prompt,
            // The import writes the ground truth's text as the label.
            label: ground_truth,
            ground_truth,
            metadata: [
                self.routing.data_type.as_bytes(),
                self.routing.data_source.as_bytes(),
                self.routing.ability.as_bytes(),
                self.routing.style.as_bytes(),
                self.hash.as_bytes(),
            ],
            ensure_ascii: self.ensure_ascii,
        }
        .is_exactly(line)
    }

    /// Extracts from a borrowed record.
    pub fn from_record(record: &RecordRef<'_, '_>) -> Result<Self, RecordError> {
        let mut row = Self::default();
        let mut lossy = false;
        for (position, message) in record.prompt.iter().enumerate() {
            for (key, column) in [
                ("role", &mut row.prompt_roles),
                ("content", &mut row.prompt_contents),
            ] {
                let text = message
                    .get(key)
                    .and_then(ValueRef::as_json_str)
                    .ok_or_else(|| RecordError {
                        field: format!("prompt[{position}].{key}"),
                        reason: "expected a str".to_owned(),
                    })?;
                let (text, replaced) = decode_lossy(text);
                lossy |= replaced;
                column.push(&text);
            }
        }
        match record.ground_truth {
            TestsRef::InputOutput { inputs, outputs } => {
                for (values, column) in [(inputs, &mut row.inputs), (outputs, &mut row.outputs)] {
                    // Decoded text is never longer than its JSON literal.
                    let raw: usize = values.iter().map(raw_len).sum();
                    column.reserve(raw, values.len());
                    for value in values {
                        if let ValueRef::String(string) = value {
                            // The common case, pushed without an intermediate `String`.
                            let (text, replaced) = decode_lossy(string);
                            lossy |= replaced;
                            column.push(&text);
                            continue;
                        }
                        let (text, was_list, replaced) = test_value_text(value);
                        row.normalized_values |= was_list;
                        lossy |= replaced;
                        column.push(&text);
                    }
                }
            }
            TestsRef::Functional { tests } => {
                row.functional = true;
                for test in tests {
                    let (text, replaced) = test.as_json_str().map(decode_lossy).unwrap_or_default();
                    lossy |= replaced;
                    row.functional_tests.push(&text);
                }
            }
        }
        debug_assert_eq!(
            row.functional,
            record.ground_truth.kind() == TestKind::Functional
        );
        // The line was validated as UTF-8 on reading and the slice is a whole JSON value, so
        // it is copied as is; Arrow checks it once more when the column is built.
        row.ground_truth = record.ground_truth_value.raw().to_vec();
        row.label_differs = !record.label_equals_ground_truth();
        let mut text = |string: &rlvr_python_compat::json::JsonStr<'_>| {
            let (text, replaced) = decode_lossy(string);
            lossy |= replaced;
            text.into_owned()
        };
        row.hash = text(record.hash);
        row.routing = Routing {
            data_type: text(record.data_type),
            data_source: text(record.data_source),
            ability: text(record.ability),
            style: text(record.style),
        };
        row.lossy_text = lossy;
        Ok(row)
    }

    /// Bytes of text this row adds to a row group (for sizing row groups).
    pub fn text_bytes(&self) -> usize {
        self.prompt_contents.byte_len()
            + self.inputs.byte_len()
            + self.outputs.byte_len()
            + self.functional_tests.byte_len()
            + self.ground_truth.len()
    }

    /// `"io"` or `"functional"`.
    pub fn test_kind(&self) -> &'static str {
        if self.functional { "functional" } else { "io" }
    }
}

/// Length of a value's JSON text when it is a string (an upper bound on its decoded length).
fn raw_len(value: &ValueRef<'_>) -> usize {
    match value {
        ValueRef::String(string) => string.raw().len(),
        _ => 0,
    }
}
