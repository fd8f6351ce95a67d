//! The judge's live functional tests (issue 22), at the policy layer: what the plan carries for
//! the referee and the child, how the referee's verdict and the child's end become a test's
//! verdict, and how tampering and untrusted comparisons are counted per test and job.

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
fn judge_functional_plans_carry_each_test_for_the_referee_and_the_solution_for_the_child() {
    let execution = planned(ProfileName::Judge, functional());
    let live = execution
        .live_functional
        .as_ref()
        .expect("judge functional jobs go through the referee");
    assert_eq!(live.prelude, judge_prefix());
    assert_eq!(live.solution, "def square(x):\n    return x * x");
    let checks: Vec<_> = execution
        .programs
        .iter()
        .map(|program| program.check.as_deref())
        .collect();
    assert_eq!(
        checks,
        [Some("assert square(2) == 4"), Some("assert square(3) == 9")]
    );
    // Nothing of a test is in what the child runs.
    for program in &execution.programs {
        let source = program.source.to_string();
        assert!(
            !source.contains("assert") && !source.contains("== 4"),
            "{source}"
        );
    }
    // Stdin tests and the reference profiles keep their programs.
    let stdin = planned(
        ProfileName::Judge,
        json!({"inputs": ["1\n"], "outputs": ["1\n"]}),
    );
    assert!(stdin.live_functional.is_none());
    assert!(stdin.programs[0].check.is_none());
    for profile in [ProfileName::Klear, ProfileName::Rllm] {
        let reference = planned(profile, functional());
        assert!(reference.live_functional.is_none(), "{profile:?}");
        assert!(
            reference
                .programs
                .iter()
                .all(|program| program.check.is_none())
        );
    }
}

fn live(referee: RefereeVerdict, exit_code: Option<i32>) -> ExecutionResult {
    ExecutionResult {
        exit_code,
        referee: Some(referee),
        ..ExecutionResult::default()
    }
}

#[test]
fn a_live_test_passes_only_on_the_referees_word_and_a_clean_exit_of_the_child() {
    let judge = Profile::named(ProfileName::Judge);
    let execution = planned(ProfileName::Judge, functional());
    let program = &execution.programs[0];
    let verdict = |result: &ExecutionResult| judge_test(&judge, program, result);
    let table = [
        (live(RefereeVerdict::Pass, Some(0)), Verdict::Pass),
        // The test ran to its end, then the solution's process failed at shutdown.
        (live(RefereeVerdict::Pass, Some(1)), Verdict::RuntimeError),
        (live(RefereeVerdict::Fail, None), Verdict::WrongAnswer),
        (live(RefereeVerdict::Error, None), Verdict::RuntimeError),
        (live(RefereeVerdict::Memory, None), Verdict::MemoryLimit),
        // `exit()` (status 0) during a call ended the test early: never a pass.
        (live(RefereeVerdict::Ended, Some(0)), Verdict::WrongAnswer),
        (live(RefereeVerdict::Ended, Some(1)), Verdict::RuntimeError),
        // The referee failed on what the solution sent: the solution's failure.
        (live(RefereeVerdict::Broken, None), Verdict::WrongAnswer),
    ];
    for (result, expected) in &table {
        assert_eq!(verdict(result), *expected, "{result:?}");
    }
    // Whatever the stdout holds, it is not the verdict.
    let mut printed = live(RefereeVerdict::Fail, Some(0));
    printed.stdout = b"PASS\n".to_vec();
    assert_eq!(verdict(&printed), Verdict::WrongAnswer);
    // Limits come first.
    let mut slow = live(RefereeVerdict::Pass, Some(0));
    slow.timed_out = true;
    assert_eq!(verdict(&slow), Verdict::Timeout);
    let mut killed = live(RefereeVerdict::Pass, None);
    killed.signal = Some(9);
    assert_eq!(verdict(&killed), Verdict::RuntimeError);
    let mut sandbox = live(RefereeVerdict::Pass, Some(0));
    sandbox.sandbox_error = Some("no sandbox".to_owned());
    assert_eq!(verdict(&sandbox), Verdict::SandboxError);
}

fn run(verdict: Verdict, untrusted_comparisons: u64, kinds: &[TamperKind]) -> TestRun {
    TestRun {
        wall_time: Some(Duration::from_millis(2)),
        untrusted_comparisons,
        tampering: kinds.iter().copied().collect::<Tampering>(),
        ..TestRun::not_run(verdict)
    }
}

#[test]
fn results_count_untrusted_comparisons_and_tampering_per_kind() {
    let execution = planned(ProfileName::Judge, functional());
    let job = JobRun {
        stages: vec![vec![
            run(
                Verdict::WrongAnswer,
                0,
                &[TamperKind::FrameIntrospection, TamperKind::Tracing],
            ),
            run(Verdict::Pass, 3, &[TamperKind::FrameIntrospection]),
        ]],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &job);
    assert_eq!(result.passed, 1);
    assert_eq!(result.untrusted_comparisons, Some(3));
    assert_eq!(result.tampering.count(TamperKind::FrameIntrospection), 2);
    assert_eq!(result.tampering.count(TamperKind::Tracing), 1);
    let line = serde_json::to_value(&result).unwrap();
    assert_eq!(
        line["tampering"],
        json!({"frame_introspection": 2, "tracing": 1})
    );
    assert_eq!(line["untrusted_comparisons"], 3);
    assert_eq!(
        line["tests"][0]["tampering"],
        json!(["frame_introspection", "tracing"])
    );
    assert!(line["tests"][0].get("untrusted_comparisons").is_none());
    assert_eq!(line["tests"][1]["untrusted_comparisons"], 3);

    // Nothing seen, nothing written; stdin jobs have no untrusted comparisons at all.
    let stdin = planned(
        ProfileName::Judge,
        json!({"inputs": ["1\n"], "outputs": ["1\n"]}),
    );
    let quiet = aggregate(
        &stdin,
        &JobRun {
            stages: vec![vec![TestRun::not_run(Verdict::Pass)]],
            deadline_exceeded: false,
        },
    );
    let line = serde_json::to_value(&quiet).unwrap();
    assert!(line.get("tampering").is_none() && line.get("untrusted_comparisons").is_none());
    assert!(line["tests"][0].get("tampering").is_none());
}
