//! Plans: everything about a job that needs no execution. From a profile, a response and a
//! test suite, either an immediate result (format error, no code) or the test programs to run,
//! in which stages, under which limits, and how to judge and aggregate them.

use std::sync::Arc;
use std::time::Duration;

use crate::assembly::{
    FunctionalAssembly, judge_functional, klear_functional, plain_functional, sentinel_token,
    single_functional,
};
use crate::comparison::OutputComparison;
use crate::exit_code::{ExitCodePolicy, Runner};
use crate::job_result::{JobResult, Status};
use crate::limits::{Limits, MAX_JOB_DEADLINE};
use crate::profile::{Profile, ProfileName};
use crate::program_text::{ProgramText, SharedHeads};
use crate::scoring::{PRIME_SCORED_TESTS, Scoring};
use crate::selection::select_tests;
use crate::test_suite::{FunctionalTests, TestSuite, Tests};

/// Per-job options from the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Seed for test sampling and judge sentinels.
    pub seed: u64,
    /// Bytes that identify the job (the CLI passes the job id's JSON text); with the seed they
    /// decide which tests are sampled.
    pub job_identity: Vec<u8>,
    /// `--max-tests N`: at most N tests, chosen deterministically.
    pub max_tests: Option<usize>,
    /// `--all-tests`: no sampling at all.
    pub all_tests: bool,
    /// `--time-limit`: replaces the per-test time limit of every stage.
    pub time_limit: Option<Duration>,
    /// `--memory-limit`: replaces the address-space limit.
    pub memory_limit_bytes: Option<u64>,
}

/// One program to run for one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestProgram {
    /// Zero-based index of the test in the record's suite (0 for a single functional block).
    pub test_index: usize,
    /// Complete Python source. The part a job's programs share (prefix and code) is stored
    /// once, so a job's memory does not grow with tests x response size.
    pub source: ProgramText,
    /// Standard input; `None` means an empty stdin.
    pub stdin: Option<String>,
    /// Expected stdout for stdin tests, compared by the profile's comparator.
    pub expected: Option<String>,
    /// For judge functional tests: the line that must be the last one printed.
    pub sentinel: Option<String>,
}

/// When a stage runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageCondition {
    /// Always.
    Always,
    /// Only when the previous stage did not pass every test (prime's second pass).
    PreviousStageNotAllPassed,
}

/// A group of test programs run under the same rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// Indices into [`ExecutionPlan::programs`], in run order.
    pub programs: Vec<usize>,
    /// Wall-clock limit per test.
    pub time_per_test: Duration,
    /// Wall clock for the whole stage (prime pass 1: 6 s for all tests together).
    pub budget: Option<Duration>,
    /// The reference runs the stage's tests one after another in one process (prime pass 1);
    /// a fresh process per test gives the same verdicts unless the tests share state.
    pub shared_process: bool,
    /// Stopping at the first failure cannot change the score.
    pub may_stop_at_first_failure: bool,
    /// When the stage runs.
    pub run_if: StageCondition,
}

/// The execution side of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionPlan {
    /// The profile that made it.
    pub profile: ProfileName,
    /// The programs, one per selected test.
    pub programs: Vec<TestProgram>,
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// How programs are run.
    pub runner: Runner,
    /// How the exit status counts.
    pub exit_code_policy: ExitCodePolicy,
    /// How stdout is compared.
    pub comparison: OutputComparison,
    /// How verdicts become the reward.
    pub scoring: Scoring,
    /// Resource limits (per-test time already resolved for the first stage).
    pub limits: Limits,
    /// Python modules the interpreter must be able to import for this plan.
    pub required_modules: Vec<&'static str>,
}

/// What a job needs: nothing more (the result is known) or an execution.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// The result is decided without running anything.
    Finished(JobResult),
    /// Run these programs, judge with [`crate::judge_test`], then [`crate::aggregate`].
    Execute(ExecutionPlan),
}

/// Plans one job.
pub fn plan(profile: &Profile, response: &str, suite: &TestSuite, options: &PlanOptions) -> Plan {
    if let Err(failure) = profile.format_gate.check(response) {
        return Plan::Finished(JobResult::early(
            profile.name,
            Status::FormatError,
            profile.scoring.format_error(failure),
            Some(failure.name().to_owned()),
        ));
    }
    let Some(code) = profile.extraction.extract(response) else {
        return Plan::Finished(JobResult::early(
            profile.name,
            Status::NoCode,
            profile.scoring.no_code(),
            None,
        ));
    };

    let mut limits = profile.limits;
    if profile.name == ProfileName::Klear
        && let Some(time_limit) = suite.time_limit
    {
        limits.time_per_test = time_limit;
    }
    if let Some(time_limit) = options.time_limit {
        limits.time_per_test = time_limit;
    }
    if let Some(memory) = options.memory_limit_bytes {
        limits.memory_bytes = memory;
    }

    let selected = select_tests(
        profile.selection,
        suite.len(),
        suite.max_test_cases,
        options.max_tests,
        options.all_tests,
        options.seed,
        &options.job_identity,
    );
    let programs = build_programs(profile, &code, suite, &selected, options);
    let stages = build_stages(profile, &programs, &limits, options.time_limit);
    if profile.name == ProfileName::Rllm {
        // rllm's LiveCodeBench grader joins its worker after (timeout + 1) * n + 5 seconds.
        // Saturates: a time limit or test count from a request can never make this panic.
        let seconds = (limits.time_per_test.as_secs_f64() + 1.0) * programs.len() as f64 + 5.0;
        limits.job_deadline = Duration::try_from_secs_f64(seconds)
            .unwrap_or(MAX_JOB_DEADLINE)
            .min(MAX_JOB_DEADLINE);
    }
    let needs_scientific = programs
        .iter()
        .any(|program| program.source.contains("import pandas as pd"));
    Plan::Execute(ExecutionPlan {
        profile: profile.name,
        programs,
        stages,
        runner: profile.runner,
        exit_code_policy: profile.exit_code_policy,
        comparison: profile.comparison,
        scoring: profile.scoring,
        limits,
        required_modules: if needs_scientific {
            vec!["numpy", "pandas"]
        } else {
            Vec::new()
        },
    })
}

