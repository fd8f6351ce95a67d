//! Runs one job's execution plan: one sandboxed warm runner per job, a fresh forked child per
//! test, stages in order, early stop where the scoring allows it, and a job deadline.
//!
//! A runner that dies or stops answering is replaced and the job goes on. Who is to blame
//! decides the verdict (see [`JobExecution::run_test`]): the response, when a fresh runner dies
//! on the same program again (the test fails: `memory_limit` when the cgroup OOM-killed it,
//! `timeout` when it stopped answering, `runtime_error` otherwise, and the job's `reason` says
//! what happened); the infrastructure, when no runner can be started or a fresh one cannot load
//! even an empty program (`sandbox_error`, and the job `sandbox_error`, never a silent 0). A
//! response can therefore neither void its own score nor take the worker down.
//!
//! The runner itself (starting it, loading, running a test or a batch, mapping its reports)
//! is the session, in `runner_session`.

mod runner_session;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rlvr_runner::PipeError;
use rlvr_sandbox::Sandbox;
use rlvr_verify::{
    ExecutionPlan, ExecutionResult, JobRun, Profile, Stage, StageCondition, TestProgram, TestRun,
    Verdict, judge_test,
};

use crate::checking::{CheckerJudge, CheckerLimits};
use crate::fault_injection::{self, Site};
use crate::help_board::{self, HelpBoard, SharedStage};
use crate::referee_pool::FunctionalJudge;
use runner_session::{SIGKILL, Session, SessionKey, harness, sandbox_error};

/// Runner deaths the response may cause in one job; after that its remaining tests fail
/// without running (each death costs a sandbox start, and the response is plainly hostile).
const MAX_RESPONSE_RUNNER_DEATHS: usize = 3;
/// How often one test may kill a runner before the death is the test's failure: once could be
/// a fluke of the machine, twice on a fresh runner is the program.
const DEATHS_PER_TEST: usize = 2;
/// A job's deadline never reaches past this (an `Instant` cannot be pushed arbitrarily far).
const LONGEST_JOB: Duration = Duration::from_secs(30 * 24 * 3600);

/// Executes plans through one sandbox. One executor per worker thread; it keeps its runner
/// from job to job (importing pandas once, not once per job) as long as the runner can vouch
/// that nothing a job did reaches the next one (see `reset` in runner/main.py), and starts a new
/// sandbox otherwise.
pub(crate) struct Executor<'a> {
    sandbox: &'a Sandbox,
    cancelled: &'a AtomicBool,
    kept: Option<(SessionKey, Session)>,
    /// The worker's referee for judge functional tests.
    functional: FunctionalJudge,
    /// The worker's sandboxed checkers (issue 25).
    pub(crate) checkers: CheckerJudge,
}

impl<'a> Executor<'a> {
    pub(crate) fn new(
        sandbox: &'a Sandbox,
        cancelled: &'a AtomicBool,
        testlib_header: Option<Arc<str>>,
    ) -> Self {
        Self {
            sandbox,
            cancelled,
            kept: None,
            functional: FunctionalJudge::default(),
            checkers: CheckerJudge::new(testlib_header),
        }
    }

    /// A clean runner left by the previous job, if it fits this one.
    fn reusable_session(&mut self, key: &SessionKey) -> Option<Session> {
        let (kept_key, mut session) = self.kept.take()?;
        if &kept_key == key && session.reset() {
            return Some(session);
        }
        session.finish();
        None
    }

