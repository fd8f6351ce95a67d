//! A SandboxFusion-compatible `/run_code` endpoint, scored the way verl's `sandbox_fusion`
//! reward scores code (verl 0.9.1 `verl/utils/reward_score/sandbox_fusion`, read for these
//! facts, as `default_compute_score` calls it: `continuous=True`, 10 s, 1024 MB):
//!
//! * the program is the text before the closing fence of the last `` ```python `` block;
//!   without one, the first `` ``` `` block minus a first line that is a bare word; no fence
//!   at all scores 0 without running anything;
//! * stdin tests: one `/run_code` per test with the test's input as `stdin`; functional tests
//!   are verl's `assert_case` shape: the program, a blank line and the assert, with an empty
//!   `stdin` and no expected output;
//! * a test passes when the answer's `status` is `Success`, `run_result.status` is `Finished`
//!   and `stdout` equals the expected output with trailing newlines stripped from both (or,
//!   without an expected output, whenever it ran to a zero exit status); `Failed` (a non-zero
//!   exit or a timeout), `SandboxError` and anything else fail it;
//! * the score is the fraction of the first ten tests that passed.
//!
//! An HTTP failure is a failure of the target (verl would score the test as failed, after
//! retrying a 504), reported as such rather than folded into a 0.

use std::time::Duration;

use serde_json::{Value, json};

use crate::catalogue::ProblemTests;
use crate::http::JsonClient;
use crate::submission::Submission;
use crate::target::{Outcome, Target};

/// verl scores the first ten tests when `continuous` (as `default_compute_score` asks).
const SCORED_TESTS: usize = 10;
/// verl's per-test compile and run timeout, seconds.
const TIMEOUT_SECONDS: u64 = 10;
/// verl's default `memory_limit_mb`.
const MEMORY_LIMIT_MB: u64 = 1024;
/// Requests in flight at once (verl runs a thread per test).
const CONCURRENT_REQUESTS: usize = 8;

/// `POST {url}` (the `/run_code` URL itself, as verl's `sandbox_fusion_url`).
pub struct SandboxFusionTarget {
    url: String,
    client: JsonClient,
}

impl SandboxFusionTarget {
    pub fn new(url: &str, token: Option<String>) -> Self {
        Self {
            url: url.to_owned(),
            // verl's request timeout: compile + run + 10 s.
            client: JsonClient::new(Duration::from_secs(3 * TIMEOUT_SECONDS), token),
        }
    }

    /// One test: passed, failed (with why), or the target failed.
    fn run_test(
        &self,
        code: &str,
        stdin: &str,
        expected: Option<&str>,
    ) -> Result<Result<(), String>, String> {
        let body = json!({
            "compile_timeout": TIMEOUT_SECONDS,
            "run_timeout": TIMEOUT_SECONDS,
            "code": code,
            "stdin": stdin,
            "memory_limit_MB": MEMORY_LIMIT_MB,
            "language": "python",
            "files": {},
            "fetch_files": [],
        });
        let answer = self.client.post(&self.url, &body)?;
        Ok(test_verdict(&answer, expected))
    }

    fn score_one(&self, submission: &Submission) -> Outcome {
        let Some(program) = verl_extract(&submission.response) else {
            return Outcome::Scored {
                reward: 0.0,
                scaled: 0.0,
                detail: Some("no code block".to_owned()),
            };
        };
        let tests: Vec<(String, String, Option<String>)> = match &submission.problem.tests {
            ProblemTests::Stdin { inputs, outputs } => inputs
                .iter()
                .zip(outputs)
                .map(|(input, output)| {
                    (
                        format!("{program}\n\n"),
                        input.clone(),
                        Some(output.clone()),
                    )
                })
                .collect(),
            ProblemTests::Functional { tests } => tests
                .iter()
                .map(|test| (format!("{program}\n\n{test}"), String::new(), None))
                .collect(),
        };
        let scored: Vec<_> = tests.iter().take(SCORED_TESTS).collect();
        let mut verdicts: Vec<Option<Result<Result<(), String>, String>>> =
            vec![None; scored.len()];
        for (chunk_index, chunk) in scored.chunks(CONCURRENT_REQUESTS).enumerate() {
            let answered: Vec<_> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|(code, stdin, expected)| {
                        scope.spawn(move || self.run_test(code, stdin, expected.as_deref()))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle
                            .join()
                            .unwrap_or_else(|_| Err("a request thread panicked".to_owned()))
                    })
                    .collect()
            });
            for (offset, verdict) in answered.into_iter().enumerate() {
                verdicts[chunk_index * CONCURRENT_REQUESTS + offset] = Some(verdict);
            }
        }
        let mut passed = 0;
        let mut failures = Vec::new();
        for (index, verdict) in verdicts.into_iter().enumerate() {
            match verdict.expect("every test has a verdict") {
                Err(reason) => return Outcome::Failed { reason },
                Ok(Ok(())) => passed += 1,
                Ok(Err(why)) => failures.push(format!("test {index}: {why}")),
            }
        }
        let reward = passed as f64 / scored.len().max(1) as f64;
        Outcome::Scored {
            reward,
            scaled: reward,
            detail: failures.first().cloned(),
        }
    }
}

