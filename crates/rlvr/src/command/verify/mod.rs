//! `rlvr verify`: score model responses against tests. Job lines in, one result line per job
//! out, in job order, each written and flushed as soon as it and every earlier one are final.
//!
//! `--out FILE` is written to a temporary beside it and moved into place at the end (never
//! over the jobs or dataset file); on Ctrl-C or SIGTERM the results finished by then are moved
//! into place (exit 130), on a write error nothing is (exit 6). Exit 1 when some job was
//! unscored: `invalid_job`, `sandbox_error`, `language_unavailable` or `checker_error`.
//!
//! A job scored against a `--dataset` row carries `"answer_may_vary"` (issue 25): `true`, with
//! the phrases, when the row's statement accepts more than one answer, so a trainer can mask
//! or down-weight it.

mod output;
mod summary;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rlvr_dataset::answer_variety::VarietyPhrase;
use rlvr_engine::{Engine, EngineConfig, InOrder, Job, JobTests, parse_job_line};
use rlvr_verify::{JobResult, PlanOptions, Profile, ProfileName, describe_profiles};
use serde_json::Value;

use self::output::ResultsOutput;
use self::summary::Summary;
use crate::exit::{Error, Status};
use crate::stdout::out;
use rlvr_dataset::DatasetRows;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Job lines (`{"id", "response", "ground_truth"}` or, with --dataset, `{"id", "response",
    /// "index"}`); `-` reads standard input.
    #[arg(required_unless_present = "list_profiles")]
    jobs: Option<PathBuf>,
    /// The dataset file whose zero-based rows the jobs' `index` fields name.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// Reward rules: judge (ours, the default) or a reference's.
    #[arg(long, value_enum, default_value_t = ProfileName::Judge)]
    profile: ProfileName,
    /// Write results here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Jobs run at once, each in its own sandbox (default: one per core).
    #[arg(long, value_parser = crate::command::parse_workers)]
    workers: Option<usize>,
    /// Seconds per test, replacing the profile's limit (at most 3600).
    #[arg(long, value_parser = parse_time_limit)]
    time_limit: Option<Duration>,
    /// Memory per test in MB, replacing the profile's limit (at most 1048576).
    #[arg(long, value_parser = parse_memory_limit)]
    memory_limit: Option<u64>,
    /// Run at most N tests per job (N >= 1), chosen deterministically from --seed and the job.
    #[arg(long, value_parser = parse_max_tests)]
    max_tests: Option<usize>,
    /// Run every test (no sampling, e.g. Klear's 16).
    #[arg(long)]
    all_tests: bool,
    /// Languages the judge accepts in responses, comma-separated (python, cpp, c, java,
    /// javascript, go, rust; default: all), for jobs that do not pin their own `languages`.
    #[arg(long, value_delimiter = ',', value_parser = parse_language, value_name = "LIST")]
    languages: Option<Vec<rlvr_verify::Language>>,
    /// Seed for test sampling.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Add per-test verdicts and times to each result.
    #[arg(long)]
    details: bool,
    /// `binary` gives 1/0 and may stop at the first failure (judge only); `rate` is the default.
    #[arg(long, value_enum, default_value_t = Reward::Rate)]
    reward: Reward,
    /// Run with whatever sandbox protections this machine has (each result still lists them).
    #[arg(long)]
    allow_degraded: bool,
    /// Print every profile's rules as one table and exit.
    #[arg(long)]
    list_profiles: bool,
    /// Your copy of testlib.h, put in place of a C++ checker's `#include "testlib.h"`
    /// (`checker_cpp` ground truths; rlvr ships none).
    #[arg(long, value_name = "PATH")]
    testlib_header: Option<PathBuf>,
}

/// What a worker hands back: the job's position, its id and the result, or `None` when the
/// run was interrupted before the job finished (such results are never written), and the
/// job's statement phrases when it came from a `--dataset` row.
type Finished = (u64, Value, Option<JobResult>, Marks);

