//! `rlvr card`: write a dataset card (README.md) with statistics, validation results, audit
//! counts and SVG charts.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::write_card;

use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file.
    file: PathBuf,
    /// Directory for README.md and charts/.
    #[arg(long)]
    out: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let report = write_card(&args.file, &args.out, &ReadOptions::default())?;
    outln!(
        "wrote {} and {} charts",
        report.readme.display(),
        report.charts.len()
    )?;
    Ok(if report.validation_passed {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}
