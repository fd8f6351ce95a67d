//! Jobs whose code is not Python (issue 24): compile once (through the shared compile cache),
//! then run every test through the exec supervisor, one isolated child per test, and judge each
//! output in Rust exactly as a Python test's. stdin/stdout tests only (the plan refuses
//! functional tests for these languages).
//!
//! Who is to blame when the supervisor dies mirrors the Python runner's rules (executor.rs):
//! the cgroup killed something for memory: `memory_limit`; it stopped answering: `timeout`; it
//! died running a test: the test is retried once on a fresh supervisor, and a second death is
//! the test's `runtime_error`; after three deaths the job's remaining tests fail unrun.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rlvr_languages::exec_protocol::{ProgramSpec, RunReport, RunSpec, ending};
use rlvr_languages::{
    CompileLimits, Compiler, Language, PrepareError, ProgramLimits, Supervisor, SupervisorError,
    address_space_limit, data_limit, program_spec, reports_out_of_memory, sandbox_memory_bytes,
};
use rlvr_sandbox::{ResourceLimits, Sandbox};
use rlvr_verify::{
    ExecutionPlan, ExecutionResult, JobResult, JobRun, Profile, ProfileName, TamperKind, TestRun,
    Verdict, aggregate, judge_test,
};

use crate::checking::{CheckerJudge, CheckerLimits};
use crate::runner_start::RUNNER_CPU;

const MAX_SUPERVISOR_DEATHS: usize = 3;
const DEATHS_PER_TEST: usize = 2;
const LONGEST_JOB: Duration = Duration::from_secs(30 * 24 * 3600);
const SIGKILL: i64 = 9;
const SIGSYS: i64 = 31;
/// `ENOMEM`: an exec refused because the program's image does not fit its address space.
const OUT_OF_MEMORY_ERRNO_TEXT: &str = "Cannot allocate memory";

/// Scores one job whose plan is in a language other than Python.
pub(crate) fn score(
    sandbox: &Sandbox,
    cancelled: &AtomicBool,
    profile: &Profile,
    plan: &ExecutionPlan,
    checkers: &mut CheckerJudge,
) -> JobResult {
    let started = Instant::now();
    let job_deadline = started
        .checked_add(plan.limits.job_deadline.min(LONGEST_JOB))
        .unwrap_or(started);
    let code = plan
        .programs
        .first()
        .map(|program| program.source.to_string())
        .unwrap_or_default();
    let compiler = Compiler::shared();
    let language = plan.language.language;
    let compiled = match compiler.compile(sandbox, plan.language, &code, CompileLimits::default()) {
        Ok(compiled) => compiled,
        Err(PrepareError::Unavailable(unavailable)) => {
            return JobResult::language_unavailable(
                profile.name,
                format!(
                    "{language} is unavailable on this machine: {} (Debian package {})",
                    unavailable.reason, unavailable.package
                ),
            );
        }
        Err(error @ PrepareError::Sandbox(_)) => {
            return JobResult::sandbox_error(profile.name, error.to_string());
        }
    };
    if let Some(cached) = &compiled
        && !cached.report.succeeded()
    {
        let failed = ExecutionResult {
            compile_failed: true,
            ..ExecutionResult::default()
        };
        let run = every_test(plan, |program| {
            TestRun::ran(
                judge_test(profile, &plan.programs[program], &failed),
                &failed,
            )
        });
        let mut result = aggregate(plan, &run);
        result.reason = Some(cached.report.summary(2048));
        return result;
    }
    let toolchain = match compiler.toolchains().get(language) {
        Ok(toolchain) => toolchain,
        Err(unavailable) => {
            return JobResult::language_unavailable(profile.name, unavailable.reason.clone());
        }
    };
    let limits = ProgramLimits {
        memory_bytes: plan.limits.memory_bytes,
    };
    let artifact = compiled
        .as_ref()
        .and_then(|cached| cached.report.artifact.clone());
    let harness = if language == Language::Java {
        match compiler.java_harness(sandbox) {
            Ok(harness) => harness,
            Err(error) => return JobResult::sandbox_error(profile.name, error.to_string()),
        }
    } else {
        None
    };
    let Some(program) = program_spec(
        language,
        toolchain,
        artifact.as_deref(),
        &code,
        limits,
        harness.as_deref(),
    ) else {
        return JobResult::sandbox_error(
            profile.name,
            format!("no way to run a {language} program is configured"),
        );
    };
    let mut job = CompiledJob {
        sandbox,
        plan,
        program,
        supervisor: None,
        out_of_memory_kills: 0,
        deaths: 0,
        note: None,
    };
    let mut run = JobRun::default();
    for stage in &plan.stages {
        let mut runs = Vec::with_capacity(stage.programs.len());
        let mut stop = false;
        for &index in &stage.programs {
            if stop || cancelled.load(Ordering::Relaxed) {
                runs.push(TestRun::not_run(Verdict::Skipped));
                continue;
            }
            let now = Instant::now();
            if now >= job_deadline {
                run.deadline_exceeded = true;
                runs.push(TestRun::not_run(Verdict::Timeout));
                stop = true;
                continue;
            }
            let time_limit = stage.time_per_test.min(job_deadline - now);
            let program = &plan.programs[index];
            let mut result = job.run_test(index, time_limit, profile.name == ProfileName::Judge);
            let limits = CheckerLimits::for_test(time_limit, plan.limits.memory_bytes);
            checkers.check_result(sandbox, program, limits, &mut result);
            let verdict = judge_test(profile, program, &result);
            runs.push(TestRun::ran(verdict, &result));
            if verdict != Verdict::Pass && stage.may_stop_at_first_failure {
                stop = true;
            }
        }
        run.stages.push(runs);
    }
    if let Some(supervisor) = job.supervisor.take() {
        supervisor.finish();
    }
    let mut result = aggregate(plan, &run);
    if result.reason.is_none() {
        result.reason = job.note;
    }
    result
}

