//! Job results: the reward line written for each job, and the aggregation of test verdicts
//! into it.

use std::time::Duration;

use crate::checker::Checker;
use crate::checker::{CheckerOutcome, CheckerScore};
use crate::plan::{ExecutionPlan, StageCondition};
use crate::profile::ProfileName;
use crate::scoring::{KLEAR_NO_CODE, Scoring};
use crate::tampering::{TamperCounts, Tampering};
use crate::verdict::{ExecutionResult, Verdict};

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Tests ran and were scored.
    Ok,
    /// The response failed the profile's format gate.
    FormatError,
    /// No code was found in the response.
    NoCode,
    /// The job line or its ground truth is malformed.
    InvalidJob,
    /// The sandbox failed; the score is `null`, never a silent 0.
    SandboxError,
    /// The response's language has no toolchain on this machine (issue 24); the score is
    /// `null`, as for `sandbox_error`.
    LanguageUnavailable,
    /// The ground truth's sandboxed checker failed on at least one test (issue 25): the score
    /// is `null`, never a pass; the tests are still reported.
    CheckerError,
}

/// One test in a detailed report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TestReport {
    /// Zero-based index of the test in the record's suite.
    pub index: usize,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its wall time in milliseconds, when measured.
    pub wall_ms: Option<u64>,
    /// Judge functional tests: comparisons between two of the solution's own objects, whose
    /// result is the solution's word (omitted when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub untrusted_comparisons: u64,
    /// What the solution tried in this test (omitted when nothing).
    #[serde(skip_serializing_if = "Tampering::is_empty")]
    pub tampering: Tampering,
    /// An `output_limit` verdict: the cap the output ran into, in bytes (the profile's cap or
    /// twice the expected output, whichever is larger).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_cap_bytes: Option<u64>,
    /// The checker's score of this test in [0, 1], when the ground truth names a checker and
    /// the checker read the output (the program ran to a normal end within its limits) and
    /// scored it (a `checker_error` has none, nor has a `checker_rejected` test).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checker_score: Option<f64>,
    /// The output made the sandboxed checker fail while the checker accepts the test's
    /// expected output: the test is a `wrong_answer` with no credit, not `checker_error`
    /// (issue 32; omitted when false).
    #[serde(skip_serializing_if = "is_false")]
    pub checker_rejected: bool,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

/// The reward of one job: `{"score", "pass_rate", "passed", "total", "all_passed", "status",
/// "profile"}`, plus `reason` for failures and `tests` for `--details` (the caller adds `id`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JobResult {
    /// The reward; `null` for `invalid_job` and `sandbox_error`.
    pub score: Option<f64>,
    /// Passed over scored tests; `null` for `invalid_job` and `sandbox_error`.
    pub pass_rate: Option<f64>,
    /// Scored tests that passed.
    pub passed: usize,
    /// Scored tests (the sample for Klear, the first ten for prime's second pass).
    pub total: usize,
    /// Every scored test passed (Klear's `acc`).
    pub all_passed: bool,
    /// How the job ended.
    pub status: Status,
    /// The profile that scored it.
    pub profile: ProfileName,
    /// Why the job did not reach `ok` (format failure, parse error, sandbox message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Judge functional jobs: comparisons between two of the solution's own objects over the
    /// job's tests, whose result is the solution's word (docs/profiles.md, "Threat model").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untrusted_comparisons: Option<u64>,
    /// Per kind, the tests in which the solution tried it (omitted when nothing).
    #[serde(skip_serializing_if = "TamperCounts::is_empty")]
    pub tampering: TamperCounts,
    /// The checker the ground truth names, which judged the outputs instead of the profile's
    /// comparison (`float:1e-6`, `tokens`, `lines-any-order`, `set`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checker: Option<String>,
    /// Tests, over every stage run, whose output made the sandboxed checker fail while it
    /// accepts the expected output: each is a `wrong_answer` (issue 32; omitted when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub checker_rejected: u64,
    /// Per-test verdicts (kept only with `--details`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<TestReport>>,
}

impl JobResult {
    /// A result decided before any test ran (format error or no code).
    pub(crate) fn early(
        profile: ProfileName,
        status: Status,
        score: f64,
        reason: Option<String>,
    ) -> Self {
        Self {
            score: Some(score),
            pass_rate: Some(0.0),
            passed: 0,
            total: 0,
            all_passed: false,
            status,
            profile,
            reason,
            untrusted_comparisons: None,
            tampering: TamperCounts::default(),
            checker: None,
            checker_rejected: 0,
            tests: None,
        }
    }

    /// A malformed job: no score.
    pub fn invalid_job(profile: ProfileName, reason: impl Into<String>) -> Self {
        Self::unscored(profile, Status::InvalidJob, reason.into())
    }

    /// An infrastructure failure: no score, never a silent 0.
    pub fn sandbox_error(profile: ProfileName, reason: impl Into<String>) -> Self {
        Self::unscored(profile, Status::SandboxError, reason.into())
    }

