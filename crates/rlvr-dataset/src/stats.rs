//! The dataset card's summary figures, computed exactly as the card computed them with Python.
//!
//! Per row, [`RowFigures::from_record`] extracts the few numbers and keys the summary needs; a
//! [`StatsAccumulator`] collects them and can be merged with another one in any grouping or
//! order (per-chunk accumulators, parallel folds); [`StatsAccumulator::finish`] sorts and yields
//! [`DatasetStats`].
//!
//! Definitions (from the card and issue 3): the prompt is `prompt[0]["content"]`; lengths are
//! code points (a lone surrogate counts as one); "normalized" is `" ".join(s.split())` with
//! Python's `str.isspace`; the median is `statistics.median` (mean of the two middle values for
//! an even count); P95 is the nearest rank, the ceil(0.95 n)-th smallest value; test counts come
//! from `label`; pairs of an input/output record are `len(list(zip(inputs, outputs)))`.
//!
//! Distinct prompts and hashes are kept as 128-bit SHA-256 prefixes rather than full texts, so
//! memory grows by 16 bytes per distinct prompt; a collision among n prompts has probability
//! about n^2 / 2^129.

use std::collections::HashSet;
use std::fmt::Write;

use sha2::{Digest, Sha256};

use crate::record::{RecordRef, TestsRef};
use rlvr_python_compat::json::ValueRef;
use rlvr_python_compat::text::for_each_normalized_piece;

/// A 128-bit key standing for a string in a distinct-count set.
pub type TextKey = [u8; 16];

fn text_key(feed: impl FnOnce(&mut Sha256)) -> TextKey {
    let mut hasher = Sha256::new();
    feed(&mut hasher);
    let digest = hasher.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// What one row contributes to the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowFigures {
    /// Code points in `prompt[0]["content"]`.
    pub prompt_chars: u64,
    /// Key of the exact prompt text.
    pub prompt_key: TextKey,
    /// Key of the whitespace-normalized prompt text.
    pub normalized_prompt_key: TextKey,
    /// Key of `metadata.hash`.
    pub hash_key: TextKey,
    /// Test counts from `label`.
    pub tests: TestFigures,
    /// `label == metadata.ground_truth`.
    pub label_equals_ground_truth: bool,
    /// The four routing fields hold the documented constants.
    pub routing_constants_match: bool,
}

/// Test counts of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestFigures {
    /// An input/output record.
    InputOutput {
        /// `len(list(zip(inputs, outputs)))`.
        pairs: u64,
        /// List-valued entries among inputs and outputs.
        list_values: u64,
    },
    /// A functional record.
    Functional {
        /// Test strings.
        tests: u64,
    },
}

impl RowFigures {
    /// Extracts the figures of one record.
    pub fn from_record(record: &RecordRef<'_, '_>) -> Self {
        let prompt = record.prompt_content.decode();
        let tests = match record.label {
            TestsRef::InputOutput { inputs, outputs } => TestFigures::InputOutput {
                pairs: inputs.len().min(outputs.len()) as u64,
                list_values: inputs
                    .iter()
                    .chain(outputs)
                    .filter(|value| matches!(value, ValueRef::Array(_)))
                    .count() as u64,
            },
            TestsRef::Functional { tests } => TestFigures::Functional {
                tests: tests.len() as u64,
            },
        };
        Self {
            prompt_chars: rlvr_python_compat::json::code_point_count(&prompt) as u64,
            prompt_key: text_key(|hasher| hasher.update(&prompt)),
            normalized_prompt_key: text_key(|hasher| {
                for_each_normalized_piece(&prompt, |piece| hasher.update(piece))
            }),
            hash_key: text_key(|hasher| hasher.update(record.hash.decode())),
            tests,
            label_equals_ground_truth: record.label_equals_ground_truth(),
            routing_constants_match: record.routing_constants_match(),
        }
    }
}

/// Mergeable collector of [`RowFigures`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsAccumulator {
    examples: u64,
    prompt_keys: HashSet<TextKey>,
    normalized_prompt_keys: HashSet<TextKey>,
    hash_keys: HashSet<TextKey>,
    prompt_chars: Vec<u64>,
    io_pairs: Vec<u64>,
    functional_tests: Vec<u64>,
    mixed_value_rows: Vec<u64>,
    list_values_total: u64,
    label_equals_ground_truth: u64,
    routing_violations: u64,
}

