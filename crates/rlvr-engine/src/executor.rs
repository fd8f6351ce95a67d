//! Runs one job's execution plan: one sandboxed warm runner per job, a fresh forked child per
//! test, stages in order, early stop where the scoring allows it, and a job deadline.
//!
//! A runner that dies or stops answering is replaced and the job goes on; a test that killed
//! it by running out of memory gets `memory_limit`. Only when no runner can be started does a
//! test get `sandbox_error` (and the job `sandbox_error`, never a silent 0).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::runner_start::{RunnerProcess, start_runner};
use crate::sharing::{self, HelpBoard, SharedStage};
use rlvr_runner::{Harness, Outcome, Runner, RunnerError, TestLimits, TestReport};
use rlvr_sandbox::{Sandbox, SandboxedProcess, WORK_DIRECTORY};
use rlvr_verify::{
    ExecutionPlan, ExecutionResult, JobRun, Profile, StageCondition, TestProgram, TestRun, Verdict,
    judge_test,
};

/// A runner that fails this many times in one job is not restarted again.
const MAX_RUNNER_RESTARTS: usize = 3;
const SIGKILL: i32 = 9;
const SIGXCPU: i32 = 24;

/// The runner process and the connection to it.
struct Session {
    process: SandboxedProcess,
    runner: Runner,
    /// The source currently compiled in the runner.
    loaded: Option<String>,
    /// OOM kills in the sandbox's cgroup seen so far.
    out_of_memory_kills: u64,
}

/// What a runner was started for; a runner serves the next job only if it needs the same.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SessionKey {
    harness: Option<Harness>,
    preload: Vec<&'static str>,
    memory_bytes: Option<u64>,
}

impl SessionKey {
    fn of(profile: &Profile, plan: &ExecutionPlan) -> Self {
        Self {
            harness: harness(profile),
            preload: plan.required_modules.clone(),
            memory_bytes: plan.limits.memory_bytes,
        }
    }
}

/// Executes plans through one sandbox. One executor per worker thread; it keeps its runner
/// from job to job (importing pandas once, not once per job) as long as the runner can vouch
/// that nothing a job did reaches the next one (see `reset` in runner/main.py), and starts a new
/// sandbox otherwise.
pub(crate) struct Executor<'a> {
    sandbox: &'a Sandbox,
    cancelled: &'a AtomicBool,
    kept: Option<(SessionKey, Session)>,
}

impl<'a> Executor<'a> {
    pub(crate) fn new(sandbox: &'a Sandbox, cancelled: &'a AtomicBool) -> Self {
        Self {
            sandbox,
            cancelled,
            kept: None,
        }
    }

    /// A clean runner left by the previous job, if it fits this one.
    fn reusable_session(&mut self, key: &SessionKey) -> Option<Session> {
        let (kept_key, mut session) = self.kept.take()?;
        if &kept_key == key && session.runner.reset(WORK_DIRECTORY).unwrap_or(false) {
            return Some(session);
        }
        session.finish();
        None
    }

