//! `rlvr export parquet`: write the dataset as Parquet shards that pyarrow, `datasets` (3.x and
//! 4.x) and verl load without schema errors, nothing lost.

use std::path::PathBuf;

use rlvr_dataset::ReadOptions;
use rlvr_products::{ExportOptions, Layout, export_parquet};

use crate::command::products_common::{parse_byte_size, print_bad_lines, print_json};
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    format: Format,
}

#[derive(Debug, clap::Subcommand)]
enum Format {
    /// Parquet shards `OUTDIR/data/train-0000i-of-0000N.parquet` plus a Hub README.md.
    Parquet(ParquetArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LayoutArg {
    /// Tests as columns (`inputs`, `outputs`, `functional`), `ground_truth` as JSON text.
    Hf,
    /// verl's columns: `data_source`, `prompt`, `ability`, `reward_model`, `extra_info`.
    Verl,
}

#[derive(Debug, clap::Args)]
struct ParquetArgs {
    /// The JSON Lines file.
    file: PathBuf,
    /// Output directory (gets README.md and data/).
    out_dir: PathBuf,
    /// Column layout.
    #[arg(long, value_enum, default_value = "hf")]
    layout: LayoutArg,
    /// Start a new shard once one reaches this size (e.g. 500MB, 1GiB, 2000000).
    #[arg(long, default_value = "500MB", value_parser = parse_byte_size)]
    shard_size: u64,
    /// At most this many rows per row group (the Hub viewer reads one group at a time).
    #[arg(long, default_value_t = 100)]
    row_group_rows: usize,
    /// zstd compression level (negative levels are faster, larger).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    zstd_level: i32,
    /// verl layout: write NAME as every row's `data_source` (default: the record's own,
    /// `coder1_longcot`, which only a custom reward such as rlvr's adapter scores). codecontests,
    /// apps, codeforces or taco route verl's stock scorer to SandboxFusion (`rlvr serve`'s
    /// /run_code); functional tests are then written as verl's `assert_case`.
    #[arg(long, value_name = "NAME")]
    data_source: Option<String>,
    /// Split name used in shard names, the README and verl's `extra_info.split`.
    #[arg(long, default_value = "train")]
    split: String,
    /// Threads for parsing and for encoding [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Replace shards left in OUT_DIR/data by an earlier export.
    #[arg(long)]
    overwrite: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let Format::Parquet(args) = args.format;
    let mut read = ReadOptions::default();
    if let Some(threads) = args.threads {
        read.workers = threads.max(1);
    }
    let options = ExportOptions {
        layout: match args.layout {
            LayoutArg::Hf => Layout::Hf,
            LayoutArg::Verl => Layout::Verl,
        },
        split: args.split,
        shard_bytes: args.shard_size,
        row_group_rows: args.row_group_rows,
        zstd_level: args.zstd_level,
        encoders: read.workers,
        overwrite: args.overwrite,
        data_source: args.data_source,
        read,
        ..ExportOptions::default()
    };
    let report = export_parquet(&args.file, &args.out_dir, &options)?;
    if args.json {
        print_json(&report)?;
    } else {
        outln!(
            "exported {} rows ({} layout) to {} shard(s) in {}: {:.2} s, {:.3} GB/s of JSONL",
            report.rows,
            report.layout,
            report.shards.len(),
            args.out_dir.display(),
            report.seconds,
            report.gigabytes_per_second()
        )?;
        for shard in &report.shards {
            outln!(
                "  {} ({} rows, {} row groups, {} bytes)",
                shard.path.display(),
                shard.rows,
                shard.row_groups,
                shard.bytes
            )?;
        }
        if !report.normalized_rows.is_empty() {
            outln!(
                "list-valued test values joined with \"\\n\" in rows {:?}",
                report.normalized_rows
            )?;
        }
        if !report.lossy_rows.is_empty() {
            outln!(
                "lone surrogates replaced by U+FFFD in string columns of rows {:?}",
                report.lossy_rows
            )?;
        }
        if !report.label_differs_rows.is_empty() {
            outln!(
                "label is not equal to metadata.ground_truth (the columns hold ground_truth) in rows {:?}",
                report.label_differs_rows
            )?;
        }
        if report.source_lines_kept > 0 {
            outln!(
                "{} source line(s) kept verbatim in the shards' metadata so that import gives them back byte for byte",
                report.source_lines_kept
            )?;
        }
        if !report.inexact_rows.is_empty() {
            outln!(
                "rows that will come back equal record by record but not byte for byte (kept-line budget spent): {:?}",
                report.inexact_rows
            )?;
        }
        print_bad_lines(
            &report.bad_lines,
            report.bad_line_count,
            "they were not exported",
        );
    }
    Ok(if report.has_problems() {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}
