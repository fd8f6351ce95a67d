//! Runs a request's jobs through the engine: jobs wait in their request until an execution
//! slot is free, so a request that goes away (client disconnect, deadline) takes its
//! unstarted jobs with it. At most `2 x workers` jobs are ever inside the engine; a job
//! already there finishes and its result is dropped.

use std::sync::Arc;
use std::time::Instant;

use rlvr_engine::Job;
use rlvr_verify::{JobResult, ProfileName, Status};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::metrics::Metrics;
use crate::state::AppState;

/// One finished job: its position in the request and its result.
pub(crate) type Finished = (usize, JobResult);

/// Counts the jobs a feeder did not hand over before it was dropped.
struct Unsubmitted {
    remaining: usize,
    metrics: Arc<Metrics>,
}

impl Drop for Unsubmitted {
    fn drop(&mut self) {
        if self.remaining > 0 {
            self.metrics.jobs_cancelled.inc_by(self.remaining as u64);
        }
    }
}

/// Hands `jobs` to the engine as slots free up; each result goes to `sender` with its
/// position. Dropping the future stops handing jobs over.
pub(crate) async fn feed(
    state: Arc<AppState>,
    jobs: Vec<(usize, Job)>,
    sender: mpsc::UnboundedSender<Finished>,
) {
    let mut unsubmitted = Unsubmitted {
        remaining: jobs.len(),
        metrics: Arc::clone(&state.metrics),
    };
    for (position, job) in jobs {
        let Ok(permit) = Arc::clone(&state.slots).acquire_owned().await else {
            return;
        };
        let sender = sender.clone();
        let metrics = Arc::clone(&state.metrics);
        let submitted = Instant::now();
        state.engine.submit(
            job,
            Box::new(move |result| {
                drop(permit);
                metrics
                    .job_latency
                    .observe(submitted.elapsed().as_secs_f64());
                if result.status == Status::SandboxError {
                    metrics.sandbox_errors.inc();
                    tracing::warn!(
                        "a job's sandbox failed: {}",
                        result.reason.as_deref().unwrap_or("no reason given")
                    );
                }
                if result.status == Status::CheckerError {
                    metrics.checker_errors.inc();
                }
                metrics.checker_rejected.inc_by(result.checker_rejected);
                let _ = sender.send((position, result));
            }),
        );
        unsubmitted.remaining -= 1;
    }
}

/// Runs `jobs` and collects their results by position (`total` positions; positions not in
/// `jobs` are left `None` for the caller to fill). Positions still `None` afterwards did not
/// finish before `deadline`.
pub(crate) async fn run_to_completion(
    state: Arc<AppState>,
    jobs: Vec<(usize, Job)>,
    total: usize,
    deadline: tokio::time::Instant,
) -> Vec<Option<JobResult>> {
    let mut results: Vec<Option<JobResult>> = vec![None; total];
    let expected = jobs.len();
    let metrics = Arc::clone(&state.metrics);
    let (sender, mut receiver) = mpsc::unbounded_channel();
    {
        let collect = async {
            let mut received = 0;
            while received < expected {
                let Some((position, result)) = receiver.recv().await else {
                    break;
                };
                if let Some(slot) = results.get_mut(position) {
                    *slot = Some(result);
                }
                received += 1;
            }
        };
        let both = async {
            tokio::join!(feed(state, jobs, sender), collect);
        };
        if tokio::time::timeout_at(deadline, both).await.is_err() {
            let unfinished = results.iter().filter(|result| result.is_none()).count();
            metrics.jobs_deadline_exceeded.inc_by(unfinished as u64);
        }
    }
    results
}

/// The result line of a job that did not finish before its request's deadline.
pub(crate) fn deadline_line(id: Value, profile: ProfileName) -> Value {
    serde_json::json!({
        "id": id,
        "score": null,
        "pass_rate": null,
        "passed": 0,
        "total": 0,
        "all_passed": false,
        "status": "deadline_exceeded",
        "profile": profile,
        "reason": "the request deadline passed before this job finished",
    })
}