    /// Runs every stage the plan needs and returns the verdicts, with a note on what the
    /// runner saw when it explains them (the code does not compile, the runner died).
    pub(crate) fn execute(
        &mut self,
        profile: &Arc<Profile>,
        plan: &Arc<ExecutionPlan>,
        board: &HelpBoard,
    ) -> (JobRun, Option<String>) {
        let started = Instant::now();
        let job_deadline = started
            .checked_add(plan.limits.job_deadline.min(LONGEST_JOB))
            .unwrap_or(started);
        let key = SessionKey::of(plan);
        let session = self.reusable_session(&key);
        let mut job = JobExecution::new(
            self.sandbox,
            plan,
            profile,
            session,
            (&mut self.functional, &mut self.checkers),
        );
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
            if help_board::shareable(stage) {
                let shared = Arc::new(SharedStage::new(
                    Arc::clone(profile),
                    Arc::clone(plan),
                    stage_index,
                    job_deadline,
                ));
                let posted = board.post(&shared);
                drain(&mut job, &shared, self.cancelled, Site::Execute);
                drop(posted);
                let runs = shared.finish();
                board.record_help(&shared);
                run.deadline_exceeded |= shared.deadline_exceeded.load(Ordering::Relaxed);
                run.stages.push(runs);
                continue;
            }
            let stage_deadline = stage
                .budget
                .and_then(|budget| Instant::now().checked_add(budget));
            if harness(plan.runner).is_some() {
                // An in-process reference runs a stage in one process (shared_process) or each
                // test in a process of its own (prime's second pass): one batch child per
                // process either way, so both behave exactly like the reference's child.
                let deadline = stage_deadline.map_or(job_deadline, |stage_deadline| {
                    stage_deadline.min(job_deadline)
                });
                let (runs, job_deadline_hit) = if stage.shared_process {
                    job.run_batch_stage(stage, deadline, job_deadline, self.cancelled)
                } else {
                    let mut runs = Vec::with_capacity(stage.programs.len());
                    let mut job_deadline_hit = false;
                    for &program in &stage.programs {
                        if runs
                            .iter()
                            .any(|test: &TestRun| test.verdict != Verdict::Pass)
                            && stage.may_stop_at_first_failure
                        {
                            runs.push(TestRun::not_run(Verdict::Skipped));
                            continue;
                        }
                        let alone = Stage {
                            programs: vec![program],
                            ..stage.clone()
                        };
                        let (mut one, hit) =
                            job.run_batch_stage(&alone, deadline, job_deadline, self.cancelled);
                        job_deadline_hit |= hit;
                        runs.append(&mut one);
                    }
                    (runs, job_deadline_hit)
                };
                run.deadline_exceeded |= job_deadline_hit;
                run.stages.push(runs);
                continue;
            }
            let mut runs = Vec::with_capacity(stage.programs.len());
            let mut stop = false;
            for &program_index in &stage.programs {
                if stop || self.cancelled.load(Ordering::Relaxed) {
                    runs.push(TestRun::not_run(Verdict::Skipped));
                    continue;
                }
                let now = Instant::now();
                let mut deadline = job_deadline;
                if let Some(stage_deadline) = stage_deadline {
                    deadline = deadline.min(stage_deadline);
                }
                if now >= deadline {
                    run.deadline_exceeded |= now >= job_deadline;
                    runs.push(TestRun::not_run(Verdict::Timeout));
                    stop = true;
                    continue;
                }
                let time_limit = stage.time_per_test.min(deadline - now);
                let program = &plan.programs[program_index];
                let result = job.run_test(program_index, time_limit);
                let verdict = judge_test(profile, program, &result);
                runs.push(TestRun::ran(verdict, &result));
                if verdict != Verdict::Pass && stage.may_stop_at_first_failure {
                    stop = true;
                }
            }
            run.stages.push(runs);
        }
        job.functional.close_job();
        self.kept = job.keep_session().map(|session| (key, session));
        (run, job.note)
    }
}

impl Executor<'_> {
    /// Runs tests of another worker's shared stage until none is left to claim.
    pub(crate) fn help(&mut self, shared: &SharedStage) {
        let key = SessionKey::of(&shared.plan);
        let session = self.reusable_session(&key);
        let mut job = JobExecution::new(
            self.sandbox,
            &shared.plan,
            &shared.profile,
            session,
            (&mut self.functional, &mut self.checkers),
        );
        drain(&mut job, shared, self.cancelled, Site::Help);
        job.functional.close_job();
        self.kept = job.keep_session().map(|session| (key, session));
    }
}

/// Claims and runs tests of a shared stage until none is left.
fn drain(job: &mut JobExecution<'_>, shared: &SharedStage, cancelled: &AtomicBool, site: Site) {
    let stage = &shared.plan.stages[shared.stage];
    while let Some(claim) = shared.claim(cancelled) {
        if site == Site::Help {
            shared.mark_helped();
        }
        let now = Instant::now();
        if now >= shared.deadline {
            shared.deadline_exceeded.store(true, Ordering::Relaxed);
            claim.complete(TestRun::not_run(Verdict::Timeout));
            continue;
        }
        let time_limit = stage.time_per_test.min(shared.deadline - now);
        let program_index = stage.programs[claim.position];
        let program = &shared.plan.programs[program_index];
        fault_injection::panic_if_armed(site, |marker| program.source.contains(marker));
        let result = job.run_test(program_index, time_limit);
        let verdict = judge_test(&shared.profile, program, &result);
        claim.complete(TestRun::ran(verdict, &result));
    }
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        if let Some((_, session)) = self.kept.take() {
            session.finish();
        }
    }
}

