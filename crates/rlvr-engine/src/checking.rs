//! Sandboxed checkers (issue 25): a ground truth's Python `checker` or `checker_cpp` judges a
//! program's output in a sandbox of its own, never in the verifier and never in the program's.
//!
//! One checker process per worker, kept while the checker stays the same (a job's tests, the
//! next response to the same record), with a fresh isolated child per output:
//!
//! * Python: a warm runner (`rlvr-runner`, the program's own machinery) loaded with the
//!   checker's source between a prefix (`print` goes to stderr) and rlvr's harness
//!   (`checker_harness.py`). Each output is a forked child whose stdin carries a nonce and the
//!   three texts; it answers one line on descriptor 1 (`NONCE score 0.5`).
//! * C++: compiled once through the shared compile cache (with the user's `testlib.h` put in
//!   place of its `#include`), run by the exec supervisor as `checker INPUT OUTPUT ANSWER`,
//!   the three files being memory files (`/proc/self/fd/3..5`); exit status 0 accepts, 1 and
//!   2 (testlib's wrong answer and presentation error) reject, anything else is a failure.
//!
//! The program's output reaches the checker as bytes in a memory file, never as code. A
//! checker that crashes, runs past its limits, answers no verdict or a score outside [0, 1] has
//! failed, never passed the output. Whose fault that is decides the test (issue 32, decided by
//! [`rlvr_verify::checker::judge`], the one entry point of checkers, which reaches this
//! module through [`CheckerJudge::sandboxed`]): the checker is run on the test's expected
//! output in the program's place, at most once per checker and test in a job (the verdicts are
//! kept until [`CheckerJudge::finish_job`]); when it accepts that, the output made it fail
//! ([`CheckerOutcome::Rejected`]: a wrong answer), else the checker is broken
//! ([`CheckerOutcome::Error`]: `checker_error`, a `null` score).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::Duration;

use rlvr_languages::exec_protocol::{ProgramSpec, RunReport, RunSpec, ending};
use rlvr_languages::{
    CompileLimits, Compiler, Language, LanguageChoice, PrepareError, ProgramLimits, Supervisor,
    address_space_limit, data_limit, program_spec, sandbox_memory_bytes,
};
use rlvr_runner::{ChildEnding, JudgeOptions, TestLimits};
use rlvr_sandbox::{ResourceLimits, Sandbox, WORK_DIRECTORY};
use rlvr_verify::checker::{self, CheckedTest};
use rlvr_verify::{
    Checker, CheckerOutcome, CheckerScore, ExecutionResult, TestProgram, checker_needed,
};

use crate::runner_start::{RUNNER_CPU, RunnerProcess, start_runner};

mod in_sandbox;

pub use in_sandbox::CheckersInSandbox;

/// rlvr's harness around a Python checker's source.
const PYTHON_HARNESS: &str = include_str!("checker_harness.py");
/// Runs before the checker's source: whatever it prints goes to stderr, so descriptor 1 holds
/// the harness's verdict line only.
const PYTHON_PREFIX: &str = "import sys\nsys.stdout = sys.stderr\n";
/// The most a checker may write to its standard output (a verdict line is far shorter).
const CHECKER_OUTPUT_BYTES: u64 = 64 << 10;
/// How long a checker's process (its runner or supervisor) may live; restarted when it dies.
const CHECKER_PROCESS_WALL: Duration = Duration::from_secs(24 * 3600);
/// The shortest time a checker gets per output.
const MINIMUM_CHECKER_TIME: Duration = Duration::from_secs(2);
/// The least memory a checker gets, whatever the program's limit.
const MINIMUM_CHECKER_MEMORY: u64 = 256 << 20;
/// The most verdicts on expected outputs kept at once (a job's tests, [`MAX_TESTS`] at most,
/// fit; past it they are forgotten and asked again).
///
/// [`MAX_TESTS`]: rlvr_verify::MAX_TESTS
const MAX_EXPECTED_VERDICTS: usize = rlvr_verify::MAX_TESTS;

