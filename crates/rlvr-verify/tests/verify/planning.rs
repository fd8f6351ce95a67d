//! Plans, verdicts and aggregation per profile: Klear's gates, constants, sampling and list
//! joining; Code-R1's constants; prime's two passes and first-ten rule; the judge's live functional tests.

use std::time::Duration;

use rlvr_verify::{
    ExecutionPlan, ExecutionResult, JobRun, Plan, PlanOptions, Profile, ProfileName,
    RefereeVerdict, Stage, StageCondition, Status, TestRun, TestSuite, Verdict, aggregate,
    describe_profiles, judge_test, plan,
};
use serde_json::json;

use crate::common::{execute, suite};

const KLEAR_RESPONSE: &str = "<think>hmm</think>\n```python\nprint(input())\n```\n";

fn io_suite(count: usize) -> TestSuite {
    let inputs: Vec<String> = (0..count).map(|index| format!("{index}\n")).collect();
    suite(json!({"inputs": inputs, "outputs": inputs}))
}

fn options(seed: u64, job: &str) -> PlanOptions {
    PlanOptions {
        seed,
        job_identity: job.as_bytes().to_vec(),
        ..PlanOptions::default()
    }
}

fn finished(plan: Plan) -> rlvr_verify::JobResult {
    match plan {
        Plan::Finished(result) => result,
        Plan::Execute(execution) => panic!("expected a finished plan, got {execution:?}"),
    }
}

fn runs(verdicts: &[Verdict]) -> Vec<TestRun> {
    verdicts
        .iter()
        .map(|&verdict| TestRun {
            wall_time: Some(Duration::from_millis(3)),
            ..TestRun::not_run(verdict)
        })
        .collect()
}

fn exited(stdout: &str, code: i32) -> ExecutionResult {
    ExecutionResult {
        exit_code: Some(code),
        stdout: stdout.as_bytes().to_vec(),
        ..ExecutionResult::default()
    }
}

#[test]
fn klear_gates_and_no_code() {
    let klear = Profile::named(ProfileName::Klear);
    let tests = io_suite(3);
    let missing_close = finished(plan(
        &klear,
        "<think>```python\nx\n```",
        &tests,
        &options(0, ""),
    ));
    assert_eq!(
        (missing_close.status, missing_close.score),
        (Status::FormatError, Some(-0.5))
    );
    let missing_open = finished(plan(
        &klear,
        "</think>```python\nx\n```",
        &tests,
        &options(0, ""),
    ));
    assert_eq!(
        (missing_open.status, missing_open.score),
        (Status::FormatError, Some(-2.0))
    );
    let no_code = finished(plan(
        &klear,
        "<think></think>```py\nx\n```",
        &tests,
        &options(0, ""),
    ));
    assert_eq!(
        (no_code.status, no_code.score),
        (Status::NoCode, Some(-1.0))
    );
    let json = serde_json::to_value(&missing_open).unwrap();
    assert_eq!(
        json,
        json!({"score": -2.0, "pass_rate": 0.0, "passed": 0, "total": 0, "all_passed": false,
               "status": "format_error", "profile": "klear", "reason": "missing_think_open"})
    );
}

#[test]
fn klear_samples_at_most_sixteen_deterministically() {
    let klear = Profile::named(ProfileName::Klear);
    let tests = io_suite(100);
    let first = execute(plan(&klear, KLEAR_RESPONSE, &tests, &options(7, "job-1")));
    let again = execute(plan(&klear, KLEAR_RESPONSE, &tests, &options(7, "job-1")));
    let other = execute(plan(&klear, KLEAR_RESPONSE, &tests, &options(7, "job-2")));
    let indices = |plan: &ExecutionPlan| {
        plan.programs
            .iter()
            .map(|program| program.test_index)
            .collect::<Vec<_>>()
    };
    assert_eq!(indices(&first).len(), 16);
    assert_eq!(indices(&first), indices(&again));
    assert_ne!(indices(&first), indices(&other));
    let all = PlanOptions {
        all_tests: true,
        ..options(7, "job-1")
    };
    assert_eq!(
        execute(plan(&klear, KLEAR_RESPONSE, &tests, &all))
            .programs
            .len(),
        100
    );
    assert_eq!(first.limits.time_per_test, Duration::from_secs(35));
    assert_eq!(first.limits.memory_bytes, 1024 * 1024 * 1024);
    assert!(
        !first.stages[0].may_stop_at_first_failure,
        "Klear runs every sampled test"
    );
}

