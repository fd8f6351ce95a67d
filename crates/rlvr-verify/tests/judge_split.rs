//! The judge's functional tests split by the referee (issue 12), at the policy layer: what the
//! plan carries for the referee, how a split test's outcome becomes a verdict, and how tampering
//! and coverage are counted per job.

use std::time::Duration;

use rlvr_verify::prelude::judge_prefix;
use rlvr_verify::{
    ExecutionPlan, ExecutionResult, JobRun, Plan, PlanOptions, Profile, ProfileName,
    RefereeVerdict, TamperKind, Tampering, TestRun, TestSuite, Verdict, aggregate, judge_test,
    plan,
};
use serde_json::json;

const RESPONSE: &str = "<think>x</think>\n```python\ndef square(x):\n    return x * x\n```";

fn planned(profile: ProfileName, ground_truth: serde_json::Value) -> ExecutionPlan {
    let suite = TestSuite::from_value(&ground_truth).unwrap();
    match plan(
        &Profile::named(profile),
        RESPONSE,
        &suite,
        &PlanOptions::default(),
    ) {
        Plan::Execute(execution) => execution,
        Plan::Finished(result) => panic!("{result:?}"),
    }
}

fn functional() -> serde_json::Value {
    json!({"functional": ["assert square(2) == 4", "assert square(3) == 9"]})
}

#[test]
fn judge_functional_plans_carry_each_test_for_the_referee() {
    let execution = planned(ProfileName::Judge, functional());
    let split = execution
        .functional_split
        .as_ref()
        .expect("judge functional jobs go through the referee");
    assert_eq!(split.prelude, judge_prefix());
    assert_eq!(split.solution, "def square(x):\n    return x * x");
    let checks: Vec<_> = execution
        .programs
        .iter()
        .map(|program| program.check.as_deref())
        .collect();
    assert_eq!(
        checks,
        [Some("assert square(2) == 4"), Some("assert square(3) == 9")]
    );
    // The unsplit fallback is still the sentinel program.
    assert!(
        execution
            .programs
            .iter()
            .all(|program| program.sentinel.is_some())
    );
    // Stdin tests and the reference profiles keep their programs.
    let stdin = planned(
        ProfileName::Judge,
        json!({"inputs": ["1\n"], "outputs": ["1\n"]}),
    );
    assert!(stdin.functional_split.is_none());
    assert!(stdin.programs[0].check.is_none());
    for profile in [ProfileName::Klear, ProfileName::Rllm] {
        let reference = planned(profile, functional());
        assert!(reference.functional_split.is_none(), "{profile:?}");
        assert!(
            reference
                .programs
                .iter()
                .all(|program| program.check.is_none())
        );
    }
}

fn split_result(completed: bool, referee: Option<RefereeVerdict>) -> ExecutionResult {
    ExecutionResult {
        exit_code: Some(0),
        completed: Some(completed),
        split: Some(true),
        referee,
        ..ExecutionResult::default()
    }
}

#[test]
fn a_split_test_passes_only_on_the_referees_word_after_a_complete_run() {
    let judge = Profile::named(ProfileName::Judge);
    let execution = planned(ProfileName::Judge, functional());
    let program = &execution.programs[0];
    let verdict = |result: &ExecutionResult| judge_test(&judge, program, result);
    assert_eq!(
        verdict(&split_result(true, Some(RefereeVerdict::Pass))),
        Verdict::Pass
    );
    assert_eq!(
        verdict(&split_result(true, Some(RefereeVerdict::Fail))),
        Verdict::WrongAnswer
    );
    assert_eq!(
        verdict(&split_result(true, Some(RefereeVerdict::Error))),
        Verdict::RuntimeError
    );
    // No judgement (the child left early), or a judgement claimed for an incomplete run.
    assert_eq!(verdict(&split_result(true, None)), Verdict::WrongAnswer);
    assert_eq!(
        verdict(&split_result(false, Some(RefereeVerdict::Pass))),
        Verdict::WrongAnswer
    );
    // Whatever the stdout holds: the sentinel means nothing for a split test.
    let mut printed = split_result(false, None);
    printed.stdout = format!("{}\n", program.sentinel.as_ref().unwrap()).into_bytes();
    assert_eq!(verdict(&printed), Verdict::WrongAnswer);
    // Limits come first.
    let mut slow = split_result(true, Some(RefereeVerdict::Pass));
    slow.timed_out = true;
    assert_eq!(verdict(&slow), Verdict::Timeout);
    let mut crashed = split_result(true, Some(RefereeVerdict::Pass));
    crashed.exit_code = Some(1);
    assert_eq!(verdict(&crashed), Verdict::RuntimeError);
}

#[test]
fn an_unsplit_assertion_that_fails_is_a_wrong_answer() {
    let judge = Profile::named(ProfileName::Judge);
    let execution = planned(ProfileName::Judge, functional());
    let failed = ExecutionResult {
        exit_code: Some(1),
        assertion_failed: true,
        split: Some(false),
        ..ExecutionResult::default()
    };
    assert_eq!(
        judge_test(&judge, &execution.programs[0], &failed),
        Verdict::WrongAnswer
    );
    let raised = ExecutionResult {
        exit_code: Some(1),
        split: Some(false),
        ..ExecutionResult::default()
    };
    assert_eq!(
        judge_test(&judge, &execution.programs[0], &raised),
        Verdict::RuntimeError
    );
}

fn run(verdict: Verdict, split: bool, kinds: &[TamperKind]) -> TestRun {
    TestRun {
        wall_time: Some(Duration::from_millis(2)),
        split: Some(split),
        tampering: kinds.iter().copied().collect::<Tampering>(),
        ..TestRun::not_run(verdict)
    }
}

#[test]
fn results_count_coverage_and_tampering_per_kind() {
    let execution = planned(ProfileName::Judge, functional());
    let job = JobRun {
        stages: vec![vec![
            run(
                Verdict::WrongAnswer,
                true,
                &[TamperKind::FrameIntrospection, TamperKind::Tracing],
            ),
            run(Verdict::Pass, false, &[TamperKind::FrameIntrospection]),
        ]],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &job);
    assert_eq!(result.passed, 1);
    let coverage = result
        .functional
        .expect("judge functional jobs count coverage");
    assert_eq!((coverage.split, coverage.unsplit), (1, 1));
    assert_eq!(result.tampering.count(TamperKind::FrameIntrospection), 2);
    assert_eq!(result.tampering.count(TamperKind::Tracing), 1);
    let line = serde_json::to_value(&result).unwrap();
    assert_eq!(
        line["tampering"],
        json!({"frame_introspection": 2, "tracing": 1})
    );
    assert_eq!(line["functional"], json!({"split": 1, "unsplit": 1}));
    assert_eq!(
        line["tests"][0]["tampering"],
        json!(["frame_introspection", "tracing"])
    );
    assert_eq!(line["tests"][1]["split"], false);

    // Nothing seen, nothing written; stdin jobs have no coverage object.
    let stdin = execution_for_stdin();
    let quiet = aggregate(
        &stdin,
        &JobRun {
            stages: vec![vec![TestRun::not_run(Verdict::Pass)]],
            deadline_exceeded: false,
        },
    );
    let line = serde_json::to_value(&quiet).unwrap();
    assert!(line.get("tampering").is_none() && line.get("functional").is_none());
    assert!(line["tests"][0].get("tampering").is_none());
}

fn execution_for_stdin() -> ExecutionPlan {
    planned(
        ProfileName::Judge,
        json!({"inputs": ["1\n"], "outputs": ["1\n"]}),
    )
}