/// What a checker made of one output, or why it never read it: its sandbox could not start,
/// it does not compile, its process could not be started (a failure of the machine or of the
/// checker's source, never of the output, so never attributed to it).
type Judged = Result<CheckerOutcome, String>;

/// A checker's own limits for one output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckerLimits {
    /// Wall clock (the CPU limit is one second above, rounded up).
    pub time: Duration,
    /// Memory (address space for the Python child, the C++ checker's limits as a C++ program's).
    pub memory_bytes: u64,
}

impl CheckerLimits {
    /// The limits of the checker of a test limited to `test_time` and `test_memory_bytes`:
    /// twice the test's time (at least 2 s), and the test's memory (at least 256 MiB).
    pub fn for_test(test_time: Duration, test_memory_bytes: u64) -> Self {
        Self {
            time: (test_time * 2).max(MINIMUM_CHECKER_TIME),
            memory_bytes: test_memory_bytes.clamp(
                MINIMUM_CHECKER_MEMORY,
                rlvr_verify::MAX_MEMORY_MEGABYTES << 20,
            ),
        }
    }

    fn wall_ms(self) -> u64 {
        u64::try_from(self.time.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn cpu_seconds(self) -> u64 {
        (self.time.as_secs() + 1).min(RUNNER_CPU.as_secs() - 1)
    }
}

/// A Python checker's warm runner and what it holds.
struct PythonChecker {
    source: Arc<str>,
    process: RunnerProcess,
    /// Why the checker's source does not compile, when it does not.
    compile_error: Option<String>,
}

/// A C++ checker: its compiled program (or why there is none) and its supervisor.
struct CppChecker {
    source: Arc<str>,
    program: Result<ProgramSpec, String>,
    supervisor: Option<Supervisor>,
    memory_bytes: u64,
}

/// Runs sandboxed checkers for one worker (see the module's documentation).
pub struct CheckerJudge {
    testlib_header: Option<Arc<str>>,
    python: Option<PythonChecker>,
    cpp: Option<CppChecker>,
    nonces: RandomState,
    counter: u64,
    /// The first checker failure since [`CheckerJudge::finish_job`], for the job's reason.
    first_error: Option<String>,
    /// What each checker made of a test's expected output in the program's place, asked when
    /// an output made it fail (issue 32), by [`CheckerJudge::expected_key`]; kept for the job.
    expected_verdicts: HashMap<[u64; 2], CheckerOutcome>,
    /// The keyed hash behind [`CheckerJudge::expected_key`] (random per judge).
    keys: RandomState,
}

impl std::fmt::Debug for CheckerJudge {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CheckerJudge")
            .field("testlib_header", &self.testlib_header.is_some())
            .field("python", &self.python.is_some())
            .field("cpp", &self.cpp.is_some())
            .finish_non_exhaustive()
    }
}

impl CheckerJudge {
    /// A judge with no checker process yet; `testlib_header` is the text of the user's
    /// `testlib.h` (`--testlib-header`), put in place of a C++ checker's `#include`.
    pub fn new(testlib_header: Option<Arc<str>>) -> Self {
        Self {
            testlib_header,
            python: None,
            cpp: None,
            nonces: RandomState::new(),
            counter: 0,
            first_error: None,
            expected_verdicts: HashMap::new(),
            keys: RandomState::new(),
        }
    }

    /// Ends a job (called before each job too, so none is left open): forgets the checkers'
    /// verdicts on the job's expected outputs, and returns the first checker failure since the
    /// last call (the job's reason names it).
    pub fn finish_job(&mut self) -> Option<String> {
        self.expected_verdicts.clear();
        self.first_error.take()
    }

