//! The runner session: one sandboxed warm runner, the connection to it and what it has
//! loaded; it loads a job's program, runs one test or one batch stage, maps the runner's
//! reports into results, and tears the runner down. Who is to blame when it fails is the
//! executor's call (`super`).

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rlvr_runner::{ChildEnding, ChildReport, Harness, JudgeOptions, PipeError, Runner, TestLimits};
use rlvr_sandbox::{Sandbox, SandboxedProcess, WORK_DIRECTORY};
use rlvr_verify::{
    ExecutionPlan, ExecutionResult, LiveFunctional, Profile, ProfileName, ProgramText, Stage,
    TamperKind, Tampering, TestProgram, TestRun, Verdict, judge_test,
};

use crate::checking::{CheckerJudge, CheckerLimits};
use crate::fault_injection::{self, Site};
use crate::live::discard_pending;
use crate::referee_pool::{FunctionalJudge, LiveVerdict};
use crate::runner_start::{LiveChannel, RUNNER_CPU, RunnerProcess, start_runner};

pub(super) const SIGKILL: i32 = 9;
const SIGXCPU: i32 = 24;
const SIGSYS: i32 = 31;

/// The runner process and the connection to it.
pub(super) struct Session {
    process: SandboxedProcess,
    runner: Runner,
    /// The engine's ends of the live pipes (judge functional tests).
    live: LiveChannel,
    /// What the runner has compiled.
    loaded: Option<Loaded>,
    /// Why it does not compile, when it does not (the last line of the error).
    compile_error: Option<String>,
    /// OOM kills in the sandbox's cgroup seen so far.
    out_of_memory_kills: u64,
}

/// What a runner has compiled: one program's source (with the name the reference runs it
/// under: `python -c` programs have no file), or a judge job's prelude and solution (live
/// functional tests: each test's child answers the referee's calls).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Loaded {
    Source(ProgramText, &'static str),
    Live { prelude: String, solution: String },
}

/// What a runner was started for; a runner serves the next job only if it needs the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SessionKey {
    harness: Option<Harness>,
    preload: Vec<&'static str>,
    memory_bytes: u64,
}

impl SessionKey {
    pub(super) fn of(plan: &ExecutionPlan) -> Self {
        Self {
            harness: harness(plan.runner),
            preload: plan.required_modules.clone(),
            memory_bytes: plan.limits.memory_bytes,
        }
    }
}

/// The in-process harness a run mode loads programs under, if any.
pub(super) fn harness(runner: rlvr_verify::RunMode) -> Option<Harness> {
    match runner {
        rlvr_verify::RunMode::FreshProcess => None,
        rlvr_verify::RunMode::PrimeHarness => Some(Harness::Prime),
        rlvr_verify::RunMode::LiveCodeBenchHarness => Some(Harness::LiveCodeBench),
    }
}

/// A runner that failed, and whether it failed loading the program or running a test.
pub(super) struct SessionFailure {
    pub(super) during_load: bool,
    pub(super) error: PipeError,
}

impl Session {
    /// Starts a runner in `sandbox` with the plan's memory limit and job deadline.
    pub(super) fn start(sandbox: &Sandbox, plan: &ExecutionPlan) -> Result<Self, String> {
        let limits = &plan.limits;
        let RunnerProcess {
            process,
            runner,
            live,
        } = start_runner(sandbox, limits.memory_bytes, limits.job_deadline)?;
        let out_of_memory_kills = process.usage().out_of_memory_kills;
        Ok(Self {
            process,
            runner,
            live,
            loaded: None,
            compile_error: None,
            out_of_memory_kills,
        })
    }

    /// Asks the runner to forget the last job; true when it vouches that nothing of it is left.
    /// The job's process, which held the loaded program, is gone with it (docs/runner.md): the
    /// next job loads its program even when it is the same text.
    pub(super) fn reset(&mut self) -> bool {
        self.loaded = None;
        self.compile_error = None;
        self.runner.reset(WORK_DIRECTORY).unwrap_or(false)
    }