/// For a job scored against a `--dataset` row: the phrases of its statement that accept more
/// than one answer (empty: none). `None` for a ground truth given inline (no statement).
type Marks = Option<Vec<VarietyPhrase>>;

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    if args.list_profiles {
        out!("{}", describe_profiles())?;
        return Ok(Status::Success);
    }
    let profile = resolve_profile(&args)?;
    let jobs_path = args
        .jobs
        .clone()
        .expect("clap requires JOBS without --list-profiles");
    refuse_overwriting_inputs(&args, &jobs_path)?;
    let testlib_header =
        crate::command::testlib_header::read_testlib_header(args.testlib_header.as_deref())?;
    let input = open_jobs(&jobs_path)?;
    let dataset = match &args.dataset {
        Some(path) => Some(DatasetRows::open(path).map_err(|error| Error::Dataset(error.into()))?),
        None => None,
    };
    let output = ResultsOutput::open(args.out.as_deref())?;
    let engine = start_engine(&args, &profile, testlib_header)?;
    // Ctrl-C and SIGTERM set the engine's cancel flag: tests not started are skipped, and
    // results that were not final by then are never written.
    let interrupted = engine.cancel_flag();
    cancel_on_signals(&interrupted)?;

    let progress = crate::progress::jobs_bar(&jobs_path);
    let (sender, receiver) = mpsc::channel::<Finished>();
    let writer = spawn_writer(
        receiver,
        output,
        progress.clone(),
        args.details,
        Arc::clone(&interrupted),
    );

    let started = Instant::now();
    let submitter = Submitter {
        engine: &engine,
        sender,
        interrupted: &interrupted,
        dataset: dataset.as_ref(),
        profile: Arc::new(profile),
        options: plan_options(&args),
    };
    let submitted = submitter.submit_all(input, &jobs_path)?;
    let statistics = Arc::clone(engine.statistics());
    engine.shutdown();
    let (summary, output, written) = writer.join().expect("the writer thread does not panic");
    progress.finish_and_clear();
    written.map_err(Error::write("results"))?;
    // The results are complete (or, after an interrupt, every finished one): into place.
    output.finish()?;
    summary.print(started.elapsed(), &statistics);
    final_status(&summary, submitted, interrupted.load(Ordering::Relaxed))
}

/// `--out` may name neither the jobs file nor the dataset.
fn refuse_overwriting_inputs(args: &Args, jobs_path: &Path) -> Result<(), Error> {
    let Some(out) = &args.out else {
        return Ok(());
    };
    let mut inputs = Vec::new();
    if jobs_path.as_os_str() != "-" {
        inputs.push(jobs_path);
    }
    if let Some(dataset) = &args.dataset {
        inputs.push(dataset.as_path());
    }
    rlvr_output::refuse_overwriting_inputs(&inputs, &[out.as_path()])?;
    Ok(())
}

/// The sandbox (with Klear's scientific modules when its profile needs them) and the engine's
/// workers over it.
fn start_engine(
    args: &Args,
    profile: &Profile,
    testlib_header: Option<Arc<str>>,
) -> Result<Engine, Error> {
    let sandbox = crate::sandbox_setup::start_sandbox(args.allow_degraded)?;
    if profile.name == ProfileName::Klear {
        crate::sandbox_setup::require_scientific_modules(&sandbox)?;
    }
    let workers = args
        .workers
        .unwrap_or_else(|| EngineConfig::default().workers)
        .max(1);
    Ok(Engine::start(
        sandbox,
        EngineConfig {
            workers,
            queue_capacity: workers * 4,
            testlib_header,
        },
    ))
}

/// Ctrl-C and SIGTERM set `interrupted`.
fn cancel_on_signals(interrupted: &Arc<AtomicBool>) -> Result<(), Error> {
    for (signal, name) in [
        (signal_hook::consts::SIGINT, "Ctrl-C"),
        (signal_hook::consts::SIGTERM, "SIGTERM"),
    ] {
        signal_hook::flag::register(signal, Arc::clone(interrupted)).map_err(|source| {
            Error::SignalHandler {
                signal: name,
                source,
            }
        })?;
    }
    Ok(())
}

/// What the writer thread hands back: the summary of what it wrote, the output to move into
/// place, and the write error that stopped it, if any.
type Written = (Summary, ResultsOutput, std::io::Result<()>);