    /// Runs `program`'s sandboxed checker on `result` when the verdict needs it (see
    /// [`checker_needed`]) and records its outcome there.
    pub(crate) fn check_result(
        &mut self,
        sandbox: &Sandbox,
        program: &TestProgram,
        limits: CheckerLimits,
        result: &mut ExecutionResult,
    ) {
        if !checker_needed(program, result) {
            return;
        }
        let (Some(checker), Some(expected)) = (&program.checker, &program.expected) else {
            return;
        };
        let test = CheckedTest {
            input: program.stdin.as_deref().unwrap_or(""),
            expected,
        };
        let outcome = checker::judge(
            checker,
            test,
            &result.stdout,
            &mut self.sandboxed(sandbox, limits),
        );
        if let CheckerOutcome::Error(reason) = &outcome
            && self.first_error.is_none()
        {
            self.first_error = Some(format!("test {}: {reason}", program.test_index));
        }
        result.checker = Some(outcome);
    }

    /// The sandboxed checkers of this judge in `sandbox` under `limits`, for
    /// [`rlvr_verify::checker::judge`] (the one entry point of checkers): it runs them here,
    /// and remembers a checker's verdict on a test's expected output until
    /// [`CheckerJudge::finish_job`], so that it is asked at most once per checker and test.
    pub fn sandboxed<'a>(
        &'a mut self,
        sandbox: &'a Sandbox,
        limits: CheckerLimits,
    ) -> CheckersInSandbox<'a> {
        CheckersInSandbox {
            judge: self,
            sandbox,
            limits,
        }
    }

    /// Identifies a checker's verdict on one test's expected output: a keyed hash (random per
    /// judge, 128 bits) of the checker, the input, the expected output and the limits.
    fn expected_key(
        &self,
        checker: &Checker,
        input: &str,
        expected: &str,
        limits: CheckerLimits,
    ) -> [u64; 2] {
        let (kind, source): (&str, &str) = match checker {
            Checker::BuiltIn(_) => ("built-in", ""),
            Checker::Python(source) => ("python", source),
            Checker::Cpp(source) => ("c++", source),
        };
        let identity = (
            kind,
            source,
            input,
            expected,
            limits.time,
            limits.memory_bytes,
        );
        let first = self.keys.hash_one(identity);
        [first, self.keys.hash_one((identity, first))]
    }

    fn remember_expected_verdict(&mut self, key: [u64; 2], verdict: CheckerOutcome) {
        if self.expected_verdicts.len() >= MAX_EXPECTED_VERDICTS {
            self.expected_verdicts.clear();
        }
        self.expected_verdicts.insert(key, verdict);
    }

    /// What the checker makes of one output, a failure as it is (not yet attributed).
    fn run_checker(
        &mut self,
        sandbox: &Sandbox,
        checker: &Checker,
        input: &str,
        output: &[u8],
        expected: &str,
        limits: CheckerLimits,
    ) -> Judged {
        match checker {
            Checker::BuiltIn(rule) => Ok(score_of(f64::from(u8::from(
                rule.accepts(output, expected),
            )))),
            Checker::Python(source) => {
                self.judge_python(sandbox, source, input, output, expected, limits)
            }
            Checker::Cpp(source) => {
                self.judge_cpp(sandbox, source, input, output, expected, limits)
            }
        }
    }

    fn nonce(&mut self) -> String {
        self.counter += 1;
        let first = self.nonces.hash_one(self.counter);
        let second = self.nonces.hash_one((self.counter, first));
        format!("rlvr-{first:016x}{second:016x}")
    }

    /// A warm runner holding `source`; a runner holding another checker is reset and loaded
    /// again (a new one started when it cannot vouch for a clean reset).
    fn python_runner(
        &mut self,
        sandbox: &Sandbox,
        source: &Arc<str>,
        limits: CheckerLimits,
    ) -> Result<&mut PythonChecker, String> {
        let mut kept = self.python.take();
        if let Some(held) = &kept
            && held.source == *source
        {
            return Ok(self.python.insert(kept.expect("checked above")));
        }
        // A runner holding another checker is reused when its reset vouches for it.
        let reused = kept.take().and_then(|mut held| {
            held.process
                .runner
                .reset(WORK_DIRECTORY)
                .unwrap_or(false)
                .then_some(held.process)
        });
        let mut process = match reused {
            Some(process) => process,
            None => start_runner(sandbox, limits.memory_bytes, CHECKER_PROCESS_WALL)
                .map_err(|error| format!("the checker's sandbox cannot start: {error}"))?,
        };
        let report = process
            .runner
            .load_bounded(
                &[PYTHON_PREFIX, source, PYTHON_HARNESS],
                "checker.py",
                &[],
                None,
                Some(limits.time),
            )
            .map_err(|error| format!("the checker's runner failed loading it: {error}"))?;
        let compile_error = report.compile_error.map(|text| {
            let last = text.trim_end().lines().last().unwrap_or_default();
            format!("the checker does not compile: {last}")
        });
        Ok(self.python.insert(PythonChecker {
            source: Arc::clone(source),
            process,
            compile_error,
        }))
    }

    fn judge_python(
        &mut self,
        sandbox: &Sandbox,
        source: &Arc<str>,
        input: &str,
        output: &[u8],
        expected: &str,
        limits: CheckerLimits,
    ) -> Judged {
        let nonce = self.nonce();
        let mut stdin = format!(
            "{nonce} {} {} {}\n",
            input.len(),
            output.len(),
            expected.len()
        )
        .into_bytes();
        stdin.reserve(input.len() + output.len() + expected.len());
        stdin.extend_from_slice(input.as_bytes());
        stdin.extend_from_slice(output);
        stdin.extend_from_slice(expected.as_bytes());
        let test_limits = TestLimits {
            wall_ms: limits.wall_ms(),
            cpu_seconds: limits.cpu_seconds(),
            output_bytes: CHECKER_OUTPUT_BYTES,
            address_space_bytes: limits.memory_bytes,
        };
        let options = JudgeOptions {
            sensor: false,
            live: false,
            fresh_work_directory: Some(WORK_DIRECTORY),
        };
        // A runner that dies is replaced once; a second death on the same output is the
        // checker's failure.
        let mut failure = String::new();
        for _ in 0..2 {
            // A runner that cannot start or load the checker never reads the output.
            let checker = self.python_runner(sandbox, source, limits)?;
            if let Some(error) = &checker.compile_error {
                return Err(error.clone());
            }
            match checker
                .process
                .runner
                .run_judge_test(&stdin, None, options, test_limits)
            {
                Ok(report) => {
                    if report.outcome == ChildEnding::Timeout {
                        return Ok(CheckerOutcome::Error(format!(
                            "the checker ran past its time limit ({} ms)",
                            limits.wall_ms()
                        )));
                    }
                    if report.outcome == ChildEnding::Signaled || report.exit_code != Some(0) {
                        return Ok(CheckerOutcome::Error(format!(
                            "the checker failed ({}){}",
                            ending_text(report.exit_code, report.signal),
                            last_line(&report.stderr)
                        )));
                    }
                    return Ok(verdict_line(&report.stdout, &nonce));
                }
                Err(error) => {
                    failure = error.to_string();
                    self.python = None;
                }
            }
        }
        Ok(CheckerOutcome::Error(format!(
            "the checker's runner died: {failure}"
        )))
    }

    /// A C++ checker's program and supervisor for `source`, compiled (through the cache) when
    /// it is not the one held.
    fn cpp_checker(
        &mut self,
        sandbox: &Sandbox,
        source: &Arc<str>,
        limits: CheckerLimits,
    ) -> &mut CppChecker {
        let held = self
            .cpp
            .as_ref()
            .is_some_and(|held| held.source == *source && held.memory_bytes == limits.memory_bytes);
        if !held {
            if let Some(old) = self.cpp.take()
                && let Some(supervisor) = old.supervisor
            {
                supervisor.finish();
            }
            let program = compile_cpp_checker(
                sandbox,
                source,
                self.testlib_header.as_deref(),
                limits.memory_bytes,
            );
            self.cpp = Some(CppChecker {
                source: Arc::clone(source),
                program,
                supervisor: None,
                memory_bytes: limits.memory_bytes,
            });
        }
        self.cpp.as_mut().expect("set above")
    }

    fn judge_cpp(
        &mut self,
        sandbox: &Sandbox,
        source: &Arc<str>,
        input: &str,
        output: &[u8],
        expected: &str,
        limits: CheckerLimits,
    ) -> Judged {
        let checker = self.cpp_checker(sandbox, source, limits);
        let program = match &checker.program {
            Ok(program) => program.clone(),
            Err(error) => return Err(error.clone()),
        };
        let test = RunSpec {
            stdin: Vec::new(),
            wall_ms: limits.wall_ms(),
            cpu_seconds: limits.cpu_seconds(),
            output_bytes: CHECKER_OUTPUT_BYTES,
            address_space_bytes: address_space_limit(Language::Cpp, limits.memory_bytes),
            data_bytes: data_limit(Language::Cpp, limits.memory_bytes),
            empty_work_directory: true,
            files: vec![
                input.as_bytes().to_vec(),
                output.to_vec(),
                expected.as_bytes().to_vec(),
            ],
        };
        let mut failure = String::new();
        for _ in 0..2 {
            if checker.supervisor.is_none() {
                let process_limits = ResourceLimits {
                    memory_bytes: sandbox_memory_bytes(Language::Cpp, limits.memory_bytes),
                    cpu: RUNNER_CPU,
                    wall: CHECKER_PROCESS_WALL,
                    pids: 64,
                    ..ResourceLimits::default()
                };
                let started = Supervisor::start(sandbox, process_limits).and_then(|mut started| {
                    started.load(&program)?;
                    Ok(started)
                });
                match started {
                    Ok(started) => checker.supervisor = Some(started),
                    Err(error) => {
                        return Err(format!("the checker's sandbox cannot start: {error}"));
                    }
                }
            }
            let supervisor = checker.supervisor.as_mut().expect("started above");
            match supervisor.run(&test) {
                Ok(report) => return cpp_verdict(&report, limits),
                Err(error) => {
                    failure = error.to_string();
                    checker.supervisor = None;
                }
            }
        }
        Ok(CheckerOutcome::Error(format!(
            "the checker's supervisor died: {failure}"
        )))
    }
}

