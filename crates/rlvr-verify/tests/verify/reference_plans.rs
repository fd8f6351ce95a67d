//! Issue 14: the plans of the reference profiles follow the upstream code (the differential
//! test in crates/rlvr/tests/cli/reference_differential.rs checks the scores end to end).

use std::time::Duration;

use rlvr_verify::{ExitCodePolicy, Plan, PlanOptions, Profile, ProfileName, RunMode, Status, plan};
use serde_json::json;

use crate::common::{execute, suite};

const FENCED: &str =
    "<think>t</think>\n<answer>\n```python\ndef add(a, b):\n    return a + b\n```\n</answer>";

#[test]
fn issue_14_prime_scores_a_functional_record_zero_without_running_it() {
    let prime = Profile::named(ProfileName::Prime);
    let functional = suite(json!({"functional": ["assert add(1, 2) == 3"]}));
    let Plan::Finished(result) = plan(&prime, FENCED, &functional, &PlanOptions::default()) else {
        panic!("prime_code raises KeyError('inputs') before running anything");
    };
    assert_eq!(
        (result.status, result.score, result.total),
        (Status::Ok, Some(0.0), 0)
    );
    assert!(result.reason.unwrap().contains("KeyError"));
}

#[test]
fn issue_14_rllm_functional_is_one_fresh_process_that_must_exit_zero() {
    let rllm = Profile::named(ProfileName::Rllm);
    let functional =
        suite(json!({"functional": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]}));
    let execution = execute(plan(&rllm, FENCED, &functional, &PlanOptions::default()));
    assert_eq!(execution.runner, RunMode::FreshProcess);
    assert_eq!(execution.exit_code_policy, ExitCodePolicy::RequireZero);
    assert_eq!(execution.limits.time_per_test, Duration::from_secs(30));
    assert_eq!(execution.programs.len(), 1);
    let source = execution.programs[0].source.to_string();
    assert!(source.starts_with("from itertools import accumulate"));
    assert!(source.ends_with("return a + b\nassert add(1, 2) == 3\nassert add(0, 0) == 0"));
    assert_eq!(execution.required_modules, ["numpy", "pandas"]);
}

#[test]
fn issue_14_rllm_stdin_tests_run_in_one_process_with_the_first_output_element() {
    let rllm = Profile::named(ProfileName::Rllm);
    let tests = suite(json!({"inputs": [["1", "2"], "3\n"], "outputs": [["3", "ignored"], "3\n"]}));
    let execution = execute(plan(&rllm, FENCED, &tests, &PlanOptions::default()));
    assert_eq!(execution.runner, RunMode::LiveCodeBenchHarness);
    assert!(execution.stages[0].shared_process);
    assert!(execution.stages[0].may_stop_at_first_failure);
    assert_eq!(execution.programs[0].stdin.as_deref(), Some("1\n2"));
    assert_eq!(execution.programs[0].expected.as_deref(), Some("3"));
    assert_eq!(execution.required_modules, ["numpy", "pandas"]);
}

#[test]
fn issue_14_prime_first_pass_is_one_process_and_the_second_each_alone() {
    let prime = Profile::named(ProfileName::Prime);
    let inputs = vec!["1\n"; 12];
    let tests = suite(json!({"inputs": inputs, "outputs": inputs}));
    let execution = execute(plan(&prime, FENCED, &tests, &PlanOptions::default()));
    assert!(execution.stages[0].shared_process);
    assert_eq!(execution.stages[0].budget, Some(Duration::from_secs(6)));
    assert!(!execution.stages[1].shared_process);
    assert_eq!(execution.stages[1].programs.len(), 10);
}

#[test]
fn issue_14_code_r1_runs_short_programs_as_python_c() {
    let code_r1 = Profile::named(ProfileName::CodeR1);
    let tests = suite(json!({"inputs": ["1\n"], "outputs": ["1\n"]}));
    let short = execute(plan(&code_r1, FENCED, &tests, &PlanOptions::default()));
    assert_eq!(short.program_filename(&short.programs[0]), "-c");
    let long_code = format!("x = 1\n{}", "# padding\n".repeat(400));
    let long_response =
        format!("<think>t</think>\n<answer>\n```python\n{long_code}\n```\n</answer>");
    let long = execute(plan(
        &code_r1,
        &long_response,
        &tests,
        &PlanOptions::default(),
    ));
    assert_eq!(long.program_filename(&long.programs[0]), "solution.py");
    let klear = Profile::named(ProfileName::Klear);
    let klear_plan = execute(plan(&klear, FENCED, &tests, &PlanOptions::default()));
    assert_eq!(
        klear_plan.program_filename(&klear_plan.programs[0]),
        "solution.py"
    );
}