#[test]
fn klear_joins_list_values_with_comma_space_and_reads_ground_truth_settings() {
    let klear = Profile::named(ProfileName::Klear);
    let tests = suite(json!({"inputs": [["1", "2"]], "outputs": [["3"]], "timeout": 4}));
    let execution = execute(plan(&klear, KLEAR_RESPONSE, &tests, &options(0, "")));
    assert_eq!(execution.programs[0].stdin.as_deref(), Some("1, 2"));
    assert_eq!(execution.programs[0].expected.as_deref(), Some("3"));
    assert_eq!(execution.limits.time_per_test, Duration::from_secs(4));
    let judge = execute(plan(
        &Profile::named(ProfileName::Judge),
        KLEAR_RESPONSE,
        &tests,
        &options(0, ""),
    ));
    assert_eq!(judge.programs[0].stdin.as_deref(), Some("1\n2"));
}

#[test]
fn klear_score_is_two_p_minus_one_and_requires_exit_zero() {
    let klear = Profile::named(ProfileName::Klear);
    let tests = io_suite(4);
    let execution = execute(plan(&klear, KLEAR_RESPONSE, &tests, &options(0, "")));
    let program = &execution.programs[0];
    assert_eq!(
        judge_test(&klear, program, &exited(" 0 \n", 0)),
        Verdict::Pass
    );
    assert_eq!(
        judge_test(&klear, program, &exited("0\n", 1)),
        Verdict::RuntimeError
    );
    assert_eq!(
        judge_test(&klear, program, &exited("1\n", 0)),
        Verdict::WrongAnswer
    );
    let run = JobRun {
        stages: vec![runs(&[
            Verdict::Pass,
            Verdict::WrongAnswer,
            Verdict::Timeout,
            Verdict::Pass,
        ])],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &run);
    assert_eq!(result.score, Some(0.0));
    assert_eq!(
        (result.passed, result.total, result.all_passed),
        (2, 4, false)
    );
    let late = aggregate(
        &execution,
        &JobRun {
            deadline_exceeded: true,
            ..run
        },
    );
    assert_eq!(late.score, Some(-1.0), "Klear's manager timeout");
}

#[test]
fn klear_functional_keeps_the_exit_hole() {
    let klear = Profile::named(ProfileName::Klear);
    let tests = suite(json!({"functional": ["assert f() == 2", "assert f() == 3"]}));
    let response = "<think></think>```python\ndef f():\n    return 1\nexit()\n```";
    let execution = execute(plan(&klear, response, &tests, &options(0, "")));
    assert_eq!(execution.programs.len(), 2);
    assert!(execution.programs[0].source.contains("import pandas as pd"));
    assert_eq!(execution.required_modules, vec!["numpy", "pandas"]);
    // The program exits before its assert: exit status 0 and no output is a pass under Klear.
    assert_eq!(
        judge_test(&klear, &execution.programs[0], &exited("", 0)),
        Verdict::Pass
    );
}

#[test]
fn judge_functional_tests_run_live_with_the_test_in_the_referee() {
    let judge = Profile::named(ProfileName::Judge);
    let tests = suite(json!({"functional": ["assert f() == 1", "assert f() == 2"]}));
    let response = "```python\ndef f():\n    return 1\n```";
    let execution = execute(plan(&judge, response, &tests, &options(3, "job")));
    assert_eq!(execution.programs.len(), 2);
    // The child runs the prelude and the solution only; the test's code goes to the referee.
    let live = execution
        .live_functional
        .as_ref()
        .expect("a judge functional plan runs live");
    assert_eq!(live.solution, "def f():\n    return 1");
    assert!(live.prelude.contains("class TreeNode"));
    assert!(!live.prelude.contains("import numpy"));
    for (program, test) in execution
        .programs
        .iter()
        .zip(["assert f() == 1", "assert f() == 2"])
    {
        assert_eq!(program.check.as_deref(), Some(test));
        assert!(!program.source.contains("assert"), "{}", program.source);
    }
    // The verdict is the referee's, and a pass also needs the child's clean exit.
    let program = &execution.programs[0];
    let with = |verdict, exit_code| ExecutionResult {
        referee: Some(verdict),
        exit_code,
        ..ExecutionResult::default()
    };
    assert_eq!(
        judge_test(&judge, program, &with(RefereeVerdict::Pass, Some(0))),
        Verdict::Pass
    );
    assert_eq!(
        judge_test(&judge, program, &with(RefereeVerdict::Pass, Some(3))),
        Verdict::RuntimeError,
        "a pass whose child then fails at shutdown"
    );
    assert_eq!(
        judge_test(&judge, program, &with(RefereeVerdict::Ended, Some(0))),
        Verdict::WrongAnswer,
        "exit() during a call"
    );
    assert!(execution.required_modules.is_empty());
}

