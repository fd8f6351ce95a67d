//! `rlvr import parquet`: turn an export back into the released JSON Lines file.

use std::path::PathBuf;

use rlvr_products::import_parquet;

use crate::command::products_common::print_json;
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    format: Format,
}

#[derive(Debug, clap::Subcommand)]
enum Format {
    /// Read an export directory (its data/*.parquet, in name order) or one Parquet file.
    Parquet(ParquetArgs),
}

#[derive(Debug, clap::Args)]
struct ParquetArgs {
    /// An export directory or a Parquet file (hf or verl layout, or upstream-style columns).
    input: PathBuf,
    /// The JSON Lines file to write (replaced atomically).
    out: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let Format::Parquet(args) = args.format;
    let report = import_parquet(&args.input, &args.out)?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!(
            "imported {} rows from {} file(s) to {}",
            report.rows,
            report.files.len(),
            args.out.display()
        )?;
    }
    Ok(Status::Success)
}