/// The thread that writes each result line in job order, as soon as it and every earlier one
/// are final, and flushes it; a write error sets `cancel` (nothing more can be written).
fn spawn_writer(
    receiver: mpsc::Receiver<Finished>,
    mut output: ResultsOutput,
    progress: indicatif::ProgressBar,
    details: bool,
    cancel: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Written> {
    std::thread::spawn(move || -> Written {
        let mut order = InOrder::default();
        let mut summary = Summary::default();
        let mut written = 0u64;
        for (sequence, id, result, marks) in receiver {
            for (id, result, marks) in order.insert(sequence, (id, result, marks)) {
                // A job interrupted mid-run is not final: stop at the first one.
                let Some(result) = result else {
                    return (summary, output, Ok(()));
                };
                summary.add(&result, marks.as_deref());
                let line = result_line(id, result, details, marks);
                if let Err(error) = writeln!(output, "{line}").and_then(|()| output.flush()) {
                    // Nothing more can be written: stop the engine too.
                    cancel.store(true, Ordering::Relaxed);
                    return (summary, output, Err(error));
                }
                progress.inc(1);
                // `RLVR_LOG=rlvr::verify=debug`: how far the output is (its temporary has no
                // name to look at until the end).
                written += 1;
                tracing::debug!(target: "rlvr::verify", "result {written} written");
            }
        }
        (summary, output, Ok(()))
    })
}

/// The plan options the flags give every job (each job adds its identity and languages).
fn plan_options(args: &Args) -> PlanOptions {
    PlanOptions {
        seed: args.seed,
        job_identity: Vec::new(),
        max_tests: args.max_tests,
        all_tests: args.all_tests,
        time_limit: args.time_limit,
        memory_limit_bytes: args.memory_limit,
        languages: rlvr_verify::LanguageRequest {
            requested: None,
            allowed: args.languages.clone(),
        },
    }
}

/// Reads job lines and hands each to the engine, or its invalid-job result to the writer.
struct Submitter<'run> {
    engine: &'run Engine,
    sender: mpsc::Sender<Finished>,
    interrupted: &'run Arc<AtomicBool>,
    dataset: Option<&'run DatasetRows>,
    profile: Arc<Profile>,
    options: PlanOptions,
}

impl Submitter<'_> {
    /// Every line of `input` until its end or an interrupt: the number of jobs submitted
    /// (blank lines are none). The sender is dropped at the end, so the writer ends when the
    /// last result is in.
    fn submit_all(self, input: Box<dyn BufRead + Send>, jobs_path: &Path) -> Result<u64, Error> {
        let mut sequence = 0;
        for (line_index, bytes) in input.split(b'\n').enumerate() {
            if self.interrupted.load(Ordering::Relaxed) {
                break;
            }
            let mut bytes = bytes.map_err(|error| {
                Error::input(
                    format!("{}: reading line {}", jobs_path.display(), line_index + 1),
                    error,
                )
            })?;
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            if self.submit_line(bytes, line_index + 1, sequence) {
                sequence += 1;
            }
        }
        Ok(sequence)
    }

    /// One job line, the job at `sequence`: false for a blank line (no job).
    fn submit_line(&self, bytes: Vec<u8>, line_number: usize, sequence: u64) -> bool {
        // A line that is not UTF-8 is one invalid job, not the end of the run.
        let line = match String::from_utf8(bytes) {
            Ok(line) => line,
            Err(error) => {
                let reason = format!(
                    "line {line_number}: not valid UTF-8 (byte offset {} in the line)",
                    error.utf8_error().valid_up_to()
                );
                let result = JobResult::invalid_job(self.profile.name, reason);
                let _ = self
                    .sender
                    .send((sequence, Value::Null, Some(result), None));
                return true;
            }
        };
        if line.trim().is_empty() {
            return false;
        }
        match prepare(
            &line,
            line_number,
            self.dataset,
            &self.profile,
            &self.options,
        ) {
            Ok((id, job, marks)) => {
                let sender = self.sender.clone();
                let interrupted = Arc::clone(self.interrupted);
                self.engine.submit(
                    job,
                    Box::new(move |result| {
                        let result = (!interrupted.load(Ordering::Relaxed)).then_some(result);
                        let _ = sender.send((sequence, id, result, marks));
                    }),
                );
            }
            Err((id, reason)) => {
                let mut result = JobResult::invalid_job(
                    self.profile.name,
                    format!("line {line_number}: {reason}"),
                );
                result.tests = None;
                let _ = self.sender.send((sequence, id, Some(result), None));
            }
        }
        true
    }
}

/// The run's status once its results are in place: interrupted, some results missing, some
/// jobs unscored, or success.
fn final_status(summary: &Summary, submitted: u64, interrupted: bool) -> Result<Status, Error> {
    if interrupted {
        eprintln!(
            "rlvr verify: interrupted; every result finished before the interrupt was written ({} of {submitted} jobs)",
            summary.jobs()
        );
        return Ok(Status::Interrupted);
    }
    if summary.jobs() != submitted {
        return Err(Error::ResultsMissing {
            written: summary.jobs(),
            jobs: submitted,
        });
    }
    Ok(if summary.unscored() > 0 {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}

/// `--time-limit`: validated before any work (a NaN or 1e300 once panicked the run).
fn parse_time_limit(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|error| format!("{error}"))?;
    rlvr_verify::time_limit_from_seconds("--time-limit", seconds).map_err(|error| error.to_string())
}

/// `--languages`: a language rlvr runs.
fn parse_language(name: &str) -> Result<rlvr_verify::Language, String> {
    rlvr_verify::Language::from_name(name)
        .map(|choice| choice.language)
        .ok_or_else(|| format!("{name:?} is not a language rlvr runs"))
}

/// `--max-tests`: at least 1 (0 would score every job 0 without running anything).
fn parse_max_tests(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("--max-tests must be at least 1, found 0".to_owned()),
        Ok(count) => Ok(count),
        Err(error) => Err(error.to_string()),
    }
}