#[test]
fn judge_pass_rate_binary_mode_and_max_tests() {
    let judge = Profile::named(ProfileName::Judge);
    let tests = io_suite(8);
    let execution = execute(plan(
        &judge,
        "```python\nprint(input())\n```",
        &tests,
        &options(0, ""),
    ));
    assert_eq!(execution.programs.len(), 8);
    assert_eq!(execution.limits.time_per_test, Duration::from_secs(10));
    let mut verdicts = vec![Verdict::Pass; 6];
    verdicts.extend([Verdict::WrongAnswer, Verdict::RuntimeError]);
    let run = JobRun {
        stages: vec![runs(&verdicts)],
        deadline_exceeded: false,
    };
    assert_eq!(aggregate(&execution, &run).score, Some(0.75));

    let binary = judge.clone().with_binary_reward().unwrap();
    let binary_plan = execute(plan(
        &binary,
        "```python\nprint(input())\n```",
        &tests,
        &options(0, ""),
    ));
    assert!(binary_plan.stages[0].may_stop_at_first_failure);
    let stopped = JobRun {
        stages: vec![runs(&[
            Verdict::Pass,
            Verdict::WrongAnswer,
            Verdict::Skipped,
        ])],
        deadline_exceeded: false,
    };
    assert_eq!(aggregate(&binary_plan, &stopped).score, Some(0.0));
    assert!(
        Profile::named(ProfileName::Klear)
            .with_binary_reward()
            .is_err()
    );

    let limited = PlanOptions {
        max_tests: Some(3),
        ..options(1, "x")
    };
    let limited_plan = execute(plan(
        &judge,
        "```python\nprint(input())\n```",
        &tests,
        &limited,
    ));
    assert_eq!(limited_plan.programs.len(), 3);
}

#[test]
fn sandbox_errors_are_never_a_silent_zero() {
    let judge = Profile::named(ProfileName::Judge);
    let execution = execute(plan(
        &judge,
        "```python\nprint(input())\n```",
        &io_suite(2),
        &options(0, ""),
    ));
    let failed = ExecutionResult {
        sandbox_error: Some("clone failed".into()),
        ..ExecutionResult::default()
    };
    assert_eq!(
        judge_test(&judge, &execution.programs[0], &failed),
        Verdict::SandboxError
    );
    let result = aggregate(
        &execution,
        &JobRun {
            stages: vec![runs(&[Verdict::Pass, Verdict::SandboxError])],
            deadline_exceeded: false,
        },
    );
    assert_eq!((result.status, result.score), (Status::SandboxError, None));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["score"], serde_json::Value::Null);
    assert_eq!(json["status"], "sandbox_error");
}

#[test]
fn code_r1_constants_and_single_functional_program() {
    let code_r1 = Profile::named(ProfileName::CodeR1);
    let tests = io_suite(3);
    let bad = finished(plan(
        &code_r1,
        "```python\nprint(1)\n```",
        &tests,
        &options(0, ""),
    ));
    assert_eq!((bad.status, bad.score), (Status::FormatError, Some(-1.1)));
    let response = "<think>t</think><answer>\n```python\nprint(input())\n```\n</answer>";
    let execution = execute(plan(&code_r1, response, &tests, &options(0, "")));
    let all = JobRun {
        stages: vec![runs(&[Verdict::Pass; 3])],
        deadline_exceeded: false,
    };
    assert_eq!(aggregate(&execution, &all).score, Some(1.1));
    let one_failure = JobRun {
        stages: vec![runs(&[Verdict::Pass, Verdict::Timeout, Verdict::Pass])],
        deadline_exceeded: false,
    };
    assert_eq!(aggregate(&execution, &one_failure).score, Some(0.1));
    let functional = suite(json!({"functional": ["assert 1", "assert 2"]}));
    let single = execute(plan(&code_r1, response, &functional, &options(0, "")));
    assert_eq!(single.programs.len(), 1);
    assert!(
        single.programs[0]
            .source
            .to_string()
            .ends_with("print(input())\nassert 1\nassert 2")
    );
}

