//! Counters and latency histograms kept by the server, rendered by `GET /metrics` in the
//! Prometheus text format (`prometheus-client`) together with the engine's own counters and
//! the admission queue's figures, read at each scrape.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use rlvr_engine::EngineStatistics;
use rlvr_verify::{TamperKind, Verdict};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// The `Content-Type` of what [`Metrics::render`] writes.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

fn latency_histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PartLabels {
    part: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct VerdictLabels {
    verdict: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

/// Per-route request counts and latencies, plus job- and connection-level counters. Each
/// field is a handle (clones share the value), counted where the event happens.
#[derive(Debug)]
pub(crate) struct Metrics {
    requests: Family<RequestLabels, Counter>,
    request_latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    /// Requests being served right now.
    pub(crate) in_flight: Gauge,
    /// Submit-to-result latency of each job.
    pub(crate) job_latency: Histogram,
    /// Jobs never started because their request went away (disconnect or deadline).
    pub(crate) jobs_cancelled: Counter,
    /// Jobs whose request deadline passed before they finished.
    pub(crate) jobs_deadline_exceeded: Counter,
    /// Jobs with status `sandbox_error` and `/run_code` runs the sandbox could not start.
    pub(crate) sandbox_errors: Counter,
    /// Jobs with status `checker_error`: the ground truth's checker failed, on the expected
    /// output too (issues 25 and 32).
    pub(crate) checker_errors: Counter,
    /// Tests whose output made the checker fail while it accepts the expected output: wrong
    /// answers flagged `checker_rejected` (issue 32).
    pub(crate) checker_rejected: Counter,
    /// Requests refused because the queue was full.
    pub(crate) queue_full: Counter,
    /// Connections open now.
    pub(crate) connections_open: Gauge,
    /// Connections refused with 503 because every one of `--max-connections` was busy.
    pub(crate) connections_refused: Counter,
    /// Waiting connections closed to make room for a new one at the cap.
    pub(crate) connections_evicted: Counter,
    /// Requests answered 408 because their headers were late.
    pub(crate) request_timeouts_header: Counter,
    /// Requests answered 408 because their body was late.
    pub(crate) request_timeouts_body: Counter,
    /// Connections closed after waiting for a request that never started.
    pub(crate) connections_idle_closed: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            request_latency: Family::new_with_constructor(latency_histogram),
            in_flight: Gauge::default(),
            job_latency: latency_histogram(),
            jobs_cancelled: Counter::default(),
            jobs_deadline_exceeded: Counter::default(),
            sandbox_errors: Counter::default(),
            checker_errors: Counter::default(),
            checker_rejected: Counter::default(),
            queue_full: Counter::default(),
            connections_open: Gauge::default(),
            connections_refused: Counter::default(),
            connections_evicted: Counter::default(),
            request_timeouts_header: Counter::default(),
            request_timeouts_body: Counter::default(),
            connections_idle_closed: Counter::default(),
        }
    }
}

