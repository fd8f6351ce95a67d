//! `rlvr run`: run one program once in the sandbox and print the outcome.
//!
//! The program's stdout and stderr are passed through and a one-line summary goes to stderr;
//! with `--json`, one object with exactly the keys of issue 4 goes to stdout instead (plus
//! `compile` for a compiled language, issue 24). Python runs as `python -I main.py`; every
//! other language is compiled in the sandbox first and run by the exec supervisor, as
//! `rlvr verify` runs it.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use rlvr_languages::{
    CompileLimits, CompileReport, CompileStatus, Compiler, Language, LanguageChoice, OnceError,
    OnceLimits, PrepareError,
};
use rlvr_sandbox::{
    Program, ResourceLimits, RunOutcome, RunRequest, RunVerdict, Sandbox, SandboxError, Stdin,
};

use crate::exit::{Error, Status};
use crate::stdout::STANDARD_OUTPUT;

fn parse_language(text: &str) -> Result<LanguageChoice, String> {
    Language::from_name(text).ok_or_else(|| {
        format!("{text:?} is not a language rlvr runs (python, cpp, cpp20, c, java, javascript, go, rust)")
    })
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The program's source file.
    source: PathBuf,
    /// Language of SOURCE: python, cpp (C++17; cpp20 for C++20), c, java, javascript, go, rust.
    #[arg(long, value_parser = parse_language, default_value = "python")]
    lang: LanguageChoice,
    /// Wall-clock limit of the compile, in seconds (compiled languages).
    #[arg(long, value_name = "SECS", default_value_t = 20.0)]
    compile_time_limit: f64,
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
    /// The compile of a compiled language (absent for Python and JavaScript).
    #[serde(skip_serializing_if = "Option::is_none")]
    compile: Option<JsonCompile>,
}

/// How the compile went.
#[derive(Debug, serde::Serialize)]
struct JsonCompile {
    status: CompileStatus,
    exit_code: Option<i32>,
    wall_ms: f64,
    diagnostics: String,
}

impl JsonCompile {
    fn from_report(report: &CompileReport) -> Self {
        JsonCompile {
            status: report.status,
            exit_code: report.exit_code,
            wall_ms: milliseconds(report.wall),
            diagnostics: report.diagnostics.clone(),
        }
    }
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
            compile: None,
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
            compile: None,
        }
    }
}

fn print_json(value: &JsonOutcome) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, value)?;
    writeln!(stdout).map_err(Error::write(STANDARD_OUTPUT))
}

/// The program's standard output, as it wrote it.
fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(Error::write(STANDARD_OUTPUT))
}