    /// Runs every stage the plan needs and returns the verdicts.
    pub(crate) fn execute(
        &mut self,
        profile: &Arc<Profile>,
        plan: &Arc<ExecutionPlan>,
        board: &HelpBoard,
    ) -> JobRun {
        let started = Instant::now();
        let job_deadline = started + plan.limits.job_deadline;
        let key = SessionKey::of(profile, plan);
        let session = self.reusable_session(&key);
        let mut job = JobExecution {
            sandbox: self.sandbox,
            plan,
            profile,
            session,
            restarts: 0,
        };
        let mut run = JobRun::default();
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            if stage.run_if == StageCondition::PreviousStageNotAllPassed
                && stage_index > 0
                && run.stages.last().is_some_and(|previous| {
                    !previous.is_empty()
                        && previous.iter().all(|test| test.verdict == Verdict::Pass)
                })
            {
                break;
            }
            if sharing::shareable(stage) {
                let shared = Arc::new(SharedStage::new(
                    Arc::clone(profile),
                    Arc::clone(plan),
                    stage_index,
                    job_deadline,
                ));
                board.post(&shared);
                drain(&mut job, &shared, self.cancelled);
                board.remove(&shared);
                let runs = shared.finish();
                run.deadline_exceeded |= shared.deadline_exceeded.load(Ordering::Relaxed);
                run.stages.push(runs);
                continue;
            }
            let stage_deadline = stage.budget.map(|budget| Instant::now() + budget);
            let mut runs = Vec::with_capacity(stage.programs.len());
            let mut stop = false;
            for &program_index in &stage.programs {
                if stop || self.cancelled.load(Ordering::Relaxed) {
                    runs.push(TestRun {
                        verdict: Verdict::Skipped,
                        wall_time: None,
                    });
                    continue;
                }
                let now = Instant::now();
                let mut deadline = job_deadline;
                if let Some(stage_deadline) = stage_deadline {
                    deadline = deadline.min(stage_deadline);
                }
                if now >= deadline {
                    run.deadline_exceeded |= now >= job_deadline;
                    runs.push(TestRun {
                        verdict: Verdict::Timeout,
                        wall_time: None,
                    });
                    stop = true;
                    continue;
                }
                let time_limit = stage.time_per_test.min(deadline - now);
                let program = &plan.programs[program_index];
                let result = job.run_test(program, time_limit);
                let verdict = judge_test(profile, program, &result);
                runs.push(TestRun {
                    verdict,
                    wall_time: result.wall_time,
                });
                if verdict != Verdict::Pass && stage.may_stop_at_first_failure {
                    stop = true;
                }
            }
            run.stages.push(runs);
        }
        self.kept = job.session.take().map(|session| (key, session));
        run
    }
}

impl Executor<'_> {
    /// Runs tests of another worker's shared stage until none is left to claim.
    pub(crate) fn help(&mut self, shared: &SharedStage) {
        let key = SessionKey::of(&shared.profile, &shared.plan);
        let session = self.reusable_session(&key);
        let mut job = JobExecution {
            sandbox: self.sandbox,
            plan: &shared.plan,
            profile: &shared.profile,
            session,
            restarts: 0,
        };
        drain(&mut job, shared, self.cancelled);
        self.kept = job.session.take().map(|session| (key, session));
    }
}

/// Claims and runs tests of a shared stage until none is left.
fn drain(job: &mut JobExecution<'_>, shared: &SharedStage, cancelled: &AtomicBool) {
    let stage = &shared.plan.stages[shared.stage];
    while let Some(position) = shared.claim(cancelled) {
        let now = Instant::now();
        if now >= shared.deadline {
            shared.deadline_exceeded.store(true, Ordering::Relaxed);
            shared.complete(
                position,
                TestRun {
                    verdict: Verdict::Timeout,
                    wall_time: None,
                },
            );
            continue;
        }
        let time_limit = stage.time_per_test.min(shared.deadline - now);
        let program = &shared.plan.programs[stage.programs[position]];
        let result = job.run_test(program, time_limit);
        let verdict = judge_test(&shared.profile, program, &result);
        shared.complete(
            position,
            TestRun {
                verdict,
                wall_time: result.wall_time,
            },
        );
    }
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        if let Some((_, session)) = self.kept.take() {
            session.finish();
        }
    }
}

fn harness(profile: &Profile) -> Option<Harness> {
    match profile.runner {
        rlvr_verify::Runner::FreshProcess => None,
        rlvr_verify::Runner::PrimeHarness => Some(Harness::Prime),
        rlvr_verify::Runner::LiveCodeBenchHarness => Some(Harness::LiveCodeBench),
    }
}

/// One job in progress: its plan and its runner session.
struct JobExecution<'e> {
    sandbox: &'e Sandbox,
    plan: &'e ExecutionPlan,
    profile: &'e Profile,
    session: Option<Session>,
    restarts: usize,
}

