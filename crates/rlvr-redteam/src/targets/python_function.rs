//! A Python reward function with verl's `compute_score(data_source, solution_str,
//! ground_truth, extra_info)` signature, run out of process in the sandbox: one harness process
//! scores every response in order, as a trainer's reward worker does, so what one response
//! leaves in the process or its files reaches the next. A response that ends or hangs the
//! process voids its score; the harness restarts for the responses after it.
//!
//! The harness speaks frames (docs/runner.md, "The frame format"): one request with every case,
//! then one answer per case, each read with the call's deadline on `rlvr-runner`'s framed pipe;
//! on the Python side `runner/protocol.py`, put before `python_harness.py`.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rlvr_runner::transport::{FramedPipe, PipeError};
use rlvr_sandbox::{ExitInfo, Program, ResourceLimits, Sandbox, SandboxedProcess, SpawnRequest};
use serde_json::{Value, json};

use crate::submission::Submission;
use crate::target::{Outcome, ScoreRange, Target};

/// Where `--python-path` is mounted, read-only, in the sandbox.
pub const PYTHON_PATH_IN_SANDBOX: &str = "/opt/rlvr-reward";

const HARNESS: &str = include_str!("python_harness.py");
/// Largest answer header the harness may send (an answer holds a score or a short error).
const MAX_ANSWER_HEADER: usize = 1 << 20;
/// The last bytes of the harness's standard error kept for messages.
const STDERR_TAIL: usize = 4096;

/// `module:function`, called in the sandbox.
pub struct PythonFunctionTarget {
    sandbox: Sandbox,
    module: String,
    function: String,
    /// `--python-path` was mounted at [`PYTHON_PATH_IN_SANDBOX`].
    with_path: bool,
    data_source: String,
    range: ScoreRange,
    /// How long one call may take before the process is killed and the response voided.
    call_timeout: Duration,
    memory_bytes: u64,
}

/// What a harness run ended with.
enum Ended {
    /// Every case answered.
    Done,
    /// The process ended, hung or lost its output while scoring this case.
    DiedAt(usize, String),
    /// The harness could not start or load the function: every remaining case failed.
    Broken(String),
}

impl PythonFunctionTarget {
    /// `target` is `module:function`; `with_path`: the sandbox mounts the module's directory
    /// at [`PYTHON_PATH_IN_SANDBOX`].
    pub fn new(
        sandbox: Sandbox,
        target: &str,
        with_path: bool,
        data_source: String,
        range: ScoreRange,
        call_timeout: Duration,
    ) -> Result<Self, String> {
        let (module, function) = target
            .split_once(':')
            .filter(|(module, function)| !module.is_empty() && !function.is_empty())
            .ok_or_else(|| format!("--python {target:?}: expected module:function"))?;
        Ok(Self {
            sandbox,
            module: module.to_owned(),
            function: function.to_owned(),
            with_path,
            data_source,
            range,
            call_timeout,
            memory_bytes: 4 << 30,
        })
    }

    /// Scores `submissions` in order in as few harness processes as possible.
    fn score_in_order(&self, submissions: &[Submission]) -> Vec<Outcome> {
        let mut outcomes: Vec<Option<Outcome>> = vec![None; submissions.len()];
        let mut next = 0;
        while next < submissions.len() {
            match self.run_harness(submissions, next, &mut outcomes) {
                Ended::Done => break,
                Ended::DiedAt(index, reason) => {
                    outcomes[index] = Some(Outcome::Void { reason });
                    next = index + 1;
                }
                Ended::Broken(reason) => {
                    for outcome in outcomes.iter_mut().skip(next) {
                        outcome.get_or_insert_with(|| Outcome::Failed {
                            reason: reason.clone(),
                        });
                    }
                    break;
                }
            }
        }
        outcomes
            .into_iter()
            .map(|outcome| {
                outcome.unwrap_or(Outcome::Failed {
                    reason: "the harness gave no answer".to_owned(),
                })
            })
            .collect()
    }

