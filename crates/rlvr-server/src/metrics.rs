//! Counters and latency histograms kept by the server, rendered in the Prometheus text
//! format by `GET /metrics` together with the engine's own counters.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rlvr_engine::EngineStatistics;
use rlvr_verify::{TamperKind, Verdict};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// A cumulative latency histogram.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_microseconds: AtomicU64,
}

impl Histogram {
    pub(crate) fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if seconds <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_microseconds.fetch_add(micros, Ordering::Relaxed);
    }

    fn render(&self, output: &mut String, name: &str, labels: &str) {
        let separator = if labels.is_empty() { "" } else { "," };
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                output,
                "{name}_bucket{{{labels}{separator}le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            output,
            "{name}_bucket{{{labels}{separator}le=\"+Inf\"}} {count}"
        );
        let sum = self.sum_microseconds.load(Ordering::Relaxed) as f64 / 1e6;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(output, "{name}_sum{braces} {sum}");
        let _ = writeln!(output, "{name}_count{braces} {count}");
    }
}

/// Per-route request counts and latencies, plus job-level counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    /// (route, status code) -> requests.
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    /// route -> request latency.
    request_latency: Mutex<BTreeMap<String, std::sync::Arc<Histogram>>>,
    /// Requests being served right now.
    pub(crate) in_flight: AtomicU64,
    /// Submit-to-result latency of each job.
    pub(crate) job_latency: Histogram,
    /// Jobs never started because their request went away (disconnect or deadline).
    pub(crate) jobs_cancelled: AtomicU64,
    /// Jobs whose request deadline passed before they finished.
    pub(crate) jobs_deadline_exceeded: AtomicU64,
    /// Jobs with status `sandbox_error` and `/run_code` runs the sandbox could not start.
    pub(crate) sandbox_errors: AtomicU64,
    /// Jobs with status `checker_error`: the ground truth's checker failed (issue 25).
    pub(crate) checker_errors: AtomicU64,
    /// Requests refused because the queue was full.
    pub(crate) queue_full: AtomicU64,
    /// Connections open now.
    pub(crate) connections_open: AtomicU64,
    /// Connections refused with 503 because every one of `--max-connections` was busy.
    pub(crate) connections_refused: AtomicU64,
    /// Waiting connections closed to make room for a new one at the cap.
    pub(crate) connections_evicted: AtomicU64,
    /// Requests answered 408 because their headers (`header`) or body (`body`) were late.
    pub(crate) request_timeouts_header: AtomicU64,
    pub(crate) request_timeouts_body: AtomicU64,
    /// Connections closed after waiting for a request that never started.
    pub(crate) connections_idle_closed: AtomicU64,
}

