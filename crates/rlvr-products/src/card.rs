//! `rlvr card`: a dataset card (README.md) for a file, with the statistics table of `rlvr stats`,
//! the validation results of `rlvr validate`, the audit counts, and five SVG charts: prompt
//! lengths, tests per record, test kinds, duplicate-prompt groups, and statements that accept
//! more than one answer (the audit's `answer_may_vary`, by kind).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use rlvr_dataset::record::RecordRef;
use rlvr_dataset::stats::TestFigures;
use rlvr_dataset::validation::check_line;
use rlvr_dataset::{
    Line, ReadOptions, RowFigures, StatsAccumulator, ValidationAccumulator, for_each_line,
};

use rlvr_output::{AtomicFile, CreatedDirectories, commit_all, refuse_overwriting_inputs};

use crate::audit::{AuditOptions, audit_file};
use crate::charts::{Bar, bar_chart, histogram};
use crate::error::ProductsError;

/// What the card pass collects per row.
struct CardRow {
    figures: Option<RowFigures>,
    check: rlvr_dataset::validation::RowCheck,
}

fn card_row(line: Line<'_>) -> CardRow {
    let figures = line.parse().ok().and_then(|value| {
        RecordRef::from_value(&value)
            .ok()
            .map(|record| RowFigures::from_record(&record))
    });
    CardRow {
        figures,
        check: check_line(line),
    }
}

/// The files a card consists of.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CardReport {
    /// The README.md written.
    pub readme: PathBuf,
    /// The charts written.
    pub charts: Vec<PathBuf>,
    /// Whether every validation check passed.
    pub validation_passed: bool,
}

/// Writes `out_dir/README.md` and `out_dir/charts/*.svg` for `input`.
pub fn write_card(
    input: &Path,
    out_dir: &Path,
    read: &ReadOptions,
) -> Result<CardReport, ProductsError> {
    let readme_path = out_dir.join("README.md");
    let charts_dir = out_dir.join("charts");
    let chart_paths: Vec<PathBuf> = CHART_NAMES
        .iter()
        .map(|name| charts_dir.join(name))
        .collect();
    let mut outputs: Vec<&Path> = chart_paths.iter().map(PathBuf::as_path).collect();
    outputs.push(&readme_path);
    refuse_overwriting_inputs(&[input], &outputs)?;
    let read = ReadOptions {
        sha256: true,
        ..read.clone()
    };
    let figures = CardFigures::read(input, &read)?;
    let audit = audit_file(
        input,
        &AuditOptions {
            read: read.clone(),
            ..AuditOptions::default()
        },
    )?;
    let charts = figures.charts(&audit);
    let directories = CreatedDirectories::create(&charts_dir)?;
    let mut files = Vec::new();
    for (chart, path) in charts.iter().zip(&chart_paths) {
        let svg = bar_chart(path, chart.title, chart.x_label, chart.y_label, &chart.bars)?;
        files.push(text_output(path, &svg)?);
    }
    let readme = readme_text(input, &figures, &charts, &audit);
    files.push(text_output(&readme_path, &readme)?);
    commit_all(files)?;
    directories.keep();
    Ok(CardReport {
        readme: readme_path,
        charts: chart_paths,
        validation_passed: figures.validation.passed,
    })
}

/// What one pass over the file gives the card: the statistics, the validation, and the
/// figures the charts are drawn from.
struct CardFigures {
    statistics: rlvr_dataset::DatasetStats,
    validation: rlvr_dataset::ValidationReport,
    prompt_chars: Vec<u64>,
    tests_per_record: Vec<u64>,
    io_records: u64,
    functional_records: u64,
    /// Records per normalised prompt.
    group_sizes: HashMap<[u8; 16], u64>,
}

impl CardFigures {
    fn read(input: &Path, read: &ReadOptions) -> Result<Self, ProductsError> {
        let mut stats = StatsAccumulator::default();
        let mut validation = ValidationAccumulator::new(5);
        let (mut prompt_chars, mut tests_per_record) = (Vec::new(), Vec::new());
        let (mut io_records, mut functional_records) = (0u64, 0u64);
        let mut group_sizes: HashMap<[u8; 16], u64> = HashMap::new();
        let summary = for_each_line(input, read, card_row, |position, row| {
            validation.add(position, row.check);
            if let Some(figures) = row.figures {
                prompt_chars.push(figures.prompt_chars);
                match figures.tests {
                    TestFigures::InputOutput { pairs, .. } => {
                        io_records += 1;
                        tests_per_record.push(pairs);
                    }
                    TestFigures::Functional { tests } => {
                        functional_records += 1;
                        tests_per_record.push(tests);
                    }
                }
                *group_sizes
                    .entry(figures.normalized_prompt_key)
                    .or_default() += 1;
                stats.add(position.row, &figures);
            }
        })?;
        if summary.rows == 0 {
            return Err(ProductsError::NoRecords {
                path: input.to_path_buf(),
            });
        }
        let sha256 = summary.sha256.map(hex_string);
        Ok(Self {
            statistics: stats.finish(summary.bytes, sha256),
            validation: validation.finish(input.display().to_string(), &summary),
            prompt_chars,
            tests_per_record,
            io_records,
            functional_records,
            group_sizes,
        })
    }