    /// One harness process for `submissions[first..]`: start it, send every case, read the
    /// answers in order, then end it and say how it ended.
    fn run_harness(
        &self,
        submissions: &[Submission],
        first: usize,
        outcomes: &mut [Option<Outcome>],
    ) -> Ended {
        let nonce = nonce();
        let request = self.request(submissions, first, &nonce);
        let mut harness = match self.start_harness() {
            Ok(harness) => harness,
            Err(reason) => return Ended::Broken(reason),
        };
        // The harness reads the request before anything else: a harness that does not take it
        // within a call's time is one that did not load.
        let sent = harness
            .pipe
            .send_frame(&request, &[], Instant::now() + self.call_timeout);
        let mut reading = Reading {
            nonce,
            expected: first,
            ready: false,
        };
        let ended = self.read_answers(
            &mut harness.pipe,
            sent,
            submissions.len(),
            &mut reading,
            outcomes,
        );
        let RunningHarness {
            mut process,
            pipe,
            stderr_reader,
        } = harness;
        process.kill();
        let exit = process.wait();
        drop(pipe);
        let stderr_tail = stderr_reader.join().unwrap_or_default();
        match ended {
            Ended::DiedAt(index, reason) if reason.is_empty() => {
                self.explain_end(index, &exit, reading.ready, &stderr_tail)
            }
            other => other,
        }
    }

    /// The one request of a harness run: the function, and every case from `first` on.
    fn request(&self, submissions: &[Submission], first: usize, nonce: &str) -> Value {
        let cases: Vec<Value> = submissions
            .iter()
            .enumerate()
            .skip(first)
            .map(|(index, submission)| {
                json!({
                    "index": index,
                    "data_source": self.data_source,
                    "solution_str": submission.response,
                    "ground_truth": submission.ground_truth().to_string(),
                    "extra_info": {"index": index, "split": "test", "redteam_case": submission.id},
                })
            })
            .collect();
        json!({
            "module": self.module,
            "function": self.function,
            "path": self.with_path.then_some(PYTHON_PATH_IN_SANDBOX),
            "nonce": nonce,
            "cases": cases,
        })
    }