/// `--memory-limit` in MB, returned in bytes.
fn parse_memory_limit(text: &str) -> Result<u64, String> {
    let megabytes: u64 = text.parse().map_err(|error| format!("{error}"))?;
    rlvr_verify::memory_limit_from_megabytes("--memory-limit", megabytes)
        .map_err(|error| error.to_string())
}

/// `--reward`: how test verdicts become the reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Reward {
    /// The profile's own rule (the pass rate for the judge).
    Rate,
    /// 1 when every test passes, else 0; may stop at the first failure (judge only).
    Binary,
}

fn resolve_profile(args: &Args) -> Result<Profile, Error> {
    let profile = Profile::named(args.profile);
    if args.reward == Reward::Binary {
        return profile.with_binary_reward().map_err(Error::Profile);
    }
    Ok(profile)
}

fn open_jobs(path: &PathBuf) -> Result<Box<dyn BufRead + Send>, Error> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin())));
    }
    if path.is_dir() {
        return Err(Error::empty_input(format!(
            "{}: is a directory, not a jobs file",
            path.display()
        )));
    }
    let file = fs_err::File::open(path).map_err(Error::Unreadable)?;
    Ok(Box::new(std::io::BufReader::with_capacity(1 << 20, file)))
}

/// Turns a job line into a job, or into the reason it is invalid (keeping its id).
fn prepare(
    line: &str,
    line_number: usize,
    dataset: Option<&DatasetRows>,
    profile: &Arc<Profile>,
    options: &PlanOptions,
) -> Result<(Value, Job, Marks), (Value, String)> {
    let parsed = parse_job_line(line).map_err(|error| (error.id, error.reason))?;
    let (suite, marks) = match parsed.tests {
        JobTests::Inline(suite) => (suite, None),
        JobTests::DatasetRow(row) => match dataset {
            None => return Err((parsed.id, "`index` needs --dataset".to_owned())),
            Some(dataset) => {
                let (suite, phrases) = rlvr_verify::row_tests(dataset, row)
                    .map_err(|error| (parsed.id.clone(), format!("{error:#}")))?;
                (suite, Some(phrases))
            }
        },
    };
    let mut options = options.clone();
    options.job_identity = if parsed.id.is_null() {
        line_number.to_string().into_bytes()
    } else {
        parsed.id.to_string().into_bytes()
    };
    // The job's own keys win; `--languages` is the default for the allowed ones.
    let allowed = parsed.languages.allowed.or(options.languages.allowed);
    options.languages = rlvr_verify::LanguageRequest {
        requested: parsed.languages.requested,
        allowed,
    };
    if let (Some(requested), Some(allowed)) =
        (options.languages.requested, &options.languages.allowed)
        && !allowed.contains(&requested.language)
    {
        return Err((
            parsed.id,
            format!(
                "`language` {} is not among the allowed languages",
                requested.language
            ),
        ));
    }
    let job = Job {
        profile: Arc::clone(profile),
        response: parsed.response,
        suite,
        options,
    };
    Ok((parsed.id, job, marks))
}

/// `{"id", "score", "pass_rate", "passed", "total", "all_passed", "status", "profile", ...}`,
/// then for a `--dataset` job `"answer_may_vary"` and, when it is true,
/// `"answer_may_vary_phrases": [{"kind", "phrase", "epsilon"}]`.
fn result_line(id: Value, result: JobResult, details: bool, marks: Marks) -> String {
    let mut line = rlvr_engine::result_line(id, result, details);
    if let (Some(phrases), Value::Object(fields)) = (marks, &mut line) {
        fields.insert(
            "answer_may_vary".to_owned(),
            Value::Bool(!phrases.is_empty()),
        );
        if !phrases.is_empty() {
            fields.insert(
                "answer_may_vary_phrases".to_owned(),
                serde_json::to_value(&phrases).unwrap_or(Value::Null),
            );
        }
    }
    line.to_string()
}