    /// The response's language cannot be run here: no score.
    pub fn language_unavailable(profile: ProfileName, reason: impl Into<String>) -> Self {
        Self::unscored(profile, Status::LanguageUnavailable, reason.into())
    }

    fn unscored(profile: ProfileName, status: Status, reason: String) -> Self {
        Self {
            score: None,
            pass_rate: None,
            passed: 0,
            total: 0,
            all_passed: false,
            status,
            profile,
            reason: Some(reason),
            untrusted_comparisons: None,
            tampering: TamperCounts::default(),
            checker: None,
            checker_rejected: 0,
            tests: None,
        }
    }
}

/// One executed (or skipped) test of a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestRun {
    /// Its verdict (`skipped` when not run).
    pub verdict: Verdict,
    /// Its wall time.
    pub wall_time: Option<Duration>,
    /// Judge functional tests: comparisons the solution decided (see [`TestReport`]).
    pub untrusted_comparisons: u64,
    /// What the solution tried.
    pub tampering: Tampering,
    /// A sandboxed checker's score of the output, when one scored it.
    pub checker_score: Option<CheckerScore>,
    /// The output made the sandboxed checker fail while it accepts the expected output
    /// ([`CheckerOutcome::Rejected`]).
    pub checker_rejected: bool,
}

impl TestRun {
    /// A test that did not run to a result of its own (skipped, or out of time before it
    /// started).
    pub fn not_run(verdict: Verdict) -> Self {
        Self {
            verdict,
            wall_time: None,
            untrusted_comparisons: 0,
            tampering: Tampering::default(),
            checker_score: None,
            checker_rejected: false,
        }
    }

    /// A test that ran: its verdict and what the run recorded.
    pub fn ran(verdict: Verdict, result: &ExecutionResult) -> Self {
        Self {
            verdict,
            wall_time: result.wall_time,
            untrusted_comparisons: result.untrusted_comparisons,
            tampering: result.tampering,
            checker_score: match result.checker {
                Some(CheckerOutcome::Score(score)) => Some(score),
                _ => None,
            },
            checker_rejected: matches!(result.checker, Some(CheckerOutcome::Rejected(_))),
        }
    }
}

/// Everything the executor reports for one job: per stage, one run per program of the stage
/// in order (a stage not run is empty), and whether the job deadline cut it short.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobRun {
    /// Runs per stage of the plan.
    pub stages: Vec<Vec<TestRun>>,
    /// The job's wall clock ran out (unfinished tests are reported as `timeout`).
    pub deadline_exceeded: bool,
}

fn stage_all_passed(plan: &ExecutionPlan, run: &JobRun, stage: usize) -> bool {
    let expected = plan
        .stages
        .get(stage)
        .map_or(0, |stage| stage.programs.len());
    run.stages.get(stage).is_some_and(|runs| {
        expected > 0
            && runs.len() == expected
            && runs.iter().all(|test| test.verdict == Verdict::Pass)
    })
}

/// Aggregates the verdicts of a job into its result.
///
/// Any `sandbox_error` verdict makes the whole job `sandbox_error`. The scored stage is the
/// last stage whose condition held (prime: pass 2 only when pass 1 did not pass everything);
/// tests missing from the run count as `skipped`, which never passes.
pub fn aggregate(plan: &ExecutionPlan, run: &JobRun) -> JobResult {
    let sandbox_failures = run
        .stages
        .iter()
        .flatten()
        .filter(|test| test.verdict == Verdict::SandboxError)
        .count();
    if sandbox_failures > 0 {
        return JobResult::sandbox_error(
            plan.profile,
            format!("{sandbox_failures} test run(s) failed in the sandbox"),
        );
    }
    let tests = test_reports(plan, run, scored_stage(plan, run));
    let every_stage = EveryStage::count(plan, run);
    let total = tests.len();
    let passed = tests
        .iter()
        .filter(|test| test.verdict == Verdict::Pass)
        .count();
    let checker = plan
        .programs
        .iter()
        .find_map(|program| program.checker.as_ref())
        .map(|checker| checker.to_string());
    // A checker that failed on any test leaves the job unscored: its verdict on that output is
    // unknown, and a guess either way would be reward noise.
    if every_stage.checker_errors > 0 {
        return JobResult {
            score: None,
            pass_rate: None,
            passed,
            total,
            all_passed: false,
            status: Status::CheckerError,
            profile: plan.profile,
            reason: Some(format!(
                "the checker failed on {} test(s): no score",
                every_stage.checker_errors
            )),
            untrusted_comparisons: every_stage.untrusted_comparisons,
            tampering: every_stage.tampering,
            checker,
            checker_rejected: every_stage.checker_rejected,
            tests: Some(tests),
        };
    }
    let (score, reason) = score_and_reason(plan, run, &tests, passed);
    JobResult {
        score: Some(score),
        pass_rate: Some(if total == 0 {
            0.0
        } else {
            passed as f64 / total as f64
        }),
        passed,
        total,
        all_passed: total > 0 && passed == total,
        status: Status::Ok,
        profile: plan.profile,
        reason,
        untrusted_comparisons: every_stage.untrusted_comparisons,
        tampering: every_stage.tampering,
        checker,
        checker_rejected: every_stage.checker_rejected,
        tests: Some(tests),
    }
}

