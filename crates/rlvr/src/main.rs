//! `rlvr`: the command-line front end. Parses arguments, dispatches to one module per
//! subcommand, and maps every outcome to an exit status in one place.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout)]

mod command;
mod exit;
mod progress;
mod sandbox_setup;
mod stdout;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Make the code-rlvr-15k dataset usable for reinforcement learning with verifiable rewards.
#[derive(Debug, Parser)]
#[command(name = "rlvr", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check every structural property the dataset card promises, row by row.
    Validate(command::validate::Args),
    /// Print the dataset card's summary table computed from a file.
    Stats(command::stats::Args),
    /// Print one record by zero-based row index.
    Show(command::show::Args),
    /// Generate a synthetic file with the dataset's exact schema and shape.
    Synth(command::synth::Args),
    /// Run one program in the sandbox and print the outcome.
    Run(command::run::Args),
    /// Report which sandbox protections are active on this machine and self-test them.
    Doctor(command::doctor::Args),
    /// Score model responses against tests and write one result line per job.
    Verify(command::verify::Args),
    /// Serve the verifier over HTTP to trainers (native, SandboxFusion, open-instruct, OpenRLHF).
    Serve(command::serve::Args),
    /// Download the dataset from the Hub, resuming and verifying its SHA-256.
    Fetch(command::fetch::Args),
    /// Convert between the upstream (KlearReasoner-CodeSub-15K) and released layouts.
    Convert(command::convert::Args),
    /// Export the dataset to another format (`rlvr export parquet FILE OUTDIR`).
    Export(command::export::Args),
    /// Turn an export back into the JSON Lines file (`rlvr import parquet DIR OUT.jsonl`).
    Import(command::import::Args),
    /// Split into train/validation/test so that no prompt group is in two splits.
    Split(command::split::Args),
    /// Drop repeated prompts, keeping the first occurrence and the order.
    Dedup(command::dedup::Args),
    /// Write a dataset card (README.md) with statistics, validation results and SVG charts.
    Card(command::card::Args),
    /// Flag records with quality problems that affect rewards, with counts and examples.
    Audit(command::audit::Args),
    /// Probe each record's checker: it must accept the expected output and reject garbage.
    CheckChecker(command::check_checker::Args),
    /// Run a catalogue of hostile responses (each with an honest control) against a code reward.
    Redteam(command::redteam::Args),
}

fn main() -> ExitCode {
    exit::init_logging();
    let cli = Cli::parse();
    // `verify` and `serve` stop on signals themselves (finishing work in flight); `run` and
    // `doctor` write no file. Every other command removes its unfinished outputs first.
    let handles_signals = matches!(
        cli.command,
        Command::Verify(_)
            | Command::Serve(_)
            | Command::Run(_)
            | Command::Doctor(_)
            | Command::Redteam(_)
    );
    if !handles_signals && let Err(error) = rlvr_output::install_signal_cleanup() {
        eprintln!("rlvr: error: installing the signal handler: {error}");
        return std::process::ExitCode::from(exit::USAGE);
    }
    let outcome = match cli.command {
        Command::Validate(args) => command::validate::run(args),
        Command::Stats(args) => command::stats::run(args),
        Command::Show(args) => command::show::run(args),
        Command::Synth(args) => command::synth::run(args),
        Command::Run(args) => command::run::run(args),
        Command::Doctor(args) => command::doctor::run(args),
        Command::Verify(args) => command::verify::run(args),
        Command::Serve(args) => command::serve::run(args),
        Command::Fetch(args) => command::fetch::run(args),
        Command::Convert(args) => command::convert::run(args),
        Command::Export(args) => command::export::run(args),
        Command::Import(args) => command::import::run(args),
        Command::Split(args) => command::split::run(args),
        Command::Dedup(args) => command::dedup::run(args),
        Command::Card(args) => command::card::run(args),
        Command::Audit(args) => command::audit::run(args),
        Command::CheckChecker(args) => command::check_checker::run(args),
        Command::Redteam(args) => command::redteam::run(args),
    };
    exit::to_exit_code(outcome)
}