fn build_programs(
    profile: &Profile,
    code: &str,
    suite: &TestSuite,
    selected: &[usize],
    options: &PlanOptions,
) -> Vec<TestProgram> {
    let functional =
        |test_index: usize, source: ProgramText, sentinel: Option<String>| TestProgram {
            test_index,
            source,
            stdin: None,
            expected: None,
            sentinel,
        };
    match &suite.tests {
        Tests::InputOutput(tests) => {
            let shared_code: Arc<str> = Arc::from(code);
            selected
                .iter()
                .map(|&index| TestProgram {
                    test_index: index,
                    source: ProgramText::whole(Arc::clone(&shared_code)),
                    stdin: Some(profile.value_join.render(&tests[index].input)),
                    expected: Some(profile.value_join.render(&tests[index].output)),
                    sentinel: None,
                })
                .collect()
        }
        Tests::Functional(FunctionalTests::Single(block)) => {
            let source = match profile.functional {
                FunctionalAssembly::KlearPerAssert => klear_functional(code, block),
                FunctionalAssembly::SingleProgram { with_prefix } => {
                    single_functional(code, block, with_prefix)
                }
                FunctionalAssembly::PerAssert => plain_functional(code, block),
                FunctionalAssembly::JudgeSentinel => {
                    let sentinel = sentinel_token(options.seed, &options.job_identity, 0);
                    return vec![functional(
                        0,
                        ProgramText::whole(judge_functional(code, block, &sentinel)),
                        Some(sentinel),
                    )];
                }
            };
            vec![functional(0, ProgramText::whole(source), None)]
        }
        Tests::Functional(FunctionalTests::List(statements)) => match profile.functional {
            FunctionalAssembly::SingleProgram { with_prefix } => {
                let chosen: Vec<&str> = selected
                    .iter()
                    .map(|&index| statements[index].as_str())
                    .collect();
                vec![functional(
                    0,
                    ProgramText::whole(single_functional(code, &chosen.join("\n"), with_prefix)),
                    None,
                )]
            }
            per_test => {
                // One program per assert: each text is built, then only its own tail is kept
                // next to the head all of them share.
                let text_of = |index: usize| -> (String, Option<String>) {
                    let statement = &statements[index];
                    match per_test {
                        FunctionalAssembly::KlearPerAssert => {
                            (klear_functional(code, statement), None)
                        }
                        FunctionalAssembly::JudgeSentinel => {
                            let sentinel =
                                sentinel_token(options.seed, &options.job_identity, index);
                            (judge_functional(code, statement, &sentinel), Some(sentinel))
                        }
                        _ => (plain_functional(code, statement), None),
                    }
                };
                let heads = SharedHeads::new(selected.iter().map(|&index| text_of(index).0));
                selected
                    .iter()
                    .map(|&index| {
                        let (text, sentinel) = text_of(index);
                        functional(index, heads.text(text), sentinel)
                    })
                    .collect()
            }
        },
    }
}

fn build_stages(
    profile: &Profile,
    programs: &[TestProgram],
    limits: &Limits,
    time_override: Option<Duration>,
) -> Vec<Stage> {
    let every_program: Vec<usize> = (0..programs.len()).collect();
    if profile.scoring == Scoring::PrimeFirstTen {
        // Pass 1: all tests in one process, 5 s each, joined after 6 s in total.
        let first_pass_time = time_override.unwrap_or(Duration::from_secs(5));
        let first_pass = Stage {
            programs: every_program,
            time_per_test: first_pass_time,
            budget: Some(first_pass_time.saturating_add(Duration::from_secs(1))),
            shared_process: true,
            may_stop_at_first_failure: true,
            run_if: StageCondition::Always,
        };
        // Pass 2: the first ten tests, each in its own process, 10 s each.
        let second_pass = Stage {
            programs: (0..programs.len().min(PRIME_SCORED_TESTS)).collect(),
            time_per_test: limits.time_per_test,
            budget: None,
            shared_process: false,
            may_stop_at_first_failure: false,
            run_if: StageCondition::PreviousStageNotAllPassed,
        };
        return vec![first_pass, second_pass];
    }
    vec![Stage {
        programs: every_program,
        time_per_test: limits.time_per_test,
        budget: None,
        shared_process: false,
        may_stop_at_first_failure: profile.scoring.is_all_or_nothing(),
        run_if: StageCondition::Always,
    }]
}
