//! `rlvr run`: run one program once in the sandbox and print the outcome.
//!
//! The program's stdout and stderr are passed through and a one-line summary goes to stderr;
//! with `--json`, one object with exactly the keys of issue 4 goes to stdout instead.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use rlvr_sandbox::{
    Limits, Program, RunOutcome, RunRequest, Sandbox, SandboxConfig, SandboxError, Stdin, Verdict,
};

use crate::exit::{Failure, SANDBOX_UNAVAILABLE, Status, USAGE};

/// Languages `rlvr run` accepts.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Language {
    /// CPython, run as `python -I main.py` with the real interpreter.
    Python,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The program's source file.
    source: PathBuf,
    /// Language of SOURCE.
    #[arg(long, value_enum, default_value = "python")]
    lang: Language,
    /// File to feed as standard input (default: empty).
    #[arg(long, value_name = "FILE")]
    stdin: Option<PathBuf>,
    /// Wall-clock and CPU-time limit, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    time_limit: f64,
    /// Memory limit of the whole process tree, in MiB.
    #[arg(long, value_name = "MB", default_value_t = 1024)]
    memory_limit: u64,
    /// Cap of each of stdout and stderr, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    output_limit: u64,
    /// Print one JSON object instead of passing the output through.
    #[arg(long)]
    json: bool,
    /// Run with whatever protections this machine offers instead of refusing (exit 3).
    #[arg(long)]
    allow_degraded: bool,
}

/// The `--json` object: exactly these keys, in this order.
#[derive(Debug, serde::Serialize)]
struct JsonOutcome {
    verdict: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    wall_ms: f64,
    cpu_ms: f64,
    peak_memory_kib: u64,
    stdout: String,
    stderr: String,
    stdout_truncated: bool,
    stderr_truncated: bool,
    protections: Vec<&'static str>,
}

fn milliseconds(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

impl JsonOutcome {
    fn from_outcome(outcome: &RunOutcome) -> Self {
        JsonOutcome {
            verdict: outcome.verdict.as_str(),
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            wall_ms: milliseconds(outcome.wall),
            cpu_ms: milliseconds(outcome.cpu),
            peak_memory_kib: outcome.peak_memory_kib,
            stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
            stdout_truncated: outcome.stdout_truncated,
            stderr_truncated: outcome.stderr_truncated,
            protections: outcome
                .protections
                .iter()
                .map(|protection| protection.as_str())
                .collect(),
        }
    }

    fn sandbox_error(error: &SandboxError) -> Self {
        JsonOutcome {
            verdict: "sandbox_error",
            exit_code: None,
            signal: None,
            wall_ms: 0.0,
            cpu_ms: 0.0,
            peak_memory_kib: 0,
            stdout: String::new(),
            stderr: error.to_string(),
            stdout_truncated: false,
            stderr_truncated: false,
            protections: Vec::new(),
        }
    }
}

fn print_json(value: &JsonOutcome) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}

fn uid_from_environment(name: &str) -> anyhow::Result<Option<u32>> {
    let Some(value) = std::env::var_os(name) else {
        return Ok(None);
    };
    let uid = value
        .to_str()
        .and_then(|text| text.parse().ok())
        .filter(|&uid: &u32| uid != 0)
        .ok_or_else(|| Failure::new(USAGE, format!("{name} must be a non-zero uid")))?;
    Ok(Some(uid))
}

/// The sandbox settings of every command that runs programs: `RLVR_SANDBOX_UID` picks the
/// host uid and gid programs run as when rlvr runs as root (default 65534, `nobody`),
/// `RLVR_SANDBOX_RUNNER_UID` the warm runner's (default 65533, or 65532 when that is the
/// program uid). Without root both are ignored: the caller's ids are used.
pub(crate) fn sandbox_config(allow_degraded: bool) -> anyhow::Result<SandboxConfig> {
    let mut config = SandboxConfig {
        allow_degraded,
        ..SandboxConfig::default()
    };
    if let Some(uid) = uid_from_environment("RLVR_SANDBOX_UID")? {
        config.uid = uid;
        config.gid = uid;
    }
    let runner = uid_from_environment("RLVR_SANDBOX_RUNNER_UID")?
        .unwrap_or(if config.uid == 65533 { 65532 } else { 65533 });
    if runner == config.uid {
        return Err(Failure::new(
            USAGE,
            "RLVR_SANDBOX_RUNNER_UID must differ from RLVR_SANDBOX_UID",
        )
        .into());
    }
    config.runner_uid = runner;
    config.runner_gid = runner;
    Ok(config)
}

pub(crate) fn run(args: Args) -> anyhow::Result<Status> {
    let time = rlvr_verify::time_limit_from_seconds("--time-limit", args.time_limit)
        .map_err(|error| Failure::new(USAGE, error.to_string()))?;
    let source = fs_err::read_to_string(&args.source)
        .map_err(|error| Failure::new(USAGE, format!("cannot read the program: {error}")))?;
    if let Some(path) = &args.stdin {
        fs_err::metadata(path)
            .map_err(|error| Failure::new(USAGE, format!("cannot read stdin: {error}")))?;
    }
    let request = RunRequest {
        program: match args.lang {
            Language::Python => Program::Python { source },
        },
        stdin: args.stdin.clone().map_or(Stdin::Empty, Stdin::File),
        limits: Limits {
            wall: time,
            cpu: time,
            memory_bytes: args.memory_limit.saturating_mul(1 << 20),
            output_bytes: args.output_limit,
            ..Limits::default()
        },
        files: Vec::new(),
    };
    let config = sandbox_config(args.allow_degraded)?;
    let outcome = Sandbox::new(config).and_then(|sandbox| sandbox.run(&request));
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            if args.json {
                print_json(&JsonOutcome::sandbox_error(&error))?;
            }
            return Err(Failure::new(SANDBOX_UNAVAILABLE, error.to_string()).into());
        }
    };
    if args.json {
        print_json(&JsonOutcome::from_outcome(&outcome))?;
    } else {
        std::io::stdout()
            .write_all(&outcome.stdout)
            .context("writing stdout")?;
        std::io::stdout().flush().context("writing stdout")?;
        let mut stderr = std::io::stderr().lock();
        stderr
            .write_all(&outcome.stderr)
            .context("writing stderr")?;
        let truncated = match (outcome.stdout_truncated, outcome.stderr_truncated) {
            (true, true) => ", stdout and stderr truncated",
            (true, false) => ", stdout truncated",
            (false, true) => ", stderr truncated",
            (false, false) => "",
        };
        let ending = match (outcome.exit_code, outcome.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "no status".to_owned(),
        };
        writeln!(
            stderr,
            "rlvr: {} ({ending}), wall {:.1} ms, cpu {:.1} ms, peak memory {} KiB{truncated}",
            outcome.verdict.as_str(),
            milliseconds(outcome.wall),
            milliseconds(outcome.cpu),
            outcome.peak_memory_kib,
        )?;
    }
    Ok(if outcome.verdict == Verdict::Ok {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}
