//! The checks of the card's "Data quality and validation" section, row by row, and a collector
//! that counts violations and keeps the first examples of each.
//!
//! Checks are independent: a row that is JSON but lacks `label` fails every check that needs
//! `label`, and nothing stops at the first failure. A line that is not JSON fails only
//! [`Check::ValidJson`]. Rows with list-valued test values are not a failure (the card documents
//! three); they are listed separately.

use std::borrow::Cow;

use crate::reader::{Line, LinePosition, ReadSummary, parse_line};
use crate::record::{
    ROUTING_ABILITY, ROUTING_DATA_SOURCE, ROUTING_DATA_TYPE, ROUTING_STYLE, TestsRef,
};
use rlvr_python_compat::json::ValueRef;

/// One check of the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The line is UTF-8 and parses as JSON.
    ValidJson,
    /// Exactly `prompt`, `label` and `metadata` at the top level.
    TopLevelKeys,
    /// Exactly the six documented metadata fields.
    MetadataKeys,
    /// One user message with non-empty text.
    SingleUserMessage,
    /// `label == metadata.ground_truth`.
    LabelEqualsGroundTruth,
    /// `label` is `{inputs, outputs}` of strings or lists, or `{functional}` of strings.
    TestStructure,
    /// Non-empty, equally long `inputs` and `outputs`.
    InputOutputPaired,
    /// A non-empty `functional` list.
    FunctionalNonEmpty,
    /// The routing and source constants.
    RoutingConstants,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Check; 9] = [
        Check::ValidJson,
        Check::TopLevelKeys,
        Check::MetadataKeys,
        Check::SingleUserMessage,
        Check::LabelEqualsGroundTruth,
        Check::TestStructure,
        Check::InputOutputPaired,
        Check::FunctionalNonEmpty,
        Check::RoutingConstants,
    ];

    /// Stable snake_case name (used in `--json`).
    pub fn name(self) -> &'static str {
        match self {
            Check::ValidJson => "valid_json",
            Check::TopLevelKeys => "top_level_keys",
            Check::MetadataKeys => "metadata_keys",
            Check::SingleUserMessage => "single_user_message",
            Check::LabelEqualsGroundTruth => "label_equals_ground_truth",
            Check::TestStructure => "test_structure",
            Check::InputOutputPaired => "input_output_paired",
            Check::FunctionalNonEmpty => "functional_non_empty",
            Check::RoutingConstants => "routing_constants",
        }
    }

    /// The card's wording of the property.
    pub fn description(self) -> &'static str {
        match self {
            Check::ValidJson => "every line is valid JSON (UTF-8, as Python's json.loads reads it)",
            Check::TopLevelKeys => {
                "every record contains exactly prompt, label, and metadata at the top level"
            }
            Check::MetadataKeys => {
                "every metadata has exactly data_type, data_source, ability, style, hash, ground_truth"
            }
            Check::SingleUserMessage => {
                "every prompt contains exactly one user message with non-empty text"
            }
            Check::LabelEqualsGroundTruth => "label == metadata.ground_truth for every record",
            Check::TestStructure => {
                "every label holds inputs/outputs (str or list values) or functional (str values)"
            }
            Check::InputOutputPaired => {
                "every input/output record has non-empty, equally sized inputs and outputs"
            }
            Check::FunctionalNonEmpty => {
                "every functional record has a non-empty list of test strings"
            }
            Check::RoutingConstants => {
                "data_type \"code\", data_source \"coder1_longcot\", ability \"code\", style \"rule\""
            }
        }
    }

    fn slot(self) -> usize {
        Check::ALL
            .iter()
            .position(|check| *check == self)
            .unwrap_or(0)
    }
}

/// The outcome of checking one row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowCheck {
    /// Each failed check with the reason.
    pub failures: Vec<(Check, String)>,
    /// List-valued entries among `label.inputs` and `label.outputs`.
    pub list_values: u64,
}

/// Checks one line delivered by [`crate::for_each_line`].
pub fn check_line(line: Line<'_>) -> RowCheck {
    check_parsed(line.parse())
}

/// Checks one line (without its line end) given as bytes.
pub fn check_bytes(line: &[u8]) -> RowCheck {
    check_parsed(parse_line(line))
}

