//! Plans: everything about a job that needs no execution. From a profile, a response and a
//! test suite, either an immediate result (format error, no code) or the test programs to run,
//! in which stages, under which limits, and how to judge and aggregate them.

use std::sync::Arc;
use std::time::Duration;

use rlvr_language::{Language, LanguageChoice};

use crate::assembly::{FunctionalAssembly, klear_functional, plain_functional, single_functional};
use crate::checker::Checker;
use crate::comparison::OutputComparison;
use crate::exit_code::{ExitCodePolicy, RunMode};
use crate::job_result::{JobResult, Status};
use crate::language_selection::{LanguageRequest, select_code};
use crate::limits::{Limits, MAX_JOB_DEADLINE};
use crate::prelude::{REFERENCE_IMPORTS, judge_prefix, reference_modules, standard_modules};
use crate::profile::{Profile, ProfileName};
use crate::program_text::{ProgramText, SharedHeads};
use crate::scoring::{PRIME_SCORED_TESTS, Scoring};
use crate::selection::select_tests;
use crate::test_suite::TestSuite;
use rlvr_dataset::{FunctionalTests, Tests};

/// Per-job options from the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Seed for test sampling.
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
    /// The job's `language` and `languages` keys (the judge only; issue 24).
    pub languages: LanguageRequest,
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
    /// For judge functional tests: the test's own code, which the referee runs whole while
    /// the solution answers its calls (`source` is then the solution alone).
    pub check: Option<String>,
    /// For stdin tests whose ground truth names a checker: it judges the output instead of the
    /// profile's comparator.
    pub checker: Option<Checker>,
}

/// What the referee and the runner need to run a judge job's functional tests live (issue
/// 22): the prelude both sides execute first (the names a test may use) and the solution
/// (loaded once per job in the runner, run in each test's child).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFunctional {
    /// The judge prelude: standard imports and the LeetCode helpers.
    pub prelude: String,
    /// The extracted code.
    pub solution: String,
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
    pub runner: RunMode,
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
    /// Modules every program of this plan imports first (its import block): the runner imports
    /// them once, before it forks a test, instead of each test loading them again.
    pub preloaded_modules: &'static [&'static str],
    /// Judge functional tests: run live between the referee and the solution's child
    /// (issue 22; docs/profiles.md).
    pub live_functional: Option<LiveFunctional>,
    /// The language of the code (Python for every reference profile; issue 24). Programs of
    /// any other language have stdin/stdout tests only and `source` holds the code alone.
    pub language: LanguageChoice,
}

/// Code-R1 runs a program shorter than this as `python3 -c CODE`, longer ones from a file.
const CODE_R1_COMMAND_LINE_LIMIT: usize = 1024 * 3;

impl ExecutionPlan {
    /// The stdout cap of a test of `stage` (issue 13): the profile's cap or twice the expected
    /// output, whichever is larger; a stage run in one process shares the cap of its largest
    /// expected output.
    pub fn output_cap(&self, stage: &Stage, program: usize) -> u64 {
        let expected = |index: usize| self.programs[index].expected.as_ref().map(String::len);
        let bytes = if stage.shared_process {
            stage
                .programs
                .iter()
                .filter_map(|&index| expected(index))
                .max()
        } else {
            expected(program)
        };
        self.limits.output_cap(bytes)
    }

