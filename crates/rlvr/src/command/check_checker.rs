//! `rlvr check-checker FILE`: for every record whose ground truth names a checker, probe the
//! checker on each test's expected output (it must accept it, and reject the empty output and
//! two garbled copies: `rlvr_verify::checker::assurance`) and report the records whose checker
//! accepts garbage or refuses the answer (issue 25).
//!
//! FILE holds release records (`metadata.ground_truth`, else `label`), upstream records
//! (`reward_model.ground_truth`) or `rlvr verify` job lines (`ground_truth`), one a line. A
//! checker rlvr cannot use (an unknown name, one given with functional tests) is a problem of
//! its record. Built-in checkers are probed in the verifier; Python and C++ checkers run in
//! the sandbox exactly as `rlvr verify` runs them (the sandbox starts at the first one), with
//! the same attribution of a failure (issue 32): a probe that makes the checker fail while it
//! accepts the expected output is rejected (`checker_rejected`, counted, not a finding), and
//! a `checker_error` (it fails on the expected output too) is a finding. Exit 0 when every
//! checker is sound, 1 when any
//! record has a problem (or a line is not a record), 2 when the file cannot be read or holds
//! none, 3 when a sandboxed checker needs a sandbox this machine cannot start.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::Duration;

use rlvr_dataset::{Tests, ground_truth_of_row};
use rlvr_engine::{CheckerJudge, CheckerLimits};
use rlvr_sandbox::Sandbox;
use rlvr_verify::checker::assurance::{Probe, expected_is_blank, probe};
use rlvr_verify::checker::{CheckedTest, NoSandbox};
use rlvr_verify::{Profile, ProfileName, TestSuite, TestSuiteError, parse_python_json};
use serde_json::Value;

use crate::command::products_common::print_json;
use crate::exit::{Error, Status};
use crate::stdout::outln;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Records or job lines (JSON Lines) whose ground truths name checkers.
    file: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Your copy of testlib.h, put in place of a C++ checker's `#include "testlib.h"`.
    #[arg(long, value_name = "PATH")]
    testlib_header: Option<PathBuf>,
    /// Seconds a sandboxed checker may take per probe (its memory limit is 1 GiB).
    #[arg(long, default_value_t = 10.0)]
    checker_time_limit: f64,
    /// Run sandboxed checkers with whatever sandbox protections this machine has.
    #[arg(long)]
    allow_degraded: bool,
}

/// What probing sandboxed checkers needs: the sandbox (started at the first one) and a
/// checker judge, as `rlvr verify`'s workers hold.
struct Sandboxed {
    allow_degraded: bool,
    testlib_header: Option<Arc<str>>,
    limits: CheckerLimits,
    running: Option<(Sandbox, CheckerJudge)>,
}

impl Sandboxed {
    fn judge(&mut self) -> Result<(&Sandbox, &mut CheckerJudge), Error> {
        if self.running.is_none() {
            let sandbox = crate::sandbox_setup::start_sandbox(self.allow_degraded)?;
            self.running = Some((sandbox, CheckerJudge::new(self.testlib_header.clone())));
        }
        let (sandbox, judge) = self.running.as_mut().expect("started above");
        Ok((sandbox, judge))
    }
}

/// One probe a record's checker got wrong.
#[derive(Debug, serde::Serialize)]
struct Finding {
    /// Zero-based test index.
    test: usize,
    probe: Probe,
    failure: &'static str,
    /// A sandboxed checker's failure on this probe (`checker_error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    checker_error: Option<String>,
}

/// A record whose checker is unsound or unusable.
#[derive(Debug, serde::Serialize)]
struct RecordProblem {
    row: u64,
    line: u64,
    /// The checker's name (absent when it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    checker: Option<String>,
    /// Why it cannot be used (an unknown name, a sandboxed checker).
    #[serde(skip_serializing_if = "Option::is_none")]
    unusable: Option<String>,
    /// The probes it got wrong.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
}

