//! Issue 12 "Verifier robustness" and issue 13's limits, at the engine: no panic and no runner
//! death takes a worker down or voids a score, every job gets exactly one result, a response
//! that the runner cannot compile is the solution's failure, every profile has a memory limit,
//! and a large correct output is not cut by the output cap.
//!
//! Faults are injected with `rlvr_engine::arm_test_faults` (debug builds only), each keyed by
//! a marker unique to its test, so tests running in one process do not see each other's.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{engine_with, fenced, job, submit_all, verdicts};
use rlvr_engine::{Engine, Job};
use rlvr_verify::{
    JobResult, Plan, PlanOptions, Profile, ProfileName, Status, TestSuite, Verdict, plan,
};
use serde_json::{Value, json};

/// Scores the jobs and returns their results in order; fails (instead of hanging) when a
/// result does not arrive within `limit`.
fn score_all_within(engine: &Engine, jobs: Vec<Job>, limit: Duration) -> Vec<JobResult> {
    let (sender, receiver) = mpsc::channel();
    let count = jobs.len();
    submit_all(engine, jobs, &sender);
    let mut results: Vec<Option<JobResult>> = vec![None; count];
    for _ in 0..count {
        let (index, result) = receiver
            .recv_timeout(limit)
            .expect("every job gets a result: no worker died, nothing hangs");
        assert!(results[index].is_none(), "job {index} answered twice");
        results[index] = Some(result);
    }
    assert!(
        receiver.recv_timeout(Duration::from_millis(200)).is_err(),
        "no job is answered twice"
    );
    results.into_iter().map(Option::unwrap).collect()
}

/// [`score_all_within`] with five minutes a result: stricter than `common::score_all`, which
/// waits as long as it takes and does not look for a second answer.
fn score_all(engine: &Engine, jobs: Vec<Job>) -> Vec<JobResult> {
    score_all_within(engine, jobs, Duration::from_secs(300))
}

const SUM: &str = "a, b = map(int, input().split())\nprint(a + b)";

fn sum_tests(count: usize) -> Value {
    let inputs: Vec<String> = (0..count).map(|index| format!("{index} 1\n")).collect();
    let outputs: Vec<String> = (0..count).map(|index| format!("{}\n", index + 1)).collect();
    json!({"inputs": inputs, "outputs": outputs})
}

fn reason(result: &JobResult) -> &str {
    result.reason.as_deref().unwrap_or("")
}

#[test]
fn issue_12_a_panic_while_planning_is_reported_and_the_worker_lives_on() {
    rlvr_engine::arm_test_faults("plan:MARKER_PLAN_PANIC");
    let engine = engine_with(1);
    let marked = fenced(&format!("# MARKER_PLAN_PANIC\n{SUM}"));
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &marked, &sum_tests(3)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
            job(ProfileName::Klear, &marked, &sum_tests(3)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
        ],
    );
    for panicked in [&results[0], &results[2]] {
        assert_eq!(panicked.status, Status::SandboxError, "{panicked:?}");
        assert_eq!(panicked.score, None, "never a silent 0");
        assert!(
            reason(panicked).starts_with("internal error: the verifier failed on this job"),
            "{panicked:?}"
        );
    }
    assert_eq!(results[2].profile, ProfileName::Klear);
    for honest in [&results[1], &results[3]] {
        assert_eq!(honest.score, Some(1.0), "the worker lives on: {honest:?}");
    }
    assert_eq!(engine.statistics().panics.load(Ordering::Relaxed), 2);
    assert_eq!(engine.statistics().jobs.load(Ordering::Relaxed), 4);
    engine.shutdown();
}

#[test]
fn issue_12_a_panic_while_executing_is_reported_and_the_worker_lives_on() {
    rlvr_engine::arm_test_faults("execute:MARKER_EXECUTE_PANIC");
    let engine = engine_with(1);
    let marked = fenced(&format!("# MARKER_EXECUTE_PANIC\n{SUM}"));
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &marked, &sum_tests(3)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
            job(ProfileName::Judge, &marked, &sum_tests(3)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
        ],
    );
    for panicked in [&results[0], &results[2]] {
        assert_eq!(
            (panicked.status, panicked.score),
            (Status::SandboxError, None)
        );
        assert!(reason(panicked).contains("fault injected"), "{panicked:?}");
    }
    for honest in [&results[1], &results[3]] {
        assert_eq!(honest.score, Some(1.0), "{honest:?}");
    }
    engine.shutdown();
}