/// One run per program of every stage, made by `make`.
fn every_test(plan: &ExecutionPlan, make: impl Fn(usize) -> TestRun) -> JobRun {
    JobRun {
        stages: plan
            .stages
            .iter()
            .map(|stage| stage.programs.iter().map(|&index| make(index)).collect())
            .collect(),
        deadline_exceeded: false,
    }
}

struct CompiledJob<'a> {
    sandbox: &'a Sandbox,
    plan: &'a ExecutionPlan,
    program: ProgramSpec,
    supervisor: Option<Supervisor>,
    /// OOM kills in the supervisor's cgroup seen so far.
    out_of_memory_kills: u64,
    /// Supervisor deaths the response caused.
    deaths: usize,
    note: Option<String>,
}

impl CompiledJob<'_> {
    fn start(&mut self) -> Result<&mut Supervisor, SupervisorError> {
        if self.supervisor.is_none() {
            let limits = ResourceLimits {
                memory_bytes: sandbox_memory_bytes(
                    self.plan.language.language,
                    self.plan
                        .limits
                        .memory_bytes
                        .min(rlvr_verify::MAX_MEMORY_MEGABYTES << 20),
                ),
                cpu: RUNNER_CPU,
                wall: self.plan.limits.job_deadline,
                pids: 256,
                ..ResourceLimits::default()
            };
            let mut supervisor = Supervisor::start(self.sandbox, limits)?;
            supervisor.load(&self.program)?;
            self.out_of_memory_kills = supervisor.process().usage().out_of_memory_kills;
            self.supervisor = Some(supervisor);
        }
        Ok(self.supervisor.as_mut().expect("started above"))
    }

    fn run_test(&mut self, index: usize, time_limit: Duration, judge: bool) -> ExecutionResult {
        let program = &self.plan.programs[index];
        let expected = program.expected.as_ref().map(String::len);
        let memory = self
            .plan
            .limits
            .memory_bytes
            .min(rlvr_verify::MAX_MEMORY_MEGABYTES << 20);
        let test = RunSpec {
            stdin: program.stdin.as_deref().unwrap_or("").as_bytes().to_vec(),
            wall_ms: u64::try_from(time_limit.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            cpu_seconds: (time_limit.as_secs() + 1).min(RUNNER_CPU.as_secs() - 1),
            output_bytes: self
                .plan
                .limits
                .output_cap(expected)
                .min(rlvr_verify::MAX_MEMORY_MEGABYTES << 20),
            address_space_bytes: address_space_limit(self.plan.language.language, memory),
            data_bytes: data_limit(self.plan.language.language, memory),
            empty_work_directory: judge,
            files: Vec::new(),
        };
        let mut deaths = 0;
        loop {
            if self.deaths >= MAX_SUPERVISOR_DEATHS {
                return died();
            }
            let outcome = match self.start() {
                Ok(supervisor) => supervisor.run(&test),
                Err(SupervisorError::Start(error)) => return sandbox_error(error.to_string()),
                Err(SupervisorError::Load(error)) => return sandbox_error(error),
                Err(error) => Err(error),
            };
            let supervisor = self.supervisor.as_ref();
            let kills = supervisor.map_or(0, |supervisor| {
                supervisor.process().usage().out_of_memory_kills
            });
            let out_of_memory = kills > self.out_of_memory_kills;
            self.out_of_memory_kills = kills;
            match outcome {
                Ok(report) => return self.result(report, out_of_memory, time_limit),
                Err(error) => {
                    if let Some(supervisor) = self.supervisor.take() {
                        drop(supervisor);
                    }
                    if out_of_memory {
                        return ExecutionResult {
                            memory_exceeded: true,
                            signal: Some(9),
                            wall_time: Some(time_limit),
                            ..ExecutionResult::default()
                        };
                    }
                    if matches!(error, SupervisorError::Deadline) {
                        return ExecutionResult {
                            timed_out: true,
                            wall_time: Some(time_limit),
                            ..ExecutionResult::default()
                        };
                    }
                    deaths += 1;
                    tracing::debug!("exec supervisor failed running a test ({error})");
                    if deaths < DEATHS_PER_TEST {
                        continue;
                    }
                    self.deaths += 1;
                    if self.note.is_none() {
                        self.note = Some(format!(
                            "the response made the exec supervisor die running a test ({error})"
                        ));
                    }
                    return died();
                }
            }
        }
    }

    fn result(
        &mut self,
        report: RunReport,
        out_of_memory: bool,
        time_limit: Duration,
    ) -> ExecutionResult {
        let language = self.plan.language.language;
        let message = String::from_utf8_lossy(&report.message).into_owned();
        if report.ending == ending::NOT_STARTED {
            // The exec itself failed: the program's image did not fit its address space (its
            // memory limit), or the kernel refused it (its failure). Any earlier step is the
            // sandbox's.
            if message.contains("exec failed") {
                if self.note.is_none() {
                    self.note = Some(message.clone());
                }
                return ExecutionResult {
                    memory_exceeded: message.contains(OUT_OF_MEMORY_ERRNO_TEXT),
                    exit_code: Some(127),
                    ..ExecutionResult::default()
                };
            }
            return sandbox_error(message);
        }
        let signal = (report.ending == ending::SIGNALED || report.ending == ending::TIMED_OUT)
            .then_some(report.signal)
            .filter(|&signal| signal > 0);
        let mut result = ExecutionResult {
            exit_code: (report.ending == ending::EXITED)
                .then(|| i32::try_from(report.exit_code).unwrap_or(-1)),
            signal: signal.map(|signal| i32::try_from(signal).unwrap_or(-1)),
            timed_out: report.ending == ending::TIMED_OUT,
            memory_exceeded: (out_of_memory && signal == Some(SIGKILL))
                || (report.ending != ending::EXITED || report.exit_code != 0)
                    && reports_out_of_memory(language, &report.stdout, &report.stderr),
            output_exceeded: report.stdout_truncated,
            wall_time: Some(Duration::from_micros(report.wall_us).min(time_limit * 2)),
            stdout: report.stdout,
            ..ExecutionResult::default()
        };
        if signal == Some(SIGSYS) {
            result.tampering.insert(TamperKind::SeccompKill);
        }
        if !message.is_empty() && self.note.is_none() {
            // The work directory could not be emptied: the next test would not start clean.
            self.note = Some(message);
            if let Some(supervisor) = self.supervisor.take() {
                drop(supervisor);
            }
        }
        result
    }
}

/// A test whose program made the supervisor die (or whose job already did so too often).
fn died() -> ExecutionResult {
    ExecutionResult {
        signal: Some(9),
        ..ExecutionResult::default()
    }
}

fn sandbox_error(message: String) -> ExecutionResult {
    ExecutionResult {
        sandbox_error: Some(message),
        ..ExecutionResult::default()
    }
}

/// Whether the engine must take this plan's compiled path.
pub(crate) fn is_other_language(plan: &ExecutionPlan) -> bool {
    plan.language.language != Language::Python
}