#[derive(Debug, Default, serde::Serialize)]
struct Report {
    /// Rows read (non-blank lines).
    rows: u64,
    /// Rows whose ground truth names a checker.
    with_checker: u64,
    /// Per checker name, how many rows use it.
    checkers: BTreeMap<String, u64>,
    /// Tests probed.
    tests_probed: u64,
    /// Tests whose expected output is blank (the empty-output probe does not apply: a program
    /// printing nothing is right there).
    blank_expected_tests: u64,
    /// Records whose checker accepts garbage.
    accepts_garbage: u64,
    /// Records whose checker refuses its own expected output.
    rejects_expected: u64,
    /// Records whose sandboxed checker failed (`checker_error`) on a probe.
    checker_errors: u64,
    /// Probes a sandboxed checker failed on while it accepts the expected output: rejected,
    /// as `rlvr verify` scores such an output (`checker_rejected`, a wrong answer; issue 32).
    checker_rejected: u64,
    /// Records whose checker cannot be used.
    unusable: u64,
    /// Every record with a problem, in row order.
    problems: Vec<RecordProblem>,
    /// Lines that are not records or job lines (`FILE:LINE: row R, byte offset B: reason`).
    bad_lines: Vec<String>,
}

/// The ground truth of a record (the dataset's rule, [`ground_truth_of_row`]) or of a job
/// line, and the field it came from.
fn ground_truth(value: &Value) -> Option<(&'static str, &Value)> {
    fn present(found: Option<&Value>) -> Option<&Value> {
        found.filter(|value| !value.is_null())
    }
    ground_truth_of_row(value)
        .or_else(|| present(value.get("ground_truth")).map(|truth| ("ground_truth", truth)))
        .or_else(|| {
            present(
                value
                    .get("reward_model")
                    .and_then(|reward| reward.get("ground_truth")),
            )
            .map(|truth| ("reward_model.ground_truth", truth))
        })
}

fn check_line(
    report: &mut Report,
    sandboxed: &mut Sandboxed,
    path: &Path,
    line: &[u8],
    (row, line_number, offset): (u64, u64, u64),
) -> Result<(), Error> {
    let bad = |reason: String| {
        format!(
            "{}:{line_number}: row {row}, byte offset {offset}: {reason}",
            path.display()
        )
    };
    let value = match parse_python_json(line) {
        Ok(value) => value,
        Err(error) => {
            report.bad_lines.push(bad(format!("not JSON: {error}")));
            return Ok(());
        }
    };
    let Some((field, truth)) = ground_truth(&value) else {
        report.bad_lines.push(bad(
            "no `metadata.ground_truth`, `label`, `ground_truth` or `reward_model.ground_truth`"
                .to_owned(),
        ));
        return Ok(());
    };
    let suite = match TestSuite::from_value(truth) {
        Ok(suite) => suite,
        Err(error @ TestSuiteError::Checker { .. }) => {
            report.with_checker += 1;
            report.unusable += 1;
            report.problems.push(RecordProblem {
                row,
                line: line_number,
                checker: None,
                unusable: Some(format!("field `{field}`: {error}")),
                findings: Vec::new(),
            });
            return Ok(());
        }
        Err(error) => {
            report
                .bad_lines
                .push(bad(format!("field `{field}`: {error}")));
            return Ok(());
        }
    };
    let Some(checker) = suite.checker else {
        return Ok(());
    };
    report.with_checker += 1;
    *report.checkers.entry(checker.to_string()).or_default() += 1;
    let Tests::InputOutput(tests) = &suite.tests else {
        // `TestSuite` refuses a checker with functional tests.
        return Ok(());
    };
    let join = Profile::named(ProfileName::Judge).value_join;
    let mut findings = Vec::new();
    for (index, test) in tests.iter().enumerate() {
        let expected = join.render_output(&test.output);
        report.tests_probed += 1;
        report.blank_expected_tests += u64::from(expected_is_blank(&expected));
        let input = join.render(&test.input);
        let test = CheckedTest {
            input: &input,
            expected: &expected,
        };
        // Only a sandboxed checker needs the sandbox (started at the first one).
        let probed = if checker.is_sandboxed() {
            let limits = sandboxed.limits;
            let (sandbox, judge) = sandboxed.judge()?;
            probe(&checker, test, &mut judge.sandboxed(sandbox, limits))
        } else {
            probe(&checker, test, &mut NoSandbox)
        };
        report.checker_rejected += probed.rejected;
        findings.extend(probed.failures.into_iter().map(|failure| Finding {
            test: index,
            probe: failure.probe,
            failure: failure.failure,
            checker_error: failure.checker_error,
        }));
    }
    if let Some((_, judge)) = sandboxed.running.as_mut() {
        // One record is one job: its checker's verdicts on expected outputs are dropped.
        judge.finish_job();
    }
    if findings.is_empty() {
        return Ok(());
    }
    if findings
        .iter()
        .any(|finding| finding.checker_error.is_some())
    {
        report.checker_errors += 1;
    }
    let judged = |finding: &&Finding| finding.checker_error.is_none();
    if findings
        .iter()
        .filter(judged)
        .any(|finding| finding.probe != Probe::Expected)
    {
        report.accepts_garbage += 1;
    }
    if findings
        .iter()
        .filter(judged)
        .any(|finding| finding.probe == Probe::Expected)
    {
        report.rejects_expected += 1;
    }
    report.problems.push(RecordProblem {
        row,
        line: line_number,
        checker: Some(checker.to_string()),
        unusable: None,
        findings,
    });
    Ok(())
}