#[test]
fn issue_12_a_helper_that_panics_never_leaves_the_job_waiting() {
    rlvr_engine::arm_test_faults("help:MARKER_HELP_PANIC");
    // Two workers, one big job: the idle worker helps, and panics on every test it claims.
    let engine = engine_with(2);
    let slow = format!("# MARKER_HELP_PANIC\nimport time\ntime.sleep(0.02)\n{SUM}");
    let results = score_all_within(
        &engine,
        vec![job(ProfileName::Judge, &fenced(&slow), &sum_tests(60))],
        Duration::from_secs(200),
    );
    assert!(
        engine.statistics().helped_stages.load(Ordering::Relaxed) > 0,
        "the second worker should have helped"
    );
    // The tests the helper claimed could not be run: the job is unscored, never a silent 0.
    assert_eq!(
        (results[0].status, results[0].score),
        (Status::SandboxError, None),
        "{:?}",
        results[0]
    );
    assert!(engine.statistics().panics.load(Ordering::Relaxed) > 0);
    // Both workers still score.
    let after = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(2)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(2)),
        ],
    );
    assert!(after.iter().all(|result| result.score == Some(1.0)));
    engine.shutdown();
}

#[test]
fn issue_12_a_runner_that_dies_loading_the_response_fails_the_job_with_a_reason() {
    rlvr_engine::arm_test_faults("runner-load:MARKER_RUNNER_LOAD");
    let engine = engine_with(1);
    let marked = fenced(&format!("# MARKER_RUNNER_LOAD\n{SUM}"));
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &marked, &sum_tests(6)),
            job(ProfileName::Klear, &marked, &sum_tests(6)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
        ],
    );
    for failed in &results[..2] {
        assert_eq!(failed.status, Status::Ok, "{failed:?}");
        assert!(
            verdicts(failed)
                .iter()
                .all(|verdict| *verdict == Verdict::RuntimeError),
            "{failed:?}"
        );
        assert!(
            reason(failed).starts_with("the response made the runner die loading the response"),
            "{failed:?}"
        );
    }
    assert_eq!(results[0].score, Some(0.0));
    assert_eq!(results[1].score, Some(-1.0), "klear: every test failed");
    assert_eq!(results[2].score, Some(1.0), "the worker lives on");
    engine.shutdown();
}

#[test]
fn issue_12_a_runner_that_dies_running_a_test_fails_that_test() {
    rlvr_engine::arm_test_faults("runner-run:MARKER_RUNNER_RUN");
    let engine = engine_with(1);
    let marked = fenced(&format!("# MARKER_RUNNER_RUN\n{SUM}"));
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &marked, &sum_tests(5)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
        ],
    );
    assert_eq!(
        (results[0].status, results[0].score),
        (Status::Ok, Some(0.0))
    );
    assert_eq!(verdicts(&results[0]), vec![Verdict::RuntimeError; 5]);
    assert!(
        reason(&results[0]).starts_with("the response made the runner die running a test"),
        "{:?}",
        results[0]
    );
    assert_eq!(results[1].score, Some(1.0));
    engine.shutdown();
}

/// A real hostile program: it lowers the runner's descriptor limit (when the sandbox lets it),
/// so the runner dies at the next test. Today's executor gave up after three restarts and voided
/// the score (`sandbox_error`); the response must be scored on what it printed.
#[test]
fn issue_12_a_response_that_cripples_the_runner_cannot_void_its_score() {
    let engine = engine_with(1);
    let crippler = format!(
        "import os, resource\n\
         for pid in {{1, os.getppid()}}:\n    \
             try:\n        resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3))\n    \
             except OSError:\n        pass\n\
         {SUM}"
    );
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(&crippler), &sum_tests(6)),
            job(ProfileName::Judge, &fenced(SUM), &sum_tests(3)),
        ],
    );
    assert_eq!(results[0].status, Status::Ok, "{:?}", results[0]);
    assert!(results[0].score.is_some(), "{:?}", results[0]);
    assert_eq!(results[1].score, Some(1.0));
    engine.shutdown();
}

