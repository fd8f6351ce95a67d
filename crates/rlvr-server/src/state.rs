//! The state every route shares: the engine, the sandbox (for `/run_code`), the admission
//! count, the execution slots and the metrics.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use rlvr_engine::Engine;
use rlvr_sandbox::Sandbox;
use tokio::sync::Semaphore;

use crate::admission::Admission;
use crate::config::ServerConfig;
use crate::metrics::Metrics;

/// Shared by every request.
pub(crate) struct AppState {
    /// The worker pool.
    pub(crate) engine: Engine,
    /// For single programs (`/run_code`).
    pub(crate) sandbox: Sandbox,
    /// Jobs (and `/run_code` runs) handed to the engine and not yet finished. The engine's own
    /// queue is as large as this, so handing a job over never blocks a runtime thread; jobs
    /// beyond it wait in their request, where a disconnect drops them.
    pub(crate) slots: Arc<Semaphore>,
    /// Jobs admitted over all requests (`--max-queue`).
    pub(crate) admission: Admission,
    /// Counters and histograms.
    pub(crate) metrics: Arc<Metrics>,
    /// The settings.
    pub(crate) config: ServerConfig,
    /// Set once SIGTERM arrived: requests on kept-alive connections get 503.
    pub(crate) shutting_down: AtomicBool,
    /// Whether the sandbox interpreter imports numpy and pandas (the klear profile needs them).
    pub(crate) scientific_modules: bool,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AppState")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Slots handed to the engine: enough to keep every worker busy while the next job is
/// handed over.
pub(crate) fn slot_count(workers: usize) -> usize {
    workers.max(1) * 2
}