/// The stream's name in an error message.
const STANDARD_ERROR: &str = "standard error";

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let time = rlvr_verify::time_limit_from_seconds("--time-limit", args.time_limit)?;
    let source = fs_err::read_to_string(&args.source)
        .map_err(|error| Error::input("cannot read the program", error))?;
    if let Some(path) = &args.stdin {
        fs_err::metadata(path).map_err(|error| Error::input("cannot read stdin", error))?;
    }
    if args.lang.language != Language::Python {
        return run_other_language(&args, &source, time);
    }
    let request = RunRequest {
        program: Program::Python { source },
        stdin: args.stdin.clone().map_or(Stdin::Empty, Stdin::File),
        limits: ResourceLimits {
            wall: time,
            cpu: time,
            memory_bytes: args.memory_limit.saturating_mul(1 << 20),
            output_bytes: args.output_limit,
            ..ResourceLimits::default()
        },
        files: Vec::new(),
        network: rlvr_sandbox::Network::Isolated,
    };
    let config = crate::sandbox_setup::sandbox_config(args.allow_degraded)?;
    let outcome = Sandbox::new(config).and_then(|sandbox| sandbox.run(&request));
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            if args.json {
                print_json(&JsonOutcome::sandbox_error(&error))?;
            }
            return Err(Error::Sandbox(error));
        }
    };
    if args.json {
        print_json(&JsonOutcome::from_outcome(&outcome))?;
    } else {
        write_stdout(&outcome.stdout)?;
        let mut stderr = std::io::stderr().lock();
        stderr
            .write_all(&outcome.stderr)
            .map_err(Error::write(STANDARD_ERROR))?;
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
        )
        .map_err(Error::write(STANDARD_ERROR))?;
    }
    Ok(if outcome.verdict == RunVerdict::Ok {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}

/// `rlvr run --lang L` for a language other than Python: compile in the sandbox, then one run
/// through the exec supervisor. A program that does not compile is verdict `compile_error`
/// (exit 1), with the compiler's diagnostics on stderr; a missing toolchain is exit 3.
fn run_other_language(args: &Args, source: &str, time: Duration) -> Result<Status, Error> {
    let compile_time =
        rlvr_verify::time_limit_from_seconds("--compile-time-limit", args.compile_time_limit)?;
    let stdin = match &args.stdin {
        Some(path) => {
            fs_err::read(path).map_err(|error| Error::input("cannot read stdin", error))?
        }
        None => Vec::new(),
    };
    let config = crate::sandbox_setup::sandbox_config(args.allow_degraded)?;
    let sandbox = match Sandbox::new(config) {
        Ok(sandbox) => sandbox,
        Err(error) => {
            if args.json {
                print_json(&JsonOutcome::sandbox_error(&error))?;
            }
            return Err(Error::Sandbox(error));
        }
    };
    let memory_bytes = args.memory_limit.saturating_mul(1 << 20);
    let limits = OnceLimits {
        wall: time,
        memory_bytes,
        output_bytes: args.output_limit,
        compile: CompileLimits {
            wall: compile_time,
            memory_bytes: memory_bytes.max(2 << 30),
            ..CompileLimits::default()
        },
    };
    let once = match rlvr_languages::run_once(
        &sandbox,
        Compiler::shared(),
        args.lang,
        source,
        &stdin,
        limits,
    ) {
        Ok(once) => once,
        Err(error) => {
            let unavailable = matches!(error, OnceError::Prepare(PrepareError::Unavailable(_)));
            if args.json {
                let mut outcome = JsonOutcome::sandbox_error(&SandboxError::InvalidRequest {
                    reason: error.to_string(),
                });
                if unavailable {
                    outcome.verdict = "language_unavailable";
                }
                outcome.stderr = error.to_string();
                print_json(&outcome)?;
            }
            return Err(Error::Language(error));
        }
    };
    let compile = once.compile.as_deref().map(JsonCompile::from_report);
    let protections: Vec<&'static str> = sandbox
        .protections()
        .iter()
        .map(|protection| protection.as_str())
        .collect();
    let outcome = match &once.run {
        Some(run) => {
            let report = &run.report;
            let signaled = report.ending != rlvr_languages::exec_protocol::ending::EXITED;
            JsonOutcome {
                verdict: run.verdict.as_str(),
                exit_code: (!signaled).then(|| i32::try_from(report.exit_code).unwrap_or(-1)),
                signal: (signaled && report.signal > 0)
                    .then(|| i32::try_from(report.signal).unwrap_or(-1)),
                wall_ms: report.wall_us as f64 / 1000.0,
                cpu_ms: report.cpu_us as f64 / 1000.0,
                peak_memory_kib: report.max_resident_kib,
                stdout: String::from_utf8_lossy(&report.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&report.stderr).into_owned()
                    + &String::from_utf8_lossy(&report.message),
                stdout_truncated: report.stdout_truncated,
                stderr_truncated: false,
                protections,
                compile,
            }
        }
        None => JsonOutcome {
            verdict: "compile_error",
            exit_code: None,
            signal: None,
            wall_ms: 0.0,
            cpu_ms: 0.0,
            peak_memory_kib: 0,
            stdout: String::new(),
            stderr: once
                .compile
                .as_deref()
                .map(|report| report.diagnostics.clone())
                .unwrap_or_default(),
            stdout_truncated: false,
            stderr_truncated: false,
            protections,
            compile,
        },
    };
    if args.json {
        print_json(&outcome)?;
    } else {
        write_stdout(outcome.stdout.as_bytes())?;
        let mut stderr = std::io::stderr().lock();
        stderr
            .write_all(outcome.stderr.as_bytes())
            .map_err(Error::write(STANDARD_ERROR))?;
        let compile_note = outcome.compile.as_ref().map_or(String::new(), |compile| {
            format!(", compiled in {:.1} ms", compile.wall_ms)
        });
        writeln!(
            stderr,
            "rlvr: {} ({} {}), wall {:.1} ms, cpu {:.1} ms, peak memory {} KiB{compile_note}",
            outcome.verdict,
            args.lang.language,
            match (outcome.exit_code, outcome.signal) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(signal)) => format!("signal {signal}"),
                (None, None) => "no status".to_owned(),
            },
            outcome.wall_ms,
            outcome.cpu_ms,
            outcome.peak_memory_kib,
        )
        .map_err(Error::write(STANDARD_ERROR))?;
    }
    Ok(if outcome.verdict == "ok" {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}