impl Metrics {
    pub(crate) fn record_request(&self, route: &str, status: u16, elapsed: Duration) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests.entry((route.to_owned(), status)).or_default() += 1;
        }
        let histogram = self.request_latency.lock().ok().map(|mut latencies| {
            std::sync::Arc::clone(latencies.entry(route.to_owned()).or_default())
        });
        if let Some(histogram) = histogram {
            histogram.observe(elapsed);
        }
    }

    /// The whole exposition.
    pub(crate) fn render(
        &self,
        engine: &EngineStatistics,
        admitted: usize,
        capacity: usize,
    ) -> String {
        let mut output = String::new();
        let counter = |output: &mut String, name: &str, help: &str, value: u64| {
            let _ = writeln!(output, "# HELP {name} {help}\n# TYPE {name} counter");
            let _ = writeln!(output, "{name} {value}");
        };
        let gauge = |output: &mut String, name: &str, help: &str, value: u64| {
            let _ = writeln!(output, "# HELP {name} {help}\n# TYPE {name} gauge");
            let _ = writeln!(output, "{name} {value}");
        };
        let _ = writeln!(
            output,
            "# HELP rlvr_requests_total HTTP requests by route and status.\n# TYPE rlvr_requests_total counter"
        );
        if let Ok(requests) = self.requests.lock() {
            for ((route, status), count) in requests.iter() {
                let _ = writeln!(
                    output,
                    "rlvr_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}"
                );
            }
        }
        let _ = writeln!(
            output,
            "# HELP rlvr_request_duration_seconds HTTP request latency by route.\n# TYPE rlvr_request_duration_seconds histogram"
        );
        if let Ok(latencies) = self.request_latency.lock() {
            for (route, histogram) in latencies.iter() {
                histogram.render(
                    &mut output,
                    "rlvr_request_duration_seconds",
                    &format!("route=\"{route}\""),
                );
            }
        }
        let _ = writeln!(
            output,
            "# HELP rlvr_job_duration_seconds Time from admission to result of one job.\n# TYPE rlvr_job_duration_seconds histogram"
        );
        self.job_latency
            .render(&mut output, "rlvr_job_duration_seconds", "");
        gauge(
            &mut output,
            "rlvr_requests_in_flight",
            "Requests being served.",
            self.in_flight.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_jobs_total",
            "Jobs the engine finished.",
            engine.jobs.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_tests_total",
            "Tests executed (not skipped).",
            engine.tests.load(Ordering::Relaxed),
        );
        let _ = writeln!(
            output,
            "# HELP rlvr_test_verdicts_total Tests by verdict.\n# TYPE rlvr_test_verdicts_total counter"
        );
        for (verdict, count) in Verdict::ALL.iter().zip(&engine.verdicts) {
            let name = serde_json::to_value(verdict)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            let _ = writeln!(
                output,
                "rlvr_test_verdicts_total{{verdict=\"{name}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            output,
            "# HELP rlvr_tampering_total Tests in which the solution tried each kind of tampering.\n# TYPE rlvr_tampering_total counter"
        );
        for (kind, count) in TamperKind::ALL.iter().zip(&engine.tampering) {
            let _ = writeln!(
                output,
                "rlvr_tampering_total{{kind=\"{}\"}} {}",
                kind.name(),
                count.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            output,
            "# HELP rlvr_untrusted_comparisons_total Comparisons between two of a solution's own objects in judge functional tests (the solution's word).\n# TYPE rlvr_untrusted_comparisons_total counter\nrlvr_untrusted_comparisons_total {}",
            engine.untrusted_comparisons.load(Ordering::Relaxed)
        );
        gauge(
            &mut output,
            "rlvr_queue_depth",
            "Jobs admitted and not yet finished, over all requests.",
            admitted as u64,
        );
        gauge(
            &mut output,
            "rlvr_queue_capacity",
            "Most jobs admitted at once (--max-queue).",
            capacity as u64,
        );
        gauge(
            &mut output,
            "rlvr_engine_queued",
            "Jobs waiting in the engine for a worker.",
            engine.queued.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_jobs_cancelled_total",
            "Jobs never started because their request went away.",
            self.jobs_cancelled.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_jobs_deadline_exceeded_total",
            "Jobs unfinished when their request deadline passed.",
            self.jobs_deadline_exceeded.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_sandbox_errors_total",
            "Jobs and runs the sandbox failed (never scored as wrong answers).",
            self.sandbox_errors.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_checker_errors_total",
            "Jobs whose ground truth's checker failed (checker_error: null score, never a pass).",
            self.checker_errors.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_engine_panics_total",
            "Panics caught while scoring a job (each job answered sandbox_error; the worker went on).",
            engine.panics.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_queue_full_total",
            "Requests refused with 429 because the queue was full.",
            self.queue_full.load(Ordering::Relaxed),
        );
        gauge(
            &mut output,
            "rlvr_connections_open",
            "Client connections open.",
            self.connections_open.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_connections_refused_total",
            "Connections refused with 503: every one of --max-connections was busy.",
            self.connections_refused.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_connections_evicted_total",
            "Waiting connections closed to make room at --max-connections.",
            self.connections_evicted.load(Ordering::Relaxed),
        );
        counter(
            &mut output,
            "rlvr_connections_idle_closed_total",
            "Connections closed after waiting for a request (--header-timeout, --idle-timeout).",
            self.connections_idle_closed.load(Ordering::Relaxed),
        );
        let _ = writeln!(
            output,
            "# HELP rlvr_request_timeouts_total Requests answered 408: headers or body too late.\n# TYPE rlvr_request_timeouts_total counter"
        );
        let _ = writeln!(
            output,
            "rlvr_request_timeouts_total{{part=\"header\"}} {}\nrlvr_request_timeouts_total{{part=\"body\"}} {}",
            self.request_timeouts_header.load(Ordering::Relaxed),
            self.request_timeouts_body.load(Ordering::Relaxed)
        );
        output
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_millis(3));
        histogram.observe(Duration::from_millis(700));
        let mut output = String::new();
        histogram.render(&mut output, "latency", "");
        assert!(
            output.contains("latency_bucket{le=\"0.005\"} 1"),
            "{output}"
        );
        assert!(output.contains("latency_bucket{le=\"1\"} 2"), "{output}");
        assert!(output.contains("latency_bucket{le=\"+Inf\"} 2"), "{output}");
        assert!(output.contains("latency_count 2"), "{output}");
    }
}
