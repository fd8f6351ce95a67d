//! Turn a model response and a record's tests into a reward: extraction, profiles, output
//! comparison, scoring, and the scheduler that runs tests through the sandbox.
//!
//! The pure policy layer lives here: [`plan`] turns (profile, response, tests, options) into
//! an immediate [`JobResult`] or the [`TestProgram`]s to run; the executor runs them and maps
//! each outcome into an [`ExecutionResult`]; [`judge_test`] gives each a [`Verdict`];
//! [`aggregate`] scores the job.

#![forbid(unsafe_code)]

mod assembly;
pub mod checker;
pub mod comparison;
mod dataset_row;
mod decimal;
mod exit_code;
mod extraction;
mod format_gate;
mod job_result;
mod language_selection;
mod limits;
mod plan;
pub mod prelude;
mod profile;
mod program_text;
mod python_text;
mod scoring;
mod selection;
mod tampering;
mod test_suite;
mod value_join;
mod verdict;

pub use assembly::FunctionalAssembly;
pub use checker::{
    BUILT_IN_CHECKERS, BuiltInChecker, Checker, CheckerOutcome, CheckerScore, Tolerance,
    checker_needed,
};
pub use comparison::OutputComparison;
pub use dataset_row::{RowTestsError, row_tests};
pub use exit_code::{ExitCodePolicy, RunMode};
pub use extraction::{Extraction, FencedBlock, judge_blocks};
pub use format_gate::{FormatFailure, FormatGate};
pub use job_result::{JobResult, JobRun, Status, TestReport, TestRun, aggregate};
pub use language_selection::{LanguageRequest, select_code};
pub use limits::{
    LimitError, Limits, MAX_JOB_DEADLINE, MAX_MEMORY_MEGABYTES, MAX_TIME_LIMIT,
    memory_limit_from_megabytes, time_limit_from_seconds,
};
pub use plan::{
    ExecutionPlan, LiveFunctional, Plan, PlanOptions, Stage, StageCondition, TestProgram, plan,
};
pub use profile::{Profile, ProfileError, ProfileName, describe_profiles};
pub use program_text::ProgramText;
pub use rlvr_language::{Language, LanguageChoice};
pub use rlvr_python_compat::loads::{JsonTextError, from_python_json, parse_python_json};
pub use scoring::{
    CODE_R1_FAILURE, CODE_R1_FORMAT_ERROR, CODE_R1_SUCCESS, KLEAR_MISSING_THINK_CLOSE,
    KLEAR_MISSING_THINK_OPEN, KLEAR_NO_CODE, PRIME_SCORED_TESTS, Scoring,
};
pub use selection::{TestSelection, sample_indices};
pub use tampering::{TamperCounts, TamperKind, Tampering};
pub use test_suite::{MAX_TESTS, TestSuite, TestSuiteError, json_kind};
pub use value_join::ValueJoin;
pub use verdict::{ExecutionResult, RefereeVerdict, Verdict, judge_test};
