//! `rlvr dedup`: keep the first record of each prompt, report what was dropped, never reorder.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::dedup_file;

use crate::command::products_common::{GroupByArg, print_bad_lines, print_json};
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file.
    file: PathBuf,
    /// The deduplicated file to write.
    out: PathBuf,
    /// What counts as a repeat: `exact` prompt text, or `normalized` whitespace.
    #[arg(long, value_enum, default_value = "exact")]
    by: ByArg,
    /// Print the report (with every dropped row) as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ByArg {
    /// The prompt text exactly.
    Exact,
    /// `" ".join(prompt.split())`.
    Normalized,
}

/// Dropped rows listed in the text report.
const LISTED: usize = 20;

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let by = match args.by {
        ByArg::Exact => GroupByArg::ExactPrompt,
        ByArg::Normalized => GroupByArg::NormalizedPrompt,
    };
    let report = dedup_file(&args.file, &args.out, by.into(), &ReadOptions::default())?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!(
            "kept {} of {} rows, dropped {} repeats",
            report.kept,
            report.rows,
            report.dropped.len()
        )?;
        for dropped in report.dropped.iter().take(LISTED) {
            outln!("  row {} repeats row {}", dropped.row, dropped.kept_row)?;
        }
        if report.dropped.len() > LISTED {
            outln!(
                "  ... {} more (--json lists all)",
                report.dropped.len() - LISTED
            )?;
        }
    }
    if !args.json {
        print_bad_lines(
            &report.bad_lines,
            report.unreadable_lines,
            "they were copied like records (each compared as raw bytes)",
        );
    }
    Ok(if report.unreadable_lines > 0 {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}