impl JobExecution<'_> {
    fn run_test(&mut self, program: &TestProgram, time_limit: Duration) -> ExecutionResult {
        loop {
            let session = match self.session.as_mut() {
                Some(session) => session,
                None => match self.start_session() {
                    Ok(session) => self.session.insert(session),
                    Err(message) => return sandbox_error(message),
                },
            };
            match session.run(self.plan, self.profile, program, time_limit) {
                Ok(result) => return result,
                Err(failure) => {
                    // The runner died or hung: find out whether the test did it by running out
                    // of memory, replace the runner, and move on.
                    let session = self.session.take().expect("a session was running");
                    let out_of_memory = session.finish_after_failure();
                    self.restarts += 1;
                    if out_of_memory {
                        return ExecutionResult {
                            memory_exceeded: true,
                            signal: Some(SIGKILL),
                            wall_time: Some(time_limit),
                            ..ExecutionResult::default()
                        };
                    }
                    if matches!(failure, RunnerError::Deadline) {
                        return ExecutionResult {
                            timed_out: true,
                            wall_time: Some(time_limit),
                            ..ExecutionResult::default()
                        };
                    }
                    if self.restarts > MAX_RUNNER_RESTARTS {
                        return sandbox_error(format!(
                            "the runner failed {} times: {failure}",
                            self.restarts
                        ));
                    }
                    tracing::debug!("runner failed ({failure}); restarting it");
                }
            }
        }
    }

    fn start_session(&self) -> Result<Session, String> {
        let limits = &self.plan.limits;
        let RunnerProcess { process, runner } =
            start_runner(self.sandbox, limits.memory_bytes, limits.job_deadline)?;
        let out_of_memory_kills = process.usage().out_of_memory_kills;
        Ok(Session {
            process,
            runner,
            loaded: None,
            out_of_memory_kills,
        })
    }
}

impl Session {
    fn run(
        &mut self,
        plan: &ExecutionPlan,
        profile: &Profile,
        program: &TestProgram,
        time_limit: Duration,
    ) -> Result<ExecutionResult, RunnerError> {
        if self.loaded.as_deref() != Some(program.source.as_str()) {
            let report = self.runner.load(
                &[program.source.as_str()],
                "solution.py",
                &plan.required_modules,
                harness(profile),
            )?;
            if !report.ok {
                return Ok(sandbox_error(format!(
                    "the sandbox interpreter cannot import what this profile needs: {}",
                    report.preload_errors.join("; ")
                )));
            }
            self.loaded = Some(program.source.clone());
        }
        let limits = TestLimits {
            wall_ms: u64::try_from(time_limit.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            cpu_seconds: time_limit.as_secs() + 1,
            output_bytes: plan.limits.output_bytes,
            address_space_bytes: plan.limits.memory_bytes.unwrap_or(0),
        };
        let stdin = program.stdin.as_deref().unwrap_or("").as_bytes();
        let report = self.runner.run_test(stdin, None, limits)?;
        let kills = self.process.usage().out_of_memory_kills;
        let out_of_memory = kills > self.out_of_memory_kills;
        self.out_of_memory_kills = kills;
        Ok(execution_result(report, out_of_memory))
    }

    /// Asks the runner to exit, then kills and reaps the sandbox (dropping does both).
    fn finish(self) {
        let Session {
            mut process,
            runner,
            ..
        } = self;
        if runner.exit().is_ok() {
            let _ = process.wait_until(Instant::now() + Duration::from_secs(1));
        }
    }

    /// Tears down a failed runner; true when the cgroup OOM-killed something since the last test.
    fn finish_after_failure(self) -> bool {
        let Session {
            mut process,
            out_of_memory_kills,
            ..
        } = self;
        process.kill();
        let _ = process.wait_until(Instant::now() + Duration::from_secs(5));
        process.usage().out_of_memory_kills > out_of_memory_kills
    }
}

/// Maps the runner's report of one test into what the profile judges.
fn execution_result(report: TestReport, out_of_memory: bool) -> ExecutionResult {
    let stderr_tail =
        String::from_utf8_lossy(&report.stderr[report.stderr.len().saturating_sub(4096)..])
            .into_owned();
    let memory_error = report.exit_code == Some(1)
        && stderr_tail
            .trim_end()
            .lines()
            .last()
            .is_some_and(|line| line.starts_with("MemoryError"));
    ExecutionResult {
        exit_code: report.exit_code,
        signal: report.signal,
        timed_out: report.outcome == Outcome::Timeout || report.signal == Some(SIGXCPU),
        memory_exceeded: out_of_memory && report.signal == Some(SIGKILL) || memory_error,
        output_exceeded: report.stdout_truncated,
        sandbox_error: None,
        wall_time: Some(Duration::from_secs_f64(report.wall_ms / 1000.0)),
        completed: Some(report.completed),
        stdout: report.stdout,
    }
}

fn sandbox_error(message: String) -> ExecutionResult {
    ExecutionResult {
        sandbox_error: Some(message),
        ..ExecutionResult::default()
    }
}