fn check_parsed(parsed: Result<ValueRef<'_>, crate::LineError>) -> RowCheck {
    match parsed {
        Ok(value) => check_value(&value),
        Err(error) => RowCheck {
            failures: vec![(Check::ValidJson, error.to_string())],
            list_values: 0,
        },
    }
}

fn keys_text(keys: &[Cow<'_, [u8]>]) -> String {
    let names: Vec<String> = keys
        .iter()
        .map(|key| format!("{:?}", String::from_utf8_lossy(key)))
        .collect();
    format!("[{}]", names.join(", "))
}

fn exact_keys(value: Option<&ValueRef<'_>>, expected: &[&str]) -> Result<(), String> {
    let Some(value) = value else {
        return Err("missing".to_owned());
    };
    let Some(object) = value.as_object() else {
        return Err(format!("not a dict but a {}", value.type_name()));
    };
    let keys = object.distinct_keys();
    let matches = keys.len() == expected.len()
        && expected
            .iter()
            .all(|name| keys.iter().any(|key| key.as_ref() == name.as_bytes()));
    if matches {
        Ok(())
    } else {
        Err(format!("keys are {}", keys_text(&keys)))
    }
}

fn check_prompt(prompt: Option<&ValueRef<'_>>) -> Result<(), String> {
    let Some(prompt) = prompt else {
        return Err("prompt is missing".to_owned());
    };
    let Some(messages) = prompt.as_array() else {
        return Err(format!("prompt is a {}, not a list", prompt.type_name()));
    };
    let [message] = messages else {
        return Err(format!("prompt has {} messages", messages.len()));
    };
    if !message.get("role").is_some_and(|role| role.is_str("user")) {
        return Err("prompt[0].role is not \"user\"".to_owned());
    }
    match message.get("content").and_then(ValueRef::as_json_str) {
        Some(content) if !content.is_empty() => Ok(()),
        Some(_) => Err("prompt[0].content is empty".to_owned()),
        None => Err("prompt[0].content is missing or not a str".to_owned()),
    }
}

fn check_routing(metadata: Option<&ValueRef<'_>>) -> Result<(), String> {
    let Some(metadata) = metadata else {
        return Err("metadata is missing".to_owned());
    };
    let wrong: Vec<String> = [
        ("data_type", ROUTING_DATA_TYPE),
        ("data_source", ROUTING_DATA_SOURCE),
        ("ability", ROUTING_ABILITY),
        ("style", ROUTING_STYLE),
    ]
    .iter()
    .filter(|(field, constant)| {
        !metadata
            .get(field)
            .is_some_and(|value| value.is_str(constant))
    })
    .map(|(field, constant)| format!("metadata.{field} is not {constant:?}"))
    .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

/// Checks one parsed line.
pub fn check_value(value: &ValueRef<'_>) -> RowCheck {
    let mut row = RowCheck::default();
    let mut fail = |check: Check, reason: String| row.failures.push((check, reason));
    if let Err(reason) = exact_keys(Some(value), &["prompt", "label", "metadata"]) {
        fail(Check::TopLevelKeys, reason);
    }
    let metadata = value.get("metadata");
    if let Err(reason) = exact_keys(
        metadata,
        &[
            "data_type",
            "data_source",
            "ability",
            "style",
            "hash",
            "ground_truth",
        ],
    ) {
        fail(Check::MetadataKeys, format!("metadata: {reason}"));
    }
    if let Err(reason) = check_prompt(value.get("prompt")) {
        fail(Check::SingleUserMessage, reason);
    }
    let label = value.get("label");
    let ground_truth = metadata.and_then(|metadata| metadata.get("ground_truth"));
    match (label, ground_truth) {
        (Some(label), Some(ground_truth))
            if crate::label_equals_ground_truth(label, ground_truth) => {}
        (Some(_), Some(_)) => fail(
            Check::LabelEqualsGroundTruth,
            "label differs from metadata.ground_truth".to_owned(),
        ),
        (None, _) => fail(Check::LabelEqualsGroundTruth, "label is missing".to_owned()),
        (_, None) => fail(
            Check::LabelEqualsGroundTruth,
            "metadata.ground_truth is missing".to_owned(),
        ),
    }
    let mut list_values = 0;
    match label.map(|label| (label, TestsRef::from_value(label, "label"))) {
        None => fail(Check::TestStructure, "label is missing".to_owned()),
        Some((_, Err(error))) => fail(Check::TestStructure, error.to_string()),
        Some((label, Ok(tests))) => {
            let expected: &[&str] = match tests {
                TestsRef::InputOutput { .. } => &["inputs", "outputs"],
                TestsRef::Functional { .. } => &["functional"],
            };
            if let Err(reason) = exact_keys(Some(label), expected) {
                fail(Check::TestStructure, format!("label: {reason}"));
            }
            match tests {
                TestsRef::InputOutput { inputs, outputs } => {
                    if inputs.is_empty() || inputs.len() != outputs.len() {
                        fail(
                            Check::InputOutputPaired,
                            format!("{} inputs and {} outputs", inputs.len(), outputs.len()),
                        );
                    }
                    list_values = inputs
                        .iter()
                        .chain(outputs)
                        .filter(|item| matches!(item, ValueRef::Array(_)))
                        .count() as u64;
                }
                TestsRef::Functional { tests: [] } => {
                    fail(Check::FunctionalNonEmpty, "functional is empty".to_owned());
                }
                TestsRef::Functional { .. } => {}
            }
        }
    }
    if let Err(reason) = check_routing(metadata) {
        fail(Check::RoutingConstants, reason);
    }
    row.list_values = list_values;
    row
}

/// A violating (or listed) row with where it is and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Example {
    /// Zero-based row index.
    pub row: u64,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line start.
    pub byte_offset: u64,
    /// Why the row is listed.
    pub reason: String,
}

/// The result of one check over the file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckReport {
    /// Stable name.
    pub name: &'static str,
    /// The card's wording.
    pub description: &'static str,
    /// No row violates it.
    pub passed: bool,
    /// How many rows violate it.
    pub violations: u64,
    /// The first violating rows, up to the requested number.
    pub examples: Vec<Example>,
}