/// One job in progress: its plan, its runner session and the worker's referee.
struct JobExecution<'e> {
    sandbox: &'e Sandbox,
    plan: &'e Arc<ExecutionPlan>,
    profile: &'e Profile,
    session: Option<Session>,
    /// Runner deaths this job's response caused.
    response_deaths: usize,
    /// What the runner saw that explains the verdicts (first one wins).
    note: Option<String>,
    functional: &'e mut FunctionalJudge,
    checkers: &'e mut CheckerJudge,
}

impl<'e> JobExecution<'e> {
    fn new(
        sandbox: &'e Sandbox,
        plan: &'e Arc<ExecutionPlan>,
        profile: &'e Profile,
        session: Option<Session>,
        (functional, checkers): (&'e mut FunctionalJudge, &'e mut CheckerJudge),
    ) -> Self {
        Self {
            sandbox,
            plan,
            profile,
            session,
            response_deaths: 0,
            note: None,
            functional,
            checkers,
        }
    }

    /// The runner to keep for the next job (the runner vouches at its `reset` that nothing
    /// carries over; no expected value ever entered it).
    fn keep_session(&mut self) -> Option<Session> {
        self.session.take()
    }

    /// Runs program `index` of the plan: a judge functional test runs live between the
    /// referee (opened for the job first) and its child; anything else runs as its program,
    /// and then, when the ground truth names one, its sandboxed checker on the output.
    fn run_test(&mut self, index: usize, time_limit: Duration) -> ExecutionResult {
        let plan = Arc::clone(self.plan);
        let program = &plan.programs[index];
        if program.check.is_some()
            && let Err(message) = self.functional.open(self.sandbox, self.plan)
        {
            return sandbox_error(message);
        }
        let mut result = self.run_program(program, index, time_limit);
        let limits = CheckerLimits::for_test(time_limit, plan.limits.memory_bytes);
        self.checkers
            .check_result(self.sandbox, program, limits, &mut result);
        result
    }

    fn note(&mut self, note: impl FnOnce() -> String) {
        if self.note.is_none() {
            self.note = Some(note());
        }
    }

    /// Runs one test, replacing the runner when it dies. Who is to blame for a death:
    ///
    /// * the cgroup OOM-killed something: the test ran out of memory (`memory_limit`);
    /// * the runner stopped answering during the test: `timeout`;
    /// * it died running the test: the test is retried once on a fresh runner, and a second
    ///   death is the test's failure (`runtime_error`);
    /// * it died loading (compiling) the program: retried once on a fresh runner; a second
    ///   death while a fresh runner still loads an empty program is the response's failure
    ///   (`runtime_error`), otherwise the runner itself is broken (`sandbox_error`).
    ///
    /// After [`MAX_RESPONSE_RUNNER_DEATHS`] deaths while running tests, or one confirmed death
    /// while loading, the job's remaining tests fail without running. Only a sandbox that
    /// cannot start is `sandbox_error`.
    fn run_program(
        &mut self,
        program: &TestProgram,
        index: usize,
        time_limit: Duration,
    ) -> ExecutionResult {
        fault_injection::panic_if_armed(Site::Execute, |marker| program.source.contains(marker));
        let mut deaths = 0;
        loop {
            if self.response_deaths >= MAX_RESPONSE_RUNNER_DEATHS {
                return runner_died();
            }
            let session = match self.session.as_mut() {
                Some(session) => session,
                None => match Session::start(self.sandbox, self.plan) {
                    Ok(session) => self.session.insert(session),
                    Err(message) => return sandbox_error(message),
                },
            };
            let run = session.run(
                self.plan,
                self.profile,
                (program, index),
                time_limit,
                self.functional,
            );
            let failure = match run {
                Ok((result, compile_error)) => {
                    if let Some(compile_error) = compile_error {
                        self.note(|| format!("the code does not compile: {compile_error}"));
                    }
                    return result;
                }
                Err(failure) => failure,
            };
            let session = self.session.take().expect("a session was running");
            let out_of_memory = session.finish_after_failure();
            let stage = if failure.during_load {
                "loading the response"
            } else {
                "running a test"
            };
            // Running out of memory or time is the test's own verdict, as it always was; it
            // costs one restart and does not count toward the deaths that end the job.
            if out_of_memory {
                if failure.during_load {
                    self.note(|| "the runner ran out of memory loading the response".to_owned());
                }
                return ExecutionResult {
                    memory_exceeded: true,
                    signal: Some(SIGKILL),
                    wall_time: Some(time_limit),
                    ..ExecutionResult::default()
                };
            }
            if matches!(failure.error, PipeError::Deadline) && !failure.during_load {
                return ExecutionResult {
                    timed_out: true,
                    wall_time: Some(time_limit),
                    ..ExecutionResult::default()
                };
            }
            deaths += 1;
            tracing::debug!("runner failed {stage} ({}); restarting it", failure.error);
            if deaths < DEATHS_PER_TEST {
                continue;
            }
            self.response_deaths += 1;
            if failure.during_load {
                // Twice dead on this program: is it the program or the runner?
                if let Err(problem) = self.probe_runner() {
                    return sandbox_error(format!(
                        "the runner fails to load even an empty program: {problem}"
                    ));
                }
                // The response's code kills the interpreter compiling it: every other program
                // of the job holds the same code, so none is loaded again.
                self.response_deaths = MAX_RESPONSE_RUNNER_DEATHS;
            }
            let error = failure.error;
            self.note(|| format!("the response made the runner die {stage} ({error})"));
            return runner_died();
        }
    }