/// The stage whose tests are scored: the last stage whose condition held, counting from the
/// first.
fn scored_stage(plan: &ExecutionPlan, run: &JobRun) -> usize {
    let mut scored_stage = 0;
    for (index, stage) in plan.stages.iter().enumerate().skip(1) {
        let needed = match stage.run_if {
            StageCondition::Always => true,
            StageCondition::PreviousStageNotAllPassed => !stage_all_passed(plan, run, index - 1),
        };
        if needed {
            scored_stage = index;
        } else {
            break;
        }
    }
    scored_stage
}

/// One report per test of the scored stage, `skipped` for a test missing from the run.
fn test_reports(plan: &ExecutionPlan, run: &JobRun, scored_stage: usize) -> Vec<TestReport> {
    let program_indices = plan
        .stages
        .get(scored_stage)
        .map_or(&[][..], |stage| stage.programs.as_slice());
    let runs = run.stages.get(scored_stage).map_or(&[][..], Vec::as_slice);
    let stage = plan.stages.get(scored_stage);
    program_indices
        .iter()
        .enumerate()
        .map(|(position, &program)| {
            let test = runs.get(position);
            let verdict = test.map_or(Verdict::Skipped, |test| test.verdict);
            TestReport {
                index: plan.programs[program].test_index,
                verdict,
                wall_ms: test
                    .and_then(|test| test.wall_time)
                    .map(|time| u64::try_from(time.as_millis()).unwrap_or(u64::MAX)),
                untrusted_comparisons: test.map_or(0, |test| test.untrusted_comparisons),
                tampering: test.map_or_else(Tampering::default, |test| test.tampering),
                output_cap_bytes: stage
                    .filter(|_| verdict == Verdict::OutputLimit)
                    .map(|stage| plan.output_cap(stage, program)),
                checker_score: checker_score(
                    plan.programs[program].checker.as_ref(),
                    verdict,
                    test,
                ),
                checker_rejected: test.is_some_and(|test| test.checker_rejected),
            }
        })
        .collect()
}

/// A test's checker score. Pass and wrong answer are the verdicts the checker decided; any
/// other one ended before it read anything (or, `checker_error`, the checker failed).
fn checker_score(
    checker: Option<&Checker>,
    verdict: Verdict,
    test: Option<&TestRun>,
) -> Option<f64> {
    match checker {
        Some(Checker::BuiltIn(_)) if matches!(verdict, Verdict::Pass | Verdict::WrongAnswer) => {
            Some(if verdict == Verdict::Pass { 1.0 } else { 0.0 })
        }
        Some(Checker::Python(_) | Checker::Cpp(_)) => test
            .and_then(|test| test.checker_score)
            .filter(|_| matches!(verdict, Verdict::Pass | Verdict::WrongAnswer))
            .map(CheckerScore::value),
        _ => None,
    }
}

/// What a job's result counts over every test run, in every stage (not only the scored one):
/// a trainer wants to see what the policy tried even in a pass that is not scored.
struct EveryStage {
    tampering: TamperCounts,
    checker_rejected: u64,
    /// Judge functional tests only.
    untrusted_comparisons: Option<u64>,
    checker_errors: usize,
}

impl EveryStage {
    fn count(plan: &ExecutionPlan, run: &JobRun) -> Self {
        let every_test = || run.stages.iter().flatten();
        let mut tampering = TamperCounts::default();
        for test in every_test() {
            tampering.add(test.tampering);
        }
        Self {
            tampering,
            checker_rejected: every_test().filter(|test| test.checker_rejected).count() as u64,
            untrusted_comparisons: plan
                .live_functional
                .as_ref()
                .map(|_| every_test().map(|test| test.untrusted_comparisons).sum()),
            checker_errors: every_test()
                .filter(|test| test.verdict == Verdict::CheckerError)
                .count(),
        }
    }
}

/// The job's score from the scored tests' credit, and why it is what it is when the job's
/// deadline cut it short (Klear's profile then gives its no-code score).
fn score_and_reason(
    plan: &ExecutionPlan,
    run: &JobRun,
    tests: &[TestReport],
    passed: usize,
) -> (f64, Option<String>) {
    // A sandboxed checker's partial score is credit toward the pass rate (a pass is 1).
    let credit: f64 = tests
        .iter()
        .map(|test| match test.checker_score {
            Some(score) => score,
            None => f64::from(u8::from(test.verdict == Verdict::Pass)),
        })
        .sum();
    let score = plan.scoring.from_credit(credit, passed, tests.len());
    if !run.deadline_exceeded {
        return (score, None);
    }
    let reason = Some("job deadline exceeded".to_owned());
    if plan.scoring == Scoring::KlearAffine {
        // Klear's reward manager gives -1.0 to a response that exceeds its 500 s budget.
        return (KLEAR_NO_CODE, reason);
    }
    (score, reason)
}