    /// Loads an empty program with this plan's modules and harness (is the runner itself
    /// sound?); the error names what failed.
    pub(super) fn load_empty_program(&mut self, plan: &ExecutionPlan) -> Result<(), String> {
        let report = self
            .runner
            .load(
                &["pass"],
                "solution.py",
                &plan.required_modules,
                harness(plan.runner),
            )
            .map_err(|error| error.to_string())?;
        if !report.ok {
            return Err(report.preload_errors.join("; "));
        }
        Ok(())
    }

    /// Why the loaded program does not compile, when it does not.
    pub(super) fn compile_error(&self) -> Option<&str> {
        self.compile_error.as_deref()
    }

    /// Loads what `program` needs (a live test: the judge's prelude and the solution; else the
    /// program under its harness, with the name the reference runs it under) unless the runner
    /// holds it already; a load that cannot import what the profile needs is a
    /// `sandbox_error` result.
    fn ensure_loaded(
        &mut self,
        plan: &ExecutionPlan,
        program: &TestProgram,
        live: Option<&LiveFunctional>,
        compile_budget: Duration,
    ) -> Result<Option<ExecutionResult>, SessionFailure> {
        let filename = plan.program_filename(program);
        // Shared heads compare by pointer first (`Arc<str>` equality does), so a job's stdin
        // tests never compare their code byte by byte.
        let loaded = match (&self.loaded, live) {
            (Some(Loaded::Live { prelude, solution }), Some(functional)) => {
                *prelude == functional.prelude && *solution == functional.solution
            }
            (Some(Loaded::Source(source, loaded_filename)), None) => {
                *source == program.source && *loaded_filename == filename
            }
            _ => false,
        };
        if loaded {
            return Ok(None);
        }
        if fault_injection::armed(Site::RunnerLoad, |marker| program.source.contains(marker)) {
            self.process.kill();
        }
        // The whole text exists only while it is sent.
        let whole = program.source.to_string();
        let sources: Vec<&str> = match live {
            Some(functional) => vec![&functional.prelude, &functional.solution],
            None => vec![&whole],
        };
        let mut preload = plan.required_modules.clone();
        preload.extend(plan.preloaded_modules);
        let report = self
            .runner
            .load_bounded(
                &sources,
                if live.is_some() {
                    "solution.py"
                } else {
                    filename
                },
                &preload,
                harness(plan.runner),
                Some(compile_budget),
            )
            .map_err(|error| SessionFailure {
                during_load: true,
                error,
            })?;
        if !report.ok {
            return Ok(Some(sandbox_error(format!(
                "the sandbox interpreter cannot import what this profile needs: {}",
                report.preload_errors.join("; ")
            ))));
        }
        self.compile_error = report.compile_error.map(|text| {
            text.trim_end()
                .lines()
                .last()
                .unwrap_or_default()
                .to_owned()
        });
        self.loaded = Some(match live {
            Some(functional) => Loaded::Live {
                prelude: functional.prelude.clone(),
                solution: functional.solution.clone(),
            },
            None => Loaded::Source(program.source.clone(), filename),
        });
        Ok(None)
    }

