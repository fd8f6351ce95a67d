//! `rlvr split`: deterministic train/validation/test files in which no prompt group is in two
//! splits.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::{SplitOptions, split_file};

use crate::command::products_common::{GroupByArg, print_bad_lines, print_json};
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file.
    file: PathBuf,
    /// Directory for train.jsonl, validation.jsonl and test.jsonl.
    #[arg(long)]
    out_dir: PathBuf,
    /// Share of rows for validation.
    #[arg(long, default_value_t = 0.05)]
    val_fraction: f64,
    /// Share of rows for test.
    #[arg(long, default_value_t = 0.05)]
    test_fraction: f64,
    /// Seed of the group order; the same seed gives the same split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// What makes records one group that must stay in one split.
    #[arg(long, value_enum, default_value = "normalized-prompt")]
    group_by: GroupByArg,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let options = SplitOptions {
        validation_fraction: args.val_fraction,
        test_fraction: args.test_fraction,
        seed: args.seed,
        group_by: args.group_by.into(),
        read: ReadOptions::default(),
    };
    let report = split_file(&args.file, &args.out_dir, &options)?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!(
            "{} rows in {} groups (seed {}):",
            report.rows,
            report.groups,
            report.seed
        )?;
        outln!(
            "{:<12} {:>8} {:>8} {:>8}",
            "split",
            "rows",
            "target",
            "groups"
        )?;
        for split in &report.splits {
            outln!(
                "{:<12} {:>8} {:>8} {:>8}",
                split.name,
                split.rows,
                split.target_rows,
                split.groups
            )?;
        }
        print_bad_lines(
            &report.bad_lines,
            report.unreadable_lines,
            "each was placed as a group of its own",
        );
    }
    Ok(if report.unreadable_lines > 0 {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}
