//! Sharing one big job's tests between workers. Jobs range from 16 to 1,226 tests: when a worker
//! runs a stage with many tests, it posts the stage on the [`HelpBoard`], and workers that find
//! the queue empty claim its tests one at a time, each through its own runner. The last tests of
//! a batch then no longer run on one core while the other idles.
//!
//! Only stages whose tests are independent are shared: not prime's first pass (one process and
//! one time budget for all its tests in the reference).
//!
//! A claimed test is always completed, even when the worker running it panics ([`Claim`]
//! completes it as `sandbox_error` when dropped unfinished), so the owner waiting in
//! [`SharedStage::finish`] can never wait forever; and a posted stage is always taken down
//! ([`Posted`]), even when its owner panics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use rlvr_verify::{ExecutionPlan, Profile, Stage, TestRun, Verdict};

use crate::engine::EngineStatistics;

/// A stage needs at least this many tests to be worth a second runner's start-up.
pub(crate) const SHARE_THRESHOLD: usize = 48;

/// Whether a stage may be split between workers.
pub(crate) fn shareable(stage: &Stage) -> bool {
    stage.programs.len() >= SHARE_THRESHOLD && !stage.shared_process && stage.budget.is_none()
}

/// One stage of one job whose tests any worker may claim.
pub(crate) struct SharedStage {
    pub(crate) profile: Arc<Profile>,
    pub(crate) plan: Arc<ExecutionPlan>,
    pub(crate) stage: usize,
    /// Tests must finish by then (the job's deadline).
    pub(crate) deadline: Instant,
    pub(crate) deadline_exceeded: AtomicBool,
    /// A worker other than the owner claimed one of its tests.
    helped: AtomicBool,
    state: Mutex<StageState>,
    idle: Condvar,
}

struct StageState {
    /// Next position in the stage's program list to hand out.
    next: usize,
    /// Claimed and not yet completed.
    outstanding: usize,
    /// A failure ended a stage that may stop at its first failure.
    stopped: bool,
    results: Vec<Option<TestRun>>,
}

impl SharedStage {
    pub(crate) fn new(
        profile: Arc<Profile>,
        plan: Arc<ExecutionPlan>,
        stage: usize,
        deadline: Instant,
    ) -> Self {
        let length = plan.stages[stage].programs.len();
        Self {
            profile,
            plan,
            stage,
            deadline,
            deadline_exceeded: AtomicBool::new(false),
            helped: AtomicBool::new(false),
            state: Mutex::new(StageState {
                next: 0,
                outstanding: 0,
                stopped: false,
                results: vec![None; length],
            }),
            idle: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StageState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands out the next test (a position in the stage), or `None` when there is none left.
    /// The claim must be completed: dropping it unfinished records a `sandbox_error`.
    pub(crate) fn claim<'stage>(&'stage self, cancelled: &AtomicBool) -> Option<Claim<'stage>> {
        let mut state = self.lock();
        if state.stopped || cancelled.load(Ordering::Relaxed) || state.next >= state.results.len() {
            return None;
        }
        let position = state.next;
        state.next += 1;
        state.outstanding += 1;
        Some(Claim {
            stage: self,
            position,
            completed: false,
        })
    }

    /// Notes that a helper (not the owner) claimed a test.
    pub(crate) fn mark_helped(&self) {
        self.helped.store(true, Ordering::Relaxed);
    }

    /// Whether a helper claimed any test; final once [`SharedStage::finish`] returned.
    pub(crate) fn was_helped(&self) -> bool {
        self.helped.load(Ordering::Relaxed)
    }

    /// Records a claimed test's run.
    fn complete(&self, position: usize, run: TestRun) {
        let may_stop = self.plan.stages[self.stage].may_stop_at_first_failure;
        let mut state = self.lock();
        if run.verdict != Verdict::Pass && may_stop {
            state.stopped = true;
        }
        state.results[position] = Some(run);
        state.outstanding -= 1;
        self.idle.notify_all();
    }

    /// Whether a helper would find a test to claim.
    fn has_work(&self) -> bool {
        let state = self.lock();
        !state.stopped && state.next < state.results.len()
    }

    /// Waits until every claimed test is complete, then returns the runs in stage order (tests
    /// never run are `skipped`).
    pub(crate) fn finish(&self) -> Vec<TestRun> {
        let mut state = self.lock();
        while state.outstanding > 0 {
            state = self
                .idle
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state
            .results
            .iter()
            .map(|run| run.unwrap_or(TestRun::not_run(Verdict::Skipped)))
            .collect()
    }
}

/// One claimed test of a shared stage.
pub(crate) struct Claim<'stage> {
    stage: &'stage SharedStage,
    /// The test's position in the stage's program list.
    pub(crate) position: usize,
    completed: bool,
}

impl Claim<'_> {
    /// Records the test's run.
    pub(crate) fn complete(mut self, run: TestRun) {
        self.completed = true;
        self.stage.complete(self.position, run);
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.completed {
            // The worker running it panicked: the owner must not wait for it forever.
            self.stage
                .complete(self.position, TestRun::not_run(Verdict::SandboxError));
        }
    }
}

/// A stage on the board, taken down when this is dropped (also when its owner panics).
pub(crate) struct Posted<'board> {
    board: &'board HelpBoard,
    stage: Arc<SharedStage>,
}

impl Drop for Posted<'_> {
    fn drop(&mut self) {
        self.board.remove(&self.stage);
    }
}

/// Stages open for help, shared by all workers of an engine.
pub(crate) struct HelpBoard {
    stages: Mutex<Vec<Arc<SharedStage>>>,
    /// Where the owners count stages that were helped (`EngineStatistics::helped_stages`).
    statistics: Arc<EngineStatistics>,
}

impl HelpBoard {
    pub(crate) fn new(statistics: Arc<EngineStatistics>) -> Self {
        Self {
            stages: Mutex::default(),
            statistics,
        }
    }

    /// Called by a stage's owner once the stage finished, before the job's result is sent, so
    /// whoever reads the statistics after the result sees the help counted (a helper counting
    /// it itself would race with the owner's reply).
    pub(crate) fn record_help(&self, stage: &SharedStage) {
        if stage.was_helped() {
            self.statistics
                .helped_stages
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<SharedStage>>> {
        self.stages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Posts a stage until the returned guard is dropped.
    pub(crate) fn post(&self, stage: &Arc<SharedStage>) -> Posted<'_> {
        self.lock().push(Arc::clone(stage));
        Posted {
            board: self,
            stage: Arc::clone(stage),
        }
    }

    fn remove(&self, stage: &Arc<SharedStage>) {
        self.lock().retain(|posted| !Arc::ptr_eq(posted, stage));
    }

    /// A posted stage with tests left to claim.
    pub(crate) fn find(&self) -> Option<Arc<SharedStage>> {
        self.lock().iter().find(|stage| stage.has_work()).cloned()
    }
}
