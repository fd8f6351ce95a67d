//! An rlvr profile, in process: the same engine, sandbox and rules as `rlvr verify`.

use std::sync::{Arc, mpsc};

use rlvr_engine::{Engine, EngineConfig, Job};
use rlvr_sandbox::Sandbox;
use rlvr_verify::{JobResult, PlanOptions, Profile, Status, TestSuite};

use crate::submission::Submission;
use crate::target::{Outcome, ScoreRange, Target};

/// Scores with one profile through the verify engine.
pub struct ProfileTarget {
    profile: Arc<Profile>,
    engine: Engine,
}

impl ProfileTarget {
    /// Starts `workers` engine workers on `sandbox`.
    pub fn new(profile: Profile, sandbox: Sandbox, workers: usize) -> Self {
        let workers = workers.max(1);
        let engine = Engine::start(
            sandbox,
            EngineConfig {
                workers,
                queue_capacity: workers * 4,
                // The catalogue names no C++ checker.
                testlib_header: None,
            },
        );
        Self {
            profile: Arc::new(profile),
            engine,
        }
    }
}

/// The rewards a profile gives a wrong and a right answer.
pub(crate) fn profile_range(profile: &Profile) -> ScoreRange {
    ScoreRange {
        wrong: profile.scoring.from_counts(0, 1),
        right: profile.scoring.from_counts(1, 1),
    }
}

/// A verify result as an outcome: a null score is void (the response voided it), an invalid
/// job is the target's failure (the catalogue's jobs are valid).
pub(crate) fn outcome_of(
    score: Option<f64>,
    status: &str,
    reason: Option<&str>,
    range: ScoreRange,
) -> Outcome {
    match score {
        Some(reward) => Outcome::Scored {
            reward,
            scaled: range.scale(reward),
            detail: (status != "ok").then(|| match reason {
                Some(reason) => format!("{status}: {reason}"),
                None => status.to_owned(),
            }),
        },
        None if status == "invalid_job" => Outcome::Failed {
            reason: format!("invalid_job: {}", reason.unwrap_or("")),
        },
        None => Outcome::Void {
            reason: format!("{status}: {}", reason.unwrap_or("no score")),
        },
    }
}

impl Target for ProfileTarget {
    fn describe(&self) -> String {
        format!("profile {}", self.profile.name.as_str())
    }

    fn score(&self, submissions: &[Submission]) -> Vec<Outcome> {
        let (sender, receiver) = mpsc::channel::<(usize, JobResult)>();
        let mut outcomes = vec![None; submissions.len()];
        let mut submitted = 0;
        for (index, submission) in submissions.iter().enumerate() {
            let suite = match TestSuite::from_value(&submission.ground_truth()) {
                Ok(suite) => suite,
                Err(error) => {
                    outcomes[index] = Some(Outcome::Failed {
                        reason: format!("the problem's ground truth: {error}"),
                    });
                    continue;
                }
            };
            let job = Job {
                profile: Arc::clone(&self.profile),
                response: submission.response.clone(),
                suite,
                options: PlanOptions {
                    job_identity: submission.id.clone().into_bytes(),
                    ..PlanOptions::default()
                },
            };
            let sender = sender.clone();
            self.engine.submit(
                job,
                Box::new(move |result| {
                    let _ = sender.send((index, result));
                }),
            );
            submitted += 1;
        }
        drop(sender);
        let range = profile_range(&self.profile);
        for (index, result) in receiver.iter().take(submitted) {
            let status = serde_json::to_value(result.status)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            outcomes[index] = Some(if result.status == Status::InvalidJob {
                Outcome::Failed {
                    reason: format!("invalid_job: {}", result.reason.unwrap_or_default()),
                }
            } else {
                outcome_of(result.score, &status, result.reason.as_deref(), range)
            });
        }
        outcomes
            .into_iter()
            .map(|outcome| {
                outcome.unwrap_or(Outcome::Failed {
                    reason: "the engine returned no result".to_owned(),
                })
            })
            .collect()
    }
}
