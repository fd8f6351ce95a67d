//! `rlvr convert`: upstream KlearReasoner-CodeSub-15K rows to the released layout and back.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::{LineLayout, convert_file};

use crate::command::products_common::{print_bad_lines, print_json};
use crate::exit::{Error, Status};
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

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    check_input(&args)?;
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

/// Refuses, naming the input, what cannot be converted as asked: a path that does not exist,
/// a directory without Parquet files, Parquet read as anything but `--from upstream`.
fn check_input(args: &Args) -> Result<(), Error> {
    let input = args.input.display();
    let refuse = |message: String| -> Result<(), Error> { Err(Error::usage(message)) };
    let metadata = match std::fs::metadata(&args.input) {
        Ok(metadata) => metadata,
        Err(error) => return Err(Error::input(format!("`{input}`"), error)),
    };
    let is_parquet = if metadata.is_dir() {
        let has_parquet = fs_err::read_dir(&args.input)
            .map_err(Error::Unreadable)?
            .filter_map(Result::ok)
            .any(|entry| {
                entry
                    .path()
                    .extension()
                    .is_some_and(|extension| extension == "parquet")
            });
        if !has_parquet {
            return refuse(format!(
                "`{input}` is a directory without .parquet files (convert reads a JSON Lines file, \
                 or upstream Parquet: a .parquet file or a directory of them)"
            ));
        }
        true
    } else {
        args.input
            .extension()
            .is_some_and(|extension| extension == "parquet")
    };
    if is_parquet && args.from != LayoutArg::Upstream {
        return refuse(format!(
            "`{input}` is Parquet, which convert reads as --from upstream only (use `rlvr import \
             parquet` for rlvr's own exports)"
        ));
    }
    Ok(())
}
