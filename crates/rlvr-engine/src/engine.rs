//! The engine: a bounded queue of jobs and one worker thread per core. Each worker plans a job
//! (cheap), then executes it through its own warm runner; the caller's reply function receives
//! the result. Callers that need job order (the CLI) reorder with [`crate::InOrder`].
//!
//! Every submitted job gets exactly one reply. A panic while planning or executing a job is
//! caught: the job is answered `sandbox_error` with the panic's message as its reason (a
//! `null` score, never a silent 0), the worker drops its runner and goes on with the next job.
//! Should a task be dropped unanswered all the same (a worker thread that died), its reply
//! still fires, with a `sandbox_error` saying so.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, TrySendError};
use rlvr_sandbox::Sandbox;
use rlvr_verify::{
    JobResult, Plan, PlanOptions, Profile, ProfileName, Status, TamperKind, TestSuite, Verdict,
    aggregate, plan,
};

use crate::compiled;
use crate::executor::Executor;
use crate::fault_injection::{self, Site};
use crate::help_board::HelpBoard;

/// One response to score.
#[derive(Debug, Clone)]
pub struct Job {
    /// The profile's rules.
    pub profile: Arc<Profile>,
    /// The model's response text.
    pub response: String,
    /// The record's tests.
    pub suite: TestSuite,
    /// Sampling, limits and the job's identity.
    pub options: PlanOptions,
}

/// Receives a job's result, on a worker thread.
pub type Reply = Box<dyn FnOnce(JobResult) + Send>;

/// How many workers and how much queue.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Worker threads (each runs one job at a time in its own sandbox).
    pub workers: usize,
    /// Jobs waiting for a worker before `submit` blocks and `try_submit` refuses.
    pub queue_capacity: usize,
    /// The text of the user's `testlib.h` (`--testlib-header`), put in place of a C++
    /// checker's `#include "testlib.h"` (issue 25); rlvr ships none.
    pub testlib_header: Option<Arc<str>>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        let workers = std::thread::available_parallelism().map_or(2, usize::from);
        Self {
            workers,
            queue_capacity: workers * 4,
            testlib_header: None,
        }
    }
}

/// Counters over the engine's life, for summaries and `/metrics`.
#[derive(Debug, Default)]
pub struct EngineStatistics {
    /// Jobs finished.
    pub jobs: AtomicU64,
    /// Tests executed (not skipped).
    pub tests: AtomicU64,
    /// Tests per verdict, indexed like [`Verdict::ALL`].
    pub verdicts: [AtomicU64; Verdict::ALL.len()],
    /// Jobs waiting in the queue right now.
    pub queued: AtomicU64,
    /// Workers scoring a job, or helping with another worker's, right now.
    pub busy_workers: AtomicU64,
    /// Stages of a job in which a worker with nothing queued ran at least one test (counted by
    /// the job's owner before its result is sent).
    pub helped_stages: AtomicU64,
    /// Panics caught while scoring a job (each answered `sandbox_error`; the worker lived on).
    pub panics: AtomicU64,
    /// Tests in which each tamper kind was seen, indexed like [`TamperKind::ALL`].
    pub tampering: [AtomicU64; TamperKind::ALL.len()],
    /// Comparisons between two of a solution's own objects in judge functional tests (the
    /// solution's word; docs/profiles.md).
    pub untrusted_comparisons: AtomicU64,
}

impl EngineStatistics {
    /// Counts a finished job's tampering and untrusted comparisons.
    fn record_judging(&self, result: &JobResult) {
        for (slot, kind) in TamperKind::ALL.iter().enumerate() {
            let count = result.tampering.count(*kind);
            if count > 0 {
                self.tampering[slot].fetch_add(count, Ordering::Relaxed);
            }
        }
        if let Some(count) = result.untrusted_comparisons {
            self.untrusted_comparisons
                .fetch_add(count, Ordering::Relaxed);
        }
    }
}

/// The queue is full: try again later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the verify queue is full")]
pub struct QueueFull;

struct Task {
    job: Job,
    reply: ReplyOnce,
}

/// A reply that fires exactly once: with the job's result, or, when dropped unanswered (a
/// worker that died, a queue dropped at shutdown), with a `sandbox_error` saying so.
struct ReplyOnce {
    reply: Option<Reply>,
    profile: ProfileName,
}

