//! Throughput of the reader and parser alone, for tuning: `cargo run --release -p rlvr-dataset
//! --example read_throughput -- FILE [stats|validate|lines] [CHUNK_MIB] [WORKERS] [hash]`.
//!
//! Prints wall time and GB/s; run it under `perf stat` for CPU time.

use std::path::PathBuf;
use std::time::Instant;

use rlvr_dataset::stats::{RowFigures, StatsAccumulator};
use rlvr_dataset::validation::{ValidationAccumulator, check_line};
use rlvr_dataset::{ReadOptions, RecordRef, for_each_line};

fn main() -> anyhow::Result<()> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let path = PathBuf::from(
        arguments
            .first()
            .ok_or_else(|| anyhow::anyhow!("FILE missing"))?,
    );
    let mode = arguments.get(1).map_or("stats", String::as_str);
    let defaults = ReadOptions::default();
    let chunk_bytes = arguments.get(2).map_or(Ok(defaults.chunk_bytes), |mib| {
        mib.parse::<usize>().map(|mib| mib << 20)
    })?;
    let workers = arguments
        .get(3)
        .map_or(Ok(defaults.workers), |workers| workers.parse())?;
    let options = ReadOptions {
        chunk_bytes,
        workers,
        sha256: arguments.get(4).is_some_and(|flag| flag == "hash"),
    };
    let started = Instant::now();
    let summary = match mode {
        "stats" => {
            let mut accumulator = StatsAccumulator::default();
            let summary = for_each_line(
                &path,
                &options,
                |line| {
                    let value = line.parse().ok()?;
                    let record = RecordRef::from_value(&value).ok()?;
                    Some(RowFigures::from_record(&record))
                },
                |position, figures| {
                    if let Some(figures) = figures {
                        accumulator.add(position.row, &figures);
                    }
                },
            )?;
            println!("examples {}", accumulator.examples());
            summary
        }
        "validate" => {
            let mut accumulator = ValidationAccumulator::new(5);
            let summary = for_each_line(&path, &options, check_line, |position, row| {
                accumulator.add(position, row);
            })?;
            let report = accumulator.finish(path.display().to_string(), &summary);
            println!("passed {}", report.passed);
            summary
        }
        _ => for_each_line(&path, &options, |line| line.bytes.len(), |_, _| {})?,
    };
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{mode} chunk {} MiB, {} workers, hash {}: {} rows, {:.3} s, {:.2} GB/s",
        chunk_bytes >> 20,
        workers,
        options.sha256,
        summary.rows,
        seconds,
        summary.bytes as f64 / seconds / 1e9
    );
    Ok(())
}
