//! Judge functional tests through the referee (issue 22): one warm referee per worker, in a
//! sandbox of its own, runs each test's code whole; the solution answers the test's calls one
//! at a time from a child of the runner ([`crate::live`] relays the messages). The expected side
//! of a test never enters the runner's sandbox.
//!
//! A referee that fails to start or to open a job is replaced once; if the second one fails
//! too, the job's tests get `sandbox_error` (the referee never runs the solution, so this is
//! infrastructure). A referee that fails during a test was fed that test's messages by the
//! solution: the test fails (never `sandbox_error`, which would let a response void its score)
//! and the referee is replaced. One that runs past the test's deadline (the test's own code on
//! the solution's values: a helper looping on a cyclic list) is replaced too; the test is a
//! timeout, and costs its limit, no more.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rlvr_referee::{Referee, RefereeOutcome};
use rlvr_runner::Runner;
use rlvr_sandbox::{Program, Sandbox, SandboxedProcess, SpawnRequest, StdioSpec};
use rlvr_verify::{ExecutionPlan, RefereeVerdict};

use crate::live::{LiveRun, RefereeFailure, relay};
use crate::runner_start::LiveChannel;

/// Memory of the referee's sandbox: the prelude, a job's tests and the values the solution's
/// child sends (each message at most `live::MAX_CHILD_MESSAGE`).
const REFEREE_MEMORY_BYTES: u64 = 2 << 30;

struct RefereeSession {
    process: SandboxedProcess,
    referee: Referee,
    prelude: String,
    /// The job open in the referee.
    open: Option<Arc<ExecutionPlan>>,
}

/// A worker's referee (started on the first judge functional job).
#[derive(Default)]
pub(crate) struct FunctionalJudge {
    session: Option<RefereeSession>,
}

/// What the referee made of one live test.
#[derive(Debug)]
pub(crate) struct LiveVerdict {
    /// The verdict (`None` with `timed_out`: the referee's work ran past the test's limit).
    pub(crate) verdict: Option<RefereeVerdict>,
    /// The referee's own work on the test ran past the deadline.
    pub(crate) timed_out: bool,
    /// Comparisons between two of the solution's own objects.
    pub(crate) untrusted_comparisons: u64,
    /// The child ended before the verdict.
    pub(crate) child_ended_first: bool,
    /// The child broke the protocol: an oversized frame (seen by the engine) or a forged
    /// message (seen by the referee).
    pub(crate) protocol_violation: bool,
}

impl FunctionalJudge {
    /// Makes the referee ready for `plan`'s tests: started with its prelude and the job open,
    /// once per job.
    pub(crate) fn open(
        &mut self,
        sandbox: &Sandbox,
        plan: &Arc<ExecutionPlan>,
    ) -> Result<(), String> {
        let Some(live) = &plan.live_functional else {
            return Err("the plan has no functional prelude".to_owned());
        };
        if let Some(session) = &self.session
            && let Some(open) = &session.open
            && Arc::ptr_eq(open, plan)
        {
            return Ok(());
        }
        let tests: Vec<&str> = plan
            .programs
            .iter()
            .map(|program| program.check.as_deref().unwrap_or(""))
            .collect();
        let mut last_error = String::new();
        for _ in 0..2 {
            let reusable = self
                .session
                .as_ref()
                .is_some_and(|session| session.prelude == live.prelude);
            if !reusable {
                self.stop();
                match start(sandbox, &live.prelude) {
                    Ok(session) => self.session = Some(session),
                    Err(error) => {
                        last_error = error;
                        continue;
                    }
                }
            }
            let Some(session) = self.session.as_mut() else {
                continue;
            };
            if session.open.take().is_some() && session.referee.close().is_err() {
                self.stop();
                continue;
            }
            match session.referee.open(&tests) {
                Ok(()) => {
                    session.open = Some(Arc::clone(plan));
                    return Ok(());
                }
                Err(error) => {
                    last_error = error.to_string();
                    tracing::debug!("the referee failed to open a job ({error}); restarting it");
                    self.stop();
                }
            }
        }
        Err(format!("the referee failed: {last_error}"))
    }

