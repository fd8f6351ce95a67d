//! `rlvr audit`: per-record quality flags with counts and example rows.
//!
//! Per-record rules ([`crate::audit_rules`]) run on the reader's worker threads; the cross-record
//! rule keeps, per row, 32 bytes (the normalised-prompt key and a digest of the tests) and is
//! resolved at the end: a prompt group whose rows do not all share one test digest flags all of
//! its rows. `answer_may_vary` rows are listed with the phrases that raised the flag
//! ([`rlvr_dataset::answer_variety`]) and the checker their ground truth names, if any.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use rlvr_dataset::record::RecordRef;
use rlvr_dataset::{Line, LineError, ReadOptions, for_each_line};

use crate::audit_rules::{Flag, record_flags};
use crate::bad_lines::note_bad_line;
use crate::error::ProductsError;
use crate::group_key::{GroupBy, GroupKey, group_key, key_of_bytes};
use rlvr_dataset::answer_variety::{VarietyKind, VarietyPhrase};

/// Example rows listed per flag in the text report.
pub const EXAMPLES: usize = 5;

/// Audit settings.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// A test value larger than this (bytes of JSON text) is oversized.
    pub oversized_bytes: usize,
    /// How the input is read.
    pub read: ReadOptions,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            oversized_bytes: 1 << 20,
            read: ReadOptions::default(),
        }
    }
}

/// One flag's findings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlagReport {
    /// The flag name.
    pub flag: &'static str,
    /// Why it matters for rewards.
    pub why: &'static str,
    /// Rows flagged.
    pub count: u64,
    /// Every flagged row, in order.
    pub rows: Vec<u64>,
}

/// One record whose statement accepts more than one answer.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VarietyRow {
    /// Zero-based row.
    pub row: u64,
    /// The phrases found, at most one per kind.
    pub phrases: Vec<VarietyPhrase>,
    /// The checker the ground truth names (`checker`, else `checker_cpp` shown as `c++`), if
    /// any: such a record is judged by it rather than by exact comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checker: Option<String>,
}

/// What an audit found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct AuditReport {
    /// Rows read.
    pub rows: u64,
    /// Rows with at least one flag.
    pub flagged_rows: u64,
    /// Lines that are not records (not audited).
    pub unreadable_lines: u64,
    /// The first of them, as messages (file, line, row, byte offset, reason).
    pub bad_lines: Vec<String>,
    /// One entry per flag, every flag listed.
    pub flags: Vec<FlagReport>,
    /// Every `answer_may_vary` row with its phrases, in row order.
    pub answer_may_vary: Vec<VarietyRow>,
    /// `answer_may_vary` rows per kind name, every kind listed (a row may count under
    /// several kinds).
    pub answer_may_vary_kinds: BTreeMap<&'static str, u64>,
}

struct RowAudit {
    flags: Vec<Flag>,
    variety: Vec<VarietyPhrase>,
    checker: Option<String>,
    prompt_key: GroupKey,
    tests_key: GroupKey,
}

/// The checker a ground truth names: the `checker` string (a built-in name, or the first line
/// of Python source), else `c++` for a `checker_cpp`.
fn checker_named(ground_truth: &rlvr_python_compat::json::ValueRef<'_>) -> Option<String> {
    let present = |key: &str| {
        ground_truth
            .get(key)
            .filter(|value| !matches!(value, rlvr_python_compat::json::ValueRef::Null))
    };
    if let Some(checker) = present("checker") {
        let text = checker
            .as_json_str()
            .map(|text| String::from_utf8_lossy(&text.decode()).into_owned())
            .unwrap_or_else(|| checker.type_name().to_owned());
        return Some(text.lines().next().unwrap_or_default().to_owned());
    }
    present("checker_cpp").map(|_| "c++".to_owned())
}

fn audit_line(line: Line<'_>, oversized_bytes: usize) -> Result<RowAudit, LineError> {
    let value = line.parse()?;
    let record =
        RecordRef::from_value(&value).map_err(|error| LineError::InvalidRecord { error })?;
    let findings = record_flags(&record, oversized_bytes);
    Ok(RowAudit {
        flags: findings.flags,
        variety: findings.variety,
        checker: checker_named(record.ground_truth_value),
        prompt_key: group_key(&record, GroupBy::NormalizedPrompt),
        tests_key: key_of_bytes(b"tests\0", record.ground_truth_value.raw()),
    })
}

/// Audits `input`.
pub fn audit_file(input: &Path, options: &AuditOptions) -> Result<AuditReport, ProductsError> {
    let mut rows_by_flag: BTreeMap<Flag, Vec<u64>> =
        Flag::ALL.iter().map(|flag| (*flag, Vec::new())).collect();
    let mut groups: HashMap<GroupKey, (Vec<u64>, HashSet<GroupKey>)> = HashMap::new();
    let mut report = AuditReport::default();
    let oversized = options.oversized_bytes;
    let summary = for_each_line(
        input,
        &options.read,
        |line| audit_line(line, oversized),
        |position, audit| {
            report.rows += 1;
            let audit = match audit {
                Ok(audit) => audit,
                Err(error) => {
                    note_bad_line(
                        &mut report.unreadable_lines,
                        &mut report.bad_lines,
                        input,
                        position,
                        error,
                    );
                    return;
                }
            };
            for flag in audit.flags {
                rows_by_flag.entry(flag).or_default().push(position.row);
            }
            if !audit.variety.is_empty() {
                report.answer_may_vary.push(VarietyRow {
                    row: position.row,
                    phrases: audit.variety,
                    checker: audit.checker,
                });
            }
            let group = groups.entry(audit.prompt_key).or_default();
            group.0.push(position.row);
            group.1.insert(audit.tests_key);
        },
    )?;
    if summary.rows == 0 {
        return Err(ProductsError::NoRecords {
            path: input.to_path_buf(),
        });
    }
    let repeated = rows_by_flag
        .entry(Flag::PromptRepeatedWithDifferentTests)
        .or_default();
    for (rows, tests) in groups.values() {
        if tests.len() > 1 {
            repeated.extend(rows);
        }
    }
    repeated.sort_unstable();
    let mut flagged = HashSet::new();
    for (flag, rows) in rows_by_flag {
        flagged.extend(rows.iter().copied());
        report.flags.push(FlagReport {
            flag: flag.name(),
            why: flag.why(),
            count: rows.len() as u64,
            rows,
        });
    }
    report.flagged_rows = flagged.len() as u64;
    report.answer_may_vary_kinds = VarietyKind::ALL
        .iter()
        .map(|kind| {
            let rows = report
                .answer_may_vary
                .iter()
                .filter(|row| row.phrases.iter().any(|phrase| phrase.kind == *kind))
                .count();
            (kind.name(), rows as u64)
        })
        .collect();
    Ok(report)
}
