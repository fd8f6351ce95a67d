//! What the engine's integration tests share: an engine on the default sandbox, jobs, their
//! submission and scoring in order, and the verdicts of a result.

#![allow(
    dead_code,
    reason = "a shared module: each test module uses a part of it"
)]

use std::sync::Arc;
use std::sync::mpsc;

use rlvr_engine::{Engine, EngineConfig, Job};
use rlvr_sandbox::{Sandbox, SandboxConfig};
use rlvr_verify::{JobResult, PlanOptions, Profile, ProfileName, TestSuite, Verdict};
use serde_json::Value;

/// An engine with `workers` workers on the default sandbox.
pub fn engine_with(workers: usize) -> Engine {
    let sandbox =
        Sandbox::new(SandboxConfig::default()).expect("the sandbox starts (tests run as root)");
    Engine::start(
        sandbox,
        EngineConfig {
            workers,
            queue_capacity: 8,
            testlib_header: None,
        },
    )
}

/// A job of `profile` scoring `response` against `ground_truth`.
pub fn job(profile: ProfileName, response: &str, ground_truth: &Value) -> Job {
    Job {
        profile: Arc::new(Profile::named(profile)),
        response: response.into(),
        suite: TestSuite::from_value(ground_truth).unwrap(),
        options: PlanOptions {
            job_identity: b"job".to_vec(),
            ..PlanOptions::default()
        },
    }
}

/// `code` as a response: a think block, then the code in a Python fence.
pub fn fenced(code: &str) -> String {
    format!("<think>\nthinking\n</think>\n```python\n{code}\n```")
}

/// Submits the jobs; each result comes on `sender` with the index of its job.
pub fn submit_all(engine: &Engine, jobs: Vec<Job>, sender: &mpsc::Sender<(usize, JobResult)>) {
    for (index, job) in jobs.into_iter().enumerate() {
        let sender = sender.clone();
        engine.submit(
            job,
            Box::new(move |result| sender.send((index, result)).unwrap()),
        );
    }
}

/// Scores the jobs and returns their results in the order the jobs were given.
pub fn score_all(engine: &Engine, jobs: Vec<Job>) -> Vec<JobResult> {
    let (sender, receiver) = mpsc::channel();
    let count = jobs.len();
    submit_all(engine, jobs, &sender);
    let mut results: Vec<_> = receiver.iter().take(count).collect();
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

/// The verdict of each test of an executed job.
pub fn verdicts(result: &JobResult) -> Vec<Verdict> {
    result
        .tests
        .as_ref()
        .expect("an executed job has per-test reports")
        .iter()
        .map(|test| test.verdict)
        .collect()
}