    /// Starts the harness in the sandbox, its standard error drained by a thread of its own
    /// (a full pipe would stop the harness); the reason when it cannot start.
    fn start_harness(&self) -> Result<RunningHarness, String> {
        let mut spawn = SpawnRequest::new(Program::Python {
            source: format!("{}{HARNESS}", rlvr_runner::FRAMING_SOURCE),
        });
        spawn.limits = ResourceLimits {
            wall: Duration::from_secs(3600),
            cpu: Duration::from_secs(3600),
            memory_bytes: self.memory_bytes,
            pids: 512,
            tmpfs_bytes: 512 << 20,
            ..ResourceLimits::default()
        };
        let mut process = self
            .sandbox
            .spawn(spawn)
            .map_err(|error| format!("the sandbox could not start the harness: {error}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (
            process.stdin.take(),
            process.stdout.take(),
            process.stderr.take(),
        ) else {
            process.kill();
            let _ = process.wait();
            return Err("the harness has no pipes".to_owned());
        };
        let stderr_reader = std::thread::spawn(move || tail_of(stderr));
        let pipe = FramedPipe::new(
            OwnedFd::from(stdin),
            OwnedFd::from(stdout),
            MAX_ANSWER_HEADER,
        );
        Ok(RunningHarness {
            process,
            pipe,
            stderr_reader,
        })
    }

    /// Reads the harness's answers until every case up to `total` has one, or the harness
    /// fails (`sent`: how sending the request went). An empty reason in `DiedAt` means the
    /// process closed its end or broke the framing: [`Self::explain_end`] says how it ended.
    fn read_answers(
        &self,
        pipe: &mut FramedPipe,
        sent: Result<(), PipeError>,
        total: usize,
        reading: &mut Reading,
        outcomes: &mut [Option<Outcome>],
    ) -> Ended {
        loop {
            if reading.expected == total {
                return Ended::Done;
            }
            let received = match &sent {
                Ok(()) => pipe.receive_json::<Value>(Instant::now() + self.call_timeout),
                Err(PipeError::Deadline) => Err(PipeError::Deadline),
                Err(_) => Err(PipeError::Closed),
            };
            match received {
                Ok(answer) => {
                    if let Some(ended) = self.take_answer(&answer, reading, outcomes) {
                        return ended;
                    }
                }
                Err(PipeError::Deadline) if !reading.ready => {
                    return Ended::Broken(format!(
                        "{}:{} was not loaded within {} s",
                        self.module,
                        self.function,
                        self.call_timeout.as_secs()
                    ));
                }
                Err(PipeError::Deadline) => {
                    return Ended::DiedAt(
                        reading.expected,
                        format!(
                            "the reward function did not return within {} s",
                            self.call_timeout.as_secs()
                        ),
                    );
                }
                // It closed its end, or broke the framing: its process is done for.
                Err(_) => return Ended::DiedAt(reading.expected, String::new()),
            }
        }
    }

    /// One answer frame: the function's import error ends the run; readiness, frames without
    /// the nonce and answers out of order are noted or skipped; the expected case's score (or
    /// error) is its outcome.
    fn take_answer(
        &self,
        answer: &Value,
        reading: &mut Reading,
        outcomes: &mut [Option<Outcome>],
    ) -> Option<Ended> {
        // Frames without the nonce are not the harness's answers.
        if answer["nonce"] != reading.nonce.as_str() {
            return None;
        }
        if let Some(reason) = answer["import_error"].as_str() {
            return Some(Ended::Broken(format!(
                "{}:{} could not be loaded: {reason}",
                self.module, self.function
            )));
        }
        if answer["ready"] == true {
            reading.ready = true;
            return None;
        }
        let index = answer["index"].as_u64().map(|index| index as usize)?;
        if index != reading.expected {
            return None;
        }
        outcomes[index] = Some(match answer["score"].as_f64() {
            Some(reward) => Outcome::Scored {
                reward,
                scaled: self.range.scale(reward),
                detail: None,
            },
            None => Outcome::Void {
                reason: format!(
                    "the reward function raised {}",
                    answer["error"].as_str().unwrap_or("an error")
                ),
            },
        });
        reading.expected += 1;
        None
    }

    /// How a harness that closed its end ended, for the case it was scoring (`index`), or for
    /// every case when it ended before loading the function (`ready` false).
    fn explain_end(
        &self,
        index: usize,
        exit: &std::io::Result<ExitInfo>,
        ready: bool,
        stderr_tail: &str,
    ) -> Ended {
        let how = match exit {
            Ok(exit) => match (exit.exit_code, exit.signal) {
                (_, Some(signal)) => format!("killed by signal {signal}"),
                (Some(code), None) => format!("exit status {code}"),
                _ => "ended".to_owned(),
            },
            Err(error) => format!("could not be waited for: {error}"),
        };
        if !ready {
            return Ended::Broken(format!(
                "the harness ended ({how}) before loading {}:{}{}",
                self.module,
                self.function,
                last_line(stderr_tail)
            ));
        }
        Ended::DiedAt(
            index,
            format!(
                "the reward process ended ({how}) while scoring this response{}",
                last_line(stderr_tail)
            ),
        )
    }
}

/// A started harness: its process, its framed pipe and the thread draining its standard error.
struct RunningHarness {
    process: SandboxedProcess,
    pipe: FramedPipe,
    stderr_reader: std::thread::JoinHandle<String>,
}

/// Where reading a harness's answers is: the run's nonce, the case whose answer comes next,
/// and whether the harness said it loaded the function.
struct Reading {
    nonce: String,
    expected: usize,
    ready: bool,
}

/// A nonce for the harness's answers (the responses never see it written anywhere).
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    let high = hasher.finish();
    let mut other = std::collections::hash_map::RandomState::new().build_hasher();
    other.write_u64(high);
    format!("rlvr-redteam-{high:016x}{:016x}", other.finish())
}

/// Reads a stream to its end, keeping the last [`STDERR_TAIL`] bytes.
fn tail_of(mut stream: impl Read) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                kept.extend_from_slice(&buffer[..read]);
                if kept.len() > 2 * STDERR_TAIL {
                    kept.drain(..kept.len() - STDERR_TAIL);
                }
            }
        }
    }
    let start = kept.len().saturating_sub(STDERR_TAIL);
    String::from_utf8_lossy(&kept[start..]).into_owned()
}

/// `: <the last non-empty line>` of a process's standard error, or nothing.
fn last_line(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| format!(": {}", line.trim()))
        .unwrap_or_default()
}

impl Target for PythonFunctionTarget {
    fn describe(&self) -> String {
        format!("python {}:{}", self.module, self.function)
    }

    fn score(&self, submissions: &[Submission]) -> Vec<Outcome> {
        self.score_in_order(submissions)
    }

    /// Every phase in one process, in order: what a prepared response leaves in the process
    /// or its files is there for the later ones, as in a trainer's reward worker.
    fn score_phases(&self, phases: &[Vec<Submission>]) -> Vec<Vec<Outcome>> {
        let all: Vec<Submission> = phases.iter().flatten().cloned().collect();
        let mut outcomes = self.score_in_order(&all).into_iter();
        phases
            .iter()
            .map(|phase| outcomes.by_ref().take(phase.len()).collect())
            .collect()
    }
}