impl Drop for CheckerJudge {
    fn drop(&mut self) {
        if let Some(held) = self.python.take() {
            let RunnerProcess {
                mut process,
                runner,
                ..
            } = held.process;
            if runner.exit().is_ok() {
                let _ = process.wait_until(std::time::Instant::now() + Duration::from_secs(1));
            }
        }
        if let Some(held) = self.cpp.take()
            && let Some(supervisor) = held.supervisor
        {
            supervisor.finish();
        }
    }
}

fn score_of(value: f64) -> CheckerOutcome {
    match CheckerScore::new(value) {
        Some(score) => CheckerOutcome::Score(score),
        None => CheckerOutcome::Error(format!("the checker scored {value}, outside [0, 1]")),
    }
}

/// How a checker's process ended, for a reason.
fn ending_text(exit_code: Option<i32>, signal: Option<i32>) -> String {
    match (exit_code, signal) {
        (_, Some(signal)) => format!("killed by signal {signal}"),
        (Some(code), None) => format!("exit status {code}"),
        (None, None) => "no exit status".to_owned(),
    }
}

/// `": LINE"` for the last non-blank line of a checker's stderr (its exception), if any.
fn last_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(&stderr[stderr.len().saturating_sub(2048)..]).into_owned();
    text.trim_end()
        .lines()
        .last()
        .map(|line| format!(": {}", line.chars().take(300).collect::<String>()))
        .unwrap_or_default()
}