/// verl's extraction of the program from a completion.
fn verl_extract(completion: &str) -> Option<String> {
    if completion.contains("```python") {
        let last = completion.rsplit("```python").next().unwrap_or("");
        return Some(last.split("```").next().unwrap_or("").to_owned());
    }
    if completion.contains("```") {
        let parts: Vec<&str> = completion.split("```").collect();
        let mut solution = parts.get(1).copied().unwrap_or(completion).to_owned();
        if let Some((first, rest)) = solution.split_once('\n') {
            let word = first.trim();
            if !word.is_empty() && word.chars().all(char::is_alphabetic) {
                solution = rest.to_owned();
            }
        }
        return Some(solution);
    }
    None
}

/// verl's rule for one `/run_code` answer.
fn test_verdict(answer: &Value, expected: Option<&str>) -> Result<(), String> {
    let status = answer["status"].as_str().unwrap_or("");
    let run = &answer["run_result"];
    match status {
        "Success" if run["status"] == "Finished" => {
            let stdout = run["stdout"].as_str().unwrap_or("");
            match expected {
                None => Ok(()),
                Some(expected)
                    if stdout.trim_end_matches('\n') == expected.trim_end_matches('\n') =>
                {
                    Ok(())
                }
                Some(_) => Err("wrong answer".to_owned()),
            }
        }
        "Success" => Err("Success without a finished run".to_owned()),
        "Failed" => Err(format!(
            "Failed ({}, return code {})",
            run["status"].as_str().unwrap_or("no run"),
            run["return_code"]
        )),
        "SandboxError" => Err(format!(
            "SandboxError: {}",
            answer["message"].as_str().unwrap_or("")
        )),
        other => Err(format!("unknown status {other:?}")),
    }
}

impl Target for SandboxFusionTarget {
    fn describe(&self) -> String {
        format!(
            "sandbox-fusion {} (scored as verl's sandbox_fusion reward)",
            self.url
        )
    }

    fn score(&self, submissions: &[Submission]) -> Vec<Outcome> {
        // Two submissions at a time, each with its tests in parallel.
        let mut outcomes = Vec::with_capacity(submissions.len());
        for pair in submissions.chunks(2) {
            let answered: Vec<Outcome> = std::thread::scope(|scope| {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|submission| scope.spawn(move || self.score_one(submission)))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle.join().unwrap_or_else(|_| Outcome::Failed {
                            reason: "a scoring thread panicked".to_owned(),
                        })
                    })
                    .collect()
            });
            outcomes.extend(answered);
        }
        outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_follows_verl() {
        assert_eq!(
            verl_extract("a\n```python\nx = 1\n```\nb ```python\ny = 2\n```").as_deref(),
            Some("\ny = 2\n")
        );
        assert_eq!(
            verl_extract("```py\nz = 3\n```").as_deref(),
            Some("z = 3\n")
        );
        assert_eq!(
            verl_extract("```\nz = 3\n```").as_deref(),
            Some("\nz = 3\n")
        );
        assert_eq!(verl_extract("no fence"), None);
    }

    #[test]
    fn verdicts_follow_verl() {
        let finished = |stdout: &str| json!({"status": "Success", "run_result": {"status": "Finished", "stdout": stdout, "return_code": 0}});
        assert_eq!(test_verdict(&finished("3\n\n"), Some("3\n")), Ok(()));
        assert_eq!(
            test_verdict(&finished("3 \n"), Some("3\n")),
            Err("wrong answer".to_owned())
        );
        assert_eq!(test_verdict(&finished(""), None), Ok(()));
        let failed =
            json!({"status": "Failed", "run_result": {"status": "Finished", "return_code": 1}});
        assert!(test_verdict(&failed, None).is_err());
        let error = json!({"status": "SandboxError", "message": "down"});
        assert!(test_verdict(&error, None).is_err());
    }
}
