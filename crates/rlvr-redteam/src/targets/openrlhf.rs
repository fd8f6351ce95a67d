//! An OpenRLHF remote reward (`POST /get_reward`): `{"query": [prompt + response], "prompts":
//! [prompt], "labels": [ground truth as JSON text]}` in, `{"rewards": [...]}` out. A sample
//! the server marks unscored (`extra_logs.unscored`, as `rlvr serve` does) voided its score.

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::JsonClient;
use crate::submission::Submission;
use crate::target::{Outcome, ScoreRange, Target};

/// `POST {url}` (the `/get_reward` URL itself, as OpenRLHF's `--remote_rm_url`).
pub struct OpenRlhfTarget {
    url: String,
    client: JsonClient,
    range: ScoreRange,
}

impl OpenRlhfTarget {
    pub fn new(url: &str, token: Option<String>, range: ScoreRange, timeout: Duration) -> Self {
        Self {
            url: url.to_owned(),
            client: JsonClient::new(timeout, token),
            range,
        }
    }
}

/// The prompt a chat template would have produced before the response.
fn prompt(statement: &str) -> String {
    format!("<|im_start|>user\n{statement}<|im_end|>\n<|im_start|>assistant\n")
}

impl Target for OpenRlhfTarget {
    fn describe(&self) -> String {
        format!("openrlhf {}", self.url)
    }

    fn score(&self, submissions: &[Submission]) -> Vec<Outcome> {
        if submissions.is_empty() {
            return Vec::new();
        }
        let prompts: Vec<String> = submissions
            .iter()
            .map(|submission| prompt(&submission.statement))
            .collect();
        let queries: Vec<String> = submissions
            .iter()
            .zip(&prompts)
            .map(|(submission, prompt)| format!("{prompt}{}<|im_end|>", submission.response))
            .collect();
        let labels: Vec<String> = submissions
            .iter()
            .map(|submission| submission.ground_truth().to_string())
            .collect();
        let body = json!({"query": queries, "prompts": prompts, "labels": labels});
        let answer = match self.client.post(&self.url, &body) {
            Ok(answer) => answer,
            Err(reason) => return vec![Outcome::Failed { reason }; submissions.len()],
        };
        let rewards = answer["rewards"].as_array();
        let Some(rewards) = rewards.filter(|rewards| rewards.len() == submissions.len()) else {
            let reason = format!(
                "the answer has no `rewards` list of {} numbers: {}",
                submissions.len(),
                answer.to_string().chars().take(300).collect::<String>()
            );
            return vec![Outcome::Failed { reason }; submissions.len()];
        };
        let flag = |name: &str, index: usize| {
            answer["extra_logs"][name][index]
                .as_f64()
                .is_some_and(|value| value != 0.0)
        };
        rewards
            .iter()
            .enumerate()
            .map(|(index, reward): (usize, &Value)| {
                if flag("unscored", index) {
                    let why = if flag("sandbox_error", index) {
                        "sandbox error"
                    } else {
                        "not scored"
                    };
                    return Outcome::Void {
                        reason: format!("extra_logs.unscored: {why}"),
                    };
                }
                match reward.as_f64() {
                    Some(reward) => Outcome::Scored {
                        reward,
                        scaled: self.range.scale(reward),
                        detail: None,
                    },
                    None => Outcome::Failed {
                        reason: format!("reward {reward} is not a number"),
                    },
                }
            })
            .collect()
    }
}
