//! `rlvr convert`: upstream KlearReasoner-CodeSub-15K rows to the released layout and back.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::{LineLayout, convert_file};

use crate::command::products_common::{print_bad_lines, print_json};
use crate::exit::{Failure, Status, USAGE};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Layout of the input.
    #[arg(long, value_enum)]
    from: LayoutArg,
    /// Layout of the output.
    #[arg(long, value_enum)]
    to: LayoutArg,
    /// JSON Lines input, or upstream Parquet (a .parquet file or a directory of them).
    input: PathBuf,
    /// JSON Lines output.
    out: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LayoutArg {
    /// KlearReasoner-CodeSub-15K: reward_model.ground_truth as a JSON string.
    Upstream,
    /// code-rlvr-15k: parsed tests in label and metadata.ground_truth.
    Release,
}

fn layout(value: LayoutArg) -> LineLayout {
    match value {
        LayoutArg::Upstream => LineLayout::Upstream,
        LayoutArg::Release => LineLayout::Release,
    }
}

pub(crate) fn run(args: Args) -> anyhow::Result<Status> {
    let is_parquet = args.input.is_dir()
        || args
            .input
            .extension()
            .is_some_and(|extension| extension == "parquet");
    if is_parquet && args.from != LayoutArg::Upstream {
        return Err(Failure::new(
            USAGE,
            "parquet input is read as --from upstream (use `rlvr import parquet` for exports)",
        )
        .into());
    }
    let report = convert_file(
        &args.input,
        &args.out,
        layout(args.from),
        layout(args.to),
        &ReadOptions::default(),
    )?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!("converted {} rows to {}", report.rows, args.out.display())?;
        print_bad_lines(
            &report.bad_lines,
            report.bad_line_count,
            "they were not converted",
        );
    }
    Ok(if report.bad_line_count > 0 {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}