    /// Runs test `index` of the open job: the runner's child (started already; its report is
    /// due by `report_deadline`) answers the referee's calls until the verdict, within
    /// `time_limit`. `None` when no referee is open (the caller opened it first).
    pub(crate) fn relay(
        &mut self,
        runner: &mut Runner,
        report_deadline: Instant,
        channel: &LiveChannel,
        index: usize,
        time_limit: Duration,
    ) -> Option<(LiveRun, LiveVerdict)> {
        let session = self.session.as_mut()?;
        session.open.as_ref()?;
        let test_deadline = Instant::now()
            .checked_add(time_limit)
            .unwrap_or(report_deadline);
        let run = relay(
            runner,
            report_deadline,
            channel,
            &mut session.referee,
            index,
            test_deadline,
        );
        let mut verdict = LiveVerdict {
            verdict: None,
            timed_out: false,
            untrusted_comparisons: 0,
            child_ended_first: run.child_ended_first,
            protocol_violation: run.protocol_violation,
        };
        match (&run.judgement, &run.referee_failure) {
            (Some(judgement), _) => {
                verdict.untrusted_comparisons = judgement.untrusted_comparisons;
                verdict.protocol_violation |= judgement.forged;
                verdict.verdict = Some(match judgement.outcome {
                    RefereeOutcome::Pass => RefereeVerdict::Pass,
                    RefereeOutcome::Fail => RefereeVerdict::Fail,
                    RefereeOutcome::Error => RefereeVerdict::Error,
                    RefereeOutcome::Memory => RefereeVerdict::Memory,
                    RefereeOutcome::Ended => RefereeVerdict::Ended,
                });
            }
            (None, Some(RefereeFailure::Deadline)) => {
                verdict.timed_out = true;
                tracing::debug!("the referee ran past a test's deadline; replacing it");
                self.stop();
            }
            (None, failure) => {
                // The solution fed the referee this test's messages: its failure.
                if let Some(RefereeFailure::Broken(error)) = failure {
                    tracing::debug!("the referee failed during a test ({error}); replacing it");
                }
                verdict.verdict = Some(RefereeVerdict::Broken);
                self.stop();
            }
        }
        Some((run, verdict))
    }

    /// Closes the open job (its process in the referee exits with everything it held).
    pub(crate) fn close_job(&mut self) {
        if let Some(session) = self.session.as_mut()
            && session.open.take().is_some()
            && session.referee.close().is_err()
        {
            self.stop();
        }
    }

    fn stop(&mut self) {
        if let Some(mut session) = self.session.take() {
            session.process.kill();
            let _ = session
                .process
                .wait_until(Instant::now() + Duration::from_secs(5));
        }
    }
}

impl Drop for FunctionalJudge {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let RefereeSession {
                mut process,
                referee,
                ..
            } = session;
            if referee.exit().is_ok() {
                let _ = process.wait_until(Instant::now() + Duration::from_secs(1));
            }
        }
    }
}

/// Starts a referee in a sandbox of its own and runs the prelude in it.
fn start(sandbox: &Sandbox, prelude: &str) -> Result<RefereeSession, String> {
    let mut request = SpawnRequest::new(Program::Command {
        argv: std::iter::once("python".to_owned())
            .chain(rlvr_referee::interpreter_arguments())
            .collect(),
    });
    request.limits.memory_bytes = REFEREE_MEMORY_BYTES;
    request.limits.cpu = Duration::from_secs(24 * 3600);
    request.limits.pids = 16;
    request.stderr = StdioSpec::Null;
    let mut process = sandbox.spawn(request).map_err(|error| error.to_string())?;
    let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
        return Err("the sandbox gave the referee no pipes".to_owned());
    };
    let mut referee = Referee::new(OwnedFd::from(stdin), OwnedFd::from(stdout));
    if let Err(error) = referee.start(prelude) {
        process.kill();
        return Err(error.to_string());
    }
    Ok(RefereeSession {
        process,
        referee,
        prelude: prelude.to_owned(),
        open: None,
    })
}
