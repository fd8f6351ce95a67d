//! `rlvr stats`: the dataset card's "Dataset summary" figures computed from a file, as a
//! Markdown table or (`--json`) one object with the keys of issue 3.
//!
//! The SHA-256 of the file is computed on a thread of its own, chunk by chunk in file order as the
//! reader reads them, while other threads parse (so it costs little more than hashing), unless
//! `--no-hash`. Lines that are not records are reported on stderr with their position and left
//! out of the figures; the exit status is then 1. Exit 2: unreadable file or no record at all.

use std::path::PathBuf;

use rlvr_dataset::stats::{RowFigures, StatsAccumulator};
use rlvr_dataset::{BadLine, Line, LineError, ReadOptions, RecordRef, for_each_line};

use crate::command::validate::{no_records, unreadable};
use crate::exit::{Error, Status};
use crate::stdout::{out, outln};

/// Bad lines printed on stderr before the rest are only counted.
const BAD_LINES_SHOWN: usize = 20;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file to describe.
    file: PathBuf,
    /// Print one JSON object instead of a Markdown table.
    #[arg(long)]
    json: bool,
    /// Skip the SHA-256 of the file (`sha256` is then null).
    #[arg(long)]
    no_hash: bool,
}

fn row_figures(line: Line<'_>) -> Result<RowFigures, LineError> {
    let value = line.parse()?;
    let record =
        RecordRef::from_value(&value).map_err(|error| LineError::InvalidRecord { error })?;
    Ok(RowFigures::from_record(&record))
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let options = ReadOptions {
        sha256: !args.no_hash,
        ..ReadOptions::default()
    };
    let mut accumulator = StatsAccumulator::default();
    let mut bad_lines = 0usize;
    let summary = for_each_line(
        &args.file,
        &options,
        row_figures,
        |position, figures| match figures {
            Ok(figures) => accumulator.add(position.row, &figures),
            Err(error) => {
                bad_lines += 1;
                if bad_lines <= BAD_LINES_SHOWN {
                    eprintln!(
                        "rlvr: bad line: {}",
                        BadLine {
                            path: args.file.clone(),
                            position,
                            error
                        }
                    );
                }
            }
        },
    )
    .map_err(unreadable)?;
    if summary.rows == 0 {
        return Err(no_records(&args.file));
    }
    let stats = accumulator.finish(
        summary.bytes,
        summary
            .sha256
            .map(|digest| digest.iter().map(|byte| format!("{byte:02x}")).collect()),
    );
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&stats)?)?;
    } else {
        out!("{}", stats.to_markdown())?;
    }
    if bad_lines > 0 {
        eprintln!(
            "rlvr: {bad_lines} of {} rows are not records and are left out of the figures{}",
            summary.rows,
            if bad_lines > BAD_LINES_SHOWN {
                " (first 20 shown)"
            } else {
                ""
            }
        );
        return Ok(Status::ProblemsFound);
    }
    Ok(Status::Success)
}
