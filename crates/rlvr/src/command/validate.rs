//! `rlvr validate`: runs every check of the dataset card's "Data quality and validation" section
//! over a JSON Lines file and reports each as pass or fail, with the first violating rows.
//!
//! Exit status: 0 every check passed; 1 some check failed (the whole file is still scanned);
//! 2 usage error, unreadable file, or a file without any record.

use std::path::{Path, PathBuf};

use rlvr_dataset::stats::group_thousands;
use rlvr_dataset::validation::{ValidationAccumulator, ValidationReport, check_line};
use rlvr_dataset::{ReadError, ReadOptions, for_each_line};

use crate::exit::{Error, Status};
use crate::stdout::{out, outln};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file to check.
    file: PathBuf,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// How many violating rows to list per check.
    #[arg(long, default_value_t = 5, value_name = "N")]
    max_examples: usize,
}

/// A file-level read error (exit status 2, the default), its cause kept for the message.
pub(crate) fn unreadable(error: ReadError) -> Error {
    error.into()
}

/// Exit status 2 for a file that has no record at all.
pub(crate) fn no_records(path: &Path) -> Error {
    Error::empty_input(format!(
        "`{}` contains no records (the file is empty or blank)",
        path.display()
    ))
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let mut accumulator = ValidationAccumulator::new(args.max_examples);
    let summary = for_each_line(
        &args.file,
        &ReadOptions::default(),
        check_line,
        |position, row| {
            accumulator.add(position, row);
        },
    )
    .map_err(unreadable)?;
    if summary.rows == 0 {
        return Err(no_records(&args.file));
    }
    let report = accumulator.finish(args.file.display().to_string(), &summary);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", render(&report))?;
    }
    Ok(if report.passed {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}

fn render(report: &ValidationReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} rows, {} bytes{}",
        report.file,
        group_thousands(report.rows),
        group_thousands(report.bytes),
        if report.blank_lines > 0 {
            format!(", {} blank lines skipped", report.blank_lines)
        } else {
            String::new()
        }
    );
    for check in &report.checks {
        let verdict = if check.passed { "PASS" } else { "FAIL" };
        let _ = write!(out, "{verdict} {}: {}", check.name, check.description);
        if check.passed {
            let _ = writeln!(out);
            continue;
        }
        let _ = writeln!(
            out,
            " ({} of {} rows violate)",
            group_thousands(check.violations),
            group_thousands(report.rows)
        );
        for example in &check.examples {
            let _ = writeln!(
                out,
                "     row {} (line {}, byte offset {}): {}",
                example.row, example.line, example.byte_offset, example.reason
            );
        }
        if check.violations > check.examples.len() as u64 {
            let _ = writeln!(
                out,
                "     ... {} more",
                check.violations - check.examples.len() as u64
            );
        }
    }
    let _ = writeln!(
        out,
        "Mixed string/list test values: {} rows",
        report.mixed_value_rows.len()
    );
    for example in &report.mixed_value_rows {
        let _ = writeln!(
            out,
            "     row {} (line {}): {}",
            example.row, example.line, example.reason
        );
    }
    let failed = report.checks.iter().filter(|check| !check.passed).count();
    if failed == 0 {
        let _ = writeln!(out, "OK: all {} checks passed", report.checks.len());
    } else {
        let _ = writeln!(
            out,
            "FAILED: {failed} of {} checks failed",
            report.checks.len()
        );
    }
    out
}