/// Reads the harness's one verdict line: exactly `NONCE score VALUE\n` or `NONCE error
/// MESSAGE\n`, and nothing else on descriptor 1.
fn verdict_line(stdout: &[u8], nonce: &str) -> CheckerOutcome {
    let garbage = || {
        CheckerOutcome::Error(format!(
            "the checker wrote something other than its verdict on its standard output ({} bytes)",
            stdout.len()
        ))
    };
    let Ok(text) = std::str::from_utf8(stdout) else {
        return garbage();
    };
    let Some(line) = text.strip_suffix('\n') else {
        return garbage();
    };
    if line.contains('\n') {
        return garbage();
    }
    let Some(rest) = line
        .strip_prefix(nonce)
        .and_then(|rest| rest.strip_prefix(' '))
    else {
        return garbage();
    };
    if let Some(value) = rest.strip_prefix("score ") {
        return match value.parse::<f64>() {
            Ok(value) => score_of(value),
            Err(_) => garbage(),
        };
    }
    match rest.strip_prefix("error ") {
        Some(message) => CheckerOutcome::Error(message.to_owned()),
        None => garbage(),
    }
}

/// testlib's exit statuses: 0 accepted, 1 wrong answer, 2 presentation error; 3 (the
/// checker's own failure) and anything else is a failure of the checker. A checker the
/// supervisor could not start never read the output.
fn cpp_verdict(report: &RunReport, limits: CheckerLimits) -> Judged {
    if report.ending == ending::NOT_STARTED {
        return Err(format!(
            "the checker could not start: {}",
            String::from_utf8_lossy(&report.message)
        ));
    }
    Ok(match report.ending {
        ending::EXITED => match report.exit_code {
            0 => score_of(1.0),
            1 | 2 => score_of(0.0),
            code => CheckerOutcome::Error(format!(
                "the checker exited with status {code} (testlib: 0 accepted, 1 wrong answer, 2 presentation error){}",
                last_line(&report.stderr)
            )),
        },
        ending::TIMED_OUT => CheckerOutcome::Error(format!(
            "the checker ran past its time limit ({} ms)",
            limits.wall_ms()
        )),
        ending::SIGNALED => CheckerOutcome::Error(format!(
            "the checker was killed by signal {}{}",
            report.signal,
            last_line(&report.stderr)
        )),
        other => CheckerOutcome::Error(format!(
            "the checker's supervisor reported an unknown ending ({other})"
        )),
    })
}