    /// The name the reference runs `program` under, which the runner reproduces: `"-c"` for
    /// `python -c CODE` (Code-R1 below 3 KiB of source: no `__file__`, `sys.argv == ["-c"]`,
    /// no flush before an uncaught exception is handled), else a script file name.
    pub fn program_filename(&self, program: &TestProgram) -> &'static str {
        if self.profile == ProfileName::CodeR1
            && self.runner == RunMode::FreshProcess
            && program.source.len() < CODE_R1_COMMAND_LINE_LIMIT
        {
            "-c"
        } else {
            "solution.py"
        }
    }
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
    // The judge's own extraction reads the language from the fence; a judge profile given
    // another extraction (open-instruct's routes take the program verbatim) keeps it.
    let extracted = if profile.name == ProfileName::Judge
        && profile.extraction == crate::extraction::Extraction::Judge
    {
        select_code(response, &options.languages)
    } else {
        // The reference profiles are Python-only, as their references are.
        profile
            .extraction
            .extract(response)
            .map(|code| (code, LanguageChoice::from(Language::Python)))
    };
    let Some((code, language)) = extracted else {
        return Plan::Finished(JobResult::early(
            profile.name,
            Status::NoCode,
            profile.scoring.no_code(),
            None,
        ));
    };
    if language.language != Language::Python && matches!(suite.tests, Tests::Functional(_)) {
        // Functional tests are Python asserts: a solution in another language cannot be
        // called by them. Asked for by the job, that is the job's mistake; chosen by the
        // response, it is the response's failure.
        if options.languages.requested.is_some() {
            return Plan::Finished(JobResult::invalid_job(
                profile.name,
                format!(
                    "functional (assert) tests run Python solutions only; the job asks for {}",
                    language.language
                ),
            ));
        }
        return Plan::Finished(JobResult::early(
            profile.name,
            Status::Ok,
            profile.scoring.from_counts(0, suite.len()),
            Some(format!(
                "functional (assert) tests run Python solutions only; the response's code is {}",
                language.language
            )),
        ));
    }

    if profile.name == ProfileName::Prime && matches!(suite.tests, Tests::Functional(_)) {
        // prime_code reads `test_cases["inputs"]`, which a functional record lacks: the
        // KeyError is caught and the response scores False (0.0) without running anything.
        return Plan::Finished(JobResult::early(
            profile.name,
            Status::Ok,
            0.0,
            Some(PRIME_FUNCTIONAL_REASON.to_owned()),
        ));
    }

    let mut limits = profile.limits;
    let mut runner = profile.runner;
    let mut exit_code_policy = profile.exit_code_policy;
    let rllm_functional =
        profile.name == ProfileName::Rllm && matches!(suite.tests, Tests::Functional(_));
    if rllm_functional {
        // rllm's leetcode path: one real process (firejail, 30 s, 4 GiB, as Code-R1's line),
        // passing iff it exits 0; not the in-process LiveCodeBench harness.
        limits = Limits::code_r1();
        runner = RunMode::FreshProcess;
        exit_code_policy = ExitCodePolicy::RequireZero;
    }
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
    let programs = build_programs(profile, &code, suite, &selected);
    let stages = build_stages(profile, &programs, &limits, options.time_limit, runner);
    if profile.name == ProfileName::Rllm && !rllm_functional {
        // rllm's LiveCodeBench grader joins its worker after (timeout + 1) * n + 5 seconds.
        // Saturates: a time limit or test count from a request can never make this panic.
        let seconds = (limits.time_per_test.as_secs_f64() + 1.0) * programs.len() as f64 + 5.0;
        limits.job_deadline = Duration::try_from_secs_f64(seconds)
            .unwrap_or(MAX_JOB_DEADLINE)
            .min(MAX_JOB_DEADLINE);
    }
    // rllm's in-process harness puts its import block (numpy, pandas) before every program.
    let needs_scientific = runner == RunMode::LiveCodeBenchHarness
        || programs
            .iter()
            .any(|program| program.source.contains("import pandas as pd"));
    let live_functional = programs
        .iter()
        .any(|program| program.check.is_some())
        .then(|| LiveFunctional {
            prelude: judge_prefix(),
            solution: code.clone(),
        });
    let preloaded_modules = if live_functional.is_some() {
        standard_modules()
    } else if programs
        .iter()
        .any(|program| program.source.contains(REFERENCE_IMPORTS))
    {
        reference_modules()
    } else {
        &[]
    };
    Plan::Execute(ExecutionPlan {
        profile: profile.name,
        programs,
        stages,
        runner,
        exit_code_policy,
        comparison: profile.comparison,
        scoring: profile.scoring,
        limits,
        required_modules: if needs_scientific {
            vec!["numpy", "pandas"]
        } else {
            Vec::new()
        },
        preloaded_modules,
        live_functional,
        language,
    })
}

