//! `rlvr synth`: write a deterministic synthetic file with the dataset's exact schema and shape,
//! for tests, benchmarks and the demo. The same arguments always give a byte-identical file.

use std::path::PathBuf;

use rlvr_synth::{SynthOptions, SynthSummary, faults_sidecar_path, write_synthetic};

use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The file to write (replaced if it exists).
    out: PathBuf,

    /// Number of records to generate; 0 writes an empty file. Required unless --like-card.
    #[arg(long, required_unless_present = "like_card")]
    rows: Option<u64>,

    /// Seed of every random choice.
    #[arg(long, default_value_t = 0)]
    seed: u64,

    /// Average record size in bytes to aim for [default: 20000, or the card's 529044 with
    /// --like-card]. Records cannot be smaller than their prompt plus one short string per
    /// test, so a very small value gives the smallest records the shape allows.
    #[arg(long)]
    avg_record_bytes: Option<u64>,

    /// Make a full-size file like the released one: 15,001 rows averaging 529,044 bytes
    /// (about 7.39 GiB). --rows and --avg-record-bytes still override.
    #[arg(long)]
    like_card: bool,

    /// Also write, at known lines, records that `rlvr validate` must reject and quirky records
    /// it must accept; their list goes to OUT.faults.json.
    #[arg(long)]
    inject_faults: bool,

    /// Print the summary, with the figures `rlvr stats` should find, as JSON on stdout.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// The validated generator settings.
    fn options(&self) -> SynthOptions {
        let preset = if self.like_card {
            SynthOptions::like_card(self.seed)
        } else {
            SynthOptions::new(0, self.seed)
        };
        SynthOptions {
            rows: self.rows.unwrap_or(preset.rows),
            average_record_bytes: self.avg_record_bytes.unwrap_or(preset.average_record_bytes),
            inject_faults: self.inject_faults,
            ..preset
        }
    }
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let options = args.options();
    let summary = write_synthetic(&args.out, &options).map_err(|source| Error::Synth {
        path: args.out.clone(),
        source,
    })?;
    report(&args, &summary)?;
    Ok(Status::Success)
}

fn report(args: &Args, summary: &SynthSummary) -> Result<(), Error> {
    eprintln!(
        "rlvr synth: wrote {} rows ({} lines), {} bytes in {:.2} s ({:.0} MB/s) to {}",
        summary.rows,
        summary.lines,
        summary.bytes,
        summary.seconds,
        summary.megabytes_per_second(),
        args.out.display(),
    );
    if args.inject_faults {
        let rejected = summary
            .injected
            .iter()
            .filter(|line| line.check.is_some())
            .count();
        eprintln!(
            "rlvr synth: injected {rejected} faulty lines and {} quirky valid lines, listed in {}",
            summary.injected.len() - rejected,
            faults_sidecar_path(&args.out).display(),
        );
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(summary)?)?;
    }
    Ok(())
}
