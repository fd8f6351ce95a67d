//! JSON over HTTP for the remote targets: one agent, bounded waits, every failure a message.

use std::time::Duration;

use serde_json::Value;

/// A client for one target.
#[derive(Debug, Clone)]
pub(crate) struct JsonClient {
    agent: ureq::Agent,
    token: Option<String>,
}

impl JsonClient {
    /// A client that waits at most `timeout` for each answer.
    pub(crate) fn new(timeout: Duration, token: Option<String>) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(timeout))
            .build()
            .into();
        Self { agent, token }
    }

    /// POSTs `body` to `url` and reads a JSON answer; anything but a 2xx JSON answer is an
    /// error naming the URL and the status.
    pub(crate) fn post(&self, url: &str, body: &Value) -> Result<Value, String> {
        let mut request = self
            .agent
            .post(url)
            .header("Content-Type", "application/json");
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|error| format!("POST {url}: {error}"))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
            .map_err(|error| format!("POST {url}: reading the answer: {error}"))?;
        if !(200..300).contains(&status) {
            let first: String = text.chars().take(300).collect();
            return Err(format!("POST {url}: HTTP {status}: {first}"));
        }
        serde_json::from_str(&text)
            .map_err(|error| format!("POST {url}: the answer is not JSON: {error}"))
    }
}

/// `base` + `path`, without a doubled slash.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}