fn build_programs(
    profile: &Profile,
    code: &str,
    suite: &TestSuite,
    selected: &[usize],
) -> Vec<TestProgram> {
    let functional = |test_index: usize, source: ProgramText| TestProgram {
        test_index,
        source,
        stdin: None,
        expected: None,
        check: None,
        checker: None,
    };
    // A judge functional test: the solution alone is the program (loaded once per job), the
    // test's code goes to the referee.
    let shared_code: Arc<str> = Arc::from(code);
    let live = |test_index: usize, check: &str| TestProgram {
        check: Some(check.to_owned()),
        ..functional(test_index, ProgramText::whole(Arc::clone(&shared_code)))
    };
    match &suite.tests {
        Tests::InputOutput(tests) => selected
            .iter()
            .map(|&index| TestProgram {
                test_index: index,
                source: ProgramText::whole(Arc::clone(&shared_code)),
                stdin: Some(profile.value_join.render(&tests[index].input)),
                expected: Some(profile.value_join.render_output(&tests[index].output)),
                check: None,
                checker: suite.checker.clone(),
            })
            .collect(),
        Tests::Functional(FunctionalTests::Single(block)) => {
            let source = match profile.functional {
                FunctionalAssembly::KlearPerAssert => klear_functional(code, block),
                FunctionalAssembly::SingleProgram { with_prefix } => {
                    single_functional(code, block, with_prefix)
                }
                FunctionalAssembly::PerAssert => plain_functional(code, block),
                FunctionalAssembly::JudgeLive => return vec![live(0, block)],
            };
            vec![functional(0, ProgramText::whole(source))]
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
                )]
            }
            FunctionalAssembly::JudgeLive => selected
                .iter()
                .map(|&index| live(index, &statements[index]))
                .collect(),
            per_test => {
                // One program per assert: each text is built, then only its own tail is kept
                // next to the head all of them share.
                let text_of = |index: usize| -> String {
                    let statement = &statements[index];
                    match per_test {
                        FunctionalAssembly::KlearPerAssert => klear_functional(code, statement),
                        _ => plain_functional(code, statement),
                    }
                };
                let heads = SharedHeads::new(selected.iter().map(|&index| text_of(index)));
                selected
                    .iter()
                    .map(|&index| functional(index, heads.text(text_of(index))))
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
    runner: RunMode,
) -> Vec<Stage> {
    let every_program: Vec<usize> = (0..programs.len()).collect();
    if profile.scoring == Scoring::PrimeFirstTen {
        // verl's plan: pass 1 runs all tests in ONE process, 5 s each, joined after 6 s in
        // total, and stops at the first failure.
        let first_pass_time = time_override.unwrap_or(Duration::from_secs(5));
        let first_pass = Stage {
            programs: every_program,
            time_per_test: first_pass_time,
            budget: Some(first_pass_time.saturating_add(Duration::from_secs(1))),
            shared_process: true,
            may_stop_at_first_failure: true,
            run_if: StageCondition::Always,
        };
        // Pass 2, only when pass 1 did not pass everything: the first ten tests, each in its
        // own process, 10 s each.
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
        // rllm's LiveCodeBench grader runs every test in one process too, stopping at the
        // first failure (its job deadline is the `(6 + 1) n + 5` s join).
        shared_process: runner == RunMode::LiveCodeBenchHarness,
        may_stop_at_first_failure: profile.scoring.is_all_or_nothing(),
        run_if: StageCondition::Always,
    }]
}

/// Why prime scores a functional record 0.0 without running it.
pub const PRIME_FUNCTIONAL_REASON: &str =
    "prime_code reads test_cases[\"inputs\"]: a functional record raises KeyError and scores 0.0";
