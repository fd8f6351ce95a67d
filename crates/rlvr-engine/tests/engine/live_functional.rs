//! Judge functional tests through the engine's referees (issue 22), with the real sandbox: a big
//! job shared with an idle worker is run live by each worker's own referee, with the same
//! verdicts; the engine's counters see the tampering and the untrusted comparisons.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::common::{engine_with, score_all};
use rlvr_engine::Job;
use rlvr_verify::{PlanOptions, Profile, ProfileName, TamperKind, TestSuite, Verdict};

fn job(response: &str, ground_truth: serde_json::Value) -> Job {
    Job {
        profile: Arc::new(Profile::named(ProfileName::Judge)),
        response: format!("```python\n{response}\n```"),
        suite: TestSuite::from_value(&ground_truth).unwrap(),
        options: PlanOptions {
            job_identity: b"live".to_vec(),
            ..PlanOptions::default()
        },
    }
}

#[test]
fn a_big_live_job_shared_between_workers_keeps_its_verdicts() {
    let engine = engine_with(2);
    let count = 100;
    // Random inputs from an unseeded generator: each worker's referee runs the test itself,
    // and each test is judged against the values its own child answered.
    let tests: Vec<String> = (0..count)
        .map(|index| {
            format!(
                "import random\nvalue = random.randint(1, 10 ** 6) * 0 + {index}\nassert square(value) == {index} * {index}"
            )
        })
        .collect();
    let truth = serde_json::json!({ "functional": tests });
    let slow_square = "import time\ndef square(x):\n    time.sleep(0.01)\n    return x * x";
    let wrong_at_77 = "def square(x):\n    return x * x if x != 77 else -1";
    let always = "class Yes:\n    def __eq__(self, other):\n        return True\ndef square(x):\n    return Yes()";
    // The slow job alone first: the second worker then has nothing queued (with more jobs it
    // may stay busy with them on a loaded machine) and must help with this one's stages.
    let slow = score_all(&engine, vec![job(slow_square, truth.clone())]);
    assert_eq!((slow[0].passed, slow[0].total), (count, count));
    assert_eq!(slow[0].untrusted_comparisons, Some(0));
    assert!(
        engine.statistics().helped_stages.load(Ordering::Relaxed) > 0,
        "the second worker had nothing queued and should have helped"
    );
    let results = score_all(
        &engine,
        vec![job(wrong_at_77, truth.clone()), job(always, truth)],
    );
    assert_eq!(results[0].passed, count - 1, "exactly test 77 fails");
    assert_eq!(
        results[0].tests.as_ref().unwrap()[77].verdict,
        Verdict::WrongAnswer
    );
    assert_eq!(results[1].passed, 0);
    assert_eq!(
        engine
            .statistics()
            .untrusted_comparisons
            .load(Ordering::Relaxed),
        0,
        "an object of the solution's is never compared with an expected value"
    );
    engine.shutdown();
}

#[test]
fn the_engine_counts_tampering_per_kind() {
    let engine = engine_with(1);
    let truth = serde_json::json!({"functional": ["assert f(1) == 2", "assert f(2) == 3"]});
    let introspective = "import sys\ndef f(x):\n    sys._getframe(1)\n    return x + 1";
    let results = score_all(&engine, vec![job(introspective, truth)]);
    assert_eq!(
        results[0].score,
        Some(1.0),
        "telemetry never changes a verdict"
    );
    assert_eq!(
        results[0].tampering.count(TamperKind::FrameIntrospection),
        2
    );
    let slot = TamperKind::ALL
        .iter()
        .position(|kind| *kind == TamperKind::FrameIntrospection)
        .unwrap();
    assert_eq!(
        engine.statistics().tampering[slot].load(Ordering::Relaxed),
        2
    );
    engine.shutdown();
}

#[test]
fn each_test_child_draws_its_own_random_numbers_from_the_preloaded_module() {
    // The runner imports the prelude's modules (random among them) once before it forks the
    // tests' children: each child must still draw as a fresh process would, not replay the
    // runner's state. The referee's job process keeps what earlier tests saw in `sys`.
    let tests: Vec<String> = (0..6)
        .map(|_| {
            "import sys\nseen = sys.__dict__.setdefault('_rlvr_seen', [])\nvalue = draw()\nassert value not in seen\nseen.append(value)".to_owned()
        })
        .collect();
    let truth = serde_json::json!({ "functional": tests });
    let engine = engine_with(1);
    let results = score_all(
        &engine,
        vec![job(
            "import random\nfirst = random.random()\ndef draw():\n    return (first, random.getrandbits(64))",
            truth,
        )],
    );
    assert_eq!((results[0].passed, results[0].total), (6, 6), "{results:?}");
}