    /// Runs one test (`program`, the plan's program number `index`), loading its program first
    /// when the runner holds another. Returns the result and the error when the program does
    /// not compile. A judge functional test runs live: the prelude and the solution are loaded
    /// once per job, and the test's child answers the referee's calls through `functional`.
    pub(super) fn run(
        &mut self,
        plan: &ExecutionPlan,
        profile: &Profile,
        (program, index): (&TestProgram, usize),
        time_limit: Duration,
        functional: &mut FunctionalJudge,
    ) -> Result<(ExecutionResult, Option<String>), SessionFailure> {
        let live = match (&program.check, &plan.live_functional) {
            (Some(_), Some(live)) => Some(live),
            _ => None,
        };
        if let Some(error) = self.ensure_loaded(plan, program, live, time_limit)? {
            return Ok((error, None));
        }
        let limits = TestLimits {
            wall_ms: u64::try_from(time_limit.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            cpu_seconds: (time_limit.as_secs() + 1).min(RUNNER_CPU.as_secs() - 1),
            output_bytes: bounded(
                plan.limits
                    .output_cap(program.expected.as_ref().map(String::len)),
            ),
            address_space_bytes: bounded(plan.limits.memory_bytes),
        };
        let stdin = program.stdin.as_deref().unwrap_or("").as_bytes();
        if fault_injection::armed(Site::RunnerRun, |marker| program.source.contains(marker)) {
            self.process.kill();
        }
        // The judge's tests carry the tamper sensor and each find an empty work directory (as a
        // fresh process with a temporary directory of its own would); the references run as
        // they always have (one /tmp per job).
        let judged = profile.name == ProfileName::Judge;
        let judge = JudgeOptions {
            sensor: judged,
            live: live.is_some(),
            fresh_work_directory: judged.then_some(WORK_DIRECTORY),
        };
        let failed = |error| SessionFailure {
            during_load: false,
            error,
        };
        if live.is_none() {
            let report = self
                .runner
                .run_judge_test(stdin, None, judge, limits)
                .map_err(failed)?;
            let out_of_memory = self.out_of_memory_since_last_test();
            return Ok((
                execution_result(report, out_of_memory),
                self.compile_error.clone(),
            ));
        }
        // Whatever a dead child of an earlier test left in the pipe is not this test's.
        discard_pending(self.live.from_child.as_fd());
        let report_deadline = self
            .runner
            .start_test(stdin, None, judge, limits)
            .map_err(failed)?;
        let Some((run, verdict)) = functional.relay(
            &mut self.runner,
            report_deadline,
            &self.live,
            index,
            time_limit,
        ) else {
            // The caller opened the referee first; without one the test cannot be judged.
            let _ = self.runner.abort();
            self.runner.finish_test(report_deadline).map_err(failed)?;
            return Ok((
                sandbox_error("no referee is open for this job".to_owned()),
                None,
            ));
        };
        let report = run.report.map_err(failed)?;
        let out_of_memory = self.out_of_memory_since_last_test();
        let exited_cleanly = report.exit_code == Some(0);
        let aborted = report.aborted;
        let mut result = execution_result(report, out_of_memory);
        apply_live_verdict(&mut result, &verdict, aborted, exited_cleanly);
        Ok((result, self.compile_error.clone()))
    }

    /// Whether the cgroup OOM-killed something since the last test.
    fn out_of_memory_since_last_test(&mut self) -> bool {
        let kills = self.process.usage().out_of_memory_kills;
        let out_of_memory = kills > self.out_of_memory_kills;
        self.out_of_memory_kills = kills;
        out_of_memory
    }

    /// One batch stage (see `JobExecution::run_batch_stage`); on a runner failure, the
    /// failure and the position of the test that was running.
    pub(super) fn run_batch(
        &mut self,
        plan: &ExecutionPlan,
        profile: &Profile,
        stage: &Stage,
        (deadline, cancelled): (Instant, &AtomicBool),
        (sandbox, checkers): (&Sandbox, &mut CheckerJudge),
    ) -> Result<Vec<TestRun>, (SessionFailure, usize)> {
        let skipped = TestRun::not_run(Verdict::Skipped);
        let mut runs = vec![skipped; stage.programs.len()];
        let Some(&first) = stage.programs.first() else {
            return Ok(runs);
        };
        let first_program = &plan.programs[first];
        match self.ensure_loaded(plan, first_program, None, stage.time_per_test) {
            Ok(Some(error)) => {
                runs[0].verdict = judge_test(profile, first_program, &error);
                return Ok(runs);
            }
            Ok(None) => {}
            Err(failure) => return Err((failure, 0)),
        }
        let inputs: Vec<&[u8]> = stage
            .programs
            .iter()
            .map(|&index| {
                plan.programs[index]
                    .stdin
                    .as_deref()
                    .unwrap_or("")
                    .as_bytes()
            })
            .collect();
        let limits = TestLimits {
            wall_ms: 0,
            cpu_seconds: stage
                .time_per_test
                .as_secs()
                .saturating_add(1)
                .min(RUNNER_CPU.as_secs() - 1),
            output_bytes: bounded(plan.output_cap(stage, first)),
            address_space_bytes: bounded(plan.limits.memory_bytes),
        };
        let batch_failure = |error| SessionFailure {
            during_load: false,
            error,
        };
        self.runner
            .batch_start(&inputs, limits)
            .map_err(|error| (batch_failure(error), 0))?;
        for (position, &program_index) in stage.programs.iter().enumerate() {
            if cancelled.load(Ordering::Relaxed) {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                runs[position] = TestRun::not_run(Verdict::Timeout);
                break;
            }
            let time_limit = stage.time_per_test.min(deadline - now);
            let wall_ms = u64::try_from(time_limit.as_millis())
                .unwrap_or(u64::MAX)
                .max(1);
            let report = self
                .runner
                .batch_next(wall_ms)
                .map_err(|error| (batch_failure(error), position))?;
            let out_of_memory = self.out_of_memory_since_last_test();
            let program = &plan.programs[program_index];
            let mut result = execution_result(report, out_of_memory);
            let limits = CheckerLimits::for_test(time_limit, plan.limits.memory_bytes);
            checkers.check_result(sandbox, program, limits, &mut result);
            let verdict = judge_test(profile, program, &result);
            runs[position] = TestRun::ran(verdict, &result);
            if verdict != Verdict::Pass && stage.may_stop_at_first_failure {
                break;
            }
        }
        self.runner
            .batch_end()
            .map_err(|error| (batch_failure(error), 0))?;
        Ok(runs)
    }

    /// Asks the runner to exit, then kills and reaps the sandbox (dropping does both).
    pub(super) fn finish(self) {
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
    pub(super) fn finish_after_failure(self) -> bool {
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
fn execution_result(report: ChildReport, out_of_memory: bool) -> ExecutionResult {
    let stderr_tail =
        String::from_utf8_lossy(&report.stderr[report.stderr.len().saturating_sub(4096)..])
            .into_owned();
    let last_line = stderr_tail.trim_end().lines().last().unwrap_or("");
    let memory_error = report.exit_code == Some(1) && rlvr_sandbox::names_a_memory_error(last_line);
    let mut tampering: Tampering = report
        .tampering
        .iter()
        .filter_map(|name| TamperKind::from_name(name))
        .collect();
    if report.signal == Some(SIGSYS) {
        tampering.insert(TamperKind::SeccompKill);
    }
    ExecutionResult {
        exit_code: report.exit_code,
        signal: report.signal,
        timed_out: report.outcome == ChildEnding::Timeout || report.signal == Some(SIGXCPU),
        memory_exceeded: out_of_memory && report.signal == Some(SIGKILL) || memory_error,
        output_exceeded: report.stdout_truncated,
        sandbox_error: None,
        // The runner's figure is data from inside the sandbox: never trust it to be finite.
        wall_time: Duration::try_from_secs_f64(report.wall_ms / 1000.0).ok(),
        stdout: report.stdout,
        tampering,
        ..ExecutionResult::default()
    }
}

/// What the referee decided, onto the runner's report of the child. A child the engine ended
/// after a verdict other than a pass was killed by it: that is not the solution's crash, and
/// no limit it was under then counts. A child that left before the verdict with status 0
/// (`exit()` during a call) tried to end the test early.
fn apply_live_verdict(
    result: &mut ExecutionResult,
    verdict: &LiveVerdict,
    aborted: bool,
    exited_cleanly: bool,
) {
    result.referee = verdict.verdict;
    result.untrusted_comparisons = verdict.untrusted_comparisons;
    if aborted {
        result.exit_code = None;
        result.signal = None;
        result.timed_out = false;
        result.memory_exceeded = false;
    }
    if verdict.timed_out {
        result.timed_out = true;
    }
    if verdict.protocol_violation {
        result.tampering.insert(TamperKind::ForgedReport);
    }
    if verdict.child_ended_first && exited_cleanly {
        result.tampering.insert(TamperKind::EarlyExit);
    }
}

/// A byte limit as the kernel and Python can take it (an rlimit must fit a C `long`): at most
/// 1 TiB, whatever a caller that skipped validation asked for.
fn bounded(bytes: u64) -> u64 {
    bytes.min(rlvr_verify::MAX_MEMORY_MEGABYTES << 20)
}

/// A result the infrastructure failed to produce, with why.
pub(super) fn sandbox_error(message: String) -> ExecutionResult {
    ExecutionResult {
        sandbox_error: Some(message),
        ..ExecutionResult::default()
    }
}