impl ReplyOnce {
    fn new(reply: Reply, profile: ProfileName) -> Self {
        Self {
            reply: Some(reply),
            profile,
        }
    }

    fn send(mut self, result: JobResult) {
        if let Some(reply) = self.reply.take() {
            deliver(reply, result);
        }
    }
}

impl Drop for ReplyOnce {
    fn drop(&mut self) {
        if let Some(reply) = self.reply.take() {
            deliver(
                reply,
                JobResult::sandbox_error(
                    self.profile,
                    "internal error: the worker stopped before this job finished",
                ),
            );
        }
    }
}

/// Calls a reply; a panic inside the caller's function is contained so it cannot take the
/// worker down (or abort the process when it happens during unwinding).
fn deliver(reply: Reply, result: JobResult) {
    if catch_unwind(AssertUnwindSafe(move || reply(result))).is_err() {
        tracing::error!("a reply function panicked; the worker goes on");
    }
}

/// The worker pool.
pub struct Engine {
    sender: Option<Sender<Task>>,
    workers: Vec<JoinHandle<()>>,
    cancelled: Arc<AtomicBool>,
    statistics: Arc<EngineStatistics>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Engine")
            .field("workers", &self.workers.len())
            .finish()
    }
}

impl Engine {
    /// Starts the workers.
    pub fn start(sandbox: Sandbox, config: EngineConfig) -> Self {
        let (sender, receiver) = crossbeam_channel::bounded::<Task>(config.queue_capacity.max(1));
        let cancelled = Arc::new(AtomicBool::new(false));
        let statistics = Arc::new(EngineStatistics::default());
        let board = Arc::new(HelpBoard::new(Arc::clone(&statistics)));
        let workers = (0..config.workers.max(1))
            .map(|index| {
                let receiver: Receiver<Task> = receiver.clone();
                let sandbox = sandbox.clone();
                let cancelled = Arc::clone(&cancelled);
                let statistics = Arc::clone(&statistics);
                let board = Arc::clone(&board);
                let header = config.testlib_header.clone();
                std::thread::Builder::new()
                    .name(format!("rlvr-worker-{index}"))
                    .spawn(move || {
                        work(
                            (&sandbox, header),
                            &receiver,
                            &cancelled,
                            &statistics,
                            &board,
                        );
                    })
                    .expect("the operating system starts a worker thread")
            })
            .collect();
        Self {
            sender: Some(sender),
            workers,
            cancelled,
            statistics,
        }
    }

    /// Queues a job, waiting while the queue is full.
    pub fn submit(&self, job: Job, reply: Reply) {
        self.statistics.queued.fetch_add(1, Ordering::Relaxed);
        let sender = self.sender.as_ref().expect("the engine is running");
        let reply = ReplyOnce::new(reply, job.profile.name);
        if let Err(error) = sender.send(Task { job, reply }) {
            self.statistics.queued.fetch_sub(1, Ordering::Relaxed);
            drop(error);
        }
    }

    /// Queues a job unless the queue is full.
    pub fn try_submit(&self, job: Job, reply: Reply) -> Result<(), QueueFull> {
        let sender = self.sender.as_ref().expect("the engine is running");
        self.statistics.queued.fetch_add(1, Ordering::Relaxed);
        let reply = ReplyOnce::new(reply, job.profile.name);
        match sender.try_send(Task { job, reply }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(task) | TrySendError::Disconnected(task)) => {
                self.statistics.queued.fetch_sub(1, Ordering::Relaxed);
                // Refused, not dropped: the caller keeps responsibility for this job.
                let Task { mut reply, .. } = task;
                reply.reply.take();
                Err(QueueFull)
            }
        }
    }

    /// Stops work in progress: tests not yet started are skipped. Replies still arrive.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// The flag [`Engine::cancel`] sets; setting it from elsewhere (a signal handler) cancels too.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }

    /// The engine's counters.
    pub fn statistics(&self) -> &Arc<EngineStatistics> {
        &self.statistics
    }

    /// Lets queued jobs finish, then stops the workers.
    pub fn shutdown(mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.sender.take();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.close();
    }
}

