//! `rlvr redteam`: run the built-in catalogue of hostile responses (each with an honest
//! control) against a code reward and print, per class, the attacks tried, the attacks that
//! earned reward or voided their score and the honest controls that lost reward (issue 27).
//!
//! Exit 0 when no attack earned reward or voided its score and every control kept its reward,
//! 1 when any did, 8 when the target could not be reached or failed to answer for some
//! response (the measurement is incomplete), 2 on usage errors, 3 when the sandbox cannot start.

use std::path::PathBuf;
use std::time::Duration;

use rlvr_redteam::{
    Catalogue, NativeTarget, OpenRlhfTarget, PYTHON_PATH_IN_SANDBOX, ProfileTarget,
    PythonFunctionTarget, Report, SandboxFusionTarget, ScoreRange, Target,
};
use rlvr_sandbox::ReadOnlyDirectory;
use rlvr_verify::{Profile, ProfileName};

use crate::command::products_common::print_json;
use crate::exit::{Error, Status};
use crate::stdout::{out, outln};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Measure this rlvr profile in process (judge, klear, code-r1, rllm, prime); with --url,
    /// the profile to ask the server for. The default target is `--profile judge`.
    #[arg(long, value_enum)]
    profile: Option<ProfileName>,
    /// Measure a running `rlvr serve` through its native API (`POST URL/v1/verify`).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Measure a SandboxFusion-compatible `/run_code` endpoint (the whole URL), scored the way
    /// verl's sandbox_fusion reward scores code.
    #[arg(long, value_name = "URL")]
    sandbox_fusion: Option<String>,
    /// Measure an OpenRLHF remote reward (`/get_reward`, the whole URL).
    #[arg(long, value_name = "URL")]
    openrlhf: Option<String>,
    /// Measure a Python reward function with verl's signature, `compute_score(data_source,
    /// solution_str, ground_truth, extra_info)`, run in the sandbox: MODULE:FUNCTION.
    #[arg(long, value_name = "MODULE:FUNCTION")]
    python: Option<String>,
    /// A directory holding the --python module, mounted read-only in the sandbox (it and its
    /// files must be readable by others); without it the module must be installed for the
    /// sandbox's interpreter.
    #[arg(long, value_name = "DIR", requires = "python")]
    python_path: Option<PathBuf>,
    /// The `data_source` passed to the --python function.
    #[arg(long, default_value = "codecontests", requires = "python")]
    data_source: String,
    /// Seconds one --python call may take before its process is killed and the response's
    /// score counts as voided.
    #[arg(long, default_value_t = 120.0, requires = "python")]
    call_timeout: f64,
    /// The rewards of a wrong and of a right answer for --openrlhf and --python, to scale
    /// their rewards to [0, 1] (`-1,1` for Klear-style 2p-1 rewards).
    #[arg(long, value_name = "WRONG,RIGHT", value_parser = ScoreRange::parse)]
    score_range: Option<ScoreRange>,
    /// A file holding the bearer token of --url, --sandbox-fusion or --openrlhf.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Seconds to wait for one HTTP answer (--url and --openrlhf send a whole phase at once).
    #[arg(long, default_value_t = 900.0)]
    http_timeout: f64,
    /// Engine workers for --profile (default: one per core).
    #[arg(long, value_parser = crate::command::parse_workers)]
    workers: Option<usize>,
    /// Run only the cases whose id contains one of these (a class name selects its class).
    #[arg(long, value_name = "TEXT")]
    only: Vec<String>,
    /// Run the catalogue as it was at this version (figures stay comparable across versions).
    #[arg(long)]
    catalogue_version: Option<u32>,
    /// Print the catalogue (id, class, version, description) and exit.
    #[arg(long)]
    list: bool,
    /// Print every program of the catalogue as an `rlvr verify` job line (`{"id", "response",
    /// "ground_truth"}`; ids `CASE#prepare`, `CASE#hostile`, `CASE#honest`, cross-job programs
    /// first) and exit.
    #[arg(long, conflicts_with = "list")]
    export_jobs: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Run with whatever sandbox protections this machine has (--profile, --python).
    #[arg(long)]
    allow_degraded: bool,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let mut catalogue = Catalogue::built_in();
    if let Some(version) = args.catalogue_version {
        catalogue = catalogue.at_version(version).map_err(Error::Catalogue)?;
    }
    let catalogue = catalogue.filtered(&args.only);
    if args.list {
        return list(&catalogue, args.json);
    }
    if args.export_jobs {
        for submission in rlvr_redteam::phases(&catalogue).iter().flatten() {
            outln!(
                "{}",
                serde_json::json!({
                    "id": submission.id,
                    "response": submission.response,
                    "ground_truth": submission.ground_truth(),
                })
            )?;
        }
        return Ok(Status::Success);
    }
    if catalogue.cases.is_empty() {
        return Err(Error::usage("no case matches --only"));
    }
    let target = build_target(&args)?;
    let report = rlvr_redteam::run(&catalogue, target.as_ref());
    print_report(&report, args.json)?;
    eprintln!(
        "rlvr redteam: {}: {} attacks in {:.1} s: {} earned reward, {} voided the score, {} honest controls lost reward, {} target errors",
        report.target,
        report.totals.attacks,
        report.seconds,
        report.totals.earned_reward,
        report.totals.voided_score,
        report.totals.controls_lost_reward,
        report.totals.failed
    );
    if report.incomplete() {
        return Err(Error::TargetFailed(format!(
            "the target failed to answer for {} cases (see the report)",
            report.totals.failed
        )));
    }
    Ok(if report.found_holes() {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}

fn usage(message: impl Into<String>) -> Error {
    Error::usage(message)
}

fn seconds(flag: &str, value: f64) -> Result<Duration, Error> {
    Ok(rlvr_verify::time_limit_from_seconds(flag, value)?)
}

fn build_target(args: &Args) -> Result<Box<dyn Target>, Error> {
    let remotes = [
        args.url.is_some(),
        args.sandbox_fusion.is_some(),
        args.openrlhf.is_some(),
        args.python.is_some(),
    ]
    .into_iter()
    .filter(|given| *given)
    .count();
    if remotes > 1 {
        return Err(usage(
            "give one target: --profile, --url, --sandbox-fusion, --openrlhf or --python",
        ));
    }
    if args.profile.is_some() && remotes == 1 && args.url.is_none() {
        return Err(usage(
            "--profile measures an rlvr profile in process (or names the profile with --url); it cannot be combined with --sandbox-fusion, --openrlhf or --python",
        ));
    }
    if args.score_range.is_some() && args.openrlhf.is_none() && args.python.is_none() {
        return Err(usage(
            "--score-range applies to --openrlhf and --python (rlvr targets scale by their profile)",
        ));
    }
    let token = crate::command::token_file::read_token_file(args.token_file.as_deref())?;
    let http_timeout = seconds("--http-timeout", args.http_timeout)?;
    let range = args.score_range.unwrap_or_default();
    if let Some(url) = &args.url {
        return Ok(Box::new(NativeTarget::new(
            url,
            args.profile.map(|profile| profile.as_str().to_owned()),
            token,
            http_timeout,
        )));
    }
    if let Some(url) = &args.sandbox_fusion {
        return Ok(Box::new(SandboxFusionTarget::new(url, token)));
    }
    if let Some(url) = &args.openrlhf {
        return Ok(Box::new(OpenRlhfTarget::new(
            url,
            token,
            range,
            http_timeout,
        )));
    }
    if let Some(function) = &args.python {
        let call_timeout = seconds("--call-timeout", args.call_timeout)?;
        let mut config = crate::sandbox_setup::sandbox_config(args.allow_degraded)?;
        if let Some(directory) = &args.python_path {
            let host = fs_err::canonicalize(directory)
                .map_err(|error| Error::input("--python-path", error))?;
            if !host.is_dir() {
                return Err(usage(format!(
                    "--python-path {}: not a directory",
                    directory.display()
                )));
            }
            config.read_only_directories.push(ReadOnlyDirectory {
                host,
                sandbox: PathBuf::from(PYTHON_PATH_IN_SANDBOX),
            });
        }
        let sandbox = rlvr_sandbox::Sandbox::new(config)
            .map_err(|error| Error::sandbox_unavailable("the sandbox cannot start", error))?;
        let target = PythonFunctionTarget::new(
            sandbox,
            function,
            args.python_path.is_some(),
            args.data_source.clone(),
            range,
            call_timeout,
        )
        .map_err(usage)?;
        return Ok(Box::new(target));
    }
    if token.is_some() {
        return Err(usage(
            "--token-file applies to --url, --sandbox-fusion and --openrlhf",
        ));
    }
    let profile = Profile::named(args.profile.unwrap_or(ProfileName::Judge));
    let sandbox = crate::sandbox_setup::start_sandbox(args.allow_degraded)?;
    if profile.name == ProfileName::Klear {
        crate::sandbox_setup::require_scientific_modules(&sandbox)?;
    }
    let workers = args
        .workers
        .unwrap_or_else(|| rlvr_engine::EngineConfig::default().workers);
    Ok(Box::new(ProfileTarget::new(profile, sandbox, workers)))
}

fn print_report(report: &Report, json: bool) -> Result<(), Error> {
    if json {
        return print_json(report);
    }
    out!("{}", report.markdown())?;
    Ok(())
}

fn list(catalogue: &Catalogue, json: bool) -> Result<Status, Error> {
    if json {
        let cases: Vec<serde_json::Value> = catalogue
            .cases
            .iter()
            .map(|case| {
                serde_json::json!({
                    "id": case.id,
                    "class": case.class,
                    "since": case.since,
                    "language": case.language,
                    "problem": catalogue.problems[case.problem].id,
                    "description": case.description,
                })
            })
            .collect();
        print_json(&serde_json::json!({"version": catalogue.version, "cases": cases}))?;
        return Ok(Status::Success);
    }
    outln!(
        "catalogue version {}: {} cases",
        catalogue.version,
        catalogue.cases.len()
    )?;
    outln!("| id | since | problem | what the hostile response does |")?;
    outln!("|---|---:|---|---|")?;
    for case in &catalogue.cases {
        outln!(
            "| `{}` | {} | {} | {} |",
            case.id,
            case.since,
            catalogue.problems[case.problem].id,
            case.description
        )?;
    }
    Ok(Status::Success)
}