fn read_report(path: &Path, sandboxed: &mut Sandboxed) -> Result<Report, Error> {
    if path.is_dir() {
        return Err(Error::empty_input(format!(
            "{}: is a directory, not a file",
            path.display()
        )));
    }
    let file = fs_err::File::open(path).map_err(Error::Unreadable)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut report = Report::default();
    let mut line = Vec::new();
    let (mut line_number, mut offset) = (0u64, 0u64);
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|error| Error::input(path.display().to_string(), error))?;
        if read == 0 {
            break;
        }
        line_number += 1;
        let start = offset;
        offset += read as u64;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let row = report.rows;
        report.rows += 1;
        check_line(
            &mut report,
            sandboxed,
            path,
            &line,
            (row, line_number, start),
        )?;
    }
    if report.rows == 0 {
        return Err(Error::empty_input(format!(
            "{}: holds no records",
            path.display()
        )));
    }
    Ok(report)
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let Some(time) = Duration::try_from_secs_f64(args.checker_time_limit)
        .ok()
        .filter(|time| !time.is_zero() && *time <= rlvr_verify::MAX_TIME_LIMIT)
    else {
        return Err(Error::usage(format!(
            "--checker-time-limit must be more than 0 and at most {} seconds, found {}",
            rlvr_verify::MAX_TIME_LIMIT.as_secs(),
            args.checker_time_limit
        )));
    };
    let mut sandboxed = Sandboxed {
        allow_degraded: args.allow_degraded,
        testlib_header: crate::command::testlib_header::read_testlib_header(
            args.testlib_header.as_deref(),
        )?,
        limits: CheckerLimits {
            time,
            memory_bytes: 1 << 30,
        },
        running: None,
    };
    let report = read_report(&args.file, &mut sandboxed)?;
    if args.json {
        print_json(&report)?;
    } else {
        print_text(&report, &args.file)?;
    }
    let problems = !report.problems.is_empty() || !report.bad_lines.is_empty();
    Ok(if problems {
        Status::ProblemsFound
    } else {
        Status::Success
    })
}

fn print_text(report: &Report, path: &Path) -> Result<(), Error> {
    let checkers: Vec<String> = report
        .checkers
        .iter()
        .map(|(name, rows)| format!("{name} {rows}"))
        .collect();
    outln!(
        "{} rows, {} with a checker{}; {} tests probed ({} with a blank expected output, where the empty output is the answer)",
        report.rows,
        report.with_checker,
        if checkers.is_empty() {
            String::new()
        } else {
            format!(" ({})", checkers.join(", "))
        },
        report.tests_probed,
        report.blank_expected_tests
    )?;
    for problem in &report.problems {
        let place = format!("{}:{}: row {}", path.display(), problem.line, problem.row);
        if let Some(reason) = &problem.unusable {
            outln!("{place}: unusable checker: {reason}")?;
        }
        for finding in &problem.findings {
            let detail = finding
                .checker_error
                .as_ref()
                .map(|error| format!(" on the {} probe: {error}", finding.probe.name()))
                .unwrap_or_default();
            outln!(
                "{place}: checker {}: test {}: {}{detail}",
                problem.checker.as_deref().unwrap_or("?"),
                finding.test,
                finding.failure
            )?;
        }
    }
    outln!(
        "{} accept garbage, {} reject their expected output, {} fail (checker_error), {} unusable",
        report.accepts_garbage,
        report.rejects_expected,
        report.checker_errors,
        report.unusable
    )?;
    if report.checker_rejected > 0 {
        outln!(
            "{} probe(s) made a checker fail while it accepts the expected output: rejected, as `rlvr verify` scores them (checker_rejected, a wrong answer)",
            report.checker_rejected
        )?;
    }
    for line in &report.bad_lines {
        eprintln!("rlvr: bad line: {line}");
    }
    Ok(())
}