fn work(
    (sandbox, testlib_header): (&Sandbox, Option<Arc<str>>),
    receiver: &Receiver<Task>,
    cancelled: &AtomicBool,
    statistics: &EngineStatistics,
    board: &HelpBoard,
) {
    let mut executor = Executor::new(sandbox, cancelled, testlib_header.clone());
    loop {
        let task = match receiver.try_recv() {
            Ok(task) => task,
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {
                // Nothing queued: help a worker that is running a big job.
                if let Some(stage) = board.find() {
                    statistics.busy_workers.fetch_add(1, Ordering::Relaxed);
                    let helped = catch_unwind(AssertUnwindSafe(|| executor.help(&stage)));
                    statistics.busy_workers.fetch_sub(1, Ordering::Relaxed);
                    if let Err(payload) = helped {
                        statistics.panics.fetch_add(1, Ordering::Relaxed);
                        tracing::error!(
                            "panic while helping another worker's job: {}",
                            panic_message(payload.as_ref())
                        );
                        // Its runner may be in any state: start afresh.
                        executor = Executor::new(sandbox, cancelled, testlib_header.clone());
                    }
                    continue;
                }
                match receiver.recv_timeout(Duration::from_millis(20)) {
                    Ok(task) => task,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        };
        let Task { job, reply } = task;
        statistics.busy_workers.fetch_add(1, Ordering::Relaxed);
        statistics.queued.fetch_sub(1, Ordering::Relaxed);
        let scored = catch_unwind(AssertUnwindSafe(|| {
            score(&mut executor, sandbox, cancelled, &job, board)
        }));
        let result = match scored {
            Ok(result) => result,
            Err(payload) => {
                statistics.panics.fetch_add(1, Ordering::Relaxed);
                let message = panic_message(payload.as_ref());
                tracing::error!("panic while scoring a job: {message}");
                executor = Executor::new(sandbox, cancelled, testlib_header.clone());
                JobResult::sandbox_error(
                    job.profile.name,
                    format!("internal error: the verifier failed on this job ({message})"),
                )
            }
        };
        if let Some(tests) = &result.tests {
            for test in tests {
                if test.verdict != Verdict::Skipped {
                    statistics.tests.fetch_add(1, Ordering::Relaxed);
                }
                let slot = Verdict::ALL
                    .iter()
                    .position(|verdict| *verdict == test.verdict)
                    .unwrap_or(0);
                statistics.verdicts[slot].fetch_add(1, Ordering::Relaxed);
            }
        }
        statistics.record_judging(&result);
        statistics.jobs.fetch_add(1, Ordering::Relaxed);
        statistics.busy_workers.fetch_sub(1, Ordering::Relaxed);
        reply.send(result);
    }
}

/// The text of a panic's payload (`panic!` with a message gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Plans and executes one job.
fn score(
    executor: &mut Executor<'_>,
    sandbox: &Sandbox,
    cancelled: &AtomicBool,
    job: &Job,
    board: &HelpBoard,
) -> JobResult {
    fault_injection::panic_if_armed(Site::Plan, |marker| job.response.contains(marker));
    match plan(&job.profile, &job.response, &job.suite, &job.options) {
        Plan::Finished(result) => result,
        // C++, C, Java, JavaScript, Go, Rust (issue 24): compiled once, run per test by the
        // exec supervisor.
        Plan::Execute(execution) if compiled::is_other_language(&execution) => {
            executor.checkers.finish_job();
            let mut result = compiled::score(
                sandbox,
                cancelled,
                &job.profile,
                &execution,
                &mut executor.checkers,
            );
            name_checker_error(&mut result, executor.checkers.finish_job());
            result
        }
        Plan::Execute(execution) => {
            let execution = Arc::new(execution);
            executor.checkers.finish_job();
            let (run, note) = executor.execute(&job.profile, &execution, board);
            let mut result = aggregate(&execution, &run);
            // What the runner saw (the code does not compile, the response made the runner
            // die) explains the verdicts; a reason the aggregate gave comes first.
            if result.reason.is_none() {
                result.reason = note;
            }
            name_checker_error(&mut result, executor.checkers.finish_job());
            result
        }
    }
}

/// A `checker_error` job's reason names the checker's first failure.
fn name_checker_error(result: &mut JobResult, error: Option<String>) {
    if result.status == Status::CheckerError
        && let Some(error) = error
    {
        let reason = result.reason.take().unwrap_or_default();
        result.reason = Some(format!("{reason}: {error}"));
    }
}
