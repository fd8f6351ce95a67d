//! OpenRLHF-compatible `POST /get_reward`: `{"query": [...], "prompts": [...], "labels":
//! [...]}` in, `{"rewards": [...], "scores": [...], "extra_logs": {...}}` out. A query is the
//! decoded prompt plus response; the response is what follows the prompt in it. Labels are
//! the records' ground truths (objects or JSON strings), or with `rlvr serve --dataset` a
//! row's name (`{"index": N}` or `{"hash": "..."}`). `?profile=NAME` picks the profile
//! (default: the server's).
//!
//! Trainers need a number for every sample: a job that could not be scored gets reward 0.0,
//! and `extra_logs` says so per sample (`sandbox_error`, `checker_error`, `unscored`), never
//! silently.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use rlvr_engine::Job;
use rlvr_verify::{JobResult, PlanOptions, Status, TestSuite};
use serde_json::{Value, json};

use super::{admit, check_size, json_body, resolve_profile};
use crate::batch::run_to_completion;
use crate::error::ApiError;
use crate::state::AppState;

#[derive(Debug, serde::Deserialize)]
pub(crate) struct RewardRequest {
    query: Vec<String>,
    #[serde(default)]
    prompts: Option<Vec<String>>,
    labels: Vec<Value>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct RewardQuery {
    profile: Option<String>,
    reward: Option<String>,
}

pub(crate) async fn get_reward(
    State(state): State<Arc<AppState>>,
    Query(query): Query<RewardQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: RewardRequest = json_body(body)?;
    let count = request.query.len();
    if request.labels.len() != count {
        return Err(ApiError::bad_request(format!(
            "{count} queries but {} labels",
            request.labels.len()
        )));
    }
    if let Some(prompts) = &request.prompts
        && prompts.len() != count
    {
        return Err(ApiError::bad_request(format!(
            "{count} queries but {} prompts",
            prompts.len()
        )));
    }
    check_size(&state, count)?;
    let profile = Arc::new(resolve_profile(
        &state,
        query.profile.as_deref(),
        query.reward.as_deref(),
    )?);
    let mut jobs = Vec::with_capacity(count);
    let mut invalid: Vec<Option<String>> = vec![None; count];
    for (position, (text, label)) in request.query.iter().zip(&request.labels).enumerate() {
        let prompt = request
            .prompts
            .as_ref()
            .and_then(|prompts| prompts.get(position))
            .map_or("", String::as_str);
        let suite = super::verify::named_row_tests(&state, label)
            .unwrap_or_else(|| TestSuite::from_value(label).map_err(|error| error.to_string()));
        match suite {
            Ok(suite) => jobs.push((
                position,
                Job {
                    profile: Arc::clone(&profile),
                    response: response_of(text, prompt).to_owned(),
                    suite,
                    options: PlanOptions {
                        job_identity: position.to_string().into_bytes(),
                        ..PlanOptions::default()
                    },
                },
            )),
            Err(reason) => invalid[position] = Some(reason),
        }
    }
    let reservation = admit(&state, jobs.len())?;
    let deadline_at = tokio::time::Instant::now() + state.config.request_deadline;
    let results = run_to_completion(Arc::clone(&state), jobs, count, deadline_at).await;
    drop(reservation);
    Ok(Json(shape(&results, &invalid)))
}

/// The response inside a decoded query: the text after the prompt (the first occurrence, so
/// a BOS token before it does not matter), or the whole query when the prompt is not in it,
/// without the special tokens the decoder kept at its end (EOS, padding: `<|im_end|>`,
/// `<|endoftext|>`, `</s>`, `<eos>`, `<pad>`), which would otherwise sit on a fence's line.
fn response_of<'query>(query: &'query str, prompt: &str) -> &'query str {
    let response = match query.find(prompt) {
        Some(start) if !prompt.is_empty() => &query[start + prompt.len()..],
        _ => query,
    };
    without_trailing_special_tokens(response)
}

fn without_trailing_special_tokens(mut text: &str) -> &str {
    loop {
        let trimmed = text.trim_end();
        let shorter = ["</s>", "<eos>", "<pad>"]
            .iter()
            .find_map(|token| trimmed.strip_suffix(token))
            .or_else(|| {
                let body = trimmed.strip_suffix("|>")?;
                let start = body.rfind("<|")?;
                let name = &body[start + 2..];
                let plain = !name.is_empty()
                    && name
                        .chars()
                        .all(|character| character.is_alphanumeric() || "_-.".contains(character));
                plain.then(|| &trimmed[..start])
            });
        match shorter {
            Some(shorter) => text = shorter,
            None => return text,
        }
    }
}

fn shape(results: &[Option<JobResult>], invalid: &[Option<String>]) -> Value {
    let mut rewards = Vec::with_capacity(results.len());
    let mut scores = Vec::with_capacity(results.len());
    let mut pass_rates = Vec::with_capacity(results.len());
    let mut all_passed = Vec::with_capacity(results.len());
    let mut sandbox_errors = Vec::with_capacity(results.len());
    let mut checker_errors = Vec::with_capacity(results.len());
    let mut unscored = Vec::with_capacity(results.len());
    for (result, invalid) in results.iter().zip(invalid) {
        let result = result.as_ref();
        let reward = result.and_then(|result| result.score).unwrap_or(0.0);
        let pass_rate = result.and_then(|result| result.pass_rate).unwrap_or(0.0);
        rewards.push(reward);
        scores.push(pass_rate);
        pass_rates.push(pass_rate);
        all_passed.push(f64::from(u8::from(
            result.is_some_and(|result| result.all_passed),
        )));
        sandbox_errors.push(f64::from(u8::from(
            result.is_some_and(|result| result.status == Status::SandboxError),
        )));
        checker_errors.push(f64::from(u8::from(
            result.is_some_and(|result| result.status == Status::CheckerError),
        )));
        // Invalid label, or the deadline passed before the job finished.
        unscored.push(f64::from(u8::from(
            invalid.is_some() || result.is_none_or(|result| result.score.is_none()),
        )));
    }
    json!({
        "rewards": rewards,
        "scores": scores,
        "extra_logs": {
            "pass_rate": pass_rates,
            "all_passed": all_passed,
            "sandbox_error": sandbox_errors,
            "checker_error": checker_errors,
            "unscored": unscored,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::response_of;

    #[test]
    fn the_response_follows_the_prompt() {
        assert_eq!(response_of("<s>Q: add\nA: code", "Q: add\n"), "A: code");
        assert_eq!(response_of("whole", "missing"), "whole");
        assert_eq!(response_of("whole", ""), "whole");
        assert_eq!(
            response_of("P```\nx\n```<|im_end|><|endoftext|>\n</s>", "P"),
            "```\nx\n```"
        );
        assert_eq!(response_of("a <|not a token|>", ""), "a <|not a token|>");
    }
}
