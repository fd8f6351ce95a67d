//! Leak-free train/validation/test splits.
//!
//! Every record gets a group key ([`GroupBy`]); whole groups are assigned, so no group is in two
//! splits. Groups are visited in a seeded pseudo-random order (SHA-256 of seed and key, so the
//! order depends on nothing but the seed and the prompts) and each one goes to `test` if adding
//! it brings `test` closer to its target row count, else to `validation` on the same rule, else
//! to `train`. With many small groups this hits the targets exactly; large groups can only be
//! placed whole, so sizes are as close as the groups allow. Lines are copied byte for byte, in
//! source order, into `train.jsonl`, `validation.jsonl` and `test.jsonl`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rlvr_dataset::{ReadOptions, for_each_line, try_for_each_line};
use rlvr_output::{AtomicFile, CreatedDirectories, commit_all, refuse_overwriting_inputs};
use sha2::{Digest, Sha256};

use crate::bad_lines::note_bad_line;
use crate::error::ProductsError;
use crate::group_key::{GroupBy, GroupKey, line_key};

/// The three splits, in file-name order.
pub const SPLIT_NAMES: [&str; 3] = ["train", "validation", "test"];

/// How to split.
#[derive(Debug, Clone)]
pub struct SplitOptions {
    /// Share of rows for `validation`.
    pub validation_fraction: f64,
    /// Share of rows for `test`.
    pub test_fraction: f64,
    /// Seed of the group order.
    pub seed: u64,
    /// What a group is.
    pub group_by: GroupBy,
    /// How the input is read.
    pub read: ReadOptions,
}

/// Counts of one split.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SplitCounts {
    /// `train`, `validation` or `test`.
    pub name: &'static str,
    /// The file written.
    pub path: PathBuf,
    /// Rows in it.
    pub rows: u64,
    /// Groups in it.
    pub groups: u64,
    /// Rows asked for (fraction times all rows, rounded).
    pub target_rows: u64,
}

/// What a split did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SplitReport {
    /// The grouping used.
    pub group_by: GroupBy,
    /// The seed used.
    pub seed: u64,
    /// All rows.
    pub rows: u64,
    /// All groups.
    pub groups: u64,
    /// Lines that are not records (each placed as a group of its own).
    pub unreadable_lines: u64,
    /// The first of them, as messages (file, line, row, byte offset, reason).
    pub bad_lines: Vec<String>,
    /// Per split.
    pub splits: Vec<SplitCounts>,
}

/// Which split (index into [`SPLIT_NAMES`]) each group goes to.
pub fn assign_groups(
    sizes: &HashMap<GroupKey, u64>,
    total_rows: u64,
    validation_fraction: f64,
    test_fraction: f64,
    seed: u64,
) -> HashMap<GroupKey, usize> {
    let mut order: Vec<([u8; 32], &GroupKey)> = sizes
        .keys()
        .map(|key| {
            let mut hasher = Sha256::new();
            hasher.update(seed.to_le_bytes());
            hasher.update(key);
            (hasher.finalize().into(), key)
        })
        .collect();
    order.sort_unstable();
    let target = |fraction: f64| (fraction * total_rows as f64).round() as u64;
    let targets = [0, target(validation_fraction), target(test_fraction)];
    let mut counts = [0u64; 3];
    let closer = |count: u64, target: u64, size: u64| {
        (count + size).abs_diff(target) < count.abs_diff(target)
    };
    order
        .into_iter()
        .map(|(_, key)| {
            let size = sizes.get(key).copied().unwrap_or(0);
            let split = [2, 1]
                .into_iter()
                .find(|&split| closer(counts[split], targets[split], size))
                .unwrap_or(0);
            counts[split] += size;
            (*key, split)
        })
        .collect()
}