    /// The five charts, in [`CHART_NAMES`]' order.
    fn charts(&self, audit: &crate::AuditReport) -> [Chart; 5] {
        let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
        for size in self.group_sizes.values() {
            *sizes.entry((*size).min(6)).or_default() += 1;
        }
        let duplicate_bars: Vec<Bar> = sizes
            .iter()
            .map(|(size, groups)| {
                let label = if *size >= 6 {
                    "6+".to_owned()
                } else {
                    size.to_string()
                };
                (label, *groups)
            })
            .collect();
        let mut variety_bars: Vec<Bar> = audit
            .answer_may_vary_kinds
            .iter()
            .map(|(kind, rows)| (kind.replace('_', " "), *rows))
            .collect();
        variety_bars.push(("any kind".to_owned(), audit.answer_may_vary.len() as u64));
        let chart = |index: usize, title, x_label, y_label, bars| Chart {
            name: CHART_NAMES[index],
            title,
            x_label,
            y_label,
            bars,
        };
        [
            chart(
                0,
                "Prompt length",
                "characters (bin start)",
                "records",
                histogram(&self.prompt_chars, 30),
            ),
            chart(
                1,
                "Tests per record",
                "tests (bin start)",
                "records",
                histogram(&self.tests_per_record, 30),
            ),
            chart(
                2,
                "Test kinds",
                "kind",
                "records",
                vec![
                    ("input/output".into(), self.io_records),
                    ("functional".into(), self.functional_records),
                ],
            ),
            chart(
                3,
                "Records per normalised prompt",
                "records sharing one prompt",
                "prompt groups",
                duplicate_bars,
            ),
            chart(
                4,
                "Statements that accept more than one answer",
                "what the statement allows",
                "records",
                variety_bars,
            ),
        ]
    }
}

/// One chart of the card.
struct Chart {
    name: &'static str,
    title: &'static str,
    x_label: &'static str,
    y_label: &'static str,
    bars: Vec<Bar>,
}

/// The card's README.md.
fn readme_text(
    input: &Path,
    figures: &CardFigures,
    charts: &[Chart],
    audit: &crate::AuditReport,
) -> String {
    let mut readme = String::new();
    let name = input.file_name().map_or_else(
        || input.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let _ = writeln!(
        readme,
        "# {name}\n\nA card generated by `rlvr card` from the file itself.\n"
    );
    let _ = writeln!(
        readme,
        "## Dataset summary\n\n{}",
        figures.statistics.to_markdown()
    );
    let _ = writeln!(readme, "\n## Charts\n");
    for chart in charts {
        let _ = writeln!(readme, "![{}](charts/{})\n", chart.title, chart.name);
    }
    let _ = writeln!(
        readme,
        "## Validation\n\n| check | result | violations |\n| --- | --- | --- |"
    );
    for check in &figures.validation.checks {
        let result = if check.passed { "passed" } else { "FAILED" };
        let _ = writeln!(
            readme,
            "| {} | {result} | {} |",
            check.description, check.violations
        );
    }
    let _ = writeln!(
        readme,
        "\n## Audit flags\n\nRecords flagged by `rlvr audit` (see docs/products.md for each flag).\n"
    );
    let _ = writeln!(
        readme,
        "| flag | records | why it matters |\n| --- | --- | --- |"
    );
    for flag in &audit.flags {
        let _ = writeln!(
            readme,
            "| `{}` | {} | {} |",
            flag.flag, flag.count, flag.why
        );
    }
    let flagged = audit.answer_may_vary.len() as u64;
    let _ = writeln!(
        readme,
        "\n## Answers that may vary\n\n{flagged} of {} records ({:.1}%) have a statement that accepts \
         more than one answer (`answer_may_vary`: several correct answers, any order, or a numeric \
         tolerance); exact comparison can score a correct answer 0 on them unless the ground truth \
         names a checker.\n",
        statistics_rows(audit),
        100.0 * flagged as f64 / statistics_rows(audit).max(1) as f64
    );
    let _ = writeln!(readme, "| kind | records |\n| --- | --- |");
    for (kind, rows) in &audit.answer_may_vary_kinds {
        let _ = writeln!(readme, "| `{kind}` | {rows} |");
    }
    readme
}

/// The charts, in the order the card shows them.
const CHART_NAMES: [&str; 5] = [
    "prompt-length.svg",
    "tests-per-record.svg",
    "test-kinds.svg",
    "duplicate-groups.svg",
    "answer-may-vary.svg",
];

/// Records the audit read (lines that are not records are not counted).
fn statistics_rows(audit: &crate::AuditReport) -> u64 {
    audit.rows - audit.unreadable_lines
}

/// An output holding `text`, not yet committed.
fn text_output(path: &Path, text: &str) -> Result<AtomicFile, ProductsError> {
    let mut file = AtomicFile::create(path)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|source| file.error(source))?;
    Ok(file)
}

fn hex_string(bytes: [u8; 32]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(64), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}
