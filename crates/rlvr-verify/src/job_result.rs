//! Job results: the reward line written for each job, and the aggregation of test verdicts
//! into it.

use std::collections::BTreeSet;
use std::time::Duration;

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
    /// Judge functional tests: whether the referee split it (`false`: it ran whole next to
    /// the solution, as the sentinel program).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<bool>,
    /// What the solution tried in this test (omitted when nothing).
    #[serde(skip_serializing_if = "Tampering::is_empty")]
    pub tampering: Tampering,
    /// An `output_limit` verdict: the cap the output ran into, in bytes (the profile's cap or
    /// twice the expected output, whichever is larger).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_cap_bytes: Option<u64>,
}

/// How many of a judge job's functional tests the referee split (the rest ran whole next to
/// the solution, as before issue 12).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FunctionalCoverage {
    /// Tests split: only the solution's calls ran next to it.
    pub split: usize,
    /// Tests that ran whole, as the sentinel program.
    pub unsplit: usize,
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
    /// Judge functional jobs: how many tests the referee split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functional: Option<FunctionalCoverage>,
    /// Per kind, the tests in which the solution tried it (omitted when nothing).
    #[serde(skip_serializing_if = "TamperCounts::is_empty")]
    pub tampering: TamperCounts,
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
            functional: None,
            tampering: TamperCounts::default(),
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
            functional: None,
            tampering: TamperCounts::default(),
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
    /// Judge functional tests: whether the referee split it.
    pub split: Option<bool>,
    /// What the solution tried.
    pub tampering: Tampering,
}

impl TestRun {
    /// A test that did not run to a result of its own (skipped, or out of time before it
    /// started).
    pub fn not_run(verdict: Verdict) -> Self {
        Self {
            verdict,
            wall_time: None,
            split: None,
            tampering: Tampering::default(),
        }
    }

    /// A test that ran: its verdict and what the run recorded.
    pub fn ran(verdict: Verdict, result: &ExecutionResult) -> Self {
        Self {
            verdict,
            wall_time: result.wall_time,
            split: result.split,
            tampering: result.tampering,
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
    let sandbox_failures: BTreeSet<usize> = run
        .stages
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, test)| test.verdict == Verdict::SandboxError)
        .map(|(position, _)| position)
        .collect();
    if !sandbox_failures.is_empty() {
        return JobResult::sandbox_error(
            plan.profile,
            format!(
                "{} test run(s) failed in the sandbox",
                sandbox_failures.len()
            ),
        );
    }
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
    let program_indices = plan
        .stages
        .get(scored_stage)
        .map_or(&[][..], |stage| stage.programs.as_slice());
    let runs = run.stages.get(scored_stage).map_or(&[][..], Vec::as_slice);
    let stage = plan.stages.get(scored_stage);
    let tests: Vec<TestReport> = program_indices
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
                split: test.and_then(|test| test.split),
                tampering: test.map_or_else(Tampering::default, |test| test.tampering),
                output_cap_bytes: stage
                    .filter(|_| verdict == Verdict::OutputLimit)
                    .map(|stage| plan.output_cap(stage, program)),
            }
        })
        .collect();
    // Tampering counts over every test run, in every stage: a trainer wants to see what the
    // policy tried even in a pass that is not scored.
    let mut tampering = TamperCounts::default();
    for test in run.stages.iter().flatten() {
        tampering.add(test.tampering);
    }
    let functional = plan.functional_split.as_ref().map(|_| {
        let split = tests.iter().filter(|test| test.split == Some(true)).count();
        let unsplit = tests
            .iter()
            .filter(|test| test.split == Some(false))
            .count();
        FunctionalCoverage { split, unsplit }
    });
    let total = tests.len();
    let passed = tests
        .iter()
        .filter(|test| test.verdict == Verdict::Pass)
        .count();
    let all_passed = total > 0 && passed == total;
    let mut score = plan.scoring.from_counts(passed, total);
    let mut reason = None;
    if run.deadline_exceeded && plan.scoring == Scoring::KlearAffine {
        // Klear's reward manager gives -1.0 to a response that exceeds its 500 s budget.
        score = KLEAR_NO_CODE;
        reason = Some("job deadline exceeded".to_owned());
    } else if run.deadline_exceeded {
        reason = Some("job deadline exceeded".to_owned());
    }
    JobResult {
        score: Some(score),
        pass_rate: Some(if total == 0 {
            0.0
        } else {
            passed as f64 / total as f64
        }),
        passed,
        total,
        all_passed,
        status: Status::Ok,
        profile: plan.profile,
        reason,
        functional,
        tampering,
        tests: Some(tests),
    }
}
