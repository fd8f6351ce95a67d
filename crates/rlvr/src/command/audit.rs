//! `rlvr audit`: quality flags that matter for rewards, with counts and example rows.

use std::path::PathBuf;

use rlvr_products::audit::EXAMPLES;
use rlvr_products::{AuditOptions, audit_file};

use crate::command::products_common::{print_bad_lines, print_json};
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file.
    file: PathBuf,
    /// A single test value larger than this many bytes is flagged as oversized.
    #[arg(long, default_value_t = 1 << 20)]
    oversized_bytes: usize,
    /// Print the report, with every flagged row, as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// The `answer_may_vary` rows by kind, then the first rows with the phrase that flagged them.
fn print_answer_variety(report: &rlvr_products::AuditReport) -> Result<(), Error> {
    if report.answer_may_vary.is_empty() {
        return Ok(());
    }
    let kinds: Vec<String> = report
        .answer_may_vary_kinds
        .iter()
        .map(|(kind, rows)| format!("{kind} {rows}"))
        .collect();
    outln!("answer_may_vary by kind: {}", kinds.join(", "))?;
    for row in report.answer_may_vary.iter().take(EXAMPLES) {
        for phrase in &row.phrases {
            let epsilon = phrase
                .epsilon
                .map(|epsilon| format!(" (epsilon {epsilon:e})"))
                .unwrap_or_default();
            let checker = row
                .checker
                .as_ref()
                .map(|checker| format!(" [checker: {checker}]"))
                .unwrap_or_default();
            outln!(
                "  row {}: {}: \"{}\"{epsilon}{checker}",
                row.row,
                phrase.kind.name(),
                phrase.phrase
            )?;
        }
    }
    if report.answer_may_vary.len() > EXAMPLES {
        outln!("  ... (--json lists every row)")?;
    }
    Ok(())
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let options = AuditOptions {
        oversized_bytes: args.oversized_bytes,
        ..AuditOptions::default()
    };
    let report = audit_file(&args.file, &options)?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!(
            "{} rows audited, {} flagged",
            report.rows,
            report.flagged_rows
        )?;
        for flag in &report.flags {
            let examples: Vec<String> = flag
                .rows
                .iter()
                .take(EXAMPLES)
                .map(u64::to_string)
                .collect();
            let more = if flag.rows.len() > EXAMPLES {
                ", ..."
            } else {
                ""
            };
            if examples.is_empty() {
                outln!("{:<38} {:>7}", flag.flag, flag.count)?;
            } else {
                outln!(
                    "{:<38} {:>7}  rows: {}{more}",
                    flag.flag,
                    flag.count,
                    examples.join(", ")
                )?;
            }
        }
        print_answer_variety(&report)?;
        print_bad_lines(
            &report.bad_lines,
            report.unreadable_lines,
            "they were not audited",
        );
    }
    let problems = report.flagged_rows > 0 || report.unreadable_lines > 0;
    Ok(if problems {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}