impl Metrics {
    pub(crate) fn record_request(&self, route: &str, status: u16, elapsed: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                status,
            })
            .inc();
        self.request_latency
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// The whole exposition: the server's metrics, the engine's counters and the queue's
    /// figures as they are now.
    pub(crate) fn render(&self, engine: &EngineStatistics, figures: QueueFigures) -> String {
        let mut registry = Registry::default();
        self.register_requests(&mut registry);
        register_engine(&mut registry, engine);
        self.register_queue(&mut registry, engine, figures);
        self.register_job_outcomes(&mut registry, engine);
        self.register_connections(&mut registry);
        let mut output = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut output, &registry);
        output
    }

    /// Requests by route and status, their latency, the jobs' latency and what is in flight.
    fn register_requests(&self, registry: &mut Registry) {
        registry.register(
            "rlvr_requests",
            "HTTP requests by route and status",
            self.requests.clone(),
        );
        registry.register_with_unit(
            "rlvr_request_duration",
            "HTTP request latency by route",
            Unit::Seconds,
            self.request_latency.clone(),
        );
        registry.register_with_unit(
            "rlvr_job_duration",
            "Time from admission to result of one job",
            Unit::Seconds,
            self.job_latency.clone(),
        );
        registry.register(
            "rlvr_requests_in_flight",
            "Requests being served",
            self.in_flight.clone(),
        );
    }

    /// The admission queue, the engine's queue and its workers (refusals at a full queue are
    /// registered with the connections, where the exposition has always listed them).
    fn register_queue(
        &self,
        registry: &mut Registry,
        engine: &EngineStatistics,
        figures: QueueFigures,
    ) {
        registry.register(
            "rlvr_queue_depth",
            "Jobs admitted and not yet finished, over all requests",
            level(figures.admitted as u64),
        );
        registry.register(
            "rlvr_queue_capacity",
            "Most jobs admitted at once (--max-queue)",
            level(figures.capacity as u64),
        );
        registry.register(
            "rlvr_engine_queued",
            "Jobs waiting in the engine for a worker",
            level(engine.queued.load(Ordering::Relaxed)),
        );
        registry.register(
            "rlvr_workers",
            "Engine worker threads (--workers)",
            level(figures.workers as u64),
        );
        registry.register(
            "rlvr_workers_busy",
            "Workers scoring a job, or helping with another worker's, right now",
            level(engine.busy_workers.load(Ordering::Relaxed)),
        );
    }

    /// Jobs that ended without a score of their own: cancelled, late, sandbox or checker
    /// failures, and panics.
    fn register_job_outcomes(&self, registry: &mut Registry, engine: &EngineStatistics) {
        for (name, help, counter) in [
            (
                "rlvr_jobs_cancelled",
                "Jobs never started because their request went away",
                &self.jobs_cancelled,
            ),
            (
                "rlvr_jobs_deadline_exceeded",
                "Jobs unfinished when their request deadline passed",
                &self.jobs_deadline_exceeded,
            ),
            (
                "rlvr_sandbox_errors",
                "Jobs and runs the sandbox failed (never scored as wrong answers)",
                &self.sandbox_errors,
            ),
            (
                "rlvr_checker_errors",
                "Jobs whose ground truth's checker failed, on the expected output too (checker_error: null score, never a pass)",
                &self.checker_errors,
            ),
            (
                "rlvr_checker_rejected",
                "Tests whose output made the checker fail while it accepts the expected output (checker_rejected: wrong answers)",
                &self.checker_rejected,
            ),
        ] {
            registry.register(name, help, counter.clone());
        }
        registry.register(
            "rlvr_engine_panics",
            "Panics caught while scoring a job (each job answered sandbox_error; the worker went on)",
            count(&engine.panics),
        );
    }

    /// Refusals and client connections: requests refused at a full queue, connections open,
    /// refused, evicted and closed idle, and requests too late.
    fn register_connections(&self, registry: &mut Registry) {
        registry.register(
            "rlvr_queue_full",
            "Requests refused with 429 because the queue was full",
            self.queue_full.clone(),
        );
        registry.register(
            "rlvr_connections_open",
            "Client connections open",
            self.connections_open.clone(),
        );
        for (name, help, counter) in [
            (
                "rlvr_connections_refused",
                "Connections refused with 503: every one of --max-connections was busy",
                &self.connections_refused,
            ),
            (
                "rlvr_connections_evicted",
                "Waiting connections closed to make room at --max-connections",
                &self.connections_evicted,
            ),
            (
                "rlvr_connections_idle_closed",
                "Connections closed after waiting for a request (--header-timeout, --idle-timeout)",
                &self.connections_idle_closed,
            ),
        ] {
            registry.register(name, help, counter.clone());
        }
        let timeouts = Family::<PartLabels, Counter>::default();
        for (part, counter) in [
            ("header", &self.request_timeouts_header),
            ("body", &self.request_timeouts_body),
        ] {
            timeouts
                .get_or_create(&PartLabels { part })
                .inc_by(counter.get());
        }
        registry.register(
            "rlvr_request_timeouts",
            "Requests answered 408: headers or body too late",
            timeouts,
        );
    }
}

/// The admission queue's and the engine's sizes at the time of a scrape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueueFigures {
    /// Jobs admitted and not yet finished.
    pub(crate) admitted: usize,
    /// `--max-queue`.
    pub(crate) capacity: usize,
    /// Engine worker threads.
    pub(crate) workers: usize,
}