impl StatsAccumulator {
    /// Adds the figures of the row with zero-based index `row`.
    pub fn add(&mut self, row: u64, figures: &RowFigures) {
        self.examples += 1;
        self.prompt_keys.insert(figures.prompt_key);
        self.normalized_prompt_keys
            .insert(figures.normalized_prompt_key);
        self.hash_keys.insert(figures.hash_key);
        self.prompt_chars.push(figures.prompt_chars);
        match figures.tests {
            TestFigures::InputOutput { pairs, list_values } => {
                self.io_pairs.push(pairs);
                if list_values > 0 {
                    self.mixed_value_rows.push(row);
                    self.list_values_total += list_values;
                }
            }
            TestFigures::Functional { tests } => self.functional_tests.push(tests),
        }
        self.label_equals_ground_truth += u64::from(figures.label_equals_ground_truth);
        self.routing_violations += u64::from(!figures.routing_constants_match);
    }

    /// Adds everything `other` collected (rows must not overlap).
    pub fn merge(&mut self, other: Self) {
        self.examples += other.examples;
        self.prompt_keys.extend(other.prompt_keys);
        self.normalized_prompt_keys
            .extend(other.normalized_prompt_keys);
        self.hash_keys.extend(other.hash_keys);
        self.prompt_chars.extend(other.prompt_chars);
        self.io_pairs.extend(other.io_pairs);
        self.functional_tests.extend(other.functional_tests);
        self.mixed_value_rows.extend(other.mixed_value_rows);
        self.list_values_total += other.list_values_total;
        self.label_equals_ground_truth += other.label_equals_ground_truth;
        self.routing_violations += other.routing_violations;
    }

    /// Rows added so far.
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// The summary; `sha256` is the file checksum in hex when it was computed.
    pub fn finish(mut self, file_size_bytes: u64, sha256: Option<String>) -> DatasetStats {
        self.prompt_chars.sort_unstable();
        self.io_pairs.sort_unstable();
        self.functional_tests.sort_unstable();
        self.mixed_value_rows.sort_unstable();
        let unique_prompts_exact = self.prompt_keys.len() as u64;
        DatasetStats {
            examples: self.examples,
            sha256,
            file_size_bytes,
            unique_prompts_exact,
            unique_prompts_normalized: self.normalized_prompt_keys.len() as u64,
            repeated_prompt_rows: self.examples - unique_prompts_exact,
            distinct_hashes: self.hash_keys.len() as u64,
            prompt_chars: SpreadWithP95::of_sorted(&self.prompt_chars),
            io_records: self.io_pairs.len() as u64,
            functional_records: self.functional_tests.len() as u64,
            io_pairs_total: self.io_pairs.iter().sum(),
            functional_tests_total: self.functional_tests.iter().sum(),
            io_pairs_per_record: Spread::of_sorted(&self.io_pairs),
            functional_tests_per_record: Spread::of_sorted(&self.functional_tests),
            mixed_value_rows: self.mixed_value_rows,
            list_values_total: self.list_values_total,
            label_equals_ground_truth: self.label_equals_ground_truth,
            routing_constants_ok: self.routing_violations == 0,
        }
    }
}

/// A median kept exactly: the sum of the two middle values (twice the median).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Median {
    twice: u64,
}

impl Median {
    /// `statistics.median` of sorted values; `None` when empty.
    pub fn of_sorted(values: &[u64]) -> Option<Self> {
        let count = values.len();
        if count == 0 {
            return None;
        }
        let twice = if count % 2 == 1 {
            2 * values[count / 2]
        } else {
            values[count / 2 - 1] + values[count / 2]
        };
        Some(Self { twice })
    }

    /// The value as a float.
    pub fn as_f64(&self) -> f64 {
        self.twice as f64 / 2.0
    }

    /// Thousands-grouped text: `1,747` or `1,747.5`.
    pub fn display(&self) -> String {
        let whole = group_thousands(self.twice / 2);
        if self.twice % 2 == 1 {
            format!("{whole}.5")
        } else {
            whole
        }
    }
}

impl serde::Serialize for Median {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.twice.is_multiple_of(2) {
            serializer.serialize_u64(self.twice / 2)
        } else {
            serializer.serialize_f64(self.as_f64())
        }
    }
}

/// Min, median and max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Spread {
    /// Smallest value.
    pub min: Option<u64>,
    /// `statistics.median`.
    pub median: Option<Median>,
    /// Largest value.
    pub max: Option<u64>,
}

impl Spread {
    fn of_sorted(values: &[u64]) -> Self {
        Self {
            min: values.first().copied(),
            median: Median::of_sorted(values),
            max: values.last().copied(),
        }
    }

    fn display(&self) -> String {
        match (self.min, self.median, self.max) {
            (Some(min), Some(median), Some(max)) => {
                format!(
                    "min {}; median {}; max {}",
                    group_thousands(min),
                    median.display(),
                    group_thousands(max)
                )
            }
            _ => "none".to_owned(),
        }
    }
}

/// Min, median, nearest-rank P95 and max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SpreadWithP95 {
    /// Smallest value.
    pub min: Option<u64>,
    /// `statistics.median`.
    pub median: Option<Median>,
    /// The ceil(0.95 n)-th smallest value.
    pub p95: Option<u64>,
    /// Largest value.
    pub max: Option<u64>,
}