/// Splits `input` into `out_dir/{train,validation,test}.jsonl`.
pub fn split_file(
    input: &Path,
    out_dir: &Path,
    options: &SplitOptions,
) -> Result<SplitReport, ProductsError> {
    for (option, fraction) in [
        ("--val-fraction", options.validation_fraction),
        ("--test-fraction", options.test_fraction),
    ] {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(ProductsError::InvalidOption {
                option,
                reason: format!("{fraction} is not in [0, 1]"),
            });
        }
    }
    if options.validation_fraction + options.test_fraction > 1.0 {
        return Err(ProductsError::InvalidOption {
            option: "--val-fraction",
            reason: "validation and test fractions add up to more than 1".to_owned(),
        });
    }
    let paths: Vec<PathBuf> = SPLIT_NAMES
        .iter()
        .map(|name| out_dir.join(format!("{name}.jsonl")))
        .collect();
    let outputs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    refuse_overwriting_inputs(&[input], &outputs)?;
    let by = options.group_by;
    let mut keys = Vec::new();
    let (mut unreadable, mut bad_lines) = (0, Vec::new());
    let summary = for_each_line(
        input,
        &options.read,
        |line| line_key(line, by),
        |position, (key, bad)| {
            if let Some(error) = bad {
                note_bad_line(&mut unreadable, &mut bad_lines, input, position, error);
            }
            keys.push(key);
        },
    )?;
    if summary.rows == 0 {
        return Err(ProductsError::NoRecords {
            path: input.to_path_buf(),
        });
    }
    let mut sizes: HashMap<GroupKey, u64> = HashMap::new();
    for key in &keys {
        *sizes.entry(*key).or_default() += 1;
    }
    let total = keys.len() as u64;
    let assignment = assign_groups(
        &sizes,
        total,
        options.validation_fraction,
        options.test_fraction,
        options.seed,
    );

    let directories = CreatedDirectories::create(out_dir)?;
    let mut report = SplitReport {
        group_by: by,
        seed: options.seed,
        rows: total,
        groups: sizes.len() as u64,
        unreadable_lines: unreadable,
        bad_lines,
        splits: Vec::new(),
    };
    let fractions = [
        1.0 - options.validation_fraction - options.test_fraction,
        options.validation_fraction,
        options.test_fraction,
    ];
    let mut writers = Vec::new();
    for (index, (name, path)) in SPLIT_NAMES.iter().zip(paths).enumerate() {
        writers.push(AtomicFile::create(&path)?);
        report.splits.push(SplitCounts {
            name,
            path,
            target_rows: (fractions[index].max(0.0) * total as f64).round() as u64,
            ..SplitCounts::default()
        });
    }
    for split in assignment.values() {
        report.splits[*split].groups += 1;
    }
    // A write error (a full disk) stops the read at once.
    try_for_each_line(
        input,
        &options.read,
        |line| line.bytes.to_vec(),
        |position, line| -> Result<(), ProductsError> {
            let split = keys
                .get(position.row as usize)
                .and_then(|key| assignment.get(key))
                .copied()
                .unwrap_or(0);
            report.splits[split].rows += 1;
            let writer = &mut writers[split];
            writer
                .write_all(&line)
                .and_then(|()| writer.write_all(b"\n"))
                .map_err(|source| writer.error(source))?;
            Ok(())
        },
    )?;
    commit_all(writers)?;
    directories.keep();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(list: &[u64]) -> HashMap<GroupKey, u64> {
        list.iter()
            .enumerate()
            .map(|(index, &size)| {
                (
                    crate::group_key::key_of_bytes(b"t", &index.to_le_bytes()),
                    size,
                )
            })
            .collect()
    }

    #[test]
    fn small_groups_hit_the_targets_exactly() {
        let groups = sizes(&[1; 1000]);
        let assignment = assign_groups(&groups, 1000, 0.1, 0.05, 7);
        let count = |split| assignment.values().filter(|&&value| value == split).count();
        assert_eq!((count(0), count(1), count(2)), (850, 100, 50));
    }

    #[test]
    fn assignment_depends_only_on_the_seed() {
        let groups = sizes(&[1, 2, 3, 1, 1, 5, 1, 1, 2, 1]);
        assert_eq!(
            assign_groups(&groups, 18, 0.2, 0.2, 1),
            assign_groups(&groups, 18, 0.2, 0.2, 1)
        );
    }
}
