//! What a generation run reports: size and speed, the figures `rlvr stats` must find in the
//! file (known by construction, so tests of the statistics have an oracle), and the injected
//! lines. Figures use the card's definitions: lengths in code points, Python's
//! `statistics.median`, nearest-rank P95.

use serde::Serialize;

use crate::InjectedLine;

/// The result of writing one synthetic file.
#[derive(Debug, Clone, Serialize)]
pub struct SynthSummary {
    /// Generated records, not counting injected lines.
    pub rows: u64,
    /// Lines written, injected lines included.
    pub lines: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Wall-clock seconds spent generating and writing.
    pub seconds: f64,
    /// The card's figures for the generated records (injected lines excluded).
    pub expected: ExpectedFigures,
    /// Injected lines, in file order (empty unless faults were asked for).
    pub injected: Vec<InjectedLine>,
}

impl SynthSummary {
    /// Throughput in megabytes (10^6 bytes) per second.
    pub fn megabytes_per_second(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.seconds.max(1e-9)
    }
}

/// The dataset card's figures for the generated records, named like `rlvr stats --json` keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExpectedFigures {
    /// Generated records.
    pub examples: u64,
    /// Distinct prompt texts.
    pub unique_prompts_exact: u64,
    /// Distinct prompt texts after Python's `" ".join(text.split())`.
    pub unique_prompts_normalized: u64,
    /// `examples - unique_prompts_exact`.
    pub repeated_prompt_rows: u64,
    /// Distinct `metadata.hash` values (one per distinct prompt text).
    pub distinct_hashes: u64,
    /// Prompt lengths in code points.
    pub prompt_chars: ExpectedSpread,
    /// Records with `inputs` and `outputs`.
    pub io_records: u64,
    /// Records with `functional`.
    pub functional_records: u64,
    /// Input/output pairs over all records.
    pub io_pairs_total: u64,
    /// Functional test strings over all records.
    pub functional_tests_total: u64,
    /// Pairs per input/output record.
    pub io_pairs_per_record: ExpectedSpread,
    /// Test strings per functional record.
    pub functional_tests_per_record: ExpectedSpread,
    /// Zero-based row indices (in the written file) of records with list-valued tests.
    pub mixed_value_rows: Vec<u64>,
    /// List-valued entries in the labels' inputs and outputs.
    pub list_values_total: u64,
}

/// Minimum, median, nearest-rank 95th percentile and maximum of a list of counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExpectedSpread {
    pub min: u64,
    /// Python's `statistics.median`: the mean of the two middle values for an even count.
    pub median: f64,
    /// The ceil(0.95 n)-th smallest value.
    pub p95: u64,
    pub max: u64,
}

impl ExpectedSpread {
    /// The spread of `values` (sorted in place); all zero when empty.
    pub(crate) fn of(values: &mut [u64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_unstable();
        let count = values.len();
        let median = if !count.is_multiple_of(2) {
            values[count / 2] as f64
        } else {
            (values[count / 2 - 1] + values[count / 2]) as f64 / 2.0
        };
        let rank = (count * 95).div_ceil(100);
        Self {
            min: values[0],
            median,
            p95: values[rank.max(1) - 1],
            max: values[count - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_follows_python_median_and_nearest_rank() {
        let spread = ExpectedSpread::of(&mut [4, 1, 3, 2]);
        assert_eq!(
            spread,
            ExpectedSpread {
                min: 1,
                median: 2.5,
                p95: 4,
                max: 4
            }
        );
        let mut twenty: Vec<u64> = (1..=20).collect();
        assert_eq!(ExpectedSpread::of(&mut twenty).p95, 19);
        assert_eq!(ExpectedSpread::of(&mut []), ExpectedSpread::default());
    }
}
