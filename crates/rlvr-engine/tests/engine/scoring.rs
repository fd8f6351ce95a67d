//! The engine end to end: real plans, the real sandbox, the warm runner.

use std::sync::Arc;

use crate::common::{engine_with, fenced, job, score_all, verdicts};
use rlvr_engine::Engine;
use rlvr_verify::{Profile, ProfileName, Status};

fn engine() -> Engine {
    engine_with(2)
}

fn sum_tests() -> serde_json::Value {
    serde_json::json!({"inputs": ["1 2\n", "3 4\n", "10 -3\n"], "outputs": ["3\n", "7\n", "7\n"]})
}

#[test]
fn right_wrong_and_crashing_answers_score_as_the_profile_says() {
    let engine = engine();
    let right = "a, b = map(int, input().split())\nprint(a + b)";
    let wrong = "a, b = map(int, input().split())\nprint(a - b)";
    let crash = "raise ValueError('no')";
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(right), &sum_tests()),
            job(ProfileName::Judge, &fenced(wrong), &sum_tests()),
            job(ProfileName::Judge, &fenced(crash), &sum_tests()),
            job(ProfileName::Klear, &fenced(right), &sum_tests()),
            job(ProfileName::Klear, &fenced(wrong), &sum_tests()),
            job(ProfileName::Klear, "no think tags", &sum_tests()),
        ],
    );
    let scores: Vec<_> = results.iter().map(|result| result.score).collect();
    assert_eq!(scores[0], Some(1.0));
    assert_eq!((results[1].passed, scores[1]), (0, Some(0.0)));
    assert_eq!(scores[2], Some(0.0));
    assert_eq!(scores[3], Some(1.0));
    assert_eq!(results[5].status, Status::FormatError);
    assert_eq!(scores[5], Some(-0.5));
    engine.shutdown();
}

#[test]
fn nothing_a_job_leaves_behind_reaches_the_next_job_on_the_same_runner() {
    // One worker: both jobs run on the same kept runner.
    let engine = engine_with(1);
    let leave_traces = "import os, subprocess, sys\nopen('/tmp/left-by-job-one', 'w').write('secret')\n\
        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n\
        a, b = map(int, input().split())\nprint(a + b)";
    let look_for_traces = "import os\na, b = map(int, input().split())\n\
        others = [p for p in os.listdir('/proc') if p.isdigit() and p not in ('1', os.readlink('/proc/self'))]\n\
        print(a + b if not os.path.exists('/tmp/left-by-job-one') and not others else 'traces')";
    let results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(leave_traces), &sum_tests()),
            job(ProfileName::Judge, &fenced(look_for_traces), &sum_tests()),
        ],
    );
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
    assert_eq!(
        results[1].score,
        Some(1.0),
        "job two saw job one's file or process: {:?}",
        results[1]
    );
    engine.shutdown();
}

#[test]
fn an_idle_worker_helps_run_a_big_job_and_the_result_is_the_same() {
    let engine = engine_with(2);
    let count = 120;
    let inputs: Vec<String> = (0..count)
        .map(|index| format!("{index} {index}\n"))
        .collect();
    let outputs: Vec<String> = (0..count).map(|index| format!("{}\n", 2 * index)).collect();
    let truth = serde_json::json!({"inputs": inputs, "outputs": outputs});
    let slow_sum = "import time\ntime.sleep(0.02)\na, b = map(int, input().split())\nprint(a + b)";
    let wrong_at_77 = "a, b = map(int, input().split())\nprint(a + b if a != 77 else -1)";
    let mut binary = job(ProfileName::Judge, &fenced(wrong_at_77), &truth);
    binary.profile = Arc::new(
        Profile::named(ProfileName::Judge)
            .with_binary_reward()
            .unwrap(),
    );
    // The slow job alone first: the second worker then has nothing queued (with more jobs it
    // may stay busy with them on a loaded machine) and must help with this one's stages. The
    // help is counted by the job's owner before the result is sent, so it shows once the
    // result is here.
    let slow = score_all(
        &engine,
        vec![job(ProfileName::Judge, &fenced(slow_sum), &truth)],
    );
    assert_eq!(
        (slow[0].score, slow[0].passed, slow[0].total),
        (Some(1.0), count, count)
    );
    let helped = engine
        .statistics()
        .helped_stages
        .load(std::sync::atomic::Ordering::Relaxed);
    let mut results = score_all(
        &engine,
        vec![
            job(ProfileName::Judge, &fenced(wrong_at_77), &truth),
            binary,
        ],
    );
    results.insert(0, slow.into_iter().next().unwrap());
    let verdicts = verdicts(&results[1]);
    assert_eq!(verdicts.len(), count);
    assert_eq!(
        results[1].passed,
        count - 1,
        "exactly test 77 fails, whoever ran it"
    );
    assert_eq!(verdicts[77], rlvr_verify::Verdict::WrongAnswer);
    assert_eq!(
        results[2].score,
        Some(0.0),
        "a binary reward stops at the failure"
    );
    assert!(
        engine
            .statistics()
            .helped_stages
            .load(std::sync::atomic::Ordering::Relaxed)
            >= helped
            && helped > 0,
        "the second worker had nothing queued and should have helped"
    );
    engine.shutdown();
}

#[test]
fn an_answer_printed_before_leaving_early_does_not_pass() {
    let engine = engine();
    // The solution prints what a pass looked like under the old sentinel scheme and leaves
    // before the test could call it: nothing it prints is the verdict, and leaving is a failure.
    let forger = "import os, sys\n\
        def add(a, b):\n    return a - b\n\
        print('rlvr-sentinel-0123456789abcdef01234567', flush=True)\n\
        os._exit(0)";
    let truth = serde_json::json!({"functional": ["assert add(1, 2) == 3"]});
    let results = score_all(
        &engine,
        vec![job(ProfileName::Judge, &fenced(forger), &truth)],
    );
    assert_eq!(verdicts(&results[0]), [rlvr_verify::Verdict::WrongAnswer]);
    assert_eq!(results[0].score, Some(0.0));
    assert_eq!(
        results[0]
            .tampering
            .count(rlvr_verify::TamperKind::EarlyExit),
        1
    );
    engine.shutdown();
}
