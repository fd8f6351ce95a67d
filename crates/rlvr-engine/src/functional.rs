//! Judge functional tests through the referee (issue 12): one warm referee per worker, in a
//! sandbox of its own, that splits each test of a job once and judges each split test from the
//! plain-data values its child reported. The expected side of a test stays in the referee; the
//! runner (and every test child forked from it) only ever sees the solution's calls and their
//! inputs.
//!
//! A referee that fails while opening a job is replaced once; if the second one fails too, the
//! job's tests get `sandbox_error` (the referee never runs the solution, so this is
//! infrastructure). A referee that fails while judging a test has been fed that test's values by
//! the solution: the test fails (never `sandbox_error`, which would let a response void its
//! score) and the referee is replaced.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rlvr_referee::{Outcome, Referee, TestSplit};
use rlvr_sandbox::{Program, Sandbox, SandboxedProcess, SpawnRequest, StdioSpec};
use rlvr_verify::{ExecutionPlan, ExecutionResult, RefereeVerdict, TamperKind};

/// Memory of the referee's sandbox: the prelude, a job's tests and the values its children
/// report (bounded by the output limit).
const REFEREE_MEMORY_BYTES: u64 = 1 << 30;
/// Time the referee gets to judge a test beyond the test's own limit.
const JUDGE_GRACE: Duration = Duration::from_secs(5);

/// How one program of a job runs: split (with the probe spec for its child) or whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProgramSplit {
    /// Only these probes run next to the solution.
    Split(String),
    /// The test runs whole, as the sentinel program.
    Unsplit,
}

/// The referee's verdict on one split test, and whether the child's report was forged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Judged {
    verdict: RefereeVerdict,
    forged: bool,
}

struct RefereeSession {
    process: SandboxedProcess,
    referee: Referee,
    prelude: String,
    /// The job open in the referee and how each of its programs is split.
    open: Option<(Arc<ExecutionPlan>, Arc<[ProgramSplit]>)>,
}

/// A worker's referee (started on the first judge functional job).
#[derive(Default)]
pub(crate) struct FunctionalJudge {
    session: Option<RefereeSession>,
}

impl FunctionalJudge {
    /// How each program of `plan` runs, splitting the job in the referee the first time.
    fn splits(
        &mut self,
        sandbox: &Sandbox,
        plan: &Arc<ExecutionPlan>,
    ) -> Result<Arc<[ProgramSplit]>, String> {
        let Some(split) = &plan.functional_split else {
            return Ok(plan
                .programs
                .iter()
                .map(|_| ProgramSplit::Unsplit)
                .collect());
        };
        if let Some(session) = &self.session
            && let Some((open, splits)) = &session.open
            && Arc::ptr_eq(open, plan)
        {
            return Ok(Arc::clone(splits));
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
                .is_some_and(|session| session.prelude == split.prelude);
            if !reusable {
                self.stop();
                match start(sandbox, &split.prelude) {
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
            match session.referee.open(&split.solution, &tests) {
                Ok(answers) => {
                    let splits: Arc<[ProgramSplit]> = answers
                        .into_iter()
                        .zip(&plan.programs)
                        .map(|(answer, program)| match answer {
                            TestSplit::Split { probes } if program.check.is_some() => {
                                ProgramSplit::Split(probes)
                            }
                            _ => ProgramSplit::Unsplit,
                        })
                        .collect();
                    session.open = Some((Arc::clone(plan), Arc::clone(&splits)));
                    return Ok(splits);
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

    /// How program `index` of `plan` runs.
    pub(crate) fn split_of(
        &mut self,
        sandbox: &Sandbox,
        plan: &Arc<ExecutionPlan>,
        index: usize,
    ) -> Result<ProgramSplit, String> {
        let splits = self.splits(sandbox, plan)?;
        Ok(splits.get(index).cloned().unwrap_or(ProgramSplit::Unsplit))
    }

    /// After a judge functional test ran: records whether it was split and an early exit, and
    /// for a split test whose child ran to its end, asks the referee for the verdict.
    pub(crate) fn conclude(
        &mut self,
        plan: &Arc<ExecutionPlan>,
        index: usize,
        split: &ProgramSplit,
        results: &[u8],
        result: &mut ExecutionResult,
        time_limit: Duration,
    ) {
        result.split = Some(matches!(split, ProgramSplit::Split(_)));
        if result.exit_code == Some(0) && result.completed == Some(false) {
            result.tampering.insert(TamperKind::EarlyExit);
        }
        let clean = result.sandbox_error.is_none()
            && !result.timed_out
            && !result.memory_exceeded
            && !result.output_exceeded
            && result.signal.is_none()
            && result.exit_code == Some(0)
            && result.completed == Some(true);
        if !clean || !matches!(split, ProgramSplit::Split(_)) {
            return;
        }
        match self.judge(plan, index, results, time_limit) {
            Some(judged) => {
                result.referee = Some(judged.verdict);
                if judged.forged {
                    result.tampering.insert(TamperKind::ForgedReport);
                }
            }
            // The referee failed on the values this solution reported: its failure.
            None => result.referee = Some(RefereeVerdict::Fail),
        }
    }

    /// Judges program `program` of the open job from its child's results file; `None` when
    /// the referee failed on these values (it is then replaced).
    fn judge(
        &mut self,
        plan: &Arc<ExecutionPlan>,
        program: usize,
        results: &[u8],
        time_limit: Duration,
    ) -> Option<Judged> {
        let session = self.session.as_mut()?;
        if !session
            .open
            .as_ref()
            .is_some_and(|(open, _)| Arc::ptr_eq(open, plan))
        {
            return None;
        }
        match session
            .referee
            .judge(program, results, time_limit + JUDGE_GRACE)
        {
            Ok(judgement) => Some(Judged {
                verdict: match judgement.outcome {
                    Outcome::Pass => RefereeVerdict::Pass,
                    Outcome::Fail => RefereeVerdict::Fail,
                    Outcome::Error => RefereeVerdict::Error,
                },
                forged: judgement.forged,
            }),
            Err(error) => {
                tracing::debug!("the referee failed judging a test ({error}); restarting it");
                self.stop();
                None
            }
        }
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
    let program = rlvr_referee::referee_program();
    let mut request = SpawnRequest::new(Program::Command {
        argv: std::iter::once("python")
            .chain(rlvr_referee::interpreter_arguments(&program))
            .map(str::to_owned)
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