    /// Starts a fresh runner and loads an empty program with this plan's modules and harness;
    /// the runner is kept for the job's next test.
    fn probe_runner(&mut self) -> Result<(), String> {
        let mut session = Session::start(self.sandbox, self.plan)?;
        session.load_empty_program(self.plan)?;
        self.session = Some(session);
        Ok(())
    }

    /// Runs a stage the reference runs in ONE process (prime_code's first pass, rllm's
    /// LiveCodeBench grader) in one batch child: module-level code once, then the tests in
    /// order, each within its time and the stage's deadline, stopping at the first failure
    /// where the scoring allows. A runner that dies mid-stage is replaced and the stage starts
    /// over in a new child (a stage is one process upstream, so it is never resumed); a death
    /// the response keeps causing is its failure.
    fn run_batch_stage(
        &mut self,
        stage: &Stage,
        deadline: Instant,
        job_deadline: Instant,
        cancelled: &AtomicBool,
    ) -> (Vec<TestRun>, bool) {
        let skipped = TestRun::not_run(Verdict::Skipped);
        loop {
            let session = match self.session.as_mut() {
                Some(session) => session,
                None => match Session::start(self.sandbox, self.plan) {
                    Ok(session) => self.session.insert(session),
                    Err(message) => {
                        let mut runs = vec![skipped; stage.programs.len()];
                        if let Some(first) = runs.first_mut() {
                            first.verdict = judge_test(
                                self.profile,
                                &self.plan.programs[stage.programs[0]],
                                &sandbox_error(message),
                            );
                        }
                        return (runs, false);
                    }
                },
            };
            let checking = (self.sandbox, &mut *self.checkers);
            match session.run_batch(
                self.plan,
                self.profile,
                stage,
                (deadline, cancelled),
                checking,
            ) {
                Ok(runs) => {
                    let compile_error = session.compile_error().map(str::to_owned);
                    if let Some(compile_error) = compile_error {
                        self.note(|| format!("the code does not compile: {compile_error}"));
                    }
                    let job_deadline_hit = Instant::now() >= job_deadline
                        && runs.iter().any(|test| test.verdict == Verdict::Timeout);
                    return (runs, job_deadline_hit);
                }
                Err((failure, position)) => {
                    let session = self.session.take().expect("a session was running");
                    let out_of_memory = session.finish_after_failure();
                    self.response_deaths += 1;
                    let verdict = if out_of_memory {
                        Some(Verdict::MemoryLimit)
                    } else if matches!(failure.error, PipeError::Deadline) {
                        Some(Verdict::Timeout)
                    } else if self.response_deaths >= MAX_RESPONSE_RUNNER_DEATHS {
                        Some(Verdict::RuntimeError)
                    } else {
                        tracing::debug!(
                            "runner failed in a batch ({}); starting over",
                            failure.error
                        );
                        None
                    };
                    if let Some(verdict) = verdict {
                        let mut runs = vec![skipped; stage.programs.len()];
                        for run in &mut runs[..position] {
                            // Tests before the failure passed (a failure would have stopped
                            // the stage or been reported).
                            run.verdict = Verdict::Pass;
                        }
                        runs[position].verdict = verdict;
                        return (runs, false);
                    }
                }
            }
        }
    }
}

/// A test whose program made the runner die (or whose job already did so too often): the
/// solution's failure, a `runtime_error`.
fn runner_died() -> ExecutionResult {
    ExecutionResult {
        exit_code: None,
        signal: Some(SIGKILL),
        ..ExecutionResult::default()
    }
}