/// Whether a line is `#include "testlib.h"` (or `<testlib.h>`).
fn includes_testlib(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('#') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix("include") else {
        return false;
    };
    matches!(rest.trim(), "\"testlib.h\"" | "<testlib.h>")
}

/// The checker's source with the user's `testlib.h` in place of its `#include` (line numbers
/// kept by `#line`); the source unchanged when there is no header or no such line.
pub fn with_testlib_header(source: &str, header: Option<&str>) -> String {
    let Some(header) = header else {
        return source.to_owned();
    };
    let mut text = String::with_capacity(source.len() + header.len() + 64);
    for (number, line) in source.split_inclusive('\n').enumerate() {
        if includes_testlib(line) {
            text.push_str("#line 1 \"testlib.h\"\n");
            text.push_str(header);
            text.push_str(&format!("\n#line {} \"checker.cpp\"\n", number + 2));
        } else {
            text.push_str(line);
        }
    }
    text
}

/// Compiles a C++ checker (through the shared cache) into the program the supervisor runs.
fn compile_cpp_checker(
    sandbox: &Sandbox,
    source: &str,
    testlib_header: Option<&str>,
    memory_bytes: u64,
) -> Result<ProgramSpec, String> {
    let text = with_testlib_header(source, testlib_header);
    let choice = LanguageChoice::from(Language::Cpp);
    let compiler = Compiler::shared();
    let compiled = match compiler.compile(sandbox, choice, &text, CompileLimits::default()) {
        Ok(Some(compiled)) => compiled,
        Ok(None) => return Err("C++ has nothing to compile here".to_owned()),
        Err(PrepareError::Unavailable(unavailable)) => {
            return Err(format!(
                "the C++ checker cannot be compiled: C++ is unavailable on this machine: {} (Debian package {})",
                unavailable.reason, unavailable.package
            ));
        }
        Err(error) => return Err(format!("the C++ checker cannot be compiled: {error}")),
    };
    if !compiled.report.succeeded() {
        let hint = if testlib_header.is_none() && source.lines().any(includes_testlib) {
            " (it includes testlib.h: pass --testlib-header PATH)"
        } else {
            ""
        };
        return Err(format!(
            "the C++ checker does not compile{hint}: {}",
            compiled.report.summary(600)
        ));
    }
    let toolchain = compiler
        .toolchains()
        .get(Language::Cpp)
        .map_err(|unavailable| unavailable.reason.clone())?;
    let mut program = program_spec(
        Language::Cpp,
        toolchain,
        compiled.report.artifact.as_deref(),
        &text,
        ProgramLimits { memory_bytes },
        None,
    )
    .ok_or_else(|| "the C++ checker compiled to nothing runnable".to_owned())?;
    program.arguments = [
        "checker",
        "/proc/self/fd/3",
        "/proc/self/fd/4",
        "/proc/self/fd/5",
    ]
    .iter()
    .map(|argument| argument.as_bytes().to_vec())
    .collect();
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_line_must_carry_the_nonce_and_be_alone() {
        let score = |value: f64| CheckerOutcome::Score(CheckerScore::new(value).unwrap());
        assert_eq!(verdict_line(b"rlvr-1 score 1.0\n", "rlvr-1"), score(1.0));
        assert_eq!(verdict_line(b"rlvr-1 score 0.25\n", "rlvr-1"), score(0.25));
        for bad in [
            &b"rlvr-2 score 1.0\n"[..],
            b"rlvr-1 score 1.0",
            b"noise\nrlvr-1 score 1.0\n",
            b"rlvr-1 score 1.0\nrlvr-1 score 1.0\n",
            b"rlvr-1 score one\n",
            b"rlvr-1 score nan\n",
            b"rlvr-1 score 2.0\n",
            b"rlvr-1 score -0.5\n",
            b"rlvr-1 score inf\n",
            b"\xff\n",
            b"",
        ] {
            assert!(
                matches!(verdict_line(bad, "rlvr-1"), CheckerOutcome::Error(_)),
                "{bad:?}"
            );
        }
        assert_eq!(
            verdict_line(b"rlvr-1 error no check\n", "rlvr-1"),
            CheckerOutcome::Error("no check".to_owned())
        );
    }

    #[test]
    fn the_testlib_header_replaces_its_include_and_keeps_line_numbers() {
        let source = "#include <cstdio>\n  #  include \"testlib.h\"\nint main() {}\n";
        let text = with_testlib_header(source, Some("// the header"));
        assert_eq!(
            text,
            "#include <cstdio>\n#line 1 \"testlib.h\"\n// the header\n#line 3 \"checker.cpp\"\nint main() {}\n"
        );
        assert_eq!(with_testlib_header(source, None), source);
        assert!(includes_testlib("#include<testlib.h>"));
        assert!(!includes_testlib("#include \"testlib.hpp\""));
        assert!(!includes_testlib("// #include \"testlib.h\""));
    }

    #[test]
    fn checker_limits_are_twice_the_test_time_and_at_least_the_floor() {
        let limits = CheckerLimits::for_test(Duration::from_millis(300), 64 << 20);
        assert_eq!(limits.time, MINIMUM_CHECKER_TIME);
        assert_eq!(limits.memory_bytes, MINIMUM_CHECKER_MEMORY);
        let limits = CheckerLimits::for_test(Duration::from_secs(3), 1 << 30);
        assert_eq!(limits.time, Duration::from_secs(6));
        assert_eq!(limits.memory_bytes, 1 << 30);
    }
}