/// A counter read from one of the engine's atomics.
fn count(value: &AtomicU64) -> ConstCounter<u64> {
    ConstCounter::new(value.load(Ordering::Relaxed))
}

/// A gauge of a count, saturating at `i64::MAX`.
fn level(value: u64) -> ConstGauge<i64> {
    ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX))
}

/// The engine's own counters: jobs, tests, verdicts, tampering and untrusted comparisons.
fn register_engine(registry: &mut Registry, engine: &EngineStatistics) {
    registry.register("rlvr_jobs", "Jobs the engine finished", count(&engine.jobs));
    registry.register(
        "rlvr_tests",
        "Tests executed (not skipped)",
        count(&engine.tests),
    );
    let verdicts = Family::<VerdictLabels, Counter>::default();
    for (verdict, value) in Verdict::ALL.iter().zip(&engine.verdicts) {
        let name = serde_json::to_value(verdict)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        verdicts
            .get_or_create(&VerdictLabels { verdict: name })
            .inc_by(value.load(Ordering::Relaxed));
    }
    registry.register("rlvr_test_verdicts", "Tests by verdict", verdicts);
    let tampering = Family::<KindLabels, Counter>::default();
    for (kind, value) in TamperKind::ALL.iter().zip(&engine.tampering) {
        tampering
            .get_or_create(&KindLabels { kind: kind.name() })
            .inc_by(value.load(Ordering::Relaxed));
    }
    registry.register(
        "rlvr_tampering",
        "Tests in which the solution tried each kind of tampering",
        tampering,
    );
    registry.register(
        "rlvr_untrusted_comparisons",
        "Comparisons between two of a solution's own objects in judge functional tests (the solution's word)",
        count(&engine.untrusted_comparisons),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, name: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn the_exposition_names_every_metric_with_its_value() {
        let metrics = Metrics::default();
        metrics.job_latency.observe(0.003);
        metrics.job_latency.observe(0.7);
        metrics.record_request("/v1/verify", 200, Duration::from_millis(20));
        metrics.checker_errors.inc();
        metrics.checker_rejected.inc_by(2);
        metrics.request_timeouts_body.inc();
        metrics.connections_open.inc();
        let engine = EngineStatistics::default();
        engine.jobs.store(3, Ordering::Relaxed);
        engine.busy_workers.store(2, Ordering::Relaxed);
        let text = metrics.render(
            &engine,
            QueueFigures {
                admitted: 5,
                capacity: 16,
                workers: 4,
            },
        );
        assert_eq!(
            value(&text, "rlvr_job_duration_seconds_bucket{le=\"0.005\"}"),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_job_duration_seconds_bucket{le=\"1\"}"),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_job_duration_seconds_count"),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            value(
                &text,
                "rlvr_requests_total{route=\"/v1/verify\",status=\"200\"}"
            ),
            Some(1.0),
            "{text}"
        );
        assert_eq!(value(&text, "rlvr_jobs_total"), Some(3.0), "{text}");
        assert_eq!(
            value(&text, "rlvr_checker_errors_total"),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_checker_rejected_total"),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_request_timeouts_total{part=\"body\"}"),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_request_timeouts_total{part=\"header\"}"),
            Some(0.0),
            "{text}"
        );
        assert_eq!(value(&text, "rlvr_queue_depth"), Some(5.0), "{text}");
        assert_eq!(value(&text, "rlvr_queue_capacity"), Some(16.0), "{text}");
        assert_eq!(value(&text, "rlvr_connections_open"), Some(1.0), "{text}");
        assert_eq!(value(&text, "rlvr_workers"), Some(4.0), "{text}");
        assert_eq!(value(&text, "rlvr_workers_busy"), Some(2.0), "{text}");
        assert_eq!(
            value(&text, "rlvr_test_verdicts_total{verdict=\"pass\"}"),
            Some(0.0),
            "{text}"
        );
        assert_eq!(
            value(&text, "rlvr_tampering_total{kind=\"ctypes\"}"),
            Some(0.0),
            "{text}"
        );
        assert!(text.contains("# TYPE rlvr_jobs_total counter"), "{text}");
    }
}