/// Code that makes `compile` itself raise: the solution's failure, named in the reason.
#[test]
fn issue_12_exceptions_while_compiling_the_response_are_the_solutions_failure() {
    let engine = engine_with(2);
    let deep_sum = format!("x = {}\n{SUM}", vec!["1"; 200_000].join("+"));
    let deep_unary = format!("x = {}1\n{SUM}", "-".repeat(100_000));
    let null_byte = format!("x = 1\0\n{SUM}");
    let cases = [
        (deep_sum.as_str(), "RecursionError"),
        (deep_unary.as_str(), "MemoryError"),
        (null_byte.as_str(), "null bytes"),
    ];
    let mut jobs = Vec::new();
    for (code, _) in &cases {
        jobs.push(job(ProfileName::Judge, &fenced(code), &sum_tests(4)));
        jobs.push(job(ProfileName::Klear, &fenced(code), &sum_tests(4)));
        jobs.push(job(ProfileName::Rllm, &fenced(code), &sum_tests(4)));
        jobs.push(job(ProfileName::Prime, &fenced(code), &sum_tests(4)));
    }
    jobs.push(job(ProfileName::Judge, &fenced(SUM), &sum_tests(4)));
    let results = score_all(&engine, jobs);
    for (case, (_, error)) in cases.iter().enumerate() {
        let [judge, klear, rllm, prime] = [0, 1, 2, 3].map(|offset| &results[case * 4 + offset]);
        for result in [judge, klear, rllm, prime] {
            assert_eq!(result.status, Status::Ok, "{error}: {result:?}");
            assert_eq!(result.passed, 0, "{error}: {result:?}");
            assert!(
                reason(result).starts_with("the code does not compile: ")
                    && reason(result).contains(error),
                "{error}: {result:?}"
            );
        }
        assert_eq!(judge.score, Some(0.0));
        assert_eq!(klear.score, Some(-1.0), "klear's reference gives -1");
        assert_eq!(rllm.score, Some(0.0));
        assert_eq!(prime.score, Some(0.0));
    }
    assert_eq!(results.last().unwrap().score, Some(1.0));
    engine.shutdown();
}

/// Issue 13: rllm and prime ran without a memory limit (2.2 GB per job seen).
#[test]
fn issue_13_every_profile_has_a_memory_limit() {
    let engine = engine_with(2);
    let hog = format!("block = bytearray(1536 << 20)\nblock[-1] = 1\n{SUM}");
    let profiles = [
        ProfileName::Judge,
        ProfileName::Klear,
        ProfileName::CodeR1,
        ProfileName::Rllm,
        ProfileName::Prime,
    ];
    let mut jobs: Vec<Job> = profiles
        .iter()
        .map(|profile| {
            let response = if *profile == ProfileName::CodeR1 {
                format!("<think>x</think><answer>```python\n{hog}\n```</answer>")
            } else {
                fenced(&hog)
            };
            job(*profile, &response, &sum_tests(2))
        })
        .collect();
    // Code-R1's reference allows 4 GiB: lower it so the test stays cheap.
    jobs[2].options.memory_limit_bytes = Some(1024 << 20);
    let results = score_all(&engine, jobs);
    for (profile, result) in profiles.iter().zip(&results) {
        assert_eq!(result.status, Status::Ok, "{profile}: {result:?}");
        assert_eq!(
            result.passed, 0,
            "{profile}: a 1.5 GiB block must not fit: {result:?}"
        );
    }
    engine.shutdown();
}