/// The result of validating a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ValidationReport {
    /// The file.
    pub file: String,
    /// Non-blank lines.
    pub rows: u64,
    /// Lines holding only whitespace (not rows, not a failure).
    pub blank_lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Every check passed.
    pub passed: bool,
    /// One entry per check, in [`Check::ALL`] order.
    pub checks: Vec<CheckReport>,
    /// Every row with list-valued test values (all of them, not only the first examples).
    pub mixed_value_rows: Vec<Example>,
}

/// Collects [`RowCheck`]s in row order.
#[derive(Debug, Clone)]
pub struct ValidationAccumulator {
    max_examples: usize,
    violations: [u64; Check::ALL.len()],
    examples: [Vec<Example>; Check::ALL.len()],
    mixed_value_rows: Vec<Example>,
}

impl ValidationAccumulator {
    /// Keeps up to `max_examples` examples per check.
    pub fn new(max_examples: usize) -> Self {
        Self {
            max_examples,
            violations: [0; Check::ALL.len()],
            examples: Default::default(),
            mixed_value_rows: Vec::new(),
        }
    }

    /// Adds the result for the row at `position`.
    pub fn add(&mut self, position: LinePosition, row: RowCheck) {
        let example = |reason: String| Example {
            row: position.row,
            line: position.line,
            byte_offset: position.byte_offset,
            reason,
        };
        for (check, reason) in row.failures {
            let slot = check.slot();
            self.violations[slot] += 1;
            if self.examples[slot].len() < self.max_examples {
                self.examples[slot].push(example(reason));
            }
        }
        if row.list_values > 0 {
            self.mixed_value_rows.push(example(format!(
                "{} list-valued test values",
                row.list_values
            )));
        }
    }

    /// The report for `file`.
    pub fn finish(self, file: String, summary: &ReadSummary) -> ValidationReport {
        let checks: Vec<CheckReport> = Check::ALL
            .iter()
            .zip(self.violations)
            .zip(self.examples)
            .map(|((check, violations), examples)| CheckReport {
                name: check.name(),
                description: check.description(),
                passed: violations == 0,
                violations,
                examples,
            })
            .collect();
        ValidationReport {
            file,
            rows: summary.rows,
            blank_lines: summary.blank_lines,
            bytes: summary.bytes,
            passed: checks.iter().all(|check| check.passed),
            checks,
            mixed_value_rows: self.mixed_value_rows,
        }
    }
}