#[test]
fn prime_runs_two_passes_and_scores_the_first_ten() {
    let prime = Profile::named(ProfileName::Prime);
    let tests = io_suite(25);
    let execution = execute(plan(&prime, "no fence at all", &tests, &options(0, "")));
    assert_eq!(
        execution.programs[0].source.to_string(),
        "no fence at all",
        "whole response without a block"
    );
    let [first, second]: [Stage; 2] = execution.stages.clone().try_into().unwrap();
    assert_eq!(first.programs.len(), 25);
    assert_eq!(first.budget, Some(Duration::from_secs(6)));
    assert!(first.shared_process);
    assert_eq!(second.programs, (0..10).collect::<Vec<_>>());
    assert_eq!(second.time_per_test, Duration::from_secs(10));
    assert_eq!(second.run_if, StageCondition::PreviousStageNotAllPassed);

    let all_pass = JobRun {
        stages: vec![runs(&[Verdict::Pass; 25]), Vec::new()],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &all_pass);
    assert_eq!(
        (result.score, result.passed, result.total),
        (Some(1.0), 25, 25)
    );

    // Pass 1 stopped at test 12; pass 2 scores 7 of the first 10.
    let mut first_pass = vec![Verdict::Pass; 12];
    first_pass.push(Verdict::WrongAnswer);
    let mut second_pass = vec![Verdict::Pass; 7];
    second_pass.extend([
        Verdict::WrongAnswer,
        Verdict::Timeout,
        Verdict::RuntimeError,
    ]);
    let mixed = JobRun {
        stages: vec![runs(&first_pass), runs(&second_pass)],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &mixed);
    assert_eq!(
        (result.score, result.passed, result.total),
        (Some(0.7), 7, 10)
    );

    // A failure after test 10 still scores 1.0: only the first ten count.
    let late_failure = JobRun {
        stages: vec![
            runs(&[Verdict::Pass, Verdict::Timeout]),
            runs(&[Verdict::Pass; 10]),
        ],
        deadline_exceeded: false,
    };
    assert_eq!(aggregate(&execution, &late_failure).score, Some(1.0));

    // SystemExit is handled by the harness: a normal end with the right output passes.
    let program = &execution.programs[0];
    assert_eq!(
        judge_test(&prime, program, &exited("0\n", 0)),
        Verdict::Pass
    );
    assert_eq!(
        judge_test(&prime, program, &exited("0\n", 1)),
        Verdict::RuntimeError
    );
}

#[test]
fn rllm_is_binary_with_the_live_code_bench_deadline() {
    let rllm = Profile::named(ProfileName::Rllm);
    let execution = execute(plan(
        &rllm,
        "```\nprint(input())\n```",
        &io_suite(4),
        &options(0, ""),
    ));
    assert_eq!(execution.limits.job_deadline, Duration::from_secs(33));
    assert!(execution.stages[0].may_stop_at_first_failure);
    let no_code = finished(plan(&rllm, "print(1)", &io_suite(4), &options(0, "")));
    assert_eq!((no_code.status, no_code.score), (Status::NoCode, Some(0.0)));
}

#[test]
fn profiles_parse_and_describe() {
    for name in ProfileName::ALL {
        assert_eq!(name.as_str().parse::<ProfileName>(), Ok(name));
    }
    assert!("verl".parse::<ProfileName>().is_err());
    let table = describe_profiles();
    for name in ProfileName::ALL {
        assert!(table.contains(name.as_str()));
    }
    assert_eq!(table.lines().count(), 1 + 5 * 10);
}