impl SpreadWithP95 {
    fn of_sorted(values: &[u64]) -> Self {
        Self {
            min: values.first().copied(),
            median: Median::of_sorted(values),
            p95: nearest_rank(values, 95),
            max: values.last().copied(),
        }
    }
}

/// The nearest-rank percentile of sorted values: the ceil(p/100 * n)-th smallest, in integers.
pub fn nearest_rank(sorted: &[u64], percent: u64) -> Option<u64> {
    let count = sorted.len() as u64;
    if count == 0 {
        return None;
    }
    let rank = (percent * count).div_ceil(100).max(1);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

/// The card's "Dataset summary" figures for one file. Serialises with exactly the keys of
/// issue 3, in this order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DatasetStats {
    pub examples: u64,
    pub sha256: Option<String>,
    pub file_size_bytes: u64,
    pub unique_prompts_exact: u64,
    pub unique_prompts_normalized: u64,
    pub repeated_prompt_rows: u64,
    pub distinct_hashes: u64,
    pub prompt_chars: SpreadWithP95,
    pub io_records: u64,
    pub functional_records: u64,
    pub io_pairs_total: u64,
    pub functional_tests_total: u64,
    pub io_pairs_per_record: Spread,
    pub functional_tests_per_record: Spread,
    pub mixed_value_rows: Vec<u64>,
    pub list_values_total: u64,
    pub label_equals_ground_truth: u64,
    pub routing_constants_ok: bool,
}

/// `15001` -> `15,001`.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

impl DatasetStats {
    /// The card's "Dataset summary" table for this file, as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut rows: Vec<(&str, String)> = Vec::new();
        rows.push(("Examples", group_thousands(self.examples)));
        rows.push((
            "File size",
            format!(
                "{} bytes (approximately {:.2} GiB)",
                group_thousands(self.file_size_bytes),
                self.file_size_bytes as f64 / f64::from(1u32 << 30)
            ),
        ));
        rows.push((
            "SHA-256",
            self.sha256
                .clone()
                .unwrap_or_else(|| "not computed (--no-hash)".to_owned()),
        ));
        rows.push((
            "Unique prompts, exact text",
            group_thousands(self.unique_prompts_exact),
        ));
        rows.push((
            "Unique prompts, whitespace-normalized",
            group_thousands(self.unique_prompts_normalized),
        ));
        rows.push((
            "Rows repeating an earlier prompt",
            group_thousands(self.repeated_prompt_rows),
        ));
        rows.push((
            "Distinct metadata.hash values",
            group_thousands(self.distinct_hashes),
        ));
        let prompt = &self.prompt_chars;
        let prompt_text = match (prompt.min, prompt.median, prompt.p95, prompt.max) {
            (Some(min), Some(median), Some(p95), Some(max)) => format!(
                "min {}; median {}; P95 {}; max {}",
                group_thousands(min),
                median.display(),
                group_thousands(p95),
                group_thousands(max)
            ),
            _ => "none".to_owned(),
        };
        rows.push(("Prompt length in characters", prompt_text));
        rows.push((
            "Input/output test records",
            group_thousands(self.io_records),
        ));
        rows.push((
            "Functional-test records",
            group_thousands(self.functional_records),
        ));
        rows.push((
            "Input/output test pairs",
            format!(
                "{} across all released records",
                group_thousands(self.io_pairs_total)
            ),
        ));
        rows.push((
            "Functional test strings",
            format!(
                "{} across all released records",
                group_thousands(self.functional_tests_total)
            ),
        ));
        rows.push((
            "Pairs per input/output record",
            self.io_pairs_per_record.display(),
        ));
        rows.push((
            "Tests per functional record",
            self.functional_tests_per_record.display(),
        ));
        let mixed = if self.mixed_value_rows.is_empty() {
            "none".to_owned()
        } else {
            format!(
                "rows {} ({} list values)",
                self.mixed_value_rows
                    .iter()
                    .map(|row| group_thousands(*row))
                    .collect::<Vec<_>>()
                    .join(", "),
                group_thousands(self.list_values_total)
            )
        };
        rows.push(("Mixed string/list test values", mixed));
        rows.push((
            "label == metadata.ground_truth",
            format!(
                "{} of {}",
                group_thousands(self.label_equals_ground_truth),
                group_thousands(self.examples)
            ),
        ));
        rows.push((
            "Routing constants",
            if self.routing_constants_ok {
                "all match"
            } else {
                "MISMATCH"
            }
            .to_owned(),
        ));
        let mut out = String::from("| Property | Value |\n|---|---|\n");
        for (name, value) in rows {
            let _ = writeln!(out, "| {name} | {value} |");
        }
        out
    }
}