/// Issue 13: the judge's 16 MiB output cap failed a correct 50 MB answer.
#[test]
fn issue_13_a_large_correct_output_is_not_cut_by_the_output_cap() {
    let engine = engine_with(1);
    let size = 20 << 20;
    let expected = format!("{}\n", "7".repeat(size));
    let truth = json!({"inputs": [format!("{size}\n")], "outputs": [expected]});
    let right = "import sys\nn = int(input())\nsys.stdout.write('7' * n + '\\n')";
    let runaway = "import sys\nn = int(input())\nsys.stdout.write('7' * (3 * n) + '\\n')";
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(right), &truth),
            job(ProfileName::Judge, &fenced(runaway), &truth),
        ],
    );
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
    assert_eq!(verdicts(&results[1]), [Verdict::OutputLimit]);
    // The verdict says which cap it ran into: twice the expected output, above 16 MiB.
    let tests = results[1].tests.as_ref().expect("details");
    assert_eq!(tests[0].output_cap_bytes, Some(2 * (size as u64 + 1)));
    assert_eq!(results[0].tests.as_ref().unwrap()[0].output_cap_bytes, None);
    engine.shutdown();
}

/// Limits from a caller that skipped validation still never panic a worker.
#[test]
fn issue_12_extreme_limits_never_panic_a_worker() {
    let engine = engine_with(1);
    let mut jobs = Vec::new();
    for profile in [ProfileName::Rllm, ProfileName::Prime, ProfileName::Judge] {
        let mut extreme = job(profile, &fenced(SUM), &sum_tests(2));
        extreme.options.time_limit = Some(Duration::MAX);
        extreme.options.memory_limit_bytes = Some(u64::MAX);
        jobs.push(extreme);
    }
    jobs.push(job(ProfileName::Judge, &fenced(SUM), &sum_tests(2)));
    let results = score_all_within(&engine, jobs, Duration::from_secs(200));
    assert_eq!(engine.statistics().panics.load(Ordering::Relaxed), 0);
    for result in &results {
        assert_eq!(result.score, Some(1.0), "{result:?}");
    }
    engine.shutdown();
}

/// Issue 12: stdin tests share one copy of the program instead of one per test.
#[test]
fn issue_12_stdin_tests_share_the_response() {
    let profile = Profile::named(ProfileName::Judge);
    let suite = TestSuite::from_value(&sum_tests(200)).unwrap();
    let big = fenced(&format!("# {}\n{SUM}", "x".repeat(1 << 20)));
    let Plan::Execute(execution) = plan(&profile, &big, &suite, &PlanOptions::default()) else {
        panic!("the response has code");
    };
    assert_eq!(execution.programs.len(), 200);
    let first = execution.programs[0].source.head();
    assert!(
        execution
            .programs
            .iter()
            .all(|program| Arc::ptr_eq(program.source.head(), first)),
        "every test's program is the same shared text"
    );
}

/// Issue 12: functional tests keep one copy of the response too, and only their own assert.
#[test]
fn issue_12_functional_tests_share_the_response() {
    let big_code = format!("# {}\ndef f(a):\n    return a + 1", "x".repeat(1 << 20));
    let asserts: Vec<String> = (0..200)
        .map(|index| format!("assert f({index}) == {}", index + 1))
        .collect();
    let suite = TestSuite::from_value(&json!({"functional": asserts})).unwrap();
    // (prime is not planned: prime_code scores a functional record 0.0 without running it.)
    for name in [ProfileName::Judge, ProfileName::Klear] {
        let profile = Profile::named(name);
        let Plan::Execute(execution) = plan(
            &profile,
            &fenced(&big_code),
            &suite,
            &PlanOptions::default(),
        ) else {
            panic!("the response has code");
        };
        assert_eq!(
            execution.programs.len(),
            if name == ProfileName::Klear { 16 } else { 200 }
        );
        let head = execution.programs[0].source.head();
        assert!(head.len() > 1 << 20, "{name}: the head holds the code");
        for (program, index) in execution.programs.iter().zip(0..) {
            assert!(Arc::ptr_eq(program.source.head(), head), "{name}");
            assert!(
                program.source.tail().len() < 200,
                "{name}: {}",
                program.source.tail()
            );
            // The judge's test is not part of the program: the referee runs it (issue 22).
            let test = match name {
                ProfileName::Judge => program.check.clone().expect("a judge functional test"),
                _ => program.source.to_string(),
            };
            assert!(
                test.contains(&format!("assert f({})", program.test_index)),
                "{name} {index}"
            );
        }
    }
}
