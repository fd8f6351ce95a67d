//! The summary `rlvr verify` prints on stderr at the end: jobs, mean score, all-passed rate,
//! statuses, verdict counts, tests per second, the comparisons judge functional tests left to
//! the solution's own objects, the tampering seen per kind, the outputs that made a checker
//! fail (`checker_rejected`), and (with `--dataset`) how many jobs' statements accept more
//! than one answer.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rlvr_dataset::answer_variety::VarietyPhrase;
use rlvr_engine::EngineStatistics;
use rlvr_verify::{JobResult, TamperCounts, Verdict};

/// Accumulates written results.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    jobs: u64,
    scored: u64,
    score_total: f64,
    all_passed: u64,
    statuses: BTreeMap<String, u64>,
    /// Tests in which each tamper kind was seen, over all jobs.
    tampering: TamperCounts,
    /// Jobs in which anything was seen.
    tampering_jobs: u64,
    /// Comparisons between two of a solution's own objects (judge functional tests), and the
    /// jobs that had any.
    untrusted_comparisons: u64,
    untrusted_jobs: u64,
    /// Tests whose output made the checker fail while it accepts the expected output (wrong
    /// answers, issue 32), and the jobs that had any.
    checker_rejected: u64,
    checker_rejected_jobs: u64,
    /// Jobs scored against a `--dataset` row, those whose statement accepts more than one
    /// answer, and of these the ones a checker judged.
    dataset_jobs: u64,
    answer_may_vary: u64,
    answer_may_vary_with_checker: u64,
}

impl Summary {
    pub(crate) fn add(&mut self, result: &JobResult, marks: Option<&[VarietyPhrase]>) {
        self.jobs += 1;
        if let Some(phrases) = marks {
            self.dataset_jobs += 1;
            if !phrases.is_empty() {
                self.answer_may_vary += 1;
                self.answer_may_vary_with_checker += u64::from(result.checker.is_some());
            }
        }
        if let Some(score) = result.score {
            self.scored += 1;
            self.score_total += score;
        }
        self.all_passed += u64::from(result.all_passed);
        let status = serde_json::to_value(result.status)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned));
        *self.statuses.entry(status.unwrap_or_default()).or_default() += 1;
        self.tampering.merge(&result.tampering);
        self.tampering_jobs += u64::from(!result.tampering.is_empty());
        if let Some(count) = result.untrusted_comparisons {
            self.untrusted_comparisons += count;
            self.untrusted_jobs += u64::from(count > 0);
        }
        self.checker_rejected += result.checker_rejected;
        self.checker_rejected_jobs += u64::from(result.checker_rejected > 0);
    }

    /// Results written.
    pub(crate) fn jobs(&self) -> u64 {
        self.jobs
    }

    /// Results without a score: `invalid_job` (bad input), `sandbox_error`,
    /// `language_unavailable` and `checker_error`.
    pub(crate) fn unscored(&self) -> u64 {
        self.jobs - self.scored
    }

    pub(crate) fn print(&self, elapsed: Duration, statistics: &EngineStatistics) {
        let mean = if self.scored > 0 {
            self.score_total / self.scored as f64
        } else {
            0.0
        };
        let rate = if self.jobs > 0 {
            self.all_passed as f64 / self.jobs as f64
        } else {
            0.0
        };
        let tests = statistics.tests.load(Ordering::Relaxed);
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(status, count)| format!("{status} {count}"))
            .collect();
        let verdicts: Vec<String> = Verdict::ALL
            .iter()
            .zip(&statistics.verdicts)
            .filter_map(|(verdict, count)| {
                let count = count.load(Ordering::Relaxed);
                (count > 0).then(|| format!("{} {count}", verdict.name()))
            })
            .collect();
        eprintln!(
            "rlvr verify: {} jobs, mean score {mean:.4}, all passed {:.1}%, {tests} tests in {seconds:.2} s ({:.0} tests/s)",
            self.jobs,
            rate * 100.0,
            tests as f64 / seconds
        );
        eprintln!("  status: {}", statuses.join(", "));
        if !verdicts.is_empty() {
            eprintln!("  verdicts: {}", verdicts.join(", "));
        }
        if self.untrusted_comparisons > 0 {
            eprintln!(
                "  untrusted comparisons (two of the solution's own objects, its word): {} in {} jobs",
                self.untrusted_comparisons, self.untrusted_jobs
            );
        }
        if self.checker_rejected > 0 {
            eprintln!(
                "  checker rejected (the output made the checker fail, the expected output passes it: wrong answers): {} tests in {} jobs",
                self.checker_rejected, self.checker_rejected_jobs
            );
        }
        if !self.tampering.is_empty() {
            let kinds: Vec<String> = self
                .tampering
                .iter()
                .map(|(kind, tests)| format!("{} {tests}", kind.name()))
                .collect();
            eprintln!(
                "  tampering (tests per kind, in {} jobs): {}",
                self.tampering_jobs,
                kinds.join(", ")
            );
        }
        if self.dataset_jobs > 0 {
            eprintln!(
                "  answer may vary (the statement accepts more than one answer): {} of {} dataset jobs ({} judged by a checker)",
                self.answer_may_vary, self.dataset_jobs, self.answer_may_vary_with_checker
            );
        }
        let panics = statistics.panics.load(Ordering::Relaxed);
        if panics > 0 {
            eprintln!(
                "  internal errors: {panics} (the verifier panicked; those jobs are sandbox_error, see their reason)"
            );
        }
    }
}
