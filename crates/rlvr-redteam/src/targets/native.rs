//! A running `rlvr serve`, through its native API (`POST /v1/verify`).

use std::time::Duration;

use rlvr_verify::{Profile, ProfileName};
use serde_json::{Value, json};

use crate::http::{JsonClient, join};
use crate::submission::Submission;
use crate::target::{Outcome, Target};
use crate::targets::profile::{outcome_of, profile_range};

/// `POST {url}/v1/verify` with every submission of a phase in one request.
pub struct NativeTarget {
    url: String,
    profile: Option<String>,
    client: JsonClient,
}

impl NativeTarget {
    /// `profile`: the profile to ask for (the server's default when `None`).
    pub fn new(
        url: &str,
        profile: Option<String>,
        token: Option<String>,
        timeout: Duration,
    ) -> Self {
        Self {
            url: url.to_owned(),
            profile,
            client: JsonClient::new(timeout, token),
        }
    }

    fn outcome(result: &Value) -> Outcome {
        let Some(name) = result["profile"].as_str() else {
            return Outcome::Failed {
                reason: format!("a result without a profile: {result}"),
            };
        };
        let Ok(name) = name.parse::<ProfileName>() else {
            return Outcome::Failed {
                reason: format!("a result of an unknown profile {name:?}"),
            };
        };
        let range = profile_range(&Profile::named(name));
        outcome_of(
            result["score"].as_f64(),
            result["status"].as_str().unwrap_or("missing status"),
            result["reason"].as_str(),
            range,
        )
    }
}

impl Target for NativeTarget {
    fn describe(&self) -> String {
        match &self.profile {
            Some(profile) => format!("rlvr serve {} (profile {profile})", self.url),
            None => format!("rlvr serve {}", self.url),
        }
    }

    fn score(&self, submissions: &[Submission]) -> Vec<Outcome> {
        if submissions.is_empty() {
            return Vec::new();
        }
        let jobs: Vec<Value> = submissions
            .iter()
            .map(|submission| {
                json!({"id": submission.id, "response": submission.response, "ground_truth": submission.ground_truth()})
            })
            .collect();
        let mut body = json!({"jobs": jobs});
        if let Some(profile) = &self.profile {
            body["profile"] = json!(profile);
        }
        let answer = match self.client.post(&join(&self.url, "/v1/verify"), &body) {
            Ok(answer) => answer,
            Err(reason) => {
                return vec![Outcome::Failed { reason }; submissions.len()];
            }
        };
        let Some(results) = answer["results"].as_array() else {
            let reason = format!("no `results` in the answer: {answer}");
            return vec![Outcome::Failed { reason }; submissions.len()];
        };
        submissions
            .iter()
            .map(|submission| {
                results
                    .iter()
                    .find(|result| result["id"] == submission.id.as_str())
                    .map_or_else(
                        || Outcome::Failed {
                            reason: "no result with this id".to_owned(),
                        },
                        Self::outcome,
                    )
            })
            .collect()
    }
}
